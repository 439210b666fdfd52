import Glibc
import JSON
import OrientCore
import OrientSim
import SystemKit

// orient-bench: the quality benchmark of the orientation engine (issue 2, section 4).
// It synthesises sensor traces from scripted motion, runs orientd's detector and two baselines
// over them, prints the metrics side by side with pass/fail lines, and measures throughput.

let usage = """
  usage: orient-bench [--quick] [--json] [--seed N] [--split tune|held-out|both]
                      [--profile NAME ...] [--scenario NAME ...]
                      [--set KEY=VALUE ...] [--no-throughput] [--details]
                      [--adaptive] [--still-rate HZ] [--settle-time S] [--gyro]
         orient-bench trace SCENARIO [--profile NAME] [--seed N] [--quick] [--run N]
         orient-bench explain SCENARIO [--profile NAME] [--seed N] [--quick] [--run N] [--set ...]
         orient-bench recordings [PATH ...] [--rate HZ ...] [--set ...] [--adaptive] [--json]
         orient-bench --help | --version

  Build in release mode for meaningful throughput: swift run -c release orient-bench

    --quick          one repetition of each scenario variant instead of four
    --json           print the results as one JSON document
    --seed N         seed of every random stream (default 1)
    --split NAME     tune (the motion shapes and seeds to tune on), held-out (other shapes,
                     seeds and wider ranges, and put-down-drift: what the docs report) or
                     both (default; targets are checked on each)
    --profile NAME   only this sensor profile (repeatable): \(SensorProfile.all.map(\.name).joined(separator: ", "))
    --scenario NAME  only this scenario (repeatable)
    --set KEY=VALUE  override a detector parameter (see orientd --help) or a hinge one
                     ([posture] keys of orientd.conf(5))
    --no-throughput  skip the throughput measurement
    --details        list the runs with missed rotations or spurious changes, and orientd's
                     turns slower than Android's p95 (recordings: the oracle's turns)
    --adaptive       orientd reads as the daemon does with adaptive sampling: slowly while
                     still, at the full rate from the first reading that departs (the
                     baselines still see every sample); prints the share of samples read
    --still-rate HZ  the still rate with --adaptive (default \(AdaptiveSampling.Parameters().stillRate))
    --settle-time S  seconds of calm before slowing down (default \(AdaptiveSampling.Parameters().settleTime))
    --gyro           also run every scenario with a simulated gyroscope (BMI160 class) through
                     the plain detector and through GyroAssist, side by side (text only)

  trace writes run N (default 0) of a scenario as CSV (t,x,y,z) for `orientd replay`, with the
  ground truth in comments; the same seed and --quick give the same run as the benchmark
  (--details names the runs). The default profile is 100Hz-16bit. explain runs orientd's
  detector over the same run and prints, per sample, the true and filtered in-plane angles,
  the tilt and the committed orientation of all three detectors. Scenarios: \(Scenario.allCases.map(\.rawValue).joined(separator: ", "))

  recordings scores the three detectors on real recordings (t,x,y,z traces, the files given or
  every *.csv of a directory; by default the cache scripts/recordings.py fills:
  $ORIENTD_RECORDINGS, /var/cache/orientd-recordings, .build/recordings) against an oracle that
  sees the whole trace; each recording at its own rate and decimated to every --rate (default
  25 and 12.5). See docs/detector.md, "Real recordings".

  exit status: 0 all targets pass; 1 a target fails; 64 usage error; 69 no recordings found.
  """

struct BenchOptions {
  var quick = false
  var json = false
  var seed: UInt64 = 1
  var profiles: [SensorProfile] = []
  var scenarios: [Scenario] = []
  var parameters = DetectorParameters()
  var throughput = true
  var details = false
  var hinge = HingeParameters()
  var traceScenario: Scenario?
  var explain = false
  var run = 0
  var adaptive: AdaptiveSampling.Parameters?
  var gyro = false
  var splits: [Split] = []
  var recordings = false
  var recordingPaths: [String] = []
  var recordingRates: [Double] = []
}

func fail(_ message: String) -> Never {
  StandardStream.error.writeLine("orient-bench: \(message)\nTry 'orient-bench --help'.")
  exit(ExitStatus.usage)
}

func parseOptions(_ arguments: [String]) -> BenchOptions {
  var options = BenchOptions()
  var index = 0
  func value(_ name: String) -> String {
    index += 1
    guard index < arguments.count else { fail("\(name) needs a value") }
    return arguments[index]
  }
  if arguments.first == "trace" || arguments.first == "explain" {
    options.explain = arguments.first == "explain"
    guard arguments.count >= 2, let scenario = Scenario(rawValue: arguments[1]) else {
      fail("trace needs a scenario: \(Scenario.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    options.traceScenario = scenario
    index = 2
  } else if arguments.first == "recordings" {
    options.recordings = true
    index = 1
  }
  while index < arguments.count {
    let argument = arguments[index]
    switch argument {
    case "--help", "-h":
      print(usage)
      exit(ExitStatus.success)
    case "--version":
      print("orient-bench 0.1.0")
      exit(ExitStatus.success)
    case "--quick": options.quick = true
    case "--json": options.json = true
    case "--no-throughput": options.throughput = false
    case "--details": options.details = true
    case "--gyro": options.gyro = true
    case "--adaptive": options.adaptive = options.adaptive ?? AdaptiveSampling.Parameters()
    case "--still-rate", "--settle-time":
      let text = value(argument)
      guard let number = Double(text), number > 0, number <= 1000 else {
        fail("\(argument) needs a positive number, got '\(text)'")
      }
      var adaptive = options.adaptive ?? AdaptiveSampling.Parameters()
      if argument == "--still-rate" {
        adaptive.stillRate = number
      } else {
        adaptive.settleTime = number
      }
      options.adaptive = adaptive
    case "--rate" where options.recordings:
      let text = value(argument)
      guard let rate = Double(text), rate > 0, rate <= 10_000 else {
        fail("--rate needs a rate in Hz, got '\(text)'")
      }
      options.recordingRates.append(rate)
    case "--split":
      let name = value(argument)
      if name == "both" {
        options.splits = Split.allCases
      } else if let split = Split(rawValue: name) {
        options.splits.append(split)
      } else {
        fail("unknown split '\(name)'; known: tune, held-out, both")
      }
    case "--seed":
      guard let seed = UInt64(value(argument)) else { fail("--seed needs a whole number") }
      options.seed = seed
    case "--run":
      guard let run = Int(value(argument)), run >= 0 else { fail("--run needs a number >= 0") }
      options.run = run
    case "--profile":
      let name = value(argument)
      guard let profile = SensorProfile.named(name) else {
        fail("unknown profile '\(name)'; known: \(SensorProfile.all.map(\.name))")
      }
      options.profiles.append(profile)
    case "--scenario":
      let name = value(argument)
      guard let scenario = Scenario(rawValue: name), scenario != .demo else {
        fail("unknown scenario '\(name)'")
      }
      options.scenarios.append(scenario)
    case "--set":
      let assignment = value(argument)
      guard let equals = assignment.firstIndex(of: "=") else {
        fail("--set expects KEY=VALUE, got '\(assignment)'")
      }
      let key = String(assignment[..<equals])
      let text = String(assignment[assignment.index(after: equals)...])
      do {
        if HingeParameters.keys.contains(key) {
          try options.hinge.set(key, text)
        } else {
          try options.parameters.set(key: key, value: text, source: "--set", line: 0)
        }
      } catch {
        fail("\(error)")
      }
    default:
      guard options.recordings, !argument.hasPrefix("-") else {
        fail("unknown argument '\(argument)'")
      }
      options.recordingPaths.append(argument)
    }
    index += 1
  }
  if options.recordings && options.recordingRates.isEmpty {
    options.recordingRates = [25, 12.5]
  }
  do {
    try options.parameters.validate(source: "--set")
  } catch {
    fail(error.description)
  }
  return options
}

// MARK: - Trace output

/// `value` with up to `digits` decimals, trailing zeros removed.
func compact(_ value: Double, _ digits: Int) -> String {
  var text = fixed(value, digits)
  if text.contains(".") {
    while text.hasSuffix("0") { text.removeLast() }
    if text.hasSuffix(".") { text.removeLast() }
  }
  return text == "-0" ? "0" : text
}

func writeTrace(_ options: BenchOptions, scenario: Scenario) {
  let profile = options.profiles.first ?? .fast
  let benchmark = Benchmark(
    seed: options.seed, repetitions: options.quick ? 1 : 4, split: options.splits.first ?? .tune)
  let runs = benchmark.runs(scenario)
  guard options.run < runs.count else {
    fail("\(scenario.rawValue) has \(runs.count) runs; --run must be below that")
  }
  let run = runs[options.run]
  let samples = benchmark.samples(
    of: run, index: options.run, scenario: scenario, profile: profile)
  var out = "# orient-bench trace \(scenario.rawValue) --profile \(profile.name)"
  out += " --seed \(options.seed) --split \(benchmark.split.rawValue)"
  out += "\(options.quick ? " --quick" : "") --run \(options.run):"
  out += " \(run.label)\n# \(profile.summary)\n"
  var previous: Keyframe?
  for key in run.script.keyframes {
    if let last = previous, last.angle == key.angle, last.tilt == key.tilt {
      previous = key
      continue
    }
    let verb = previous == nil ? "starts" : "reaches"
    out += "# pose: \(verb) angle \(fixed(key.angle, 1)) deg, back-tilt \(fixed(key.tilt, 1)) deg"
    out += " at \(compact(key.time, 2)) s\n"
    previous = key
  }
  for window in run.windows {
    let span = "\(compact(window.start, 2))-\(compact(window.end, 2)) s"
    switch window.expectation {
    case .rotation(let target, _, let cross, _):
      out += "# \(span): rotation to \(target), entering its sector at \(compact(cross, 3)) s\n"
    case .hold(let acceptable):
      out += "# \(span): hold, acceptable \(names(acceptable))\n"
    case .transition(let allowed):
      out += "# \(span): moving, allowed \(names(allowed))\n"
    case .sweep(let target, let centre):
      out += "# \(span): slow sweep to \(target) from \(compact(centre, 1)) degrees\n"
    }
  }
  out += "t,x,y,z\n"
  for s in samples {
    out += "\(compact(s.time, 5)),\(compact(s.acceleration.x, 4)),"
    out += "\(compact(s.acceleration.y, 4)),\(compact(s.acceleration.z, 4))\n"
    if out.utf8.count > 60_000 {
      print(out, terminator: "")
      out = ""
    }
  }
  print(out, terminator: "")
}

func explain(_ options: BenchOptions, scenario: Scenario) {
  let profile = options.profiles.first ?? .fast
  let benchmark = Benchmark(
    seed: options.seed, repetitions: options.quick ? 1 : 4, split: options.splits.first ?? .tune)
  let runs = benchmark.runs(scenario)
  guard options.run < runs.count else {
    fail("\(scenario.rawValue) has \(runs.count) runs; --run must be below that")
  }
  let run = runs[options.run]
  let samples = benchmark.samples(
    of: run, index: options.run, scenario: scenario, profile: profile)
  var detector = OrientationDetector(parameters: options.parameters)
  var android = AndroidJudge()
  var proxy = SensorProxyJudge()
  var androidState = Orientation.undefined
  var proxyState = Orientation.undefined
  print("# \(run.label) on \(profile.name)")
  print(
    "t,true-angle,true-tilt,filtered-angle,|a|/g,tilt,candidate,evidence,orientd,android,"
      + "iio-sensor-proxy")
  for s in samples {
    let update = detector.process(s)
    if let o = android.process(s) { androidState = o }
    if let o = proxy.process(s) { proxyState = o }
    let pose = run.script.keyPose(at: s.time)
    let f = detector.gravity
    var angle = atan2(f.x, -f.y) * 180 / Double.pi
    // Unwrap near the true angle for readability.
    while angle - pose.angle > 180 { angle -= 360 }
    while angle - pose.angle < -180 { angle += 360 }
    let mark = update?.orientationChanged == true ? " <- commit" : ""
    print(
      "\(compact(s.time, 3)),\(fixed(pose.angle, 1)),\(fixed(pose.tilt, 1)),\(fixed(angle, 1)),"
        + "\(fixed(s.acceleration.magnitude / standardGravity, 2)),\(detector.tilt),"
        + "\(detector.candidate),\(fixed(detector.evidence, 2)),"
        + "\(detector.orientation),\(androidState),\(proxyState)\(mark)")
  }
}

func names(_ set: OrientationSet) -> String {
  Orientation.defined.filter { set.contains($0) }.map(\.rawValue).joined(separator: "/")
}

// MARK: - Throughput

func monotonicNow() -> Double {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// Samples per second of our detector on one core, best of five passes over ~1M samples.
func measureThroughput(parameters: DetectorParameters, seed: UInt64) -> (rate: Double, samples: Int)
{
  var times: [Double] = []
  var xs: [Double] = []
  var ys: [Double] = []
  var zs: [Double] = []
  var offset = 0.0
  let benchmark = Benchmark(seed: seed, repetitions: 1)
  for scenario in [Scenario.rotate90Medium, .walkDiagonal, .shake, .putDown] {
    for (index, run) in benchmark.runs(scenario).enumerated() {
      let samples = benchmark.samples(of: run, index: index, scenario: scenario, profile: .fast)
      for s in samples {
        times.append(s.time + offset)
        xs.append(s.acceleration.x)
        ys.append(s.acceleration.y)
        zs.append(s.acceleration.z)
      }
      offset = (times.last ?? 0) + 0.01
    }
  }
  var best = Double.infinity
  var changes = 0
  let passes = max(1, 1_000_000 / max(1, times.count))
  for _ in 0..<5 {
    var detector = OrientationDetector(parameters: parameters)
    let start = monotonicNow()
    for _ in 0..<passes {
      detector.reset()
      for i in 0..<times.count {
        if let update = detector.process(time: times[i], xs[i], ys[i], zs[i]) {
          changes &+= update.orientationChanged ? 1 : 0
        }
      }
    }
    best = min(best, monotonicNow() - start)
  }
  if changes == -1 { print("") }  // keep the work observable
  let total = passes * times.count
  return (Double(total) / best, total)
}

// MARK: - Table

func pad(_ text: String, _ width: Int, right: Bool = true) -> String {
  let n = text.count
  guard n < width else { return text }
  let fill = String(repeating: " ", count: width - n)
  return right ? fill + text : text + fill
}

func cells(_ s: Score, scenario: Scenario?) -> String {
  let first: String
  if scenario == .sweep {
    first = s.meanSwitchAngle.map { "sw \(fixed($0, 1))" } ?? "sw -"
  } else if let p50 = s.latencyPercentile(50), let p95 = s.latencyPercentile(95) {
    first = "\(ms(p50))/\(ms(p95))"
  } else {
    first = "-"
  }
  let missed: String
  if s.rotations > 0 {
    missed = "\(s.missed)/\(s.rotations)"
  } else if s.sweeps > 0 {
    missed = "\(s.missedSweeps)/\(s.sweeps)"
  } else {
    missed = "-"
  }
  let hold = s.holdTime > 0 ? fixed(s.holdAccuracy * 100, 2) : "-"
  return pad(first, 10) + pad(missed, 7) + pad(fixed(s.spuriousPerMinute, 2), 7)
    + pad(hold, 8)
}

func printTable(_ results: [Benchmark.ProfileResult]) {
  for result in results {
    print("\n== \(result.split.rawValue): \(result.profile.summary)")
    var header = pad("scenario", 18, right: false)
    var sub = pad("", 18, right: false)
    for name in Benchmark.detectors {
      header += "  " + pad(name, 32, right: false)
      sub += "  " + pad("p50/p95ms", 10) + pad("miss", 7) + pad("spur/m", 7) + pad("hold%", 8)
    }
    print(header)
    print(sub)
    for scenario in result.scenarios {
      var line = pad(scenario.scenario.rawValue, 18, right: false)
      for d in 0..<3 { line += "  " + cells(scenario.scores[d], scenario: scenario.scenario) }
      print(line)
    }
    var line = pad("all rotations", 18, right: false)
    for d in 0..<3 { line += "  " + cells(result.total(d) { $0.isRotation }, scenario: nil) }
    print(line)
    line = pad("all turns", 18, right: false)
    for d in 0..<3 { line += "  " + cells(result.total(d) { $0.hasRotations }, scenario: nil) }
    print(line)
    line = pad("everything", 18, right: false)
    for d in 0..<3 { line += "  " + cells(result.total(d), scenario: nil) }
    print(line)
  }
}

func printDetails(_ results: [Benchmark.ProfileResult]) {
  for result in results {
    for line in result.scale.mismatches {
      print("  \(result.profile.name) orientd: wrong scale: \(line)")
    }
    for scenario in result.scenarios {
      for (d, name) in Benchmark.detectors.enumerated() {
        let s = scenario.scores[d]
        for label in s.missedLabels {
          print("  \(result.profile.name) \(name): missed \(label)")
        }
        if s.highTiltUncommitted > 0 {
          print(
            "  \(result.profile.name) \(name): \(scenario.scenario.rawValue): "
              + "\(s.highTiltUncommitted) rotations beyond 55 degrees back-tilt not committed")
        }
        // orientd's turns slower than Android's p95 in the same family: the tail to explain.
        if d == 0, let limit = scenario.scores[1].latencyPercentile(95) {
          let slow = zip(s.latencies, s.latencyLabels).filter { $0.0 > limit }
          for (latency, label) in slow.sorted(by: { $0.0 > $1.0 }).prefix(8) {
            print(
              "  \(result.profile.name) \(name): \(Int((latency * 1000).rounded())) ms "
                + "(android p95 \(Int((limit * 1000).rounded()))): \(label)")
          }
        }
        var counts: [String: Int] = [:]
        for label in s.spuriousLabels { counts[label, default: 0] += 1 }
        for (label, count) in counts.sorted(by: { $0.key < $1.key }) {
          print("  \(result.profile.name) \(name): spurious in \(label) (\(count) windows)")
        }
      }
    }
  }
}

// MARK: - JSON

func json(_ s: Score) -> JSONValue {
  func number(_ value: Double?) -> JSONValue { value.map { .number($0) } ?? .null }
  return .object([
    ("latency_p50", number(s.latencyPercentile(50))),
    ("latency_p95", number(s.latencyPercentile(95))),
    ("rotations", .number(Double(s.rotations))),
    ("missed", .number(Double(s.missed))),
    ("intermediates", .number(Double(s.intermediates))),
    ("spurious", .number(Double(s.spurious))),
    ("spurious_per_minute", .number(s.spuriousPerMinute)),
    ("hold_accuracy", .number(s.holdAccuracy)),
    ("switch_angle", number(s.meanSwitchAngle)),
    ("scored_minutes", .number(s.scoredTime / 60)),
  ])
}

// MARK: - Main

let options = parseOptions(Array(CommandLine.arguments.dropFirst()))
if let scenario = options.traceScenario {
  if options.explain {
    explain(options, scenario: scenario)
  } else {
    writeTrace(options, scenario: scenario)
  }
  exit(ExitStatus.success)
}

if options.recordings {
  let (lines, document) = recordingsSection(options)
  let passed = lines.allSatisfy(\.passed)
  if options.json {
    print(
      JSONValue.object([
        ("recordings", document),
        (
          "targets",
          .array(
            lines.map {
              .object([
                ("target", .string($0.name)), ("profile", .string($0.profile)),
                ("passed", .bool($0.passed)), ("detail", .string($0.detail)),
              ])
            })
        ),
        ("passed", .bool(passed)),
      ]).encoded())
  } else {
    print("")
    for target in lines {
      print(
        "\(target.passed ? "PASS" : "FAIL")  \(pad(target.profile, 12, right: false)) "
          + "\(target.name): \(target.detail)")
    }
    print(passed ? "\nall targets pass" : "\nsome targets FAIL")
  }
  exit(passed ? ExitStatus.success : ExitStatus.failure)
}

let started = monotonicNow()
var results: [Benchmark.ProfileResult] = []
let repetitions = options.quick ? 1 : 4
for split in options.splits.isEmpty ? Split.allCases : options.splits {
  var benchmark = Benchmark(
    seed: options.seed, repetitions: repetitions, parameters: options.parameters,
    profiles: options.profiles.isEmpty ? SensorProfile.all : options.profiles,
    scenarios: options.scenarios.isEmpty ? Scenario.benchmark : options.scenarios, split: split)
  benchmark.adaptive = options.adaptive
  results += benchmark.run()
}
let elapsed = monotonicNow() - started
var targets = Benchmark.targets(results)
// The hinge section (convertibles, issue 15): HingeBench.swift in OrientSim.
let hingeResults = hingeSection(options)
for (profile, _, pooled) in hingeResults {
  targets += HingeBenchmark.targets(profile: profile, pooled)
}

var throughput: (rate: Double, samples: Int)?
if options.throughput {
  let measured = measureThroughput(parameters: options.parameters, seed: options.seed)
  throughput = measured
  #if DEBUG
    let build = "debug build: not meaningful, use -c release"
  #else
    let build = "release build"
  #endif
  targets.append(
    TargetResult(
      name: ">= 5 M samples/s per core", profile: "all", passed: measured.rate >= 5e6,
      detail: "\(fixed(measured.rate / 1e6, 1)) M samples/s (\(build))"))
}
let allPassed = targets.allSatisfy(\.passed)

if options.json {
  var profiles: [JSONValue] = []
  for result in results {
    var scenarios: [JSONValue] = []
    for scenario in result.scenarios {
      var detectors: [(String, JSONValue)] = []
      for (d, name) in Benchmark.detectors.enumerated() {
        detectors.append((name, json(scenario.scores[d])))
      }
      scenarios.append(
        .object([("name", .string(scenario.scenario.rawValue)), ("detectors", .object(detectors))]))
    }
    profiles.append(
      .object([
        ("name", .string(result.profile.name)), ("split", .string(result.split.rawValue)),
        ("summary", .string(result.profile.summary)),
        ("scenarios", .array(scenarios)),
      ]))
  }
  let document = JSONValue.object([
    ("seed", .number(Double(options.seed))),
    ("repetitions", .number(Double(repetitions))),
    ("profiles", .array(profiles)),
    (
      "targets",
      .array(
        targets.map {
          .object([
            ("target", .string($0.name)), ("profile", .string($0.profile)),
            ("passed", .bool($0.passed)), ("detail", .string($0.detail)),
          ])
        })
    ),
    ("hinge", hingeJSON(hingeResults)),
    ("samples_per_second", throughput.map { .number($0.rate) } ?? .null),
    ("passed", .bool(allPassed)),
  ])
  // 0.1 wrote these keys in camelCase (`samplesPerSecond`; the hinge section's `rmsError`,
  // `maxError`, `mustFlag` too); both spellings until 0.3.
  let deprecated = DeprecatedKeys([
    "latency_p50", "latency_p95", "spurious_per_minute", "hold_accuracy", "switch_angle",
    "scored_minutes", "samples_per_second", "rms_error", "max_error", "must_flag",
  ])
  print(deprecated.addingAliases(to: document).encoded())
} else {
  let totalSamples = results.reduce(0) { $0 + $1.scenarios.reduce(0) { $0 + $1.samples } }
  print(
    "orient-bench: seed \(options.seed), \(repetitions) repetition(s), "
      + "\(totalSamples) samples per detector in \(fixed(elapsed, 1)) s")
  print("latency in ms from the true angle entering the target sector; sweep: switching angle")
  print("in degrees from the centre of the orientation left; miss = missed/expected;")
  print("spur/m = spurious changes per minute; hold% = hold accuracy (see docs/benchmark.md)")
  printTable(results)
  if let adaptive = options.adaptive {
    print(
      "\nadaptive sampling (still rate \(compact(adaptive.stillRate, 2)) Hz, settle time "
        + "\(compact(adaptive.settleTime, 2)) s): share of the samples orientd read")
    for result in results {
      let total = result.scenarios.reduce(0) { $0 + $1.samples }
      let read = result.scenarios.reduce(0) { $0 + $1.read }
      var line = pad("\(result.split.rawValue) \(result.profile.name)", 24, right: false)
      line += " all \(fixed(100 * Double(read) / Double(max(total, 1)), 1))%"
      for scenario in result.scenarios {
        line +=
          ", \(scenario.scenario.rawValue) "
          + "\(fixed(100 * Double(scenario.read) / Double(max(scenario.samples, 1)), 0))%"
      }
      print(line)
    }
  }
  if options.details {
    print("\ndetails:")
    printDetails(results)
  }
  printHingeTable(hingeResults)
  if options.gyro { printGyroSection(options) }
  print("")
  for target in targets {
    print(
      "\(target.passed ? "PASS" : "FAIL")  \(pad(target.profile, 20, right: false)) "
        + "\(target.name): \(target.detail)")
  }
  print(allPassed ? "\nall targets pass" : "\nsome targets FAIL")
}
exit(allPassed ? ExitStatus.success : ExitStatus.failure)
