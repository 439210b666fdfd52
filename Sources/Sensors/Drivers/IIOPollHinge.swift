import DeviceDiscovery
import OrientCore
import OrientLog
import SystemKit
import TextFormats

/// A hinge angle the hardware measures itself, as the kernel presents it: Intel's HID custom
/// hinge sensor (`hid-sensor-custom-intel-hinge`: the IIO device `hinge`, `in_angl0_raw`
/// labelled `hinge`, `in_angl_scale` in radians per count) or ChromeOS's
/// `cros-ec-lid-angle` (`in_angl_raw` in whole degrees, no scale, 500 while the EC cannot
/// tell).
public struct HingeAngleDescription: Equatable, Sendable {
  /// The device's sysfs path.
  public var syspath: String
  /// `iio:device3`.
  public var sysname: String
  /// The attribute read: `in_angl0_raw` or `in_angl_raw`.
  public var attribute: String
  /// Degrees per count (the scale in radians converted; 1 without a scale).
  public var degreesPerCount: Double
  /// Counts added before scaling (`in_angl_offset`).
  public var offset: Double
  /// What it is: `Intel HID custom hinge sensor` or `ChromeOS EC lid angle`.
  public var source: String

  /// Creates a description.
  public init(
    syspath: String, sysname: String, attribute: String, degreesPerCount: Double,
    offset: Double, source: String
  ) {
    self.syspath = syspath
    self.sysname = sysname
    self.attribute = attribute
    self.degreesPerCount = degreesPerCount
    self.offset = offset
    self.source = source
  }

  /// The angle in degrees a raw value means, if it is one (0 to 360; the EC's 500 is not).
  public func degrees(raw: Double) -> Double? {
    let value = (raw + offset) * degreesPerCount
    return value.isFinite && value >= 0 && value <= 360 ? value : nil
  }

  /// The description of an IIO device that measures a hinge angle, if `device` is one;
  /// `read` reads one of its attributes (trimmed), nil when absent.
  public static func describe(
    syspath: String, sysname: String, read: (String) -> String?
  ) -> HingeAngleDescription? {
    let name = read("name")
    if read("in_angl0_label") == "hinge" || (name == "hinge" && read("in_angl0_raw") != nil) {
      // hid-sensor-custom-intel-hinge: three angles, the first the hinge's; one shared scale
      // in radians per count (IIO's unit for angles).
      guard read("in_angl0_raw") != nil,
        let scale = (read("in_angl0_scale") ?? read("in_angl_scale")).flatMap(Double.init),
        scale > 0
      else { return nil }
      let offset = (read("in_angl0_offset") ?? read("in_angl_offset")).flatMap(Double.init) ?? 0
      return HingeAngleDescription(
        syspath: syspath, sysname: sysname, attribute: "in_angl0_raw",
        degreesPerCount: scale * 180 / Double.pi, offset: offset,
        source: "Intel HID custom hinge sensor")
    }
    if name == "cros-ec-lid-angle", read("in_angl_raw") != nil {
      // cros_ec_lid_angle.c: raw only, in degrees.
      return HingeAngleDescription(
        syspath: syspath, sysname: sysname, attribute: "in_angl_raw", degreesPerCount: 1,
        offset: 0, source: "ChromeOS EC lid angle")
    }
    return nil
  }
}

/// `iio-poll-hinge`: the kernel's hinge or lid angle (`HingeAngleDescription`) read on a timer
/// at the accelerometer's `poll-rate`, delivered in degrees.
public enum IIOPollHinge: SensorDriver {
  /// `iio-poll-hinge`.
  public static let name = "iio-poll-hinge"
  /// `iio`.
  public static let subsystems: Set<String> = ["iio"]

  /// The device's hinge angle sensor, if it is one.
  public static func discover(_ device: UdevDevice, _ context: DiscoveryContext) -> [Sensor] {
    guard device.subsystem == "iio" else { return [] }
    let syspath = device.syspath
    let read = { (attribute: String) -> String? in
      Sysfs.readIfPresent("\(syspath)/\(attribute)").map { String($0.trimming()) }
    }
    guard
      let d = HingeAngleDescription.describe(
        syspath: syspath, sysname: device.sysname, read: read)
    else { return [] }
    return [
      Sensor(
        kinds: [.hinge], syspath: syspath, sysname: device.sysname, drivers: [name],
        detail: .hingeAngle(d))
    ]
  }

  /// Polled at `poll-rate`.
  public static func plan(_ sensor: Sensor, _ configuration: SensorsConfiguration) -> (
    mode: SamplingMode, rate: Double
  ) { (.polled, configuration.sampling.pollRate) }

  /// Opens the attribute and polls it.
  public static func open(
    _ sensor: Sensor, _ context: OpenContext, deliver: @escaping (SensorEvent) -> Void
  ) throws(SensorError) -> any SensorReader {
    guard case .hingeAngle(let d) = sensor.detail else {
      throw SensorError(.unavailable, "\(sensor.sysname) is not a hinge angle sensor")
    }
    let rate = max(context.configuration.sampling.pollRate, 0.1)
    context.logger.debug("\(d.sysname): \(d.source) at \(rate) Hz")
    return try PolledAttributeReader(
      sysname: d.sysname, paths: ["\(d.syspath)/\(d.attribute)"],
      interval: .nanoseconds(Int64(1e9 / rate)), parser: HingeAngleParser(info: d),
      loop: context.loop, logger: context.logger, deliver: deliver)
  }
}

/// A hinge angle attribute's value in degrees (`SensorValue.angle`); a value that is no angle
/// (the EC's "unreliable" 500) is skipped, not counted as a failed read.
struct HingeAngleParser: AttributeParser {
  let info: HingeAngleDescription

  func parse(_ texts: [String]) -> Result<SensorValue, AttributeProblem> {
    guard let raw = Double((texts.first ?? "").trimming()),
      let degrees = info.degrees(raw: raw)
    else {
      return .failure(
        AttributeProblem(
          message: "not an angle of 0 to 360 degrees (skipped)", isFailure: false))
    }
    return .success(.angle(degrees))
  }
}
