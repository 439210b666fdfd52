import DeviceDiscovery

/// `iio-poll-magn`: an IIO magnetometer's `in_magn_{x,y,z}_raw` polled on a timer, for the
/// fused rotation's heading (hid-sensor-magn-3d, `bmc150_magn`, `ak8975`).
public enum IIOPollMagnetometer: SensorDriver {
  /// `iio-poll-magn`.
  public static let name = "iio-poll-magn"
  /// `iio`.
  public static let subsystems: Set<String> = ["iio"]
  /// The device's magnetometer, if it has one.
  public static func discover(_ device: UdevDevice, _ context: DiscoveryContext) -> [Sensor] {
    motionSensors(device, kind: .magnetometer, driver: name, buffered: false)
  }
  /// At the device's frequency up to 100 Hz (`MotionDescription.pollRate`).
  public static func plan(_ sensor: Sensor, _ c: SensorsConfiguration) -> (
    mode: SamplingMode, rate: Double
  ) { (.polled, sensor.motion?.pollRate ?? 50) }
  /// Starts reading.
  public static func open(
    _ sensor: Sensor, _ context: OpenContext, deliver: @escaping (SensorEvent) -> Void
  ) throws(SensorError) -> any SensorReader {
    try openMotionPolled(sensor, context, deliver: deliver)
  }
}
