import CEvdev
import DeviceDiscovery
import EvdevKit
import OrientCore
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

/// `input-proximity`: a `SW_FRONT_PROXIMITY` switch on an evdev node
/// (`InputProximityReader`).
public enum InputProximity: SensorDriver {
  /// `input-proximity`.
  public static let name = "input-proximity"
  /// `input`.
  public static let subsystems: Set<String> = ["input"]

  /// The proximity switch `AmbientDescription.inputProximity` finds on the node.
  public static func discover(_ device: UdevDevice, _ context: DiscoveryContext) -> [Sensor] {
    guard
      let info = AmbientDescription.inputProximity(
        syspath: device.syspath, sysname: device.sysname, devnode: device.devnode,
        name: device.parent?.attribute("name"), property: { device.property($0) },
        capabilities: device.parent?.attribute("capabilities/sw"))
    else { return [] }
    return [Sensor.ambient(info, driver: name)]
  }

  /// Events, when the switch changes.
  public static func plan(_ sensor: Sensor, _ configuration: SensorsConfiguration) -> (
    mode: SamplingMode, rate: Double
  ) { (.events, 0) }

  /// Opens the node; its state is delivered at once.
  public static func open(
    _ sensor: Sensor, _ context: OpenContext, deliver: @escaping (SensorEvent) -> Void
  ) throws(SensorError) -> any SensorReader {
    guard let info = sensor.ambient, case .inputSwitch(let node) = info.driver else {
      throw SensorError(.unavailable, "\(sensor.sysname) is not a proximity switch")
    }
    return try InputProximityReader(
      info, node: node, loop: context.loop, logger: context.logger, deliver: deliver)
  }
}

/// Reads a `SW_FRONT_PROXIMITY` switch: opening delivers the state the kernel reports at once
/// (a switch sends nothing until it changes), then one reading per report that changed the
/// switch; `stop` closes the node. libevdev resynchronises the state after the kernel dropped
/// events (`SYN_DROPPED`).
final class InputProximityReader: SensorReader {
  let mode = SamplingMode.events
  let rate: Double = 0
  private let info: AmbientDescription
  private let logger: Logger
  private let deliver: (SensorEvent) -> Void
  private var device: InputDevice?
  private var watch: EventLoop.Watch?
  private var changes = ChangedReports {
    $0.type == UInt16(EV_SW) && UInt32($0.code) == AmbientDescription.frontProximitySwitch
  }

  /// Opens `node` and starts watching it.
  ///
  /// - Throws: `SensorError` if the node cannot be opened or watched, or has no
  ///   `SW_FRONT_PROXIMITY`.
  init(
    _ info: AmbientDescription, node: String, loop: EventLoop, logger: Logger,
    deliver: @escaping (SensorEvent) -> Void
  ) throws(SensorError) {
    self.info = info
    self.logger = logger
    self.deliver = deliver
    let device: InputDevice
    do { device = try InputDevice(path: node) } catch { throw SensorError(error) }
    guard device.hasSwitch(AmbientDescription.frontProximitySwitch) else {
      throw SensorError(.unavailable, "\(node): has no SW_FRONT_PROXIMITY switch")
    }
    do {
      watch = try loop.watch(device.fileDescriptor, for: .readable) { [weak self] _ in
        self?.readable()
      }
    } catch {
      throw SensorError(error, "\(info.sysname): cannot watch \(node)")
    }
    self.device = device
    logger.debug("\(info.sysname): reading \(node) (\(device.name)) as the switch changes")
    // Posted, not called: the caller (a claim) finishes its bookkeeping before the reading.
    loop.post { [weak self] in self?.report() }
  }

  deinit { stop() }

  /// Closes the node.
  func stop() {
    watch?.cancel()
    watch = nil
    device = nil
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
    guard let device else { return }
    let near = device.switchValue(AmbientDescription.frontProximitySwitch) != 0
    deliver(
      .reading(
        Reading(
          time: MonotonicTime(nanoseconds: Clock.monotonicNanoseconds()),
          value: .proximity(near: near))))
  }
}
