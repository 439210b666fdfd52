import JSON
import OrientCore
import OrientSim

/// One profile's hinge scores: per scenario and pooled.
typealias HingeResult = (
  profile: SensorProfile, scenarios: [(HingeScenario, HingeScore)], pooled: HingeScore
)

/// Runs the hinge section on the selected profiles (same seed and repetitions as the rest).
func hingeSection(_ options: BenchOptions) -> [HingeResult] {
  let bench = HingeBenchmark(
    seed: options.seed, repetitions: options.quick ? 1 : 4, parameters: options.hinge)
  return (options.profiles.isEmpty ? SensorProfile.all : options.profiles).map { profile in
    let scenarios = bench.run(profile: profile)
    var pooled = HingeScore()
    for (_, score) in scenarios { pooled.add(score) }
    return (profile, scenarios, pooled)
  }
}

/// The hinge table: per profile and scenario, RMS error, p95 latency, spurious, missed,
/// flagged.
func printHingeTable(_ results: [HingeResult]) {
  print("\nhinge (convertibles): RMS/max angle error in degrees while reliable, p95 posture")
  print("commit latency in ms, spurious and missed postures, unreliable samples flagged")
  for result in results {
    print("\n\(result.profile.summary)")
    print(
      "  \(pad("scenario", 16, right: false))\(pad("rms", 7))\(pad("max", 7))"
        + "\(pad("p95 ms", 8))\(pad("spur", 6))\(pad("miss", 6))\(pad("flagged", 12))")
    for (scenario, s) in result.scenarios {
      let p95 = percentile(s.latencies, 95).map { fixed($0 * 1000, 0) } ?? "-"
      print(
        "  \(pad(scenario.rawValue, 16, right: false))\(pad(fixed(s.rmsError, 2), 7))"
          + "\(pad(fixed(s.maximumError, 1), 7))\(pad(p95, 8))\(pad(String(s.spurious), 6))"
          + "\(pad(String(s.missed), 6))\(pad("\(s.flagged)/\(s.mustFlag)", 12))")
    }
  }
}

/// The hinge section as JSON.
func hingeJSON(_ results: [HingeResult]) -> JSONValue {
  func score(_ s: HingeScore) -> JSONValue {
    .object([
      ("rms_error", .number(s.rmsError)), ("max_error", .number(s.maximumError)),
      ("latency_p95", percentile(s.latencies, 95).map { .number($0) } ?? .null),
      ("spurious", .number(Double(s.spurious))), ("missed", .number(Double(s.missed))),
      ("must_flag", .number(Double(s.mustFlag))), ("flagged", .number(Double(s.flagged))),
    ])
  }
  return .array(
    results.map { r in
      .object([
        ("profile", .string(r.profile.name)), ("pooled", score(r.pooled)),
        (
          "scenarios",
          .object(r.scenarios.map { ($0.0.rawValue, score($0.1)) })
        ),
      ])
    })
}
