import OrientCore
import OrientSim

/// `--gyro`: the same runs with a simulated gyroscope, through the plain detector and through
/// `GyroAssist` (Sources/OrientSim/GyroBench.swift; docs/motion.md).
func printGyroSection(_ options: BenchOptions) {
  let base = Benchmark(
    seed: options.seed, repetitions: options.quick ? 1 : 4, parameters: options.parameters,
    profiles: options.profiles.isEmpty ? SensorProfile.all : options.profiles,
    scenarios: options.scenarios.isEmpty ? Scenario.benchmark : options.scenarios)
  let bench = GyroAssistBenchmark(benchmark: base)
  let columns = GyroAssistBenchmark.columns
  print("\ngyroscope (--gyro): the same accelerometer samples, with a gyroscope read with each;")
  print("orientd = the plain detector; gyro-measured, gyro-gravity, gyro-turning = fed through")
  print("GyroAssist with each magnitude rule (docs/motion.md)")
  for profile in base.profiles {
    print("\n== \(profile.summary); \(GyroAssistBenchmark.gyroscope(for: profile).summary)")
    var header = pad("scenario", 18, right: false)
    var sub = pad("", 18, right: false)
    for name in columns {
      header += "  " + pad(name, 32, right: false)
      sub += "  " + pad("p50/p95ms", 10) + pad("miss", 7) + pad("spur/m", 7) + pad("hold%", 8)
    }
    print(header)
    print(sub)
    var turns = [Score](repeating: Score(), count: columns.count)
    var all = turns
    for scenario in base.scenarios {
      let scores = bench.run(scenario, on: profile)
      var line = pad(scenario.rawValue, 18, right: false)
      for (i, s) in scores.enumerated() {
        line += "  " + cells(s, scenario: scenario)
        all[i].merge(s)
        if scenario.hasRotations { turns[i].merge(s) }
      }
      print(line)
    }
    var line = pad("all turns", 18, right: false)
    for s in turns { line += "  " + cells(s, scenario: nil) }
    print(line)
    line = pad("everything", 18, right: false)
    for s in all { line += "  " + cells(s, scenario: nil) }
    print(line)
  }
}
