import DeviceDiscovery

/// `iio-poll-accel`: an IIO accelerometer's `in_accel_{x,y,z}_raw` read on a timer
/// (`PollSampler`).
public enum IIOPollAccelerometer: SensorDriver {
  /// `iio-poll-accel`.
  public static let name = "iio-poll-accel"
  /// `iio`.
  public static let subsystems: Set<String> = ["iio"]
  /// After a buffer that could not be used.
  public static let takeOverNote = "polling instead"
  /// After a buffer that stalled.
  public static let stallNote = "polling it instead"

  /// Every IIO accelerometer: one without `_raw` attributes (buffer only, or not even that)
  /// is listed all the same, and opening it says why it cannot be polled.
  public static func discover(_ device: UdevDevice, _ context: DiscoveryContext) -> [Sensor] {
    let facts = context.facts(of: device)
    guard facts.isAccelerometer, !facts.isInputAccelerometer else { return [] }
    return [Sensor.accelerometer(facts, context, driver: name)]
  }

  /// Not in `[sampling] mode = buffered`.
  public static func isEnabled(by configuration: SensorsConfiguration) -> Bool {
    configuration.sampling.mode != .buffered
  }

  /// Polled at `poll-rate`.
  public static func plan(_ sensor: Sensor, _ configuration: SensorsConfiguration) -> (
    mode: SamplingMode, rate: Double
  ) { (.polled, configuration.sampling.pollRate) }

  /// Opens the three attributes and polls them.
  public static func open(
    _ sensor: Sensor, _ context: OpenContext, deliver: @escaping (SensorEvent) -> Void
  ) throws(SensorError) -> any SensorReader {
    guard let d = sensor.accelerometer else {
      throw SensorError(.unavailable, "\(sensor.sysname) is not an accelerometer")
    }
    guard d.canPoll else {
      throw SensorError(
        .unavailable,
        "\(d.sysname): no way to read it in mode \(context.configuration.sampling.mode)")
    }
    let sampling = context.configuration.sampling
    do {
      return try PollSampler(
        description: d, rate: sampling.pollRate, adaptive: sampling.adaptive,
        loop: context.loop, logger: context.logger, handler: deliver)
    } catch {
      throw SensorError(
        error.isDeviceGone ? .gone : .unavailable,
        error.isDeviceGone ? error.description : "\(d.sysname): cannot poll: \(error)")
    }
  }
}

extension Sensor {
  /// An accelerometer read by `driver`: it may serve the display or the base (the choice
  /// looks at its location).
  static func accelerometer(_ facts: DeviceFacts, _ context: DiscoveryContext, driver: String)
    -> Sensor
  {
    Sensor(
      kinds: [.accelerometer, .baseAccelerometer], syspath: facts.syspath,
      sysname: facts.sysname, drivers: [driver],
      detail: .accelerometer(
        AccelerometerDescription(facts: facts, configuration: context.configuration.accelerometer)))
  }

  /// A light, proximity or compass sensor read by `driver`.
  static func ambient(_ info: AmbientDescription, driver: String) -> Sensor {
    Sensor(
      kinds: [info.kind], syspath: info.syspath, sysname: info.sysname, drivers: [driver],
      detail: .ambient(info))
  }
}
