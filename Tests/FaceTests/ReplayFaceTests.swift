import Glibc
import JSON
import TestSupport
import TestThreads
import Testing

/// `orientd replay --face-camera` end to end: the bed scenario (orient-bench's `bed`, run 2:
/// lying on one side, the device turned from portrait to landscape and back twice, committed by
/// the detector each time) with a file camera.
@Suite(
  .ownThreads,
  .enabled(if: runsInCI || Photos.available, "the photographs or Pillow are not installed"))
struct ReplayFaceTests {
  static let trace = "\(Built.packageRoot)/Tests/Fixtures/traces/bed-portrait.csv"

  func replay(_ arguments: [String], in directory: TemporaryDirectory) throws -> (
    status: Int32, stdout: String, stderr: String
  ) {
    try ChildProcess.run(
      [try Built.executable("orientd"), "replay", Self.trace] + arguments,
      outputDirectory: directory.path, timeout: 120)
  }

  @Test func withoutTheCameraTheBedTraceTurnsFourTimes() throws {
    let directory = try TemporaryDirectory("face-replay")
    let plain = try replay([], in: directory)
    #expect(
      plain.stdout.split(separator: "\n").map { $0.split(separator: ",")[1] } == [
        "normal", "left-up", "normal", "left-up", "normal",
      ], "\(plain.stdout)")
  }

  @Test func aFaceUprightInPortraitKeepsPortrait() throws {
    let directory = try TemporaryDirectory("face-replay")
    let camera = try Photos.camera(Photos.hopper, in: directory)
    // The debug build on a loaded machine: the answer, not its speed, is checked here.
    let result = try replay(
      ["--face-camera", camera, "--face-timeout", "30000", "--json"], in: directory)
    #expect(result.status == 0, "\(result.stderr)")
    let lines = try jsonLines(result.stdout)
    #expect(lines.map { $0["orientation"] } == Array(repeating: .string("normal"), count: 3))
    let kept = lines.filter { $0["kept"] == .bool(true) }
    #expect(kept.count == 2, "two turns to landscape proposed, both vetoed: \(result.stdout)")
    for line in kept {
      #expect(line["proposed"] == .string("left-up"))
      #expect(line["face"]?["answer"] == .string("veto"))
    }
    let uses = result.stderr.split(separator: "\n").filter {
      $0.contains("opened for a proposed rotation normal -> left-up")
    }
    #expect(uses.count == 2, "each camera use is logged: \(result.stderr)")
    // The CSV form prints only what is committed.
    let csv = try replay(["--face-camera", camera, "--face-timeout", "30000"], in: directory)
    #expect(csv.stdout.split(separator: "\n").count == 1, "\(csv.stdout)")
  }

  @Test func withoutAFaceTheTurnsAreCommitted() throws {
    let directory = try TemporaryDirectory("face-replay")
    let camera = try Photos.camera(Photos.noFace[1], in: directory)
    let result = try replay(
      ["--face-camera", camera, "--face-timeout", "30000", "--json"], in: directory)
    let lines = try jsonLines(result.stdout)
    #expect(
      lines.map { $0["orientation"]?.stringValue ?? "" } == [
        "normal", "left-up", "normal", "left-up", "normal",
      ], "\(result.stdout)\n\(result.stderr)")
    for line in lines.dropFirst() {
      #expect(line["face"]?["answer"] == .string("accept"), "\(line)")
    }
  }

  /// A camera that never delivers (a FIFO no one writes to): every turn waits the 700 ms
  /// default, no less, and is then committed.
  @Test func aStalledCameraTimesOutAt700Milliseconds() throws {
    let directory = try TemporaryDirectory("face-replay")
    mkdir(directory.file("stalled"), 0o755)
    #expect(mkfifo(directory.file("stalled/0001.jpg"), 0o600) == 0)
    let result = try replay(
      ["--face-camera", "file:\(directory.file("stalled"))", "--json"], in: directory)
    #expect(result.status == 0, "\(result.stderr)")
    let lines = try jsonLines(result.stdout)
    #expect(lines.count == 5, "\(result.stdout)")
    for line in lines.dropFirst() {
      #expect(line["face"]?["answer"] == .string("timeout"), "\(line)")
      let waited = line["face"]?["waited_ms"]?.numberValue ?? 0
      #expect(waited >= 700, "\(line)")
    }
    #expect(result.stderr.contains("the camera timed out after "))
  }

  @Test func aMissingProgramIsUnavailable() throws {
    let directory = try TemporaryDirectory("face-replay")
    let result = try replay(
      ["--face-camera", "file:/tmp", "--face-program", "/nonexistent/orientd-face"], in: directory)
    #expect(result.status == 69)
    #expect(result.stderr.contains("face-aware rotation needs orientd-face"))
  }
}
