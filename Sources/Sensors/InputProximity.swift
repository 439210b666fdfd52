import CEvdev
import DeviceDiscovery
import EvdevKit
import OrientLog
import SystemKit

// Proximity sensors the kernel exposes as an input switch instead of an IIO channel: an evdev
// node whose switches include SW_FRONT_PROXIMITY (gpio-keys on phones such as the N900, or a
// driver like gp2ap002a00f), 1 while something is near. udev's input_id builtin marks such a
// node ID_INPUT_SWITCH=1; IIO_SENSOR_PROXY_TYPE=input-proximity is honoured as well. The node
// is opened only while proximity is claimed, and read event-driven on the loop.

extension AmbientDescription {
  /// `SW_FRONT_PROXIMITY` (linux/input-event-codes.h).
  public static let frontProximitySwitch = UInt32(SW_FRONT_PROXIMITY)

  /// The proximity sensor of an input device, `nil` unless it is an event node
  /// (`/dev/input/eventN`) marked `ID_INPUT_SWITCH=1` or `IIO_SENSOR_PROXY_TYPE=input-proximity`
  /// whose switch capabilities (the input device's `capabilities/sw` bitmap, as udev and the
  /// kernel give it) include `SW_FRONT_PROXIMITY`. Decided from udev and sysfs alone: opening
  /// the node here would wake it (and, under umockdev, start its event script) while nobody
  /// asked for proximity.
  ///
  /// - Parameters:
  ///   - property: a udev property of the event node.
  ///   - capabilities: the parent input device's `capabilities/sw` attribute.
  public static func inputProximity(
    syspath: String, sysname: String, devnode: String?, name: String?,
    property: (String) -> String?, capabilities: String?
  ) -> AmbientDescription? {
    guard let devnode, devnode.hasPrefix("/dev/input/event") else { return nil }
    let tagged = (property("IIO_SENSOR_PROXY_TYPE") ?? "").split(separator: " ")
      .contains("input-proximity")
    guard tagged || property("ID_INPUT_SWITCH") == "1",
      let capabilities, hasBit(frontProximitySwitch, inKernelBitmap: capabilities)
    else { return nil }
    return AmbientDescription(
      kind: .proximity, syspath: syspath, sysname: sysname, name: name,
      driver: .inputSwitch(node: devnode),
      classifiedBy: tagged
        ? "udev IIO_SENSOR_PROXY_TYPE=input-proximity" : "udev ID_INPUT_SWITCH, SW_FRONT_PROXIMITY")
  }

  /// Whether bit `bit` is set in a kernel bitmap attribute: hexadecimal words separated by
  /// spaces, most significant first, each one `unsigned long` (64 bits here).
  static func hasBit(_ bit: UInt32, inKernelBitmap text: String) -> Bool {
    let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).reversed()
    let index = Int(bit) / 64
    guard index < words.count,
      let word = UInt64(words[words.index(words.startIndex, offsetBy: index)], radix: 16)
    else { return false }
    return word & (1 << UInt64(bit % 64)) != 0
  }
}

/// Reads a `SW_FRONT_PROXIMITY` switch: `start` opens the node, delivers the state the kernel
/// reports at once (a switch sends nothing until it changes), then one reading per report that
/// changed the switch; `stop` closes the node. libevdev resynchronises the state after the
/// kernel dropped events (`SYN_DROPPED`).
public final class InputProximitySource: AmbientSource {
  /// The sensor.
  public let info: AmbientDescription
  private let node: String
  private let loop: EventLoop
  private let logger: Logger
  private var device: InputDevice?
  private var watch: EventLoop.Watch?
  private var deliver: ((AmbientReading) -> Void)?
  private var changes = ChangedReports {
    $0.type == UInt16(EV_SW) && UInt32($0.code) == AmbientDescription.frontProximitySwitch
  }

  /// A source for `info` (whose driver is `.inputSwitch`).
  public init(_ info: AmbientDescription, loop: EventLoop, logger: Logger) {
    self.info = info
    if case .inputSwitch(let node) = info.driver { self.node = node } else { node = "" }
    self.loop = loop
    self.logger = logger
  }

  deinit { stop() }

  /// Opens the node and starts watching it.
  ///
  /// - Throws: `SystemError` if the node cannot be opened or watched, or has no
  ///   `SW_FRONT_PROXIMITY`.
  public func start(deliver: @escaping (AmbientReading) -> Void) throws(SystemError) {
    stop()
    let device: InputDevice
    do { device = try InputDevice(path: node) } catch {
      throw SystemError(
        error.kind == .notFound ? .noSuchFileOrDirectory : .noSuchDevice,
        operation: error.message, path: node)
    }
    guard device.hasSwitch(AmbientDescription.frontProximitySwitch) else {
      throw SystemError(.noSuchDevice, operation: "has no SW_FRONT_PROXIMITY switch", path: node)
    }
    watch = try loop.watch(device.fileDescriptor, for: .readable) { [weak self] _ in
      self?.readable()
    }
    self.device = device
    self.deliver = deliver
    logger.debug("\(info.sysname): reading \(node) (\(device.name)) as the switch changes")
    // Posted, not called: the caller (a claim) finishes its bookkeeping before the reading.
    loop.post { [weak self] in self?.report() }
  }

  /// Closes the node.
  public func stop() {
    watch?.cancel()
    watch = nil
    device = nil
    deliver = nil
    changes.reset()
  }

  private func readable() {
    guard let device else { return }
    let events: [InputEvent]
    do {
      events = try device.readEvents()
    } catch {
      // Unplugged: udev's remove event takes the sensor away; until then nothing is read.
      logger.warning("\(info.sysname): \(error)")
      watch?.cancel()
      watch = nil
      return
    }
    for _ in changes.reports(in: events) { report() }
  }

  private func report() {
    guard let device, let deliver else { return }
    deliver(.proximity(near: device.switchValue(AmbientDescription.frontProximitySwitch) != 0))
  }
}
