import OrientCore

/// orientd's detector fed through `GyroAssist`.
public struct GyroAssistedJudge {
  /// The column name, e.g. `gyro-measured`.
  public var name: String { "gyro-\(assist.magnitude.rawValue)" }
  /// The layer.
  public var assist: GyroAssist
  /// The detector behind it.
  public var detector: OrientationDetector

  /// A judge with the detector's parameters and the layer's magnitude rule.
  public init(parameters: DetectorParameters, magnitude: GyroAssist.Magnitude) {
    assist = GyroAssist(magnitude: magnitude)
    detector = OrientationDetector(parameters: parameters)
  }

  /// Feeds one accelerometer sample with its gyroscope reading.
  public mutating func process(_ sample: Sample, gyro: Vector3) -> Orientation? {
    let fed = assist.sample(time: sample.time, acceleration: sample.acceleration, gyro: gyro)
    guard let update = detector.process(fed), update.orientationChanged else { return nil }
    return update.orientation
  }
}

/// Does a gyroscope help the detector? The orient-bench runs, each with a simulated gyroscope
/// read with every accelerometer sample, through the plain detector and through `GyroAssist`
/// with each magnitude rule. The accelerometer samples are exactly the plain benchmark's.
public struct GyroAssistBenchmark: Sendable {
  /// The column names: the plain detector, then one per magnitude rule.
  public static let columns = ["orientd"] + GyroAssist.Magnitude.allCases.map { "gyro-\($0)" }

  /// The orient-bench configuration (seed, repetitions, parameters, profiles, scenarios).
  public var benchmark: Benchmark

  /// Wraps a benchmark configuration.
  public init(benchmark: Benchmark) {
    self.benchmark = benchmark
  }

  /// The gyroscope simulated with an accelerometer profile: a BMI160-class part at its rate.
  public static func gyroscope(for profile: SensorProfile) -> GyroProfile {
    .bmi160(rate: profile.rate)
  }

  /// Scores of one scenario on one profile, in `columns` order.
  public func run(_ scenario: Scenario, on profile: SensorProfile) -> [Score] {
    var scores = [Score](repeating: Score(), count: Self.columns.count)
    let scenarioNumber = UInt64(Scenario.allCases.firstIndex(of: scenario) ?? 0)
    for (index, run) in benchmark.runs(scenario).enumerated() {
      let samples = benchmark.samples(of: run, index: index, scenario: scenario, profile: profile)
      var random = SimRandom(
        seed: benchmark.seed ^ 0x6770 ^ (scenarioNumber << 40), stream: UInt64(index) &+ 0x6770)
      var gyroscope = SimulatedGyroscope(
        profile: Self.gyroscope(for: profile), random: &random)
      let gyro = GyroSynthesizer.readings(
        at: samples, truth: run.script, gyroscope: &gyroscope, random: &random)
      var plain = EngineJudge(parameters: benchmark.parameters)
      scores[0].merge(score(commits(of: &plain, over: samples), against: run, index: index))
      for (column, magnitude) in GyroAssist.Magnitude.allCases.enumerated() {
        var judge = GyroAssistedJudge(parameters: benchmark.parameters, magnitude: magnitude)
        var found: [Commit] = []
        for (sample, rate) in zip(samples, gyro) {
          if let o = judge.process(sample, gyro: rate) {
            found.append(Commit(time: sample.time, orientation: o))
          }
        }
        scores[column + 1].merge(score(found, against: run, index: index))
      }
    }
    return scores
  }
}
