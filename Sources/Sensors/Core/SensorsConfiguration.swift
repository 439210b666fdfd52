/// How the sensor layer reads: the accelerometers' `[sampling]` and `[device "..."]`
/// settings, and the poll intervals of the ambient sensors.
public struct SensorsConfiguration: Equatable, Sendable {
  /// `[sampling]` (the accelerometers' keys) and `[device "..."]`.
  public var accelerometer = AccelerometerConfiguration()
  /// `light-interval`, `proximity-interval` (in `[sampling]` in the file).
  public var ambient = AmbientConfiguration()

  /// The defaults.
  public init() {}

  /// The accelerometers' sampling settings.
  public var sampling: SamplingConfiguration {
    get { accelerometer.sampling }
    set { accelerometer.sampling = newValue }
  }
}

/// How often polled ambient sensors are read while claimed.
public struct AmbientConfiguration: Equatable, Sendable {
  /// How often a polled light sensor (and the compass) is read (`light-interval`, seconds).
  public var lightInterval: Duration = .milliseconds(500)
  /// How often a polled proximity sensor is read (`proximity-interval`, seconds): fast, since
  /// it blanks a phone's screen in a call; iio-sensor-proxy reads every 0.7 s.
  public var proximityInterval: Duration = .milliseconds(200)

  /// The defaults.
  public init() {}

  /// The poll interval of `kind`.
  public func interval(for kind: SensorKind) -> Duration {
    kind == .proximity ? proximityInterval : lightInterval
  }
}
