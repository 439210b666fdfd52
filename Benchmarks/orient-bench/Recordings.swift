import Glibc
import JSON
import OrientCore
import OrientSim
import SystemKit

// `orient-bench recordings`: the three detectors on real recordings (scripts/recordings.py
// fetches and converts them), scored against RecordingOracle. docs/detector.md, "Real
// recordings".

/// Where scripts/recordings.py keeps its traces, in its order of preference.
func defaultRecordingDirectories() -> [String] {
  var directories: [String] = []
  if let value = getenv("ORIENTD_RECORDINGS") { directories.append(String(cString: value)) }
  directories += ["/var/cache/orientd-recordings", ".build/recordings"]
  return directories
}

/// The trace files among `paths` (files, or directories whose `*.csv` files are taken).
func recordingFiles(_ paths: [String]) -> [String] {
  var files: [String] = []
  let candidates = paths.isEmpty ? defaultRecordingDirectories() : paths
  for path in candidates {
    let names = Sysfs.list(path).filter { $0.hasSuffix(".csv") }
    if !names.isEmpty {
      files += names.map { "\(path)/\($0)" }
      if paths.isEmpty { break }
    } else if !paths.isEmpty {
      files.append(path)
    }
  }
  return files
}

/// Reads a `t,x,y,z` trace (the `orientd replay` format).
func loadRecording(_ path: String) throws -> Recording {
  let file = try FileDescriptor(path: path)
  var reader = LineReader(file, maxLineLength: TraceParser.maxLineLength, bufferSize: 1 << 20)
  var parser = TraceParser(source: path)
  var samples: [Sample] = []
  while let line = try reader.nextLine() {
    if let sample = try parser.parse(line: line) { samples.append(sample) }
  }
  var name = String(path.split(separator: "/").last ?? "")
  if name.hasSuffix(".csv") { name.removeLast(4) }
  return Recording(name: name, samples: samples)
}

/// One recording at one rate, scored.
struct RecordingResult {
  var recording: String
  var rate: String
  var hours: Double
  var holds: Int
  var scores: [RecordingScore]
  /// The oracle's turns: when each crossed into the new sector, and to what.
  var turns: [(Double, Orientation)] = []
}

/// Runs every recording at its own rate and at each of `rates` (decimated), prints the
/// table and returns the target lines (pooled per rate).
func recordingsSection(_ options: BenchOptions) -> (lines: [TargetResult], json: JSONValue) {
  let files = recordingFiles(options.recordingPaths)
  guard !files.isEmpty else {
    StandardStream.error.writeLine(
      "orient-bench: no recordings found (looked in "
        + "\(options.recordingPaths.isEmpty ? defaultRecordingDirectories() : options.recordingPaths));"
        + " fetch them with scripts/recordings.py")
    exit(ExitStatus.unavailable)
  }
  var results: [RecordingResult] = []
  let rates: [Double?] = [nil] + options.recordingRates.map { Optional($0) }
  for file in files {
    let recording: Recording
    do {
      recording = try loadRecording(file)
    } catch {
      StandardStream.error.writeLine("orient-bench: \(error)")
      exit(ExitStatus.dataError)
    }
    for rate in rates {
      let version = rate.map { recording.decimated(to: $0) } ?? recording
      if rate != nil && version.samples.count == recording.samples.count { continue }
      let (oracle, scores) = scoreRecording(
        version, parameters: options.parameters, adaptive: options.adaptive)
      results.append(
        RecordingResult(
          recording: recording.name,
          rate: rate.map { "\(compact($0, 1)) Hz" } ?? "own \(compact(recording.rate, 0)) Hz",
          hours: version.duration / 3600, holds: oracle.holds.count, scores: scores,
          turns: oracle.turns.map { ($0.crossing, $0.to.orientation) }))
    }
  }
  print("recordings: \(files.count) file(s); turns p50/p95 in ms from the oracle's sector")
  print("crossing; miss = missed/turns; flick = changes undone within 2 s; wrong% = share of")
  print("the oracle's hold time showing another orientation; chg/h = changes per hour")
  var header = pad("recording", 22, right: false) + pad("rate", 12, right: false)
  var sub = pad("", 34, right: false)
  for name in Benchmark.detectors {
    header += "  " + pad(name, 38, right: false)
    sub +=
      "  " + pad("p50/p95ms", 10) + pad("miss", 8) + pad("flick", 6) + pad("wrong%", 7)
      + pad("chg/h", 7)
  }
  print(header)
  print(sub)
  func cells(_ s: RecordingScore) -> String {
    let latency =
      percentile(s.latencies, 50).map { p50 in
        "\(ms(p50))/\(ms(percentile(s.latencies, 95) ?? p50))"
      } ?? "-"
    let perHour = s.duration > 0 ? Double(s.changes) / (s.duration / 3600) : 0
    return pad(latency, 10) + pad("\(s.missed)/\(s.turns)", 8) + pad("\(s.flicker)", 6)
      + pad(fixed(s.wrongShare * 100, 3), 7) + pad(fixed(perHour, 0), 7)
  }
  for result in results {
    var line = pad(result.recording, 22, right: false) + pad(result.rate, 12, right: false)
    for score in result.scores { line += "  " + cells(score) }
    print(line)
  }
  if options.details {
    for result in results {
      for (time, orientation) in result.turns {
        print("  \(result.rate) oracle: turn: \(result.recording) to \(orientation) at \(time) s")
      }
      for (d, name) in Benchmark.detectors.enumerated() {
        for label in result.scores[d].flickerLabels {
          print("  \(result.rate) \(name): flicker: \(label)")
        }
      }
    }
  }
  var lines: [TargetResult] = []
  var pooledJSON: [JSONValue] = []
  let groups: [(String, (RecordingResult) -> Bool)] =
    [("own rate", { $0.rate.hasPrefix("own") })]
    + options.recordingRates.map { rate in
      ("\(compact(rate, 1)) Hz", { $0.rate == "\(compact(rate, 1)) Hz" })
    }
  for (label, filter) in groups {
    let selected = results.filter(filter)
    guard !selected.isEmpty else { continue }
    var pooled = [RecordingScore](repeating: RecordingScore(), count: 3)
    for result in selected {
      for d in 0..<3 { pooled[d].merge(result.scores[d]) }
    }
    var line = pad("all", 22, right: false) + pad(label, 12, right: false)
    for score in pooled { line += "  " + cells(score) }
    print(line)
    let ours = pooled[0]
    let android = pooled[1]
    let profile = "rec \(label)"
    lines.append(
      TargetResult(
        name: "recordings: flicker no more than android", profile: profile,
        passed: ours.flicker <= android.flicker,
        detail: "\(ours.flicker) vs \(android.flicker)"))
    lines.append(
      TargetResult(
        name: "recordings: wrong hold time no more than android", profile: profile,
        passed: ours.wrongShare <= android.wrongShare,
        detail:
          "\(fixed(ours.wrongShare * 100, 3))% vs \(fixed(android.wrongShare * 100, 3))% of "
          + "\(fixed(ours.holdTime / 60, 1)) min"))
    if let p95 = percentile(ours.latencies, 95), let a95 = percentile(android.latencies, 95),
      let p50 = percentile(ours.latencies, 50), let a50 = percentile(android.latencies, 50)
    {
      lines.append(
        TargetResult(
          name: "recordings: turn p95 no higher than android", profile: profile,
          passed: p95 <= a95, detail: "\(ms(p95)) vs \(ms(a95)) ms"))
      lines.append(
        TargetResult(
          name: "recordings: turn median below android's", profile: profile,
          passed: p50 < a50, detail: "\(ms(p50)) vs \(ms(a50)) ms"))
    }
    lines.append(
      TargetResult(
        name: "recordings: missed turns no more than android", profile: profile,
        passed: ours.missed <= android.missed,
        detail: "\(ours.missed) of \(ours.turns) vs \(android.missed) of \(android.turns)"))
    pooledJSON.append(
      .object(
        [("rate", .string(label))]
          + zip(Benchmark.detectors, pooled).map { name, s in
            (name, recordingJSON(s))
          }))
  }
  return (lines, .array(pooledJSON))
}

func recordingJSON(_ s: RecordingScore) -> JSONValue {
  func number(_ value: Double?) -> JSONValue { value.map { .number($0) } ?? .null }
  return .object([
    ("latency_p50", number(percentile(s.latencies, 50))),
    ("latency_p95", number(percentile(s.latencies, 95))),
    ("turns", .number(Double(s.turns))),
    ("missed", .number(Double(s.missed))),
    ("flicker", .number(Double(s.flicker))),
    ("wrong_hold_share", .number(s.wrongShare)),
    ("hold_minutes", .number(s.holdTime / 60)),
    ("changes", .number(Double(s.changes))),
    ("hours", .number(s.duration / 3600)),
  ])
}
