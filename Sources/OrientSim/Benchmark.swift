import OrientCore

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
  }

  /// The results on one profile.
  public struct ProfileResult: Sendable {
    /// The profile.
    public var profile: SensorProfile
    /// One entry per scenario.
    public var scenarios: [ScenarioResult]

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

  /// Creates a benchmark configuration.
  public init(
    seed: UInt64 = 1, repetitions: Int = 4, parameters: DetectorParameters = DetectorParameters(),
    profiles: [SensorProfile] = SensorProfile.all, scenarios: [Scenario] = Scenario.benchmark
  ) {
    self.seed = seed
    self.repetitions = repetitions
    self.parameters = parameters
    self.profiles = profiles
    self.scenarios = scenarios
  }

  /// The runs of a scenario in this configuration.
  public func runs(_ scenario: Scenario) -> [Run] {
    scenario.runs(seed: seed, repetitions: repetitions)
  }

  /// The samples of run `index` of `scenario` on one profile (deterministic in seed,
  /// repetitions, profile, scenario and index).
  public func samples(of run: Run, index: Int, scenario: Scenario, profile: SensorProfile)
    -> [Sample]
  {
    let scenarioNumber = UInt64(Scenario.allCases.firstIndex(of: scenario) ?? 0)
    var random = SimRandom(
      seed: seed ^ UInt64(profile.rate * 1000) ^ (scenarioNumber << 40),
      stream: UInt64(index) &+ 0x5EED)
    let sensor = SimulatedSensor(profile: profile, random: &random)
    return TraceSynthesizer.samples(of: run.script, sensor: sensor, random: &random)
  }

  /// Scores one scenario on one profile.
  public func run(_ scenario: Scenario, on profile: SensorProfile) -> ScenarioResult {
    var scores = [Score](repeating: Score(), count: 3)
    var count = 0
    for (index, run) in runs(scenario).enumerated() {
      let samples = self.samples(of: run, index: index, scenario: scenario, profile: profile)
      count += samples.count
      var ours = EngineJudge(parameters: parameters)
      scores[0].merge(score(commits(of: &ours, over: samples), against: run, index: index))
      var android = AndroidJudge()
      scores[1].merge(score(commits(of: &android, over: samples), against: run, index: index))
      var proxy = SensorProxyJudge()
      scores[2].merge(score(commits(of: &proxy, over: samples), against: run, index: index))
    }
    return ScenarioResult(scenario: scenario, scores: scores, samples: count)
  }

  /// Runs everything.
  public func run() -> [ProfileResult] {
    profiles.map { profile in
      ProfileResult(profile: profile, scenarios: scenarios.map { run($0, on: profile) })
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
      let name = result.profile.name
      let ours = result.total(0) { $0.isRotation }
      let android = result.total(1) { $0.isRotation }
      if let p95 = ours.latencyPercentile(95), let reference = android.latencyPercentile(95) {
        lines.append(
          TargetResult(
            name: "p95 latency <= 0.75 x android", profile: name,
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
      let all = result.total(0)
      lines.append(
        TargetResult(
          name: "hold accuracy >= 99.9%", profile: name, passed: all.holdAccuracy >= 0.999,
          detail: "\(fixed(all.holdAccuracy * 100, 3))% of \(fixed(all.holdTime / 60, 1)) min"))
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
