import DeviceDiscovery
import SystemKit

/// `iio-buffer-imu`: an IIO device that is an accelerometer and a gyroscope at once (BMI160,
/// BMI260/270: `in_accel_*` and `in_anglvel_*` scan elements, one buffer), both kinds read
/// from its one buffer by one reader (`SharedIMUBuffer`): only the channels of the kinds
/// wanted are enabled, and a kind that comes or goes while the other is read reconfigures it.
public enum IIOBufferIMU: SensorDriver {
  /// `iio-buffer-imu`.
  public static let name = "iio-buffer-imu"
  /// `iio`.
  public static let subsystems: Set<String> = ["iio"]

  /// The accelerometer and the gyroscope of a device with both kinds of scan elements and a
  /// node.
  public static func discover(_ device: UdevDevice, _ context: DiscoveryContext) -> [Sensor] {
    guard let gyroscope = gyroscope(device, context) else { return [] }
    return [Sensor.accelerometer(context.facts(of: device), context, driver: name), gyroscope]
  }

  /// The gyroscope of `device` when it shares the buffer with an accelerometer.
  static func gyroscope(_ device: UdevDevice, _ context: DiscoveryContext) -> Sensor? {
    let facts = context.facts(of: device)
    guard facts.isAccelerometer, !facts.isInputAccelerometer, facts.hasScanElements,
      facts.devnode != nil,
      let gyroscope = motionSensors(device, kind: .gyroscope, driver: name, buffered: true)
        .first
    else { return nil }
    return gyroscope
  }

  /// Not in `[sampling] mode = polled`.
  public static func isEnabled(by configuration: SensorsConfiguration) -> Bool {
    configuration.sampling.mode != .polled
  }

  /// The accelerometer as `iio-buffer-accel` plans it; the gyroscope at the frequency it takes
  /// when nobody asks for a rate.
  public static func plan(_ sensor: Sensor, _ configuration: SensorsConfiguration) -> (
    mode: SamplingMode, rate: Double
  ) {
    if let motion = sensor.motion { return (.buffered, motion.bufferedFrequency(for: 0).value) }
    return IIOBufferAccelerometer.plan(sensor, configuration)
  }

  /// Leases the sensor's kind of the device's one reader.
  public static func open(
    _ sensor: Sensor, _ context: OpenContext, deliver: @escaping (SensorEvent) -> Void
  ) throws(SensorError) -> any SensorReader {
    try IMULease(
      sensor.motion != nil ? .gyroscope : .accelerometer, sensor, context, deliver: deliver)
  }
}
