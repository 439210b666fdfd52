import OrientCore

/// How a hand moves the device from one pose to the next. Each scenario family draws its
/// moves from the shapes of its split (`Split`), so a detector tuned on some shapes is
/// reported on others.
public enum MotionShape: String, CaseIterable, Sendable {
  /// One smooth minimum-jerk move (slow start, fast middle, slow end).
  case minimumJerk = "minimum-jerk"
  /// An even pace: constant speed, reached and left through short ramps (8-20% of the move).
  case constantVelocity = "constant-velocity"
  /// Past the target by 8-20% of the move, then back to it in 0.15-0.4 s.
  case overshoot
  /// Two minimum-jerk strokes, the first covering 35-65% of the move, with no rest between.
  case twoStage = "two-stage"
  /// A hesitation: the move stops for 0.15-0.5 s at 30-70% of the way, then goes on.
  case pause
}

/// A part of the benchmark: the shapes, seeds and ranges it draws from.
///
/// `tune` is what the detector's parameters may be chosen on; `heldOut` is what the README's
/// and docs' tables report: other motion shapes, other seeds, wider ranges (turn durations,
/// gait, heel strikes, hand wobble, lever arm, sensor noise), and a family of its own
/// (`put-down-drift`).
public enum Split: String, CaseIterable, Sendable {
  /// The shapes and seeds to tune on.
  case tune
  /// The shapes, seeds and ranges never tuned on.
  case heldOut = "held-out"

  /// What this split draws from.
  public var variety: Variety {
    switch self {
    case .tune: return .tune
    case .heldOut: return .heldOut
    }
  }

  /// Mixed into every random stream, so the two splits never share a draw for the same seed.
  public var seedSalt: UInt64 {
    switch self {
    case .tune: return 0
    case .heldOut: return 0x4845_4C44_4F55_5421
    }
  }
}

/// The ranges a split draws motion and sensor details from.
public struct Variety: Sendable {
  /// The motion shapes of turns, approaches, put-downs and pick-ups.
  public var shapes: [MotionShape]
  /// Factor on every nominal move duration.
  public var duration: ClosedRange<Double>
  /// Walking step frequency, Hz.
  public var gait: ClosedRange<Double>
  /// Factor on the walker's bounce and heel strikes.
  public var steps: ClosedRange<Double>
  /// Factor on the hand's wobble and tremor.
  public var wobble: ClosedRange<Double>
  /// Sensor distance from the point the hand turns the device about, metres.
  public var leverArm: ClosedRange<Double>
  /// Factor on the profile's noise density.
  public var noise: ClosedRange<Double>

  /// The tuning split: minimum-jerk and constant-velocity moves, the ranges orient-bench
  /// always had.
  public static let tune = Variety(
    shapes: [.minimumJerk, .constantVelocity], duration: 0.9...1.1, gait: 1.7...2.1,
    steps: 1...1, wobble: 1...1, leverArm: 0.02...0.05, noise: 1...1)

  /// The held-out split: overshoot, two-stage and hesitating moves, everything drawn wide.
  public static let heldOut = Variety(
    shapes: [.overshoot, .twoStage, .pause], duration: 0.65...1.5, gait: 1.4...2.5,
    steps: 0.6...1.5, wobble: 0.5...1.5, leverArm: 0.01...0.06, noise: 0.7...2.5)
}

extension Scenario.Builder {
  /// Moves to the pose over about `duration` seconds in `shape` (an overshoot or a pause
  /// makes the move longer); returns the time the move started.
  @discardableResult
  mutating func move(
    angle: Double, tilt: Double, duration: Double, shape: MotionShape,
    random: inout SimRandom
  ) -> Double {
    let start = time
    let a0 = self.angle
    let b0 = self.tilt
    func at(_ fraction: Double) -> (Double, Double) {
      (a0 + (angle - a0) * fraction, b0 + (tilt - b0) * fraction)
    }
    switch shape {
    case .minimumJerk:
      move(angle: angle, tilt: tilt, duration: duration)
    case .constantVelocity:
      move(
        angle: angle, tilt: tilt, duration: duration,
        easing: .trapezoid(ramp: random.uniform(0.08, 0.2)))
    case .overshoot:
      let (a, b) = at(1 + random.uniform(0.08, 0.2))
      // A table stops a put-down: the tilt never goes past flat.
      move(angle: a, tilt: min(90, max(-90, b)), duration: duration * 0.85)
      move(angle: angle, tilt: tilt, duration: random.uniform(0.15, 0.4))
    case .twoStage, .pause:
      let split = shape == .pause ? random.uniform(0.3, 0.7) : random.uniform(0.35, 0.65)
      let (a, b) = at(split)
      let first = duration * random.uniform(0.4, 0.6)
      move(angle: a, tilt: b, duration: first)
      if shape == .pause { hold(random.uniform(0.15, 0.5)) }
      move(angle: angle, tilt: tilt, duration: max(0.1, duration - first))
    }
    return start
  }

  /// The first time in [from, to] at which the keyframe angle crosses `boundary` in the
  /// direction of the move (1 ms resolution); `to` when it does not.
  func crossing(from: Double, to: Double, boundary: Double, rising: Bool) -> Double {
    let script = MotionScript(keyframes: keyframes, duration: time)
    var t = from
    while t <= to {
      let angle = script.keyPose(at: t).angle
      if rising ? angle >= boundary : angle <= boundary { return t }
      t += 0.001
    }
    return to
  }

  /// The first time in [from, to] at which the keyframe tilt falls below `boundary`.
  func tiltCrossing(from: Double, to: Double, below boundary: Double) -> Double {
    let script = MotionScript(keyframes: keyframes, duration: time)
    var t = from
    while t <= to {
      if script.keyPose(at: t).tilt < boundary { return t }
      t += 0.001
    }
    return to
  }
}
