import Glibc
import OrientCore
import OrientSim
import SystemKit

// motion-bench: the fusion's angle error against the truth on simulated motion and against the
// devices' own orientation on real IMU recordings, its throughput, and the motion stream's
// fan-out (latency and wakeups). Numbers, not a test: docs/motion.md explains each table.

let usage = """
  usage: motion-bench [--quick] [--seed N] [--scenario NAME ...] [--profile NAME ...]
                      [--set KEY=VALUE ...] [--recordings DIR | --no-recordings]
                      [--no-throughput] [--no-stream] [--stream-seconds S]
         motion-bench explain SCENARIO [--profile NAME] [--seed N] [--run N] [--set ...]
         motion-bench --help | --version

  Build in release mode for meaningful throughput: swift run -c release motion-bench

    --quick             one run per scenario instead of three, a shorter stream run
    --seed N            seed of every random stream (default 1)
    --scenario NAME     only this fusion scenario (repeatable): \(FusionScenario.allCases.map(\.rawValue).joined(separator: ", "))
    --profile NAME      only this sensor set (repeatable): \(FusionBenchmark.Profile.all.map(\.name).joined(separator: ", "));
                        also \(FusionBenchmark.Profile.slower.map(\.name).joined(separator: ", ")) (the IMU slower)
    --set KEY=VALUE     a fusion parameter: \(MotionFusion.Parameters.keys.joined(separator: ", "))
    --recordings DIR    scikit-kinematics' tests/data (default: what scripts/fetch-imu-data.sh
                        fetched into the cache); without it the real-recording table is skipped
    --no-recordings     skip the real recordings
    --no-throughput     skip the throughput measurement
    --no-stream         skip the stream fan-out measurement
    --stream-seconds S  length of each stream run (default 10, 3 with --quick)

  explain prints, every 0.1 s of one run, the true and estimated inclination and heading of
  orientd's fusion and Madgwick's (errors in degrees), the true and measured turn rate, the
  fusion's bias estimate and whether it counts the device as resting.

  exit status: 0 done; 64 usage error.
  """

struct Options {
  var quick = false
  var seed: UInt64 = 1
  var scenarios: [FusionScenario] = []
  var profiles: [FusionBenchmark.Profile] = []
  var parameters = MotionFusion.Parameters()
  var recordings: String?
  var skipRecordings = false
  var throughput = true
  var stream = true
  var streamSeconds: Double?
  var explain: FusionScenario?
  var run = 0
}

func fail(_ message: String) -> Never {
  StandardStream.error.writeLine("motion-bench: \(message)\nTry 'motion-bench --help'.")
  exit(ExitStatus.usage)
}

func parse(_ arguments: [String]) -> Options {
  var options = Options()
  var index = 0
  func value(_ name: String) -> String {
    index += 1
    guard index < arguments.count else { fail("\(name) needs a value") }
    return arguments[index]
  }
  if arguments.first == "explain" {
    guard arguments.count >= 2, let scenario = FusionScenario(rawValue: arguments[1]) else {
      fail("explain needs a scenario: \(FusionScenario.allCases.map(\.rawValue))")
    }
    options.explain = scenario
    index = 2
  }
  while index < arguments.count {
    let argument = arguments[index]
    switch argument {
    case "--help", "-h":
      print(usage)
      exit(ExitStatus.success)
    case "--version":
      print("motion-bench 0.1.0")
      exit(ExitStatus.success)
    case "--quick": options.quick = true
    case "--no-recordings": options.skipRecordings = true
    case "--no-throughput": options.throughput = false
    case "--no-stream": options.stream = false
    case "--recordings": options.recordings = value(argument)
    case "--run":
      guard let run = Int(value(argument)), run >= 0 else { fail("--run needs a number >= 0") }
      options.run = run
    case "--seed":
      guard let seed = UInt64(value(argument)) else { fail("--seed needs a whole number") }
      options.seed = seed
    case "--stream-seconds":
      guard let s = Double(value(argument)), s > 0, s <= 600 else {
        fail("--stream-seconds needs a number of seconds (0-600)")
      }
      options.streamSeconds = s
    case "--scenario":
      let name = value(argument)
      guard let scenario = FusionScenario(rawValue: name) else {
        fail("unknown scenario '\(name)'")
      }
      options.scenarios.append(scenario)
    case "--profile":
      let name = value(argument)
      guard
        let profile = (FusionBenchmark.Profile.all + FusionBenchmark.Profile.slower).first(where: {
          $0.name == name
        })
      else {
        fail("unknown profile '\(name)'")
      }
      options.profiles.append(profile)
    case "--set":
      let assignment = value(argument)
      guard let equals = assignment.firstIndex(of: "=") else {
        fail("--set expects KEY=VALUE, got '\(assignment)'")
      }
      do {
        try options.parameters.set(
          String(assignment[..<equals]), String(assignment[assignment.index(after: equals)...]))
      } catch {
        fail("\(error)")
      }
    default:
      fail("unknown argument '\(argument)'")
    }
    index += 1
  }
  return options
}

func pad(_ text: String, _ width: Int, right: Bool = true) -> String {
  guard text.count < width else { return text }
  let fill = String(repeating: " ", count: width - text.count)
  return right ? fill + text : text + fill
}

func cells(_ values: [Double]) -> String {
  let rms = FusionScore.rms(values)
  let p95 = percentile(values, 95) ?? .nan
  return pad(fixed(rms, 2), 7) + pad(fixed(p95, 2), 7)
}

// MARK: - Simulated motion

func simulated(_ options: Options) {
  let bench = FusionBenchmark(
    seed: options.seed, repetitions: options.quick ? 1 : 3, parameters: options.parameters)
  let profiles = options.profiles.isEmpty ? FusionBenchmark.Profile.all : options.profiles
  let scenarios = options.scenarios.isEmpty ? FusionScenario.allCases : options.scenarios
  print("== fusion on simulated motion: angle error against the truth, degrees (rms p95)")
  print("   inclination = the vertical; heading = about vertical (without the magnetometer:")
  print("   drift since the end of the \(fixed(FusionScenario.warmUp, 0)) s warm-up)")
  for profile in profiles {
    print("\n\(profile.name): \(profile.accelerometer.summary); \(profile.gyroscope.summary)")
    print("magnetometer \(fixed(profile.magnetometerRate, 1)) Hz, 0.4 uT noise, up to 2 uT offset")
    let names = [OrientdFusionFilter.name, MadgwickFilter.name, MahonyFilter.name]
    var header = pad("", 10, right: false) + "  " + pad("6-axis inclination", 14 * 3, right: false)
    header += "  " + pad("6-axis heading", 14 * 3, right: false)
    print(header + "  " + pad("9-axis inclination", 14 * 3, right: false) + "  9-axis heading")
    var sub = pad("scenario", 10, right: false)
    for _ in 0..<4 {
      sub += "  " + names.map { pad($0, 14, right: false) }.joined()
    }
    print(sub)
    var pooled = (
      imu: [FusionScore](repeating: FusionScore(), count: 3),
      marg: [FusionScore](repeating: FusionScore(), count: 3)
    )
    for scenario in scenarios {
      let result = bench.run(scenario, on: profile)
      var line = pad(scenario.rawValue, 10, right: false)
      line += "  " + result.imu.map { cells($0.inclination) }.joined()
      line += "  " + result.imu.map { cells($0.heading) }.joined()
      line += "  " + result.marg.map { cells($0.inclination) }.joined()
      line += "  " + result.marg.map { cells($0.heading) }.joined()
      print(line)
      for i in 0..<3 {
        pooled.imu[i].merge(result.imu[i])
        pooled.marg[i].merge(result.marg[i])
      }
    }
    var line = pad("all", 10, right: false)
    line += "  " + pooled.imu.map { cells($0.inclination) }.joined()
    line += "  " + pooled.imu.map { cells($0.heading) }.joined()
    line += "  " + pooled.marg.map { cells($0.inclination) }.joined()
    line += "  " + pooled.marg.map { cells($0.heading) }.joined()
    print(line)
  }
}

func explain(_ scenario: FusionScenario, _ options: Options) {
  let bench = FusionBenchmark(seed: options.seed, repetitions: 3, parameters: options.parameters)
  let profile = options.profiles.first ?? .fast
  let paths = scenario.runs(seed: options.seed, repetitions: 3)
  guard options.run < paths.count else { fail("\(scenario.rawValue) has \(paths.count) runs") }
  let samples = bench.samples(
    of: paths[options.run], index: options.run, scenario: scenario, profile: profile)
  var ours = OrientdFusionFilter(parameters: options.parameters)
  var madgwick = MadgwickFilter()
  print("# \(scenario.rawValue) run \(options.run) on \(profile.name)")
  print(
    "t,true-rate,measured-rate,incl-err-orientd,head-err-orientd,incl-err-madgwick,"
      + "head-err-madgwick,bias-x,bias-y,bias-z,resting")
  var next = 0.0
  let degrees = 180 / Double.pi
  var previous = samples.first?.truth ?? .identity
  var previousTime = 0.0
  for s in samples {
    ours.update(s, magnetometer: true)
    madgwick.update(s, magnetometer: true)
    let rate = (previous.conjugate * s.truth).angle / max(1e-9, s.time - previousTime)
    previous = s.truth
    previousTime = s.time
    guard s.time >= next else { continue }
    next += 0.1
    let a = fusionErrors(estimate: ours.estimate, truth: s.truth)
    let b = fusionErrors(estimate: madgwick.estimate, truth: s.truth)
    let bias = ours.fusion.bias * degrees
    print(
      "\(fixed(s.time, 2)),\(fixed(rate * degrees, 1)),\(fixed(s.gyro.magnitude * degrees, 1)),"
        + "\(fixed(a.inclination, 2)),\(fixed(a.heading, 2)),\(fixed(b.inclination, 2)),"
        + "\(fixed(b.heading, 2)),\(fixed(bias.x, 2)),\(fixed(bias.y, 2)),\(fixed(bias.z, 2)),"
        + "\(ours.fusion.isResting ? 1 : 0)")
  }
}

// MARK: - Real recordings

func recordingsFolder(_ options: Options) -> String? {
  if let dir = options.recordings { return dir }
  let cache: String
  if let custom = getenv("ORIENTD_CACHE") {
    cache = String(cString: custom)
  } else if let xdg = getenv("XDG_CACHE_HOME") {
    cache = String(cString: xdg) + "/orientd"
  } else {
    cache = String(cString: getenv("HOME") ?? strdup("/root")) + "/.cache/orientd"
  }
  return cache + "/imu-data/scikit-kinematics-0.10.4/tests/data"
}

func readText(_ path: String) -> String? {
  guard let fd = try? FileDescriptor(path: path) else { return nil }
  guard let bytes = try? fd.readToEnd(limit: 64 << 20) else { return nil }
  return String(decoding: bytes, as: UTF8.self)
}

func realRecordings(_ options: Options) {
  print("\n== fusion on real recordings: difference from each device's own orientation, degrees")
  guard let folder = recordingsFolder(options) else { return }
  let (recordings, errors) = IMURecordings.load { readText(folder + "/" + $0) }
  if recordings.isEmpty {
    print("skipped: no recordings in \(folder) (\(errors.first.map { "\($0)" } ?? "empty"));")
    print(
      "run scripts/fetch-imu-data.sh (pip fetches scikit-kinematics' wheel) or --recordings DIR")
    return
  }
  for error in errors { print("not read: \(error)") }
  print("   (rms p95; heading after removing the constant offset between the earth frames)")
  let names = [OrientdFusionFilter.name, MadgwickFilter.name, MahonyFilter.name]
  var header = pad("recording", 14, right: false) + pad("s", 6) + pad("Hz", 6) + pad("ref", 6)
  header += "  " + pad("6-axis inclination", 14 * 3, right: false)
  header += "  " + pad("9-axis inclination", 14 * 3, right: false) + "  9-axis heading"
  print(header)
  var sub = pad("", 32, right: false)
  for _ in 0..<3 { sub += "  " + names.map { pad($0, 14, right: false) }.joined() }
  print(sub)
  var notes: [String] = []
  for recording in recordings {
    func run<F: FusionFilter>(_ filter: F, _ magnetometer: Bool) -> RecordingResult {
      var f = filter
      return RecordingEvaluation.evaluate(recording, filter: &f, magnetometer: magnetometer)
    }
    let imu = [
      run(OrientdFusionFilter(parameters: options.parameters), false), run(MadgwickFilter(), false),
      run(MahonyFilter(), false),
    ]
    let marg = [
      run(OrientdFusionFilter(parameters: options.parameters), true), run(MadgwickFilter(), true),
      run(MahonyFilter(), true),
    ]
    let seconds = recording.samples.last?.time ?? 0
    var line = pad(recording.name, 14, right: false) + pad(fixed(seconds, 0), 6)
    line += pad(fixed(recording.rate, 0), 6) + pad(fixed(imu[0].restAgreement, 1), 6)
    line += "  " + imu.map { cells($0.inclination) }.joined()
    line += "  " + marg.map { cells($0.inclination) }.joined()
    line += "  " + marg.map { cells($0.heading) }.joined()
    print(line)
    notes.append(
      "\(recording.name): \(recording.summary); reference read as \(imu[0].convention)")
  }
  print("ref = median angle between the reference's vertical and the accelerometer at rest")
  for note in notes { print("  \(note)") }
}

// MARK: - Throughput

func monotonicNow() -> Double {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

func throughput(_ options: Options) {
  let bench = FusionBenchmark(seed: options.seed, repetitions: 1, parameters: options.parameters)
  let path = FusionScenario.turns.runs(seed: options.seed, repetitions: 1)[0]
  let samples = bench.samples(of: path, index: 0, scenario: .turns, profile: .fast)
  #if DEBUG
    let build = "debug build: not meaningful, use -c release"
  #else
    let build = "release build"
  #endif
  print("\n== throughput of MotionFusion on one core (\(build)), best of 5")
  for magnetometer in [false, true] {
    var best = Double.infinity
    var sink = 0.0
    let passes = max(1, 1_000_000 / samples.count)
    for _ in 0..<5 {
      var fusion = MotionFusion(parameters: options.parameters)
      let start = monotonicNow()
      for _ in 0..<passes {
        fusion.reset()
        for s in samples {
          fusion.integrate(gyro: s.gyro, time: s.time)
          fusion.correct(acceleration: s.acceleration, time: s.time)
          if magnetometer, let m = s.magneticField {
            fusion.correct(magneticField: m, time: s.time)
          }
        }
        sink += fusion.rotation.w
      }
      best = min(best, monotonicNow() - start)
    }
    if sink == -1 { print("") }
    let rate = Double(passes * samples.count) / best
    print(
      "\(magnetometer ? "9-axis" : "6-axis"): \(fixed(rate / 1e6, 2)) M samples/s "
        + "(\(fixed(1e9 / rate, 0)) ns per sample)")
  }
}

// MARK: - Main

let options = parse(Array(CommandLine.arguments.dropFirst()))
if let scenario = options.explain {
  explain(scenario, options)
  exit(ExitStatus.success)
}
simulated(options)
if !options.skipRecordings { realRecordings(options) }
if options.throughput { throughput(options) }
if options.stream { streamSection(seconds: options.streamSeconds ?? (options.quick ? 3 : 10)) }
exit(ExitStatus.success)
