import DeviceDiscovery

/// `iio-buffer-rotation`: hid-sensor-rotation's quaternion read through the buffer (`in_rot_quaternion`).
public enum IIOBufferRotation: SensorDriver {
  /// `iio-buffer-rotation`.
  public static let name = "iio-buffer-rotation"
  /// `iio`.
  public static let subsystems: Set<String> = ["iio"]
  /// The device's rotation, if this driver can read it.
  public static func discover(_ device: UdevDevice, _ context: DiscoveryContext) -> [Sensor] {
    motionSensors(device, kind: .rotation, driver: name, buffered: true)
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
