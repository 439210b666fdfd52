import DeviceDiscovery

/// `iio-buffer-compass`: a HID sensor hub's heading, only as a scan element.
public enum IIOBufferCompass: SensorDriver {
  /// `iio-buffer-compass`.
  public static let name = "iio-buffer-compass"
  /// `iio`.
  public static let subsystems: Set<String> = ["iio"]
  /// The compasses read through the buffer.
  public static func discover(_ device: UdevDevice, _ context: DiscoveryContext) -> [Sensor] {
    ambientSensors(device, context, kind: .compass, driver: name, isBuffered)
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
