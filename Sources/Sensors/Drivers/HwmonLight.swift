import DeviceDiscovery

/// `hwmon-als`: applesmc's `light` attribute, `(left,right)`, on the platform device.
public enum HwmonLight: SensorDriver {
  /// `hwmon-als`.
  public static let name = "hwmon-als"
  /// `hwmon` and `platform` (the attribute sits on the platform device, not its hwmon child).
  public static let subsystems: Set<String> = ["hwmon", "platform"]
  /// The device's `light` attribute.
  public static func discover(_ device: UdevDevice, _ context: DiscoveryContext) -> [Sensor] {
    ambientSensors(device, context, kind: .light, driver: name) { $0 == .hwmonLight }
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
