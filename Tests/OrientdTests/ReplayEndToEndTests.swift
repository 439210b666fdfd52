import Glibc
import JSON
import OrientCore
import TestSupport
import TestThreads
import Testing
import TextFormats

/// Runs the built `orientd replay` (and `orient-bench trace`) as a user would.
@Suite(.ownThreads) struct ReplayEndToEndTests {
  /// A trace: upright for 1 s, turned to left-up, lying flat, at 50 Hz.
  static let trace: String = {
    var text = "# test trace\nt,x,y,z\n"
    var t = 0.0
    func add(_ x: Double, _ y: Double, _ z: Double, seconds: Double) {
      for _ in 0..<Int(seconds * 50) {
        t += 0.02
        text += "\(shortDecimal((t * 1000).rounded() / 1000)),\(x),\(y),\(z)\n"
      }
    }
    add(0.3, -9.7, -1.2, seconds: 1)
    add(9.7, 0.4, -1.2, seconds: 1)
    add(0.2, 0.3, -9.8, seconds: 1)
    return text
  }()

  @Test func replaysAFileAsCSVAndJSON() throws {
    let dir = try TemporaryDirectory("replay")
    let path = "\(dir.path)/trace.csv"
    try writeFile(path, ReplayEndToEndTests.trace)
    let orientd = try Built.executable("orientd")

    let csv = try ChildProcess.run(
      ["orientd", "replay", path].replacingFirst(with: orientd),
      outputDirectory: dir.path)
    #expect(csv.status == 0, "\(csv.stderr)")
    let lines = csv.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 2)
    #expect(lines.first == "0.02,normal")
    #expect(lines.last?.hasSuffix(",left-up") == true)
    let time = try #require(Double(lines.last?.split(separator: ",").first ?? ""))
    #expect(time > 1 && time < 1.3)

    let json = try ChildProcess.run(
      [orientd, "replay", "--json", "-"], stdin: path, outputDirectory: dir.path)
    #expect(json.status == 0, "\(json.stderr)")
    let objects = try json.stdout.split(separator: "\n").map {
      try JSONValue(parsing: String($0))
    }
    #expect(objects.count == 2)
    #expect(objects.last?["orientation"]?.stringValue == "left-up")
    #expect(objects.last?["rotation"]?.numberValue == 90)
    #expect(objects.last?["tilt"]?.stringValue == "vertical")
    #expect(objects.first?["time"]?.numberValue == 0.02)

    // With --tilt the tilt changes appear too: lying flat at the end is face-up, orientation kept.
    let tilt = try ChildProcess.run(
      [orientd, "replay", "--tilt", path], outputDirectory: dir.path)
    #expect(tilt.status == 0, "\(tilt.stderr)")
    let last = tilt.stdout.split(separator: "\n").last.map(String.init) ?? ""
    #expect(last.hasSuffix(",left-up,face-up"), "\(tilt.stdout)")
  }

  @Test func malformedTraceExits65WithFileAndLine() throws {
    let dir = try TemporaryDirectory("replay-bad")
    let path = "\(dir.path)/bad.csv"
    try writeFile(path, "t,x,y,z\n0,0,-9.8,0\n0.1,0,-9.8\n0.2,0,-9.8,0\n")
    let result = try ChildProcess.run(
      [try Built.executable("orientd"), "replay", path], outputDirectory: dir.path)
    #expect(result.status == 65)
    #expect(result.stderr.contains("\(path):3: expected 4 comma-separated values"))
  }

  @Test func overlongLineExits65() throws {
    let dir = try TemporaryDirectory("replay-long")
    let path = "\(dir.path)/long.csv"
    try writeFile(path, "0,0,-9.8,0\n" + String(repeating: "1", count: 10_000) + "\n")
    let result = try ChildProcess.run(
      [try Built.executable("orientd"), "replay", path], outputDirectory: dir.path)
    #expect(result.status == 65)
    #expect(result.stderr.contains("\(path):2: line is longer than 4096 bytes"))
  }

  @Test func configAndUsageErrors() throws {
    let dir = try TemporaryDirectory("replay-config")
    let orientd = try Built.executable("orientd")
    let trace = "\(dir.path)/t.csv"
    try writeFile(trace, ReplayEndToEndTests.trace)
    let conf = "\(dir.path)/orientd.conf"
    try writeFile(conf, "[detector]\nhysteresis = 10\nfilter-time = 2\n")

    let bad = try ChildProcess.run(
      [orientd, "replay", "--config", conf, trace], outputDirectory: dir.path)
    #expect(bad.status == 65)
    #expect(bad.stderr.contains("\(conf):3: unknown key 'filter-time' in [detector]"))

    try writeFile(conf, "[detector]\nhysteresis = 10\n")
    let good = try ChildProcess.run(
      [orientd, "replay", "--config", conf, "--set", "filter-time-constant=0.1", trace],
      outputDirectory: dir.path)
    #expect(good.status == 0, "\(good.stderr)")

    let range = try ChildProcess.run(
      [orientd, "replay", "--set", "hysteresis=90", trace], outputDirectory: dir.path)
    #expect(range.status == 64)
    #expect(range.stderr.contains("hysteresis 90 degrees is outside 0 ... 40 degrees"))

    let missing = try ChildProcess.run(
      [orientd, "replay", "\(dir.path)/none.csv"], outputDirectory: dir.path)
    #expect(missing.status == 66)
    #expect(missing.stderr.contains("cannot open trace \(dir.path)/none.csv"))

    let usage = try ChildProcess.run([orientd, "replay", "--loud"], outputDirectory: dir.path)
    #expect(usage.status == 64)
    #expect(usage.stderr.contains("Try 'orientd --help'"))
  }

  @Test func replaysTheBenchmarksDemoTrace() throws {
    let dir = try TemporaryDirectory("replay-demo")
    let path = "\(dir.path)/demo.csv"
    let bench = try ChildProcess.run(
      [try Built.executable("orient-bench"), "trace", "demo"], outputDirectory: dir.path)
    #expect(bench.status == 0, "\(bench.stderr)")
    try writeFile(path, bench.stdout)
    let replay = try ChildProcess.run(
      [try Built.executable("orientd"), "replay", path], outputDirectory: dir.path)
    #expect(replay.status == 0, "\(replay.stderr)")
    let orientations = replay.stdout.split(separator: "\n").compactMap {
      $0.split(separator: ",").last.flatMap { Orientation(rawValue: String($0)) }
    }
    // Upright, left-up, a 180 degree flip to right-up, bottom-up, a flip back to normal; put
    // down flat and picked up without a change. A flip may commit the orientation it passes.
    #expect(
      withoutPassing(orientations) == [.normal, .leftUp, .rightUp, .bottomUp, .normal],
      "\(orientations)")
  }
}

/// The orientations without those passed through during a 180 degree flip: an entry whose
/// neighbours are 180 degrees apart.
func withoutPassing(_ list: [Orientation]) -> [Orientation] {
  var result: [Orientation] = []
  for (index, o) in list.enumerated() {
    if index > 0, index + 1 < list.count,
      let before = list[index - 1].clockwiseRotation, let after = list[index + 1].clockwiseRotation,
      abs(before - after) == 180, o != list[index - 1]
    {
      continue
    }
    result.append(o)
  }
  return result
}

extension Array where Element == String {
  /// The array with its first element replaced.
  fileprivate func replacingFirst(with first: String) -> [String] {
    [first] + dropFirst()
  }
}
