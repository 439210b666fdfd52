import DeviceDiscovery

/// `iio-poll-proximity`: an IIO proximity sensor's `in_proximity_raw`, near above its level.
public enum IIOPollProximity: SensorDriver {
  /// `iio-poll-proximity`.
  public static let name = "iio-poll-proximity"
  /// `iio`.
  public static let subsystems: Set<String> = ["iio"]
  /// The proximity sensors with an attribute to poll.
  public static func discover(_ device: UdevDevice, _ context: DiscoveryContext) -> [Sensor] {
    ambientSensors(device, context, kind: .proximity, driver: name, isPolled)
  }
  /// Every `proximity-interval`.
  public static func plan(_ sensor: Sensor, _ c: SensorsConfiguration) -> (
    mode: SamplingMode, rate: Double
  ) { pollPlan(sensor, c) }
  /// Polls the attribute.
  public static func open(
    _ sensor: Sensor, _ context: OpenContext, deliver: @escaping (SensorEvent) -> Void
  ) throws(SensorError) -> any SensorReader { try openPolled(sensor, context, deliver: deliver) }
}
