// rotate-bench: how long from turning the device to the output's transform applied, for
// `orientd rotate` on a real headless sway, next to rot8's documented behaviour on the same
// turns (scripts/bench/rotate.sh runs it).
//
// orientd runs on an emulated polled accelerometer (umockdev) on a private bus; each turn
// writes the new raw values into sysfs, then sway's IPC is polled (GET_OUTPUTS, every 1 ms)
// until the transform has changed. The time runs from just before the sysfs write to the first
// reply showing the new transform.
//
// rot8 is not in Debian, so its published algorithm is simulated on the same turns: it reads
// the accelerometer every --sleep 500 ms (its default) and turns when the reading is within its
// --threshold (0.5) of an orientation's vector, which a completed quarter turn is at the first
// read. Its latency is the wait for the next read (the turn instants against a 500 ms read
// clock started at a random phase), plus one `swaymsg output NAME transform T` (rot8 runs
// swaymsg), measured here on the same sway.
import Glibc
import JSON
import ScreenRotation
import SystemKit
import TestSupport

func now() -> Double {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func percentile(_ values: [Double], _ p: Double) -> Double {
  let sorted = values.sorted()
  guard !sorted.isEmpty else { return .nan }
  let rank = Int((p / 100 * Double(sorted.count - 1)).rounded())
  return sorted[min(max(rank, 0), sorted.count - 1)]
}

func ms(_ seconds: Double) -> String {
  let value = (seconds * 10_000).rounded() / 10
  return String(value)
}

var turns = 20
var json = false
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
  switch argument {
  case "--turns":
    guard let value = arguments.popFirst().flatMap({ Int($0) }), value > 0 else {
      print("rotate-bench: --turns needs a positive number")
      exit(ExitStatus.usage)
    }
    turns = value
  case "--json": json = true
  default:
    print("usage: rotate-bench [--turns N] [--json]")
    exit(argument == "--help" ? ExitStatus.success : ExitStatus.usage)
  }
}

// The emulated accelerometer of the tests (Tests/Fixtures/umockdev/mxc4005.umockdev).
let parent = EmulatedAccelerometer.parent
let accel = EmulatedAccelerometer.polled

do {
  let bus = try PrivateBus()
  let work = try TemporaryDirectory("rotate-bench")
  let empty = work.file("empty.conf")
  try writeFile(empty, "")
  let orientd = try Built.executable("orientd")
  let testbed = try LiveTestbed(
    devices: [parent, accel], program: [orientd, "--config", empty],
    environment: bus.environment)
  guard waitFor(timeout: 15, { testbed.programStderr.contains("serving ") }) else {
    throw TestFailure("orientd did not start: \(testbed.programStderr)")
  }
  let sway = try HeadlessSway()
  var environment = bus.environment.merging(sway.environment) { $1 }
  environment["XDG_RUNTIME_DIR"] = work.path
  environment["XDG_CURRENT_DESKTOP"] = "sway"
  let rotate = try ChildProcess(
    [orientd, "rotate", "--output", "HEADLESS-1", "--settle", "0"], environment: environment,
    outputDirectory: work.path)
  guard waitFor(timeout: 15, { rotate.standardError.contains("following ") }) else {
    throw TestFailure("orientd rotate did not start: \(rotate.standardError)")
  }
  let ipc = try SwayIPC(path: sway.socket)
  func transform() throws -> String? {
    try ipc.request(.getOutputs).arrayValue?.first?["transform"]?.stringValue
  }
  // sway's spelling: left-up 270, bottom-up 180, right-up 90.
  let cycle: [((Int, Int), String)] = [
    ((1000, 0), "270"), ((0, 1000), "180"), ((-1000, 0), "90"), ((0, -1000), "normal"),
  ]
  var current = (0, -1000)
  var orientdLatencies: [Double] = []
  var instants: [Double] = []
  for i in 0..<turns {
    let (raw, expected) = cycle[i % cycle.count]
    let start = now()
    instants.append(start)
    try testbed.perform { scenario in
      // The axis that becomes non-zero first, so every intermediate reading is valid.
      if raw.0 != 0 { scenario.set(accel, "in_accel_x_raw", "\(raw.0)\n") }
      if raw.1 != 0 { scenario.set(accel, "in_accel_y_raw", "\(raw.1)\n") }
      if raw.0 == 0 && current.0 != 0 { scenario.set(accel, "in_accel_x_raw", "0\n") }
      if raw.1 == 0 && current.1 != 0 { scenario.set(accel, "in_accel_y_raw", "0\n") }
    }
    current = raw
    var done = false
    while now() - start < 10 {
      if try transform() == expected {
        done = true
        break
      }
      usleep(1000)
    }
    guard done else { throw TestFailure("turn \(i): sway never showed \(expected)") }
    orientdLatencies.append(now() - start)
    // Between turns, a pause of 0.3-0.7 s so the turns fall at different rot8 read phases.
    usleep(UInt32(300_000 + (i * 97_000) % 400_000))
  }
  rotate.signal(SIGTERM)
  _ = rotate.wait(timeout: 10)

  // rot8: measure its apply step (swaymsg as a process) on the same sway...
  var swaymsgCosts: [Double] = []
  for i in 0..<turns {
    let start = now()
    let result = try sway.swaymsg(["output", "HEADLESS-1", "transform", cycle[i % 4].1])
    guard result.status == 0 else { throw TestFailure("swaymsg failed: \(result.stderr)") }
    swaymsgCosts.append(now() - start)
  }
  // ...and its 500 ms read clock over the same turn instants, from a random phase.
  var rng = SystemRandomNumberGenerator()
  let phase = Double.random(in: 0..<0.5, using: &rng)
  let clockStart = (instants.first ?? 0) - phase
  let rot8Latencies = zip(instants, swaymsgCosts).map { instant, cost -> Double in
    let sinceStart = instant - clockStart
    let nextRead = (sinceStart / 0.5).rounded(.up) * 0.5
    return (nextRead - sinceStart) + cost
  }

  let rows: [(String, [Double])] = [
    ("orientd rotate (measured)", orientdLatencies),
    ("rot8 --sleep 500 (simulated + measured swaymsg)", rot8Latencies),
  ]
  let oMedian = percentile(orientdLatencies, 50)
  let rMedian = percentile(rot8Latencies, 50)
  if json {
    print(
      JSONValue.object(
        [("turns", .number(Double(turns)))]
          + rows.map { name, values in
            (
              name.hasPrefix("orientd") ? "orientd_rotate" : "rot8_simulated",
              JSONValue.object([
                ("median_ms", .number(percentile(values, 50) * 1000)),
                ("p95_ms", .number(percentile(values, 95) * 1000)),
              ])
            )
          } + [("median_ratio_rot8_over_orientd", .number(rMedian / oMedian))]
      ).encoded())
  } else {
    print("turn -> output transform applied, \(turns) turns on headless sway")
    for (name, values) in rows {
      let label = name.padding(48)
      print(
        "  \(label) median \(ms(percentile(values, 50))) ms  p95 \(ms(percentile(values, 95))) ms")
    }
    print("  rot8/orientd median ratio: \(String((rMedian / oMedian * 10).rounded() / 10))x")
  }
} catch {
  print("rotate-bench: \(error)")
  exit(ExitStatus.software)
}

extension String {
  func padding(_ width: Int) -> String {
    count >= width ? self : self + String(repeating: " ", count: width - count)
  }
}
