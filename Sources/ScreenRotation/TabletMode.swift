import CEvdev
import EvdevKit
import SystemKit

/// Follows the tablet-mode switch (`SW_TABLET_MODE`) of every evdev device that has one
/// (intel-vbtn, intel-hid, a convertible's hinge driver): for `--when tablet`.
public final class TabletModeSwitch {
  private var devices: [(InputDevice, EventLoop.Watch)] = []
  /// Called on the loop when the mode changes.
  public var onChange: ((Bool) -> Void)?

  /// Opens every device under `directory` that has `SW_TABLET_MODE` and watches it on `loop`.
  ///
  /// - Throws: `RotateError` (69) when none has the switch, or none can be opened.
  public init(loop: EventLoop, directory: String = "/dev/input") throws(RotateError) {
    var problems: [String] = []
    for path in InputDevice.eventNodes(in: directory) {
      do {
        let device = try InputDevice(path: path)
        guard device.hasSwitch(UInt32(SW_TABLET_MODE)) else { continue }
        let watch = try loop.watch(device.fileDescriptor, for: .readable) { [weak self] _ in
          self?.read(device)
        }
        devices.append((device, watch))
      } catch let error as EvdevError {
        problems.append(error.description)
      } catch {
        problems.append("\(path): \(error)")
      }
    }
    guard !devices.isEmpty else {
      throw RotateError(
        .unavailable,
        "--when tablet: no input device under \(directory) reports SW_TABLET_MODE"
          + (problems.isEmpty ? "" : " (\(problems.prefix(3).joined(separator: "; ")))")
          + "; use --when always on a device without a tablet-mode switch")
    }
  }

  /// Whether any switch says tablet mode now.
  public var isTabletMode: Bool {
    devices.contains { $0.0.switchValue(UInt32(SW_TABLET_MODE)) != 0 }
  }

  /// The device paths followed.
  public var paths: [String] { devices.map { $0.0.path } }

  private func read(_ device: InputDevice) {
    let before = isTabletMode
    do {
      _ = try device.readEvents()
    } catch {
      devices.removeAll { $0.0 === device }
    }
    let after = isTabletMode
    if after != before { onChange?(after) }
  }
}
