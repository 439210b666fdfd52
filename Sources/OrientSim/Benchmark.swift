import OrientCore
import TextFormats

/// Runs every scenario on every profile through the three detectors.
public struct Benchmark: Sendable {
  /// The detector names, in column order.
  public static let detectors = [EngineJudge.name, AndroidJudge.name, SensorProxyJudge.name]

  /// The results of one scenario on one profile: one score per detector, in `detectors` order.
  public struct ScenarioResult: Sendable {
    /// The scenario.
    public var scenario: Scenario
    /// Scores in `Benchmark.detectors` order.
    public var scores: [Score]
    /// Samples synthesised.
    public var samples: Int
    /// Of them, the samples orientd read (fewer than `samples` with `Benchmark.adaptive`).
    public var read = 0
    /// The wrong-scale replays (`Benchmark.wrongScales`) of the runs that start still.
    public var scale = ScaleCheck()
  }

  /// The factors the scale check multiplies every trace by: a driver that reports g instead
  /// of m/s^2, and raw counts of 256 and 1024 per g with no `in_accel_scale`.
  public static let wrongScales = [0.102, 26.1, 104.4]

  /// How long a run must start still (held in a hand, nothing else) to be replayed at the
  /// wrong scales, in seconds.
  public static let stillStartForScaleCheck = 1.5

  /// The result of replaying runs at the wrong scales: orientd's changes must be the changes
  /// it makes at scale 1 (same orientations, within one sample period) once its gravity
  /// estimate has taken over, which must happen within 10 s.
  public struct ScaleCheck: Sendable {
    /// Runs replayed (each at every wrong scale).
    public var runs = 0
    /// Runs skipped because their motion starts within `stillStartForScaleCheck`.
    public var skipped = 0
    /// Replays whose changes matched.
    public var matched = 0
    /// What went wrong in the others, one line each.
    public var mismatches: [String] = []
    /// The latest time, after the start of a run, at which the estimate took over.
    public var slowestCalibration = 0.0

    /// Adds another check's counts.
    public mutating func merge(_ other: ScaleCheck) {
      runs += other.runs
      skipped += other.skipped
      matched += other.matched
      mismatches += other.mismatches
      slowestCalibration = max(slowestCalibration, other.slowestCalibration)
    }
  }

  /// The results on one profile.
  public struct ProfileResult: Sendable {
    /// The profile.
    public var profile: SensorProfile
    /// The split it was run on.
    public var split = Split.tune
    /// One entry per scenario.
    public var scenarios: [ScenarioResult]

    /// The scale checks merged over the scenarios.
    public var scale: ScaleCheck {
      var total = ScaleCheck()
      for result in scenarios { total.merge(result.scale) }
      return total
    }

    /// Scores of one detector merged over the scenarios that match `filter`.
    public func total(_ detector: Int, where filter: (Scenario) -> Bool = { _ in true }) -> Score {
      var total = Score()
      for result in scenarios where filter(result.scenario) {
        total.merge(result.scores[detector])
      }
      return total
    }
  }

  /// The seed every scenario derives its random streams from.
  public var seed: UInt64
  /// Repetitions of each scenario variant (4 full, 1 quick).
  public var repetitions: Int
  /// Our detector's parameters.
  public var parameters: DetectorParameters
  /// The profiles to run.
  public var profiles: [SensorProfile]
  /// The scenarios to run.
  public var scenarios: [Scenario]
  /// Adaptive sampling for orientd's column (`nil`: every sample is read, as with
  /// `adaptive = off`); the baselines always see every sample.
  public var adaptive: AdaptiveSampling.Parameters?
  /// The split: shapes, ranges and random streams (`Split`).
  public var split: Split

  /// Creates a benchmark configuration (the scenarios not in `split` are left out).
  public init(
    seed: UInt64 = 1, repetitions: Int = 4, parameters: DetectorParameters = DetectorParameters(),
    profiles: [SensorProfile] = SensorProfile.all, scenarios: [Scenario] = Scenario.benchmark,
    split: Split = .tune
  ) {
    self.seed = seed
    self.repetitions = repetitions
    self.parameters = parameters
    self.profiles = profiles
    self.scenarios = scenarios.filter { $0.belongs(to: split) }
    self.split = split
  }

  /// The runs of a scenario in this configuration.
  public func runs(_ scenario: Scenario) -> [Run] {
    scenario.runs(seed: seed, repetitions: repetitions, split: split)
  }

  /// The samples of run `index` of `scenario` on one profile (deterministic in seed,
  /// repetitions, profile, scenario and index).
  public func samples(of run: Run, index: Int, scenario: Scenario, profile: SensorProfile)
    -> [Sample]
  {
    let scenarioNumber = UInt64(Scenario.allCases.firstIndex(of: scenario) ?? 0)
    var random = SimRandom(
      seed: seed ^ split.seedSalt ^ UInt64(profile.rate * 1000) ^ (scenarioNumber << 40),
      stream: UInt64(index) &+ 0x5EED)
    var noisy = profile
    noisy.noiseDensity *= random.uniform(split.variety.noise)
    let sensor = SimulatedSensor(profile: noisy, random: &random)
    return TraceSynthesizer.samples(of: run.script, sensor: sensor, random: &random)
  }

  /// Scores one scenario on one profile.
  public func run(_ scenario: Scenario, on profile: SensorProfile) -> ScenarioResult {
    var scores = [Score](repeating: Score(), count: 3)
    var count = 0
    var read = 0
    var scale = ScaleCheck()
    for (index, run) in runs(scenario).enumerated() {
      let samples = self.samples(of: run, index: index, scenario: scenario, profile: profile)
      count += samples.count
      var ours = EngineJudge(parameters: parameters)
      let reference = commits(of: &ours, over: samples)
      if let adaptive {
        let kept = AdaptiveStream.samplesRead(from: samples, parameters: adaptive)
        read += kept.count
        var slowed = EngineJudge(parameters: parameters)
        scores[0].merge(score(commits(of: &slowed, over: kept), against: run, index: index))
      } else {
        read += samples.count
        scores[0].merge(score(reference, against: run, index: index))
      }
      if run.script.quietUntil >= Benchmark.stillStartForScaleCheck {
        scale.merge(
          checkScales(
            samples, reference: reference, engagedAtOne: ours.detector.gravityEstimator.isScaleOff,
            period: 1 / profile.rate, label: "\(run.label) (--run \(index))"))
      } else {
        scale.skipped += 1
      }
      var android = AndroidJudge()
      scores[1].merge(score(commits(of: &android, over: samples), against: run, index: index))
      var proxy = SensorProxyJudge()
      scores[2].merge(score(commits(of: &proxy, over: samples), against: run, index: index))
    }
    return ScenarioResult(
      scenario: scenario, scores: scores, samples: count, read: read, scale: scale)
  }

  /// Replays `samples` at each of `wrongScales` and compares orientd's changes with
  /// `reference`, its changes at scale 1.
  func checkScales(
    _ samples: [Sample], reference: [Commit], engagedAtOne: Bool, period: Double, label: String
  ) -> ScaleCheck {
    var check = ScaleCheck()
    check.runs = 1
    let start = samples.first?.time ?? 0
    for factor in Benchmark.wrongScales {
      let name = "\(label) x\(shortDecimal(factor))"
      if engagedAtOne {
        check.mismatches.append("\(label) x1: the gravity estimate took over at scale 1")
        continue
      }
      var judge = EngineJudge(parameters: parameters)
      var scaled: [Commit] = []
      var calibrated: Double?
      for sample in samples {
        let s = Sample(time: sample.time, acceleration: sample.acceleration * factor)
        if let o = judge.process(s) { scaled.append(Commit(time: s.time, orientation: o)) }
        if calibrated == nil, judge.detector.gravityEstimator.isScaleOff { calibrated = s.time }
      }
      guard let since = calibrated, since - start <= 10 else {
        check.mismatches.append("\(name): no gravity estimate within 10 s")
        continue
      }
      check.slowestCalibration = max(check.slowestCalibration, since - start)
      guard let first = scaled.first else {
        check.mismatches.append(
          "\(name): no change at all after calibrating at \(fixed(since, 2)) s")
        continue
      }
      var state = Orientation.undefined
      for c in reference where c.time <= first.time { state = c.orientation }
      let expected = reference.filter { $0.time > first.time }
      let got = Array(scaled.dropFirst())
      var problem: String?
      if first.orientation != state {
        problem =
          "first change \(first.orientation) at \(fixed(first.time, 2)) s, scale 1 shows \(state)"
      } else if expected.count != got.count {
        problem =
          "\(got.count) changes after \(fixed(first.time, 2)) s, scale 1 makes \(expected.count)"
      } else {
        for (a, b) in zip(expected, got)
        where a.orientation != b.orientation || abs(a.time - b.time) > 1.25 * period {
          problem =
            "\(b.orientation) at \(fixed(b.time, 3)) s, scale 1: \(a.orientation) at "
            + "\(fixed(a.time, 3)) s"
          break
        }
      }
      if let problem {
        check.mismatches.append("\(name): \(problem)")
      } else {
        check.matched += 1
      }
    }
    return check
  }

  /// Runs everything.
  public func run() -> [ProfileResult] {
    profiles.map { profile in
      ProfileResult(
        profile: profile, split: split, scenarios: scenarios.map { run($0, on: profile) })
    }
  }
}

/// One pass/fail line of the benchmark.
public struct TargetResult: Sendable {
  /// What is required.
  public var name: String
  /// The profile it was checked on.
  public var profile: String
  /// Whether it holds.
  public var passed: Bool
  /// The measured numbers.
  public var detail: String

  /// Creates a result line.
  public init(name: String, profile: String, passed: Bool, detail: String) {
    self.name = name
    self.profile = profile
    self.passed = passed
    self.detail = detail
  }
}

extension Benchmark {
  /// The quality targets of issue 2, checked on each profile's results (throughput is
  /// checked by orient-bench, which measures it).
  public static func targets(_ results: [ProfileResult]) -> [TargetResult] {
    var lines: [TargetResult] = []
    for result in results {
      let name = "\(result.split.rawValue) \(result.profile.name)"
      let ours = result.total(0) { $0.hasRotations }
      let android = result.total(1) { $0.hasRotations }
      if let p95 = ours.latencyPercentile(95), let reference = android.latencyPercentile(95) {
        lines.append(
          TargetResult(
            name: "pooled p95 latency <= 0.75 x android", profile: name,
            passed: p95 <= 0.75 * reference,
            detail:
              "\(ms(p95)) ms vs \(ms(reference)) ms (ratio \(fixed(p95 / reference, 2)))"))
      }
      lines.append(
        TargetResult(
          name: "no missed rotation (back-tilt <= 55)", profile: name, passed: ours.missed == 0,
          detail: "\(ours.missed) of \(ours.rotations) missed"))
      for scenario in result.scenarios where scenario.scenario.mustNotFlicker {
        let s = scenario.scores[0]
        lines.append(
          TargetResult(
            name: "0 spurious changes: \(scenario.scenario.rawValue)", profile: name,
            passed: s.spurious == 0,
            detail: "\(s.spurious) in \(fixed(s.scoredTime / 60, 1)) min"))
      }
      for scenario in result.scenarios {
        let s = scenario.scores[0]
        let a = scenario.scores[1]
        var passed = s.spurious <= a.spurious
        var detail = "spurious \(s.spurious) vs \(a.spurious)"
        if let p95 = s.latencyPercentile(95), let reference = a.latencyPercentile(95) {
          passed = passed && p95 <= reference
          detail = "p95 \(ms(p95)) vs \(ms(reference)) ms, " + detail
        } else if s.rotations > 0 && s.latencies.isEmpty && !a.latencies.isEmpty {
          passed = false
          detail = "no rotation committed, android committed \(a.latencies.count), " + detail
        }
        lines.append(
          TargetResult(
            name: "family \(scenario.scenario.rawValue) no worse than android", profile: name,
            passed: passed, detail: detail))
      }
      let all = result.total(0)
      lines.append(
        TargetResult(
          name: "hold accuracy >= 99.9%", profile: name, passed: all.holdAccuracy >= 0.999,
          detail: "\(fixed(all.holdAccuracy * 100, 3))% of \(fixed(all.holdTime / 60, 1)) min"))
      let scale = result.scale
      let replays = scale.runs * Benchmark.wrongScales.count
      lines.append(
        TargetResult(
          name:
            "same changes at x\(Benchmark.wrongScales.map { shortDecimal($0) }.joined(separator: ", x")) scale",
          profile: name, passed: scale.mismatches.isEmpty && scale.runs > 0,
          detail:
            "\(scale.matched) of \(replays) replays of \(scale.runs) runs"
            + " (\(scale.skipped) runs not starting still), calibrated within"
            + " \(fixed(scale.slowestCalibration, 2)) s"))
    }
    return lines
  }
}

/// Milliseconds, rounded.
public func ms(_ seconds: Double) -> String {
  String(Int((seconds * 1000).rounded()))
}

/// `value` with `digits` decimals (no Foundation).
public func fixed(_ value: Double, _ digits: Int) -> String {
  guard value.isFinite else { return value.isNaN ? "nan" : (value > 0 ? "inf" : "-inf") }
  var scale = 1.0
  for _ in 0..<digits { scale *= 10 }
  let scaled = (abs(value) * scale).rounded()
  let whole = Int64(scaled / scale)
  let fraction = Int64(scaled - Double(whole) * scale)
  let sign = value < 0 && scaled != 0 ? "-" : ""
  guard digits > 0 else { return sign + String(whole) }
  var fractionText = String(fraction)
  while fractionText.count < digits { fractionText = "0" + fractionText }
  return "\(sign)\(whole).\(fractionText)"
}
