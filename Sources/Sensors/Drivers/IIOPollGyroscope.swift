import DeviceDiscovery

/// `iio-poll-gyro`: an IIO gyroscope's `in_anglvel_{x,y,z}_raw` polled on a timer.
public enum IIOPollGyroscope: SensorDriver {
  /// `iio-poll-gyro`.
  public static let name = "iio-poll-gyro"
  /// `iio`.
  public static let subsystems: Set<String> = ["iio"]
  /// The device's gyroscope, if this driver can read it.
  public static func discover(_ device: UdevDevice, _ context: DiscoveryContext) -> [Sensor] {
    motionSensors(device, kind: .gyroscope, driver: name, buffered: false)
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
