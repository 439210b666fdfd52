import OrientCore

#if canImport(Glibc)
  import Glibc
#endif

/// The scripted pose of the device: its in-plane rotation and back-tilt at given times.
///
/// `angle` is the clockwise device rotation in degrees (0 normal, 90 left-up, 180 bottom-up,
/// 270 right-up), unwrapped so a 180 degree turn is a change of +-180. `tilt` is how far the
/// display leans back from vertical, in degrees (90 = lying face up, -90 = face down).
public struct Keyframe: Sendable, Equatable {
  /// How the pose moves from the previous keyframe to this one.
  public enum Easing: Sendable, Equatable {
    /// Minimum-jerk profile (how hands move): slow start, fast middle, slow end.
    case minimumJerk
    /// Constant angular speed (the slow sweep).
    case linear
    /// Constant angular speed reached and left through short, equal ramps of constant
    /// acceleration, each `ramp` of the duration (0 < ramp <= 0.5): a hand turning the device
    /// at an even pace.
    case trapezoid(ramp: Double)

    /// How far along the stroke the pose is at `tau`, its share of the stroke's time (0...1).
    public func progress(_ tau: Double) -> Double {
      switch self {
      case .linear: tau
      case .minimumJerk: tau * tau * tau * (10 - 15 * tau + 6 * tau * tau)
      case .trapezoid(let ramp): trapezoidProgress(tau, ramp: ramp)
      }
    }
  }

  /// When the pose is reached, in seconds.
  public var time: Double
  /// In-plane clockwise rotation in degrees (unwrapped).
  public var angle: Double
  /// Back-tilt in degrees.
  public var tilt: Double
  /// Interpolation from the previous keyframe.
  public var easing: Easing

  /// Creates a keyframe.
  public init(time: Double, angle: Double, tilt: Double, easing: Easing = .minimumJerk) {
    self.time = time
    self.angle = angle
    self.tilt = tilt
    self.easing = easing
  }
}

/// A sinusoid switched on between `start` and `end` with raised-cosine ramps.
public struct Oscillation: Sendable, Equatable {
  /// Peak value (degrees for angles, g for accelerations).
  public var amplitude: Double
  /// Frequency in Hz.
  public var frequency: Double
  /// Phase in radians.
  public var phase: Double
  /// When it starts ramping up.
  public var start: Double
  /// When it has ramped down.
  public var end: Double
  /// Ramp duration at each end, in seconds.
  public var ramp: Double

  /// Creates an oscillation (by default always on).
  public init(
    amplitude: Double, frequency: Double, phase: Double, start: Double = -.infinity,
    end: Double = .infinity, ramp: Double = 0
  ) {
    self.amplitude = amplitude
    self.frequency = frequency
    self.phase = phase
    self.start = start
    self.end = end
    self.ramp = ramp
  }

  /// The value at `t`.
  @inlinable
  public func value(at t: Double) -> Double {
    guard t > start, t < end else { return 0 }
    let envelope = rampEnvelope(t, start: start, end: end, ramp: ramp)
    return envelope * amplitude * sin(2 * Double.pi * frequency * t + phase)
  }
}

/// A smooth acceleration pulse in the world frame: ramps up over `rise`, holds, ramps down.
///
/// Impacts are short pulses (tens of ms), car corners long ones (seconds).
public struct Pulse: Sendable, Equatable {
  /// When it starts.
  public var start: Double
  /// Ramp time at each end.
  public var rise: Double
  /// Time at full value between the ramps.
  public var hold: Double
  /// Peak acceleration in g, world frame (x right, y up, z towards the user).
  public var peak: Vector3

  /// Creates a pulse.
  public init(start: Double, rise: Double, hold: Double, peak: Vector3) {
    self.start = start
    self.rise = rise
    self.hold = hold
    self.peak = peak
  }

  /// The total duration.
  public var duration: Double { 2 * rise + hold }
}

/// A hand moving the device from one place to another (minimum-jerk displacement).
public struct Translation: Sendable, Equatable {
  /// When it starts.
  public var start: Double
  /// How long it takes.
  public var duration: Double
  /// The displacement in metres, world frame.
  public var displacement: Vector3

  /// Creates a translation.
  public init(start: Double, duration: Double, displacement: Vector3) {
    self.start = start
    self.duration = duration
    self.displacement = displacement
  }
}

/// A complete scripted motion: pose keyframes plus wobble, vibration, impacts and hand motion.
///
/// The world frame has x to the right, y up and z towards the user. The reading of an ideal
/// sensor (Linux IIO convention, see `Sample`) is R^T (g - a): gravity (0, -g, 0) minus the
/// linear acceleration a of the sensor, both rotated into the display frame. The sensor sits
/// `leverArm` away from the point the hand rotates the device about, so rotations add
/// centripetal and tangential acceleration, as they do in a real hand.
public struct MotionScript: Sendable {
  /// Pose keyframes in time order; the pose holds before the first and after the last.
  public var keyframes: [Keyframe]
  /// Extra in-plane rotation (degrees): tremor, sway, shaking.
  public var angleWobble: [Oscillation] = []
  /// Extra back-tilt (degrees).
  public var tiltWobble: [Oscillation] = []
  /// Linear acceleration per world axis (g).
  public var vibration: (x: [Oscillation], y: [Oscillation], z: [Oscillation]) = ([], [], [])
  /// Acceleration pulses, sorted by start.
  public private(set) var pulses: [Pulse] = []
  private var longestPulse = 0.0
  /// Hand translations.
  public var translations: [Translation] = []
  /// Sensor position relative to the rotation centre, metres, display frame.
  public var leverArm = Vector3.zero
  /// Length of the script in seconds.
  public var duration: Double

  /// Creates a script from keyframes.
  public init(keyframes: [Keyframe], duration: Double) {
    self.keyframes = keyframes
    self.duration = duration
  }

  /// Adds pulses (kept sorted by start time).
  public mutating func addPulses(_ new: [Pulse]) {
    pulses.append(contentsOf: new)
    pulses.sort { $0.start < $1.start }
    longestPulse = pulses.map(\.duration).max() ?? 0
  }

  /// Until when the device is only held (hand wobble and tremor, which are on all along):
  /// the first keyframe that moves it, the first vibration, pulse or translation.
  public var quietUntil: Double {
    var t = duration
    for list in [vibration.x, vibration.y, vibration.z, angleWobble, tiltWobble] {
      for o in list where o.start.isFinite { t = min(t, o.start) }
    }
    for p in pulses { t = min(t, p.start) }
    for m in translations { t = min(t, m.start) }
    for (a, b) in zip(keyframes, keyframes.dropFirst()) where a.angle != b.angle || a.tilt != b.tilt
    {
      t = min(t, a.time)
      break
    }
    return t
  }

  /// The scripted (keyframe) pose at `t`, without wobble: the "true" angle the metrics use.
  public func keyPose(at t: Double) -> (angle: Double, tilt: Double) {
    guard let first = keyframes.first else { return (0, 0) }
    if t <= first.time { return (first.angle, first.tilt) }
    // Binary search for the first keyframe after t.
    var low = 0
    var high = keyframes.count
    while low < high {
      let mid = (low + high) / 2
      if keyframes[mid].time <= t { low = mid + 1 } else { high = mid }
    }
    guard low < keyframes.count else {
      let last = keyframes[keyframes.count - 1]
      return (last.angle, last.tilt)
    }
    let a = keyframes[low - 1]
    let b = keyframes[low]
    let span = b.time - a.time
    guard span > 0 else { return (b.angle, b.tilt) }
    let tau = (t - a.time) / span
    let s = b.easing.progress(tau)
    return (a.angle + (b.angle - a.angle) * s, a.tilt + (b.tilt - a.tilt) * s)
  }

  /// The pose including wobble.
  public func pose(at t: Double) -> (angle: Double, tilt: Double) {
    var (angle, tilt) = keyPose(at: t)
    for o in angleWobble { angle += o.value(at: t) }
    for o in tiltWobble { tilt += o.value(at: t) }
    return (angle, tilt)
  }

  /// Linear acceleration of the hand/vehicle at `t` in m/s^2, world frame (without the lever
  /// arm).
  public func linearAcceleration(at t: Double) -> Vector3 {
    let g = standardGravity
    var a = Vector3.zero
    for o in vibration.x { a.x += o.value(at: t) * g }
    for o in vibration.y { a.y += o.value(at: t) * g }
    for o in vibration.z { a.z += o.value(at: t) * g }
    if !pulses.isEmpty {
      // Pulses that can be active: start in (t - longest, t].
      var index = upperBound(t)
      while index > 0 {
        index -= 1
        let p = pulses[index]
        if p.start + longestPulse < t { break }
        let e = pulseEnvelope(t - p.start, rise: p.rise, hold: p.hold)
        if e != 0 { a = a + p.peak * (e * g) }
      }
    }
    for m in translations where t > m.start && t < m.start + m.duration {
      let tau = (t - m.start) / m.duration
      // Second derivative of the minimum-jerk profile.
      let s2 = (60 * tau - 180 * tau * tau + 120 * tau * tau * tau) / (m.duration * m.duration)
      a = a + m.displacement * s2
    }
    return a
  }

  /// The ideal sensor reading at `t` (m/s^2, display frame).
  public func reading(at t: Double) -> Vector3 {
    let (angle, tilt) = pose(at: t)
    var a = linearAcceleration(at: t)
    if leverArm != .zero {
      let h = 0.002
      let p0 = worldPosition(of: leverArm, angle: angle, tilt: tilt)
      let (a1, t1) = pose(at: t - h)
      let (a2, t2) = pose(at: t + h)
      let pm = worldPosition(of: leverArm, angle: a1, tilt: t1)
      let pp = worldPosition(of: leverArm, angle: a2, tilt: t2)
      a = a + (pp + pm - p0 * 2) * (1 / (h * h))
    }
    let w = Vector3(-a.x, -standardGravity - a.y, -a.z)
    return toDisplay(w, angle: angle, tilt: tilt)
  }

  private func upperBound(_ t: Double) -> Int {
    var low = 0
    var high = pulses.count
    while low < high {
      let mid = (low + high) / 2
      if pulses[mid].start <= t { low = mid + 1 } else { high = mid }
    }
    return low
  }
}

/// Progress (0...1) at `tau` (0...1) of a move at constant speed with constant-acceleration
/// ramps of `ramp` of the duration at each end.
func trapezoidProgress(_ tau: Double, ramp: Double) -> Double {
  let r = min(max(ramp, 1e-3), 0.5)
  let v = 1 / (1 - r)
  if tau < r { return v * tau * tau / (2 * r) }
  if tau > 1 - r { return 1 - v * (1 - tau) * (1 - tau) / (2 * r) }
  return v * (tau - r / 2)
}

/// A world-frame vector in the display frame for a pose: Rz(angle) Rx(tilt) w.
public func toDisplay(_ w: Vector3, angle: Double, tilt: Double) -> Vector3 {
  let b = tilt * Double.pi / 180
  let th = angle * Double.pi / 180
  let cb = cos(b)
  let sb = sin(b)
  let v = Vector3(w.x, w.y * cb - w.z * sb, w.y * sb + w.z * cb)
  let ct = cos(th)
  let st = sin(th)
  return Vector3(v.x * ct - v.y * st, v.x * st + v.y * ct, v.z)
}

/// Where a point fixed in the display frame is in the world: Rx(-tilt) Rz(-angle) r.
public func worldPosition(of r: Vector3, angle: Double, tilt: Double) -> Vector3 {
  let th = -angle * Double.pi / 180
  let ct = cos(th)
  let st = sin(th)
  let v = Vector3(r.x * ct - r.y * st, r.x * st + r.y * ct, r.z)
  let b = -tilt * Double.pi / 180
  let cb = cos(b)
  let sb = sin(b)
  return Vector3(v.x, v.y * cb - v.z * sb, v.y * sb + v.z * cb)
}

/// 0 outside [start, end], 1 inside, raised-cosine ramps of length `ramp` at both ends.
@inlinable
public func rampEnvelope(_ t: Double, start: Double, end: Double, ramp: Double) -> Double {
  guard ramp > 0 else { return 1 }
  if t < start + ramp { return 0.5 - 0.5 * cos(Double.pi * (t - start) / ramp) }
  if t > end - ramp { return 0.5 - 0.5 * cos(Double.pi * (end - t) / ramp) }
  return 1
}

/// The shape of a `Pulse` at time `s` after its start.
func pulseEnvelope(_ s: Double, rise: Double, hold: Double) -> Double {
  if s <= 0 { return 0 }
  if s < rise { return 0.5 - 0.5 * cos(Double.pi * s / rise) }
  if s <= rise + hold { return 1 }
  let d = s - rise - hold
  if d < rise { return 0.5 + 0.5 * cos(Double.pi * d / rise) }
  return 0
}

/// Turns a script into the samples a simulated sensor delivers.
public enum TraceSynthesizer {
  /// Samples `script` from time 0 to its duration.
  ///
  /// Each sample averages the ideal reading over its interval at about 400 Hz (the sensor's
  /// decimation filter), then goes through the sensor's errors; timestamps carry the profile's
  /// jitter but never decrease.
  public static func samples(
    of script: MotionScript, sensor: SimulatedSensor, random: inout SimRandom
  ) -> [Sample] {
    let rate = sensor.profile.rate
    let period = 1 / rate
    let sub = max(1, Int((400 / rate).rounded(.up)))
    let count = Int(script.duration * rate)
    var samples: [Sample] = []
    samples.reserveCapacity(count)
    var previous = -Double.infinity
    let jitterLimit = period / 4
    for k in 1...max(1, count) {
      let nominal = Double(k) * period
      var sum = Vector3.zero
      for i in 0..<sub {
        let t = nominal - period + (Double(i) + 0.5) * period / Double(sub)
        sum = sum + script.reading(at: t)
      }
      let truth = sum * (1 / Double(sub))
      let measured = sensor.measure(truth, random: &random)
      let jitter = max(
        -jitterLimit, min(jitterLimit, sensor.profile.timestampJitter * random.gaussian()))
      let time = max(previous, nominal + jitter)
      previous = time
      samples.append(Sample(time: time, acceleration: measured))
    }
    return samples
  }
}
