import FaceClient
import Glibc
import OrientCore
import OrientLog
import SystemKit
import TestSupport
import TestThreads
import Testing

/// The client side: orientd-face run as a child on an event loop, with a hard timeout.
@Suite(.ownThreads) struct ClientTests {
  /// Runs one query to its end on a fresh loop.
  func ask(_ arguments: [String], timeout: Duration) throws -> (FaceQuery.Outcome?, Double) {
    let loop = try EventLoop()
    var outcome: FaceQuery.Outcome?
    let start = monotonicSeconds()
    let query = try FaceQuery(arguments, timeout: timeout, loop: loop) { outcome = $0 }
    try loop.run(until: { outcome != nil }, timeout: .seconds(60))
    let elapsed = monotonicSeconds() - start
    // The child is reaped on the loop after it was killed.
    try loop.run(until: { !query.isRunning }, timeout: .seconds(10))
    #expect(!query.isRunning)
    return (outcome, elapsed)
  }

  /// A camera that never delivers a frame: orientd-face blocks opening a FIFO no one writes.
  @Test(.enabled(if: runsInCI || Photos.available)) func aStalledCameraIsKilledAtTheTimeout()
    throws
  {
    let directory = try TemporaryDirectory("face-stall")
    mkdir(directory.file("camera"), 0o755)
    #expect(mkfifo(directory.file("camera/0001.jpg"), 0o600) == 0)
    let (outcome, elapsed) = try ask(
      [
        try Built.executable("orientd-face"), "resolve", "--camera",
        "file:\(directory.file("camera"))", "--current", "normal", "--proposed", "left-up",
      ], timeout: .milliseconds(700))
    #expect(outcome == .timedOut)
    #expect(elapsed >= 0.7, "never before the timeout")
  }

  @Test func aProgramThatPrintsNoAnswerFails() throws {
    let (garbage, _) = try ask(["/bin/sh", "-c", "echo hello"], timeout: .seconds(20))
    #expect(garbage == .failed("orientd-face printed no answer (\"hello\")"))
    let (status, _) = try ask(["/bin/sh", "-c", "exit 3"], timeout: .seconds(20))
    #expect(status == .failed("orientd-face exited with status 3"))
  }

  @Test func anAnswerIsParsed() throws {
    let line = #"{"answer":"veto","reason":"r","face":"normal","elapsed_ms":12.5}"#
    let (outcome, _) = try ask(["/bin/sh", "-c", "echo '\(line)'"], timeout: .seconds(20))
    var expected = FaceReply(answer: .veto, reason: "r", face: .normal)
    expected.elapsedMilliseconds = 12.5
    #expect(outcome == .answered(expected))
  }

  @Test func aMissingProgramIsAnError() throws {
    let loop = try EventLoop()
    #expect(throws: SystemError.self) {
      _ = try FaceQuery(["/nonexistent/orientd-face"], timeout: .seconds(1), loop: loop) { _ in }
    }
  }

  @Test func theArgumentsCarryTheSettings() {
    var settings = FaceSettings()
    settings.camera = "v4l2:/dev/video3"
    settings.sensorRotation = 90
    settings.mirror = false
    let request = FaceResolver.Request(
      id: 1, current: .normal, proposed: .rightUp, asked: 0, deadline: 0.7)
    #expect(
      FaceResolution.arguments(program: "/p", settings: settings, request: request) == [
        "/p", "resolve", "--camera", "v4l2:/dev/video3", "--current", "normal", "--proposed",
        "right-up", "--timeout", "700", "--frames", "3", "--sensor-rotation", "90", "--no-mirror",
      ])
  }
}
