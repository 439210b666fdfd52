import DeviceDiscovery

/// `iio-poll-compass`: a magnetometer's `in_rot_from_north_*` heading attribute.
public enum IIOPollCompass: SensorDriver {
  /// `iio-poll-compass`.
  public static let name = "iio-poll-compass"
  /// `iio`.
  public static let subsystems: Set<String> = ["iio"]
  /// The compasses with an attribute to poll.
  public static func discover(_ device: UdevDevice, _ context: DiscoveryContext) -> [Sensor] {
    ambientSensors(device, context, kind: .compass, driver: name, isPolled)
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
