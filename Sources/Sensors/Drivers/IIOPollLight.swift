import DeviceDiscovery

/// `iio-poll-als`: an IIO light sensor's `in_illuminance_*` or `in_intensity_*` attribute.
public enum IIOPollLight: SensorDriver {
  /// `iio-poll-als`.
  public static let name = "iio-poll-als"
  /// `iio`.
  public static let subsystems: Set<String> = ["iio"]
  /// The light sensors with an attribute to poll.
  public static func discover(_ device: UdevDevice, _ context: DiscoveryContext) -> [Sensor] {
    ambientSensors(device, context, kind: .light, driver: name, isPolled)
  }
  /// Every `light-interval`.
  public static func plan(_ sensor: Sensor, _ c: SensorsConfiguration) -> (
    mode: SamplingMode, rate: Double
  ) { pollPlan(sensor, c) }
  /// Polls the attribute.
  public static func open(
    _ sensor: Sensor, _ context: OpenContext, deliver: @escaping (SensorEvent) -> Void
  ) throws(SensorError) -> any SensorReader { try openPolled(sensor, context, deliver: deliver) }
}
