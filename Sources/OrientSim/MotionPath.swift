import OrientCore

#if canImport(Glibc)
  import Glibc
#endif

/// A scripted motion in three dimensions, for the fusion benchmark: heading (yaw), pitch and
/// roll keyframes with wobble, linear acceleration, a vehicle's cornering and magnets brought
/// near, all in the earth frame (x east, y magnetic north, z up).
///
/// The orientation is `Rz(yaw) Rx(pitch) Ry(roll)` from the display frame to the earth frame:
/// all zero is the device lying face up with its top edge pointing north; pitch 90 holds it
/// upright facing south (towards a user looking north).
public struct MotionPath: OrientationTruth, Sendable {
  /// One pose, reached at `time` (degrees).
  public struct Key: Sendable, Equatable {
    /// When it is reached.
    public var time: Double
    /// Rotation about vertical, degrees (unwrapped).
    public var yaw: Double
    /// Rotation about the display's x axis, degrees.
    public var pitch: Double
    /// Rotation about the display's y axis, degrees.
    public var roll: Double
    /// How the pose moves from the previous key.
    public var easing: Keyframe.Easing

    /// Creates a key.
    public init(
      time: Double, yaw: Double, pitch: Double, roll: Double,
      easing: Keyframe.Easing = .minimumJerk
    ) {
      self.time = time
      self.yaw = yaw
      self.pitch = pitch
      self.roll = roll
      self.easing = easing
    }
  }

  /// A magnet near the device between `start` and `end` (raised-cosine ramps of `ramp`).
  public struct Magnet: Sendable, Equatable {
    /// When it starts to come near.
    public var start: Double
    /// When it has gone.
    public var end: Double
    /// Ramp time.
    public var ramp: Double
    /// The extra field at full strength, uT, in the earth frame.
    public var field: Vector3

    /// Creates a disturbance.
    public init(start: Double, end: Double, ramp: Double, field: Vector3) {
      self.start = start
      self.end = end
      self.ramp = ramp
      self.field = field
    }
  }

  /// Keys in time order; the pose holds before the first and after the last.
  public var keys: [Key]
  /// Extra rotation about vertical, degrees.
  public var yawWobble: [Oscillation] = []
  /// Extra pitch, degrees.
  public var pitchWobble: [Oscillation] = []
  /// Extra roll, degrees.
  public var rollWobble: [Oscillation] = []
  /// Linear acceleration per earth axis, in g.
  public var vibration: (x: [Oscillation], y: [Oscillation], z: [Oscillation]) = ([], [], [])
  /// Acceleration pulses (earth frame, g): impacts, heel strikes, braking.
  public var pulses: [Pulse] = []
  /// Speed of a vehicle carrying the device along its heading (m/s): a change of heading then
  /// brings the centripetal acceleration of a corner.
  public var vehicleSpeed = 0.0
  /// Magnets brought near.
  public var magnets: [Magnet] = []
  /// Length in seconds.
  public var duration: Double

  /// Creates a path.
  public init(keys: [Key], duration: Double) {
    self.keys = keys
    self.duration = duration
  }

  /// The keyed pose at `t`, without wobble (degrees).
  public func keyPose(at t: Double) -> (yaw: Double, pitch: Double, roll: Double) {
    guard let first = keys.first else { return (0, 0, 0) }
    if t <= first.time { return (first.yaw, first.pitch, first.roll) }
    var low = 0
    var high = keys.count
    while low < high {
      let mid = (low + high) / 2
      if keys[mid].time <= t { low = mid + 1 } else { high = mid }
    }
    guard low < keys.count else {
      let last = keys[keys.count - 1]
      return (last.yaw, last.pitch, last.roll)
    }
    let a = keys[low - 1]
    let b = keys[low]
    let span = b.time - a.time
    guard span > 0 else { return (b.yaw, b.pitch, b.roll) }
    let u = (t - a.time) / span
    let s = b.easing.progress(u)
    return (
      a.yaw + (b.yaw - a.yaw) * s, a.pitch + (b.pitch - a.pitch) * s,
      a.roll + (b.roll - a.roll) * s
    )
  }

  /// The pose with wobble (degrees).
  public func pose(at t: Double) -> (yaw: Double, pitch: Double, roll: Double) {
    var (yaw, pitch, roll) = keyPose(at: t)
    for o in yawWobble { yaw += o.value(at: t) }
    for o in pitchWobble { pitch += o.value(at: t) }
    for o in rollWobble { roll += o.value(at: t) }
    return (yaw, pitch, roll)
  }

  /// The rotation from the display frame to the earth frame at `t`.
  public func orientation(at t: Double) -> Quaternion {
    let (yaw, pitch, roll) = pose(at: t)
    let r = Double.pi / 180
    return Quaternion(axis: Vector3(0, 0, 1), angle: yaw * r)
      * Quaternion(axis: Vector3(1, 0, 0), angle: pitch * r)
      * Quaternion(axis: Vector3(0, 1, 0), angle: roll * r)
  }

  /// The linear acceleration of the device at `t`, m/s^2, earth frame.
  public func linearAcceleration(at t: Double) -> Vector3 {
    let g = standardGravity
    var a = Vector3.zero
    for o in vibration.x { a.x += o.value(at: t) * g }
    for o in vibration.y { a.y += o.value(at: t) * g }
    for o in vibration.z { a.z += o.value(at: t) * g }
    for p in pulses where t > p.start && t < p.start + p.duration {
      a = a + p.peak * (pulseEnvelope(t - p.start, rise: p.rise, hold: p.hold) * g)
    }
    if vehicleSpeed > 0 {
      // Velocity along the keyed heading; its derivative is the corner's acceleration.
      let h = 1e-3
      let y0 = keyPose(at: t - h).yaw * Double.pi / 180
      let y1 = keyPose(at: t + h).yaw * Double.pi / 180
      let rate = (y1 - y0) / (2 * h)
      let yaw = keyPose(at: t).yaw * Double.pi / 180
      a = a + Vector3(-cos(yaw), -sin(yaw), 0) * (vehicleSpeed * rate)
    }
    return a
  }

  /// The extra magnetic field at `t`, uT, earth frame.
  public func magneticDisturbance(at t: Double) -> Vector3 {
    var field = Vector3.zero
    for m in magnets where t > m.start && t < m.end {
      field = field + m.field * rampEnvelope(t, start: m.start, end: m.end, ramp: m.ramp)
    }
    return field
  }

  /// The ideal accelerometer reading (m/s^2, display frame, orientd's convention: the reading
  /// points along gravity, less the linear acceleration).
  public func reading(at t: Double) -> Vector3 {
    let a = linearAcceleration(at: t)
    return orientation(at: t).conjugate.rotate(Vector3(-a.x, -a.y, -standardGravity - a.z))
  }
}

/// Turns a path into the samples of an accelerometer, a gyroscope and (optionally) a
/// magnetometer read together (one IMU chip), with the truth at each sample.
public enum MotionSynthesizer {
  /// Samples `path` at the gyroscope's rate; the magnetometer (if any) is read at the nearest
  /// lower rate that divides it.
  public static func samples(
    of path: MotionPath, accelerometer: SimulatedSensor, gyroscope: SimulatedGyroscope,
    magnetometer: SimulatedMagnetometer?, random: inout SimRandom
  ) -> [MotionSample] {
    var gyro = gyroscope
    let rate = gyro.profile.rate
    let period = 1 / rate
    let sub = max(1, Int((400 / rate).rounded(.up)))
    let count = Int(path.duration * rate)
    let every = magnetometer.map { max(1, Int((rate / $0.rate).rounded())) } ?? 0
    var out: [MotionSample] = []
    out.reserveCapacity(count)
    for k in 1...max(1, count) {
      let time = Double(k) * period
      var sum = Vector3.zero
      for i in 0..<sub {
        sum = sum + path.reading(at: time - period + (Double(i) + 0.5) * period / Double(sub))
      }
      let acceleration = accelerometer.measure(sum * (1 / Double(sub)), random: &random)
      let omega = gyro.measure(path.meanRate(from: time - period, to: time), random: &random)
      let truth = path.orientation(at: time)
      var field: Vector3?
      if let magnetometer, every > 0, k % every == 0 {
        field = magnetometer.measure(
          orientation: truth, disturbance: path.magneticDisturbance(at: time), random: &random)
      }
      out.append(
        MotionSample(
          time: time, acceleration: acceleration, gyro: omega, magneticField: field, truth: truth))
    }
    return out
  }
}
