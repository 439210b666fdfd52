import OrientCore
import TextFormats

#if canImport(Glibc)
  import Glibc
#endif

/// A convertible's motion over time: hinge angle, the base's pose and the acceleration both
/// halves share (carrying, walking), plus the lid's own wobble on its hinge.
public struct HingePose: Sendable {
  /// True hinge angle, degrees.
  public var angle: Double
  /// Base pitch about its x axis, degrees (see `HingeGeometry.readings`).
  public var pitch: Double
  /// Base roll about its y axis, degrees (90: on its side, hinge vertical).
  public var roll: Double
  /// Acceleration of the whole machine in the world frame (z up), m/s^2.
  public var acceleration: Vector3
}

/// The hinge section of orient-bench: scripted folds of a convertible read by two simulated
/// sensors, scored for angle error, posture commits and flagged unreliable periods.
public enum HingeScenario: String, CaseIterable, Sendable {
  /// Closed on a table, opened to laptop.
  case openLid = "open-lid"
  /// Laptop, opened flat, folded back to a tablet and turned display up.
  case foldToTablet = "fold-to-tablet"
  /// Laptop folded into a tent standing on the table.
  case tent
  /// The closed laptop picked up and carried while walking, then put down.
  case carryClosed = "carry-closed"
  /// Walking with the laptop open in the hands (the lid wobbles on its hinge).
  case walkOpen = "walk-open"
  /// Laptop turned on its side (hinge vertical) and back.
  case hingeVertical = "hinge-vertical"

  /// How long a run lasts, seconds.
  public var duration: Double {
    switch self {
    case .openLid: return 6
    case .foldToTablet: return 11
    case .tent: return 7
    case .carryClosed: return 10
    case .walkOpen: return 8
    case .hingeVertical: return 8
    }
  }

  /// The pose at `t`; `v` (0...1) varies the run (speeds, amplitudes, phases).
  public func pose(at t: Double, variant v: Double) -> HingePose {
    func ramp(_ from: Double, _ to: Double, start: Double, length: Double) -> Double {
      let x = max(0, min(1, (t - start) / length))
      return from + (to - from) * x * x * (3 - 2 * x)
    }
    let g = standardGravity
    switch self {
    case .openLid:
      let angle = ramp(2, 105 + 20 * v, start: 1, length: 0.9 + 0.6 * v)
      return HingePose(angle: angle, pitch: 0, roll: 0, acceleration: .zero)
    case .foldToTablet:
      var angle = ramp(110, 180, start: 1, length: 1)
      if t > 4 { angle = ramp(180, 357, start: 4, length: 1.6 + 0.8 * v) }
      let pitch = ramp(0, 180, start: 7, length: 1)
      return HingePose(angle: angle, pitch: pitch, roll: 0, acceleration: .zero)
    case .tent:
      let angle = ramp(110, 290 + 15 * v, start: 1, length: 2)
      let pitch = ramp(0, 55 + 10 * v, start: 1.5, length: 1.5)
      return HingePose(angle: angle, pitch: pitch, roll: 0, acceleration: .zero)
    case .carryClosed:
      let walking = t > 2 && t < 8
      let phase = 2 * Double.pi * (1.8 + 0.2 * v) * t
      let a =
        walking
        ? Vector3(0.08 * g * sin(phase / 2), 0.1 * g * sin(phase + v), 0.3 * g * sin(phase))
        : .zero
      let pitch = walking ? 8 * sin(phase / 2) : 0
      let roll = walking ? 6 * sin(phase / 3) : 0
      return HingePose(angle: 1.5, pitch: pitch, roll: roll, acceleration: a)
    case .walkOpen:
      let phase = 2 * Double.pi * (1.8 + 0.2 * v) * t
      let walking = t > 1.5
      let a =
        walking
        ? Vector3(0.05 * g * sin(phase / 2), 0.08 * g * sin(phase), 0.25 * g * sin(phase + v))
        : .zero
      let angle = 115 + (walking ? 2 * sin(phase + 0.5) : 0)
      return HingePose(
        angle: angle, pitch: walking ? 5 * sin(phase / 2) : 0, roll: 0, acceleration: a)
    case .hingeVertical:
      let roll =
        ramp(0, 86 + 4 * v, start: 1.5, length: 1) - ramp(0, 86 + 4 * v, start: 5, length: 1)
      return HingePose(angle: 110, pitch: 0, roll: roll, acceleration: .zero)
    }
  }

  /// The postures a run of this scenario must commit, in order.
  public var expected: [Posture] {
    switch self {
    case .openLid: return [.closed, .laptop]
    case .foldToTablet: return [.laptop, .flat, .tablet]
    case .tent: return [.laptop, .tent]
    case .carryClosed: return [.closed]
    case .walkOpen: return [.laptop]
    case .hingeVertical: return [.laptop]
    }
  }
}

/// The scores of the hinge section for one profile.
public struct HingeScore: Sendable {
  /// Squared angle errors summed over samples where the tracker said reliable, and their count.
  public var squaredError = 0.0
  /// Samples where the tracker said reliable.
  public var reliableSamples = 0
  /// Largest absolute error while reliable.
  public var maximumError = 0.0
  /// Seconds from the true angle entering a held posture's range to its commit.
  public var latencies: [Double] = []
  /// Commits of a posture the truth was not in (within the last second).
  public var spurious = 0
  /// Held postures never committed.
  public var missed = 0
  /// Samples that must be flagged (hinge within 15 degrees of vertical, or more than 0.2 g of
  /// acceleration), and how many were.
  public var mustFlag = 0
  /// How many of `mustFlag` were flagged unreliable.
  public var flagged = 0
  /// Runs.
  public var runs = 0

  /// Root mean square angle error while reliable, degrees.
  public var rmsError: Double {
    reliableSamples == 0 ? 0 : (squaredError / Double(reliableSamples)).squareRoot()
  }

  /// Fraction of `mustFlag` flagged (1 when none had to be).
  public var flaggedFraction: Double { mustFlag == 0 ? 1 : Double(flagged) / Double(mustFlag) }

  /// Creates an empty score.
  public init() {}

  /// Pools `o` into this score.
  public mutating func add(_ o: HingeScore) {
    squaredError += o.squaredError
    reliableSamples += o.reliableSamples
    maximumError = max(maximumError, o.maximumError)
    latencies += o.latencies
    spurious += o.spurious
    missed += o.missed
    mustFlag += o.mustFlag
    flagged += o.flagged
    runs += o.runs
  }
}

/// Runs the hinge scenarios on the sensor profiles.
public struct HingeBenchmark: Sendable {
  /// Seed of every random stream.
  public var seed: UInt64
  /// Runs per scenario (variants spread over 0...1).
  public var repetitions: Int
  /// The tracker's parameters.
  public var parameters: HingeParameters

  /// The targets: RMS error while reliable, p95 commit latency, spurious and missed postures,
  /// flagged fraction.
  public static let rmsTarget = 3.0
  /// p95 posture commit latency, seconds.
  public static let latencyTarget = 1.0
  /// Fraction of the samples that must be flagged that are.
  public static let flaggedTarget = 0.95

  /// Creates a benchmark.
  public init(seed: UInt64, repetitions: Int, parameters: HingeParameters = HingeParameters()) {
    self.seed = seed
    self.repetitions = repetitions
    self.parameters = parameters
  }

  /// One profile's scores per scenario.
  public func run(profile: SensorProfile) -> [(HingeScenario, HingeScore)] {
    HingeScenario.allCases.enumerated().map { index, scenario in
      var total = HingeScore()
      for r in 0..<repetitions {
        let variant = repetitions == 1 ? 0.5 : Double(r) / Double(repetitions - 1)
        var random = SimRandom(
          seed: seed, stream: UInt64(index * 1000 + r) &+ UInt64(profile.rate * 10))
        total.add(runOnce(scenario, profile: profile, variant: variant, random: &random))
      }
      return (scenario, total)
    }
  }

  /// The postures the truth is in at a pose (no hysteresis), tent or stand by the display's y.
  func truthPosture(_ pose: HingePose) -> Posture {
    let p = parameters
    let a = pose.angle
    if a < p.closedBelow { return .closed }
    if a < p.flatFrom { return .laptop }
    if a <= p.flatTo { return .flat }
    if a < p.tabletFrom {
      let lid = HingeGeometry.readings(angle: a, pitch: pose.pitch, roll: pose.roll).lid
      return lid.y > 0 ? .tent : .stand
    }
    return .tablet
  }

  func runOnce(
    _ scenario: HingeScenario, profile: SensorProfile, variant: Double,
    random: inout SimRandom
  ) -> HingeScore {
    let lidSensor = SimulatedSensor(profile: profile, random: &random)
    let baseSensor = SimulatedSensor(profile: profile, random: &random)
    var tracker = HingeTracker(parameters: parameters)
    var score = HingeScore()
    score.runs = 1
    let dt = 1 / profile.rate
    // Truth postures sampled at each step, for commit checks.
    var truth: [(time: Double, posture: Posture)] = []
    var commits: [(time: Double, posture: Posture)] = []
    var t = 0.0
    let phase = random.uniform(0, dt)
    while t < scenario.duration {
      for part in [HingePart.base, .lid] {
        let time = t + (part == .lid ? phase : 0) + profile.timestampJitter * random.gaussian()
        let pose = scenario.pose(at: time, variant: variant)
        let world = Vector3(0, 0, -standardGravity) - pose.acceleration
        let r = HingeGeometry.readings(
          world: world, angle: pose.angle, pitch: pose.pitch, roll: pose.roll)
        let sensor = part == .lid ? lidSensor : baseSensor
        let measured = sensor.measure(part == .lid ? r.lid : r.base, random: &random)
        let before = tracker.state.posture
        tracker.process(part, time: time, measured)
        if tracker.state.posture != before { commits.append((time, tracker.state.posture)) }
        if part == .base { continue }
        // Scored at each lid reading: the pair is then complete.
        // The base's x reading is the specific force along the hinge.
        let along = min(1, abs(r.base.x) / max(world.magnitude, 1e-9))
        let hingeFromVertical = acos(along) * 180 / Double.pi
        let mustFlag =
          hingeFromVertical < 15 || pose.acceleration.magnitude > 0.2 * standardGravity
        if mustFlag {
          score.mustFlag += 1
          if !tracker.state.isReliable { score.flagged += 1 }
        }
        if tracker.state.isReliable {
          let error = abs(tracker.state.angle - pose.angle)
          score.squaredError += error * error
          score.reliableSamples += 1
          score.maximumError = max(score.maximumError, error)
        }
        truth.append((time, truthPosture(pose)))
      }
      t += dt
    }
    // Held truth segments (at least 1 s): each must be committed; latency from its start.
    var start = 0
    while start < truth.count {
      var end = start
      while end + 1 < truth.count, truth[end + 1].posture == truth[start].posture { end += 1 }
      let from = truth[start].time
      let to = truth[end].time
      if to - from >= 1 {
        let posture = truth[start].posture
        // Already committed when the segment begins (the first commit from undefined counts).
        let committedBefore = commits.last { $0.time <= from }?.posture == posture
        if let commit = commits.first(where: {
          $0.time >= from && $0.time <= to && $0.posture == posture
        }) {
          score.latencies.append(max(0, commit.time - from))
        } else if !committedBefore {
          score.missed += 1
        }
      }
      start = end + 1
    }
    // A commit of a posture the truth was not in during the second before it is spurious.
    for commit in commits {
      let window = truth.filter { $0.time >= commit.time - 1 && $0.time <= commit.time }
      if !window.contains(where: { $0.posture == commit.posture }) { score.spurious += 1 }
    }
    return score
  }

  /// The pass/fail lines of one profile's pooled scores.
  public static func targets(profile: SensorProfile, _ s: HingeScore) -> [TargetResult] {
    let p95 = percentile(s.latencies, 95) ?? 0
    func f(_ v: Double, _ d: Int) -> String {
      shortDecimal((v * pow(10, Double(d))).rounded() / pow(10, Double(d)))
    }
    return [
      TargetResult(
        name: "hinge angle RMS error while reliable <= \(f(rmsTarget, 0)) degrees",
        profile: profile.name, passed: s.rmsError <= rmsTarget,
        detail: "\(f(s.rmsError, 2)) degrees RMS, max \(f(s.maximumError, 1)) over "
          + "\(s.reliableSamples) reliable samples"),
      TargetResult(
        name: "posture commit p95 <= \(f(latencyTarget, 1)) s, none missed",
        profile: profile.name, passed: p95 <= latencyTarget && s.missed == 0,
        detail: "p95 \(f(p95 * 1000, 0)) ms over \(s.latencies.count) commits, \(s.missed) missed"),
      TargetResult(
        name: "0 spurious posture changes", profile: profile.name, passed: s.spurious == 0,
        detail: "\(s.spurious) spurious in \(s.runs) runs"),
      TargetResult(
        name: "unreliable periods flagged >= \(f(flaggedTarget * 100, 0))%",
        profile: profile.name, passed: s.flaggedFraction >= flaggedTarget,
        detail: "\(s.flagged)/\(s.mustFlag) samples flagged"),
    ]
  }
}
