import DeviceDiscovery

/// `iio-buffer-als`: an IIO light sensor that has only a scan element (a HID sensor hub's).
public enum IIOBufferLight: SensorDriver {
  /// `iio-buffer-als`.
  public static let name = "iio-buffer-als"
  /// `iio`.
  public static let subsystems: Set<String> = ["iio"]
  /// The light sensors read through the buffer.
  public static func discover(_ device: UdevDevice, _ context: DiscoveryContext) -> [Sensor] {
    ambientSensors(device, context, kind: .light, driver: name, isBuffered)
  }
  /// As the hub reports.
  public static func plan(_ sensor: Sensor, _ c: SensorsConfiguration) -> (
    mode: SamplingMode, rate: Double
  ) { (.buffered, 0) }
  /// Reads the channel through the buffer.
  public static func open(
    _ sensor: Sensor, _ context: OpenContext, deliver: @escaping (SensorEvent) -> Void
  ) throws(SensorError) -> any SensorReader { try openBuffered(sensor, context, deliver: deliver) }
}
