import OrientCore

/// A sensor as a driver discovered it: the device, what it can serve, how it reads, and its
/// description (pure data, made from what udev and sysfs say).
public struct Sensor: Equatable, Sendable {
  /// The kinds it can serve; each kind's choice (`SensorKind.choose`) picks among them.
  public var kinds: [SensorKind]
  /// The device's sysfs path.
  public var syspath: String
  /// `iio:device2`, `event4`, `applesmc.768`, ...
  public var sysname: String
  /// The drivers that can read it, best first (`SensorDrivers.named`): an IIO accelerometer
  /// with a buffer and `_raw` attributes has `iio-buffer-accel` then `iio-poll-accel`.
  public var drivers: [String]
  /// What the drivers need to read it and what its readings mean.
  public var detail: SensorDetail

  /// Creates a sensor.
  public init(
    kinds: [SensorKind], syspath: String, sysname: String, drivers: [String],
    detail: SensorDetail
  ) {
    self.kinds = kinds
    self.syspath = syspath
    self.sysname = sysname
    self.drivers = drivers
    self.detail = detail
  }

  /// The accelerometer's description (display and base accelerometers).
  public var accelerometer: AccelerometerDescription? {
    if case .accelerometer(let d) = detail { return d }
    return nil
  }

  /// The hinge angle sensor's description.
  public var hingeAngle: HingeAngleDescription? {
    if case .hingeAngle(let d) = detail { return d }
    return nil
  }

  /// The gyroscope's or rotation sensor's description.
  public var motion: MotionDescription? {
    if case .motion(let d) = detail { return d }
    return nil
  }

  /// The light, proximity or compass sensor's description.
  public var ambient: AmbientDescription? {
    if case .ambient(let d) = detail { return d }
    return nil
  }
}

/// What a sensor is, by family: a new family of sensors adds a case.
public enum SensorDetail: Equatable, Sendable {
  /// An accelerometer (IIO or input subsystem): location, calibration, frequencies.
  case accelerometer(AccelerometerDescription)
  /// A light, proximity or compass sensor: the attribute or channel, scale, unit, near level.
  case ambient(AmbientDescription)
  /// A hinge angle the kernel reports (`IIOPollHinge`).
  case hingeAngle(HingeAngleDescription)
  /// A gyroscope or a device-rotation sensor (`MotionDescription`).
  case motion(MotionDescription)
}

/// How a sensor is being read.
public enum SamplingMode: String, Equatable, Sendable {
  /// The IIO buffer (`/dev/iio:deviceN`): the kernel pushes scans, stamped by the kernel.
  case buffered
  /// Attributes read on a timer.
  case polled
  /// An evdev node, read as the driver reports (`EV_ABS`, `EV_SW`).
  case events
}

/// One reading, calibrated once by the reader that made it.
public struct Reading: Equatable, Sendable {
  /// When: the kernel's scan timestamp in buffered mode (converted from the device's clock),
  /// the time of the read otherwise.
  public var time: MonotonicTime
  /// The value.
  public var value: SensorValue

  /// Creates a reading.
  public init(time: MonotonicTime, value: SensorValue) {
    self.time = time
    self.value = value
  }

  /// The acceleration, if it is one.
  public var acceleration: Vector3? {
    if case .acceleration(let v) = value { return v }
    return nil
  }
}

/// What a reading says; a new kind of quantity adds a case.
public enum SensorValue: Equatable, Sendable {
  /// Gravity plus acceleration in m/s^2 in the display frame (`M x ((raw + offset) * scale)`).
  case acceleration(Vector3)
  /// A light level in `unit`.
  case light(Double, LightUnit)
  /// Whether something is near.
  case proximity(near: Bool)
  /// The heading in degrees from north.
  case heading(Double)
  /// An angle in degrees (a hinge's: 0 closed, 180 flat, 360 folded back).
  case angle(Double)
  /// An angular velocity in rad/s in the display frame.
  case angularVelocity(Vector3)
  /// A rotation from the display frame to the earth frame (unit quaternion).
  case rotation(Quaternion)
  /// A magnetic field in the display frame (the sensor's unit: gauss for IIO).
  case magneticField(Vector3)
}

/// What a running reader tells its owner.
public enum SensorEvent: Sendable {
  /// A reading.
  case reading(Reading)
  /// The device went away (ENODEV/ENOENT/ENXIO, hang-up); the reader has stopped itself.
  case gone(String)
  /// The reader gets nothing any more although it keeps trying (a buffer that stopped
  /// delivering scans, also after re-enabling it); the owner may read the device another way.
  case stalled(String)
  /// The reader runs at another rate than it did (its `rate` says which): a reader of two
  /// kinds reconfigured for the other kind.
  case retuned(String)
}

/// The sensor in use for one kind, as consumers (D-Bus properties, `orientd record`) describe
/// it.
public struct SensorStatus: Equatable, Sendable {
  /// The sensor.
  public var sensor: Sensor
  /// How it is read (or would be read once started).
  public var mode: SamplingMode
  /// Readings per second: the poll rate, the device's sampling frequency when buffered, 0
  /// when the driver decides (events).
  public var rate: Double
  /// The trigger orientd attached, if it attached one.
  public var trigger: String?
  /// Whether it is being read right now.
  public var isSampling: Bool

  /// Creates a status.
  public init(
    sensor: Sensor, mode: SamplingMode, rate: Double, trigger: String? = nil,
    isSampling: Bool
  ) {
    self.sensor = sensor
    self.mode = mode
    self.rate = rate
    self.trigger = trigger
    self.isSampling = isSampling
  }

  /// Whether this is `other` read at another rate only (a reader retuned to its clients, or
  /// a device's frequency taken up by the other kind it serves): the same sensor, read the
  /// same way, so its consumers go on where they were.
  public func isRetune(of other: SensorStatus) -> Bool {
    var same = self
    same.rate = other.rate
    return same == other
  }

  /// The accelerometer's description (display and base accelerometers).
  public var accelerometer: AccelerometerDescription? { sensor.accelerometer }
}
