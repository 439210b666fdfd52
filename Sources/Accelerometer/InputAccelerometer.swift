import CEvdev
import DeviceDiscovery
import EvdevKit
import OrientLog
import SystemKit

// Accelerometers the kernel exposes through the input subsystem instead of IIO: an evdev node
// with ABS_X/Y/Z that udev's input_id builtin marks ID_INPUT_ACCELEROMETER=1 (the device has
// INPUT_PROP_ACCELEROMETER), or that iio-sensor-proxy's rules tag
// IIO_SENSOR_PROXY_TYPE=input-accel; HP laptops' lis3lv02d ("ST LIS3LV02DL Accelerometer") is
// the common one. They become DeviceFacts like IIO devices, so the same description (udev
// ACCEL_MOUNT_MATRIX, configuration overrides, location), choice and detector apply; they are
// chosen only when no IIO display accelerometer is usable, and read by InputSampler.

extension DeviceFacts {
  /// The units per g assumed when the driver gives no resolution: lis3lv02d reports milli-g.
  public static let inputDefaultUnitsPerG = 1000

  /// Whether udev describes `device` as an input accelerometer: an event node
  /// (`/dev/input/eventN`) with `ID_INPUT_ACCELEROMETER=1`, or `IIO_SENSOR_PROXY_TYPE`
  /// containing `input-accel`. Not on USB or Bluetooth (`id/bustype` 3 or 5): those are game
  /// controllers' motion sensors (udev marks them accelerometers too), which say nothing about
  /// how the screen is held.
  public static func isInputAccelerometer(_ device: UdevDevice) -> Bool {
    guard let node = device.devnode, node.hasPrefix("/dev/input/event") else { return false }
    if let bus = device.parent?.attribute("id/bustype"), let number = Int(bus, radix: 16),
      number == 0x03 || number == 0x05
    {
      return false
    }
    if device.property("ID_INPUT_ACCELEROMETER") == "1" { return true }
    let types = device.property("IIO_SENSOR_PROXY_TYPE")?.split(separator: " ") ?? []
    return types.contains("input-accel")
  }

  /// The facts of an input-subsystem device: for an accelerometer (`isInputAccelerometer`),
  /// its name, udev matrix and location, and a scale per axis from the axis resolution, which
  /// the kernel's input ABS documentation defines as units per g for an accelerometer's main
  /// axes. When the driver leaves it 0: `inputDefaultUnitsPerG` (lis3lv02d's milli-g) if the
  /// state read on opening is within half of that, otherwise that state's magnitude, the
  /// device's own 1 g as it lies (iio-sensor-proxy's test device reports 256 per g; such a
  /// device sends nothing while still, so orientd would otherwise never get a reading whose
  /// magnitude it accepts). The node is opened for the axis information only and closed
  /// again; other input devices get empty facts.
  static func gatherInput(_ device: UdevDevice) -> DeviceFacts {
    var facts = DeviceFacts(syspath: device.syspath, sysname: device.sysname)
    guard isInputAccelerometer(device), let node = device.devnode else { return facts }
    facts.devnode = node
    facts.name = device.parent?.attribute("name")
    facts.udevLocation = device.property("ACCEL_LOCATION")
    facts.udevMountMatrix = device.property("ACCEL_MOUNT_MATRIX")
    facts.modalias = device.nearestProperty("MODALIAS")?.value
    guard let input = try? InputDevice(path: node) else { return facts }
    let infos = InputSampler.axes.compactMap { input.absoluteAxis($0) }
    guard infos.count == 3 else { return facts }
    let atRest = infos.map { Double($0.value) * Double($0.value) }.reduce(0, +).squareRoot()
    let assumed = Double(inputDefaultUnitsPerG)
    let ownG = abs(atRest - assumed) > assumed / 2 && atRest > 0
    var scales: [SysfsText] = []
    for (axis, info) in zip(["x", "y", "z"], infos) {
      if info.resolution > 0 {
        scales.append(SysfsText("abs_\(axis)_resolution", "\(9.80665 / Double(info.resolution))"))
      } else if ownG {
        scales.append(
          SysfsText("abs_\(axis)_resolution_unset_state_at_rest", "\(9.80665 / atRest)"))
      } else {
        scales.append(SysfsText("abs_\(axis)_resolution_unset_milli_g", "\(9.80665 / assumed)"))
      }
    }
    facts.scale = scales
    facts.isInputAccelerometer = true
    return facts
  }
}

extension AccelerometerDescription {
  /// The ways it can be read, as `--list-sensors` and the log name them: `events` for an
  /// input-subsystem accelerometer, otherwise `buffered` and/or `polled`.
  public var readModes: [String] {
    if facts.isInputAccelerometer { return [SamplingMode.events.rawValue] }
    return [canBuffer ? "buffered" : nil, canPoll ? "polled" : nil].compactMap { $0 }
  }
}

/// Reads an input accelerometer event-driven: the node is opened only while sampling, its
/// descriptor watched on the loop, and each `SYN_REPORT` after `EV_ABS` axis changes gives one
/// reading of the three axes in raw units (libevdev keeps the axes that did not change, and
/// resynchronises them after `SYN_DROPPED`). The state read on opening is delivered first, right
/// away: such a device sends nothing until it moves. `stop()` closes the node.
final class InputSampler: Sampler {
  let mode = SamplingMode.events
  /// The driver decides how often it reports; 0 says "not set by orientd".
  let rate: Double = 0
  let skipped = 0

  private let handler: (SamplerEvent) -> Void
  private var device: InputDevice?
  private var watch: EventLoop.Watch?
  private var changes = ChangedReports {
    $0.type == UInt16(EV_ABS) && InputSampler.axes.contains(UInt32($0.code))
  }

  /// The axis codes read, in order.
  static let axes: [UInt32] = [UInt32(ABS_X), UInt32(ABS_Y), UInt32(ABS_Z)]

  /// Opens `description`'s node and starts reading on `loop`.
  ///
  /// - Throws: `EvdevError` when the node cannot be opened, watched, or has no `ABS_X/Y/Z`.
  init(
    description: AccelerometerDescription, loop: EventLoop, logger: Logger,
    handler: @escaping (SamplerEvent) -> Void
  ) throws(EvdevError) {
    self.handler = handler
    let path = description.facts.devnode ?? "/dev/input/\(description.sysname)"
    let device = try InputDevice(path: path)
    guard InputSampler.axes.allSatisfy({ device.absoluteAxis($0) != nil }) else {
      throw EvdevError(.unavailable, path: path, "has no ABS_X, ABS_Y and ABS_Z axes")
    }
    do {
      watch = try loop.watch(device.fileDescriptor, for: .readable) { [weak self] _ in
        self?.readable()
      }
    } catch {
      throw EvdevError(.unavailable, path: path, "cannot watch the node: \(error)")
    }
    self.device = device
    logger.debug("\(description.sysname): reading \(path) (\(device.name)) as events arrive")
    loop.post { [weak self] in self?.deliver(timestamp: Clock.monotonicNanoseconds()) }
  }

  deinit { stop() }

  func stop() {
    watch?.cancel()
    watch = nil
    device = nil
  }

  private func readable() {
    guard let device else { return }
    let events: [InputEvent]
    do {
      events = try device.readEvents()
    } catch {
      stop()
      handler(.gone(error.description))
      return
    }
    for report in changes.reports(in: events) {
      deliver(
        timestamp: device.monotonicTimestamps
          ? report.timeNanoseconds : Clock.monotonicNanoseconds())
    }
  }

  private func deliver(timestamp: Int64) {
    guard let device else { return }
    let v = InputSampler.axes.map { Double(device.absoluteAxis($0)?.value ?? 0) }
    handler(.reading(RawReading(timestamp: timestamp, x: v[0], y: v[1], z: v[2])))
  }
}
