import CEvdev
import DeviceDiscovery
import EvdevKit
import OrientLog
import SystemKit

/// Follows the tablet-mode switch (`SW_TABLET_MODE`) of every evdev device that has one
/// (intel-vbtn, intel-hid, a convertible's hinge driver, orientd's own uinput switch): for
/// `--when tablet`. Devices that appear later (orientd's switch made after this started, a
/// keyboard dock) are picked up through udev's input events; one that goes away is dropped.
public final class TabletModeSwitch {
  private var devices: [(InputDevice, EventLoop.Watch)] = []
  private let loop: EventLoop
  private let logger: Logger
  private var monitor: UdevMonitor?
  private var monitorWatch: EventLoop.Watch?
  /// Called on the loop when the mode changes.
  public var onChange: ((Bool) -> Void)?

  /// Opens every device under `directory` that has `SW_TABLET_MODE`, watches them on `loop`,
  /// and follows input hotplug through `udev` when there is one. Having no switch yet is not
  /// an error: one may appear.
  public init(
    loop: EventLoop, udev: UdevContext?, logger: Logger, directory: String = "/dev/input"
  ) {
    self.loop = loop
    self.logger = logger
    if let udev {
      do {
        let monitor = try UdevMonitor(context: udev, subsystems: ["input"])
        monitorWatch = try loop.watch(monitor.fileDescriptor, for: .readable) { [weak self] _ in
          self?.hotplug()
        }
        self.monitor = monitor
      } catch {
        logger.warning(
          "--when tablet: cannot follow input hotplug (\(error)); only the switches present now")
      }
    }
    for path in InputDevice.eventNodes(in: directory) { add(path, quiet: true) }
  }

  deinit {
    monitorWatch?.cancel()
    for (_, watch) in devices { watch.cancel() }
  }

  /// Whether any switch says tablet mode now.
  public var isTabletMode: Bool {
    devices.contains { $0.0.switchValue(UInt32(SW_TABLET_MODE)) != 0 }
  }

  /// The device paths followed.
  public var paths: [String] { devices.map { $0.0.path } }

  /// Opens `path` if it reports `SW_TABLET_MODE` and is not followed yet.
  private func add(_ path: String, quiet: Bool) {
    guard !devices.contains(where: { $0.0.path == path }) else { return }
    let device: InputDevice
    do {
      device = try InputDevice(path: path)
    } catch {
      // Most nodes are not ours to open (permissions) or not switches: say so only in debug.
      logger.debug("--when tablet: \(error)")
      return
    }
    guard device.hasSwitch(UInt32(SW_TABLET_MODE)) else { return }
    let before = isTabletMode
    do {
      let watch = try loop.watch(device.fileDescriptor, for: .readable) { [weak self] _ in
        self?.read(device)
      }
      devices.append((device, watch))
    } catch {
      logger.warning("--when tablet: cannot watch \(path): \(error)")
      return
    }
    let on = device.switchValue(UInt32(SW_TABLET_MODE)) != 0
    if !quiet {
      logger.notice("tablet-mode switch \(path) (\(device.name)) appeared, \(on ? "on" : "off")")
    }
    if isTabletMode != before { onChange?(isTabletMode) }
  }

  private func remove(_ path: String) {
    guard let index = devices.firstIndex(where: { $0.0.path == path }) else { return }
    let before = isTabletMode
    devices[index].1.cancel()
    devices.remove(at: index)
    logger.notice("tablet-mode switch \(path) went away")
    if isTabletMode != before { onChange?(isTabletMode) }
  }

  private func hotplug() {
    guard let monitor else { return }
    while true {
      switch monitor.next() {
      case .empty: return
      case .overflow:
        // Adds or removes were lost: look at the nodes there are now.
        logger.notice("--when tablet: input events were lost; looking at the devices again")
        let present = Set(InputDevice.eventNodes())
        for path in paths where !present.contains(path) { remove(path) }
        for path in present.sorted() { add(path, quiet: false) }
      case .device(let device):
        guard let node = device.devnode, node.hasPrefix("/dev/input/event") else { continue }
        switch device.action {
        case .add?, .change?: add(node, quiet: false)
        case .remove?: remove(node)
        default: continue
        }
      }
    }
  }

  private func read(_ device: InputDevice) {
    let before = isTabletMode
    do {
      _ = try device.readEvents()
    } catch {
      // Unplugged: udev's remove may come later or not at all (a lost event).
      if let index = devices.firstIndex(where: { $0.0 === device }) {
        devices[index].1.cancel()
        devices.remove(at: index)
        logger.notice("tablet-mode switch \(device.path) cannot be read any more: \(error)")
      }
    }
    let after = isTabletMode
    if after != before { onChange?(after) }
  }
}
