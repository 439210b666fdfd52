import DeviceDiscovery

/// `iio-buffer-gyro`: an IIO gyroscope read through its buffer (`anglvel` scan elements), every scan a reading.
public enum IIOBufferGyroscope: SensorDriver {
  /// `iio-buffer-gyro`.
  public static let name = "iio-buffer-gyro"
  /// `iio`.
  public static let subsystems: Set<String> = ["iio"]
  /// The device's gyroscope, if this driver can read it.
  public static func discover(_ device: UdevDevice, _ context: DiscoveryContext) -> [Sensor] {
    motionSensors(device, kind: .gyroscope, driver: name, buffered: true)
  }
  /// Not in `[sampling] mode = polled`.
  public static func isEnabled(by configuration: SensorsConfiguration) -> Bool {
    configuration.sampling.mode != .polled
  }
  /// At the device's frequency.
  public static func plan(_ sensor: Sensor, _ c: SensorsConfiguration) -> (
    mode: SamplingMode, rate: Double
  ) { (.buffered, sensor.motion?.samplingFrequency ?? 0) }
  /// Starts reading.
  public static func open(
    _ sensor: Sensor, _ context: OpenContext, deliver: @escaping (SensorEvent) -> Void
  ) throws(SensorError) -> any SensorReader {
    try openMotionBuffered(sensor, context, deliver: deliver)
  }
}
