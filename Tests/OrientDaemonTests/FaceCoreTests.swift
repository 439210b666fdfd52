import FaceClient
import OrientCore
import OrientDaemon
import OrientLog
import OrientWire
import SystemKit
import TestThreads
import Testing
import TextFormats

/// Face-aware rotation in the daemon's logic (DaemonCore on the fakes of CoreFakes.swift, a
/// ManualScheduler, and a scripted camera in place of orientd-face): what is committed, kept
/// or suggested, the timeout, superseded and cancelled questions, the policy's gates,
/// `CameraInUse`, and reloads. FaceDaemonTests proves the same wiring with a real orientd,
/// orientd-face, a file camera and a private bus.
@Suite(.ownThreads) struct FaceCoreTests {
  @Test func aVetoKeepsTheOrientationAndSuggestsTheProposalUntilTheDeviceTurnsBack() {
    let rig = FaceRig()
    rig.turn(to: .normal)
    #expect(rig.published.orientation == .normal)
    #expect(rig.camera.asked.isEmpty, "the first orientation is committed at once")
    rig.turn(to: .leftUp)
    #expect(rig.camera.asked.count == 1)
    #expect(rig.camera.asked.last?.arguments.contains("--proposed") == true)
    #expect(rig.camera.lastArgument("--current") == "normal")
    #expect(rig.camera.lastArgument("--proposed") == "left-up")
    #expect(rig.published.orientation == .normal, "held while the camera is asked")
    #expect(rig.published.cameraInUse)
    #expect(rig.rig.bus.states[.orientation]?.cameraInUse == true)
    rig.camera.reply(.veto, "a face is upright in normal")
    #expect(rig.published.orientation == .normal)
    #expect(rig.published.suggestedOrientation == .leftUp)
    #expect(!rig.published.cameraInUse)
    #expect(rig.rig.bus.states[.orientation]?.suggestedOrientation == .leftUp)
    #expect(rig.rig.log.text.contains("kept normal, not left-up"))
    rig.turn(to: .normal)
    #expect(rig.published.suggestedOrientation == nil, "turning back withdraws the suggestion")
    #expect(rig.camera.asked.count == 1)
  }

  @Test(arguments: [FaceAnswer.accept, .unknown])
  func acceptAndUnknownCommitTheProposal(_ answer: FaceAnswer) {
    let rig = FaceRig()
    rig.turn(to: .normal)
    rig.turn(to: .rightUp)
    rig.camera.reply(answer, "no face")
    #expect(rig.published.orientation == .rightUp)
    #expect(rig.published.suggestedOrientation == nil)
    #expect(!rig.published.cameraInUse)
  }

  @Test func aCameraThatFailsCommitsTheProposal() {
    let rig = FaceRig()
    rig.turn(to: .normal)
    rig.turn(to: .bottomUp)
    rig.camera.finish(.failed("orientd-face exited with status 70"))
    #expect(rig.published.orientation == .bottomUp)
  }

  @Test func aStalledCameraIsStoppedAndTheProposalCommittedAtTheTimeout() {
    let rig = FaceRig()
    rig.turn(to: .normal)
    rig.turn(to: .leftUp)
    rig.scheduler.advance(by: .milliseconds(699))
    #expect(rig.published.orientation == .normal)
    #expect(rig.camera.asked.last?.question.cancelled == false)
    rig.scheduler.advance(by: .milliseconds(1))
    #expect(rig.published.orientation == .leftUp)
    #expect(rig.camera.asked.last?.question.cancelled == true, "orientd-face is killed")
    #expect(!rig.published.cameraInUse)
    #expect(rig.rig.log.text.contains("the camera timed out after 700 ms"))
    #expect(rig.scheduler.armedTimers == 0)
  }

  @Test func theConfiguredTimeoutIsTheLongestWait() {
    let rig = FaceRig(extra: "timeout = 250\n")
    rig.turn(to: .normal)
    rig.turn(to: .leftUp)
    #expect(rig.camera.lastArgument("--timeout") == "250")
    rig.scheduler.advance(by: .milliseconds(250))
    #expect(rig.published.orientation == .leftUp)
  }

  @Test func aNewerProposalReplacesTheQuestionAndALateAnswerIsIgnored() {
    let rig = FaceRig()
    rig.turn(to: .normal)
    rig.turn(to: .leftUp)
    let first = rig.camera.asked[0]
    rig.turn(to: .rightUp)
    #expect(first.question.cancelled)
    #expect(rig.camera.asked.count == 2)
    #expect(rig.camera.lastArgument("--current") == "normal")
    #expect(rig.camera.lastArgument("--proposed") == "right-up")
    #expect(rig.published.cameraInUse)
    first.completion(.answered(FaceReply(answer: .accept, reason: "late")))
    #expect(rig.published.orientation == .normal, "the replaced question's answer counts not")
    rig.camera.reply(.accept, "no face")
    #expect(rig.published.orientation == .rightUp)
  }

  @Test func turningBackCancelsTheQuestion() {
    let rig = FaceRig()
    rig.turn(to: .normal)
    rig.turn(to: .leftUp)
    rig.turn(to: .normal)
    #expect(rig.camera.asked.last?.question.cancelled == true)
    #expect(!rig.published.cameraInUse)
    #expect(rig.published.orientation == .normal)
    rig.scheduler.advance(by: .seconds(2))
    #expect(rig.published.orientation == .normal, "nothing is committed at the old deadline")
    #expect(rig.rig.log.text.contains("the device turned back to normal"))
  }

  @Test(arguments: [
    (FaceConditions(sessionLocked: nil), "lock state is unknown"),
    (FaceConditions(sessionLocked: true), "the session is locked"),
    (FaceConditions(sessionLocked: false, powerSaving: true), "power saving is on"),
  ])
  func theCameraIsNotUsedWhenThePolicyRefuses(_ conditions: FaceConditions, _ reason: String) {
    let rig = FaceRig(conditions: conditions)
    rig.turn(to: .normal)
    rig.turn(to: .leftUp)
    #expect(rig.camera.asked.isEmpty)
    #expect(rig.published.orientation == .leftUp, "committed at once")
    #expect(!rig.published.cameraInUse)
    #expect(rig.rig.log.text.contains(reason))
  }

  @Test func offOrWithoutTheProgramProposalsArePublishedDirectly() {
    let off = FaceRig(enabled: false)
    off.turn(to: .normal)
    off.turn(to: .leftUp)
    #expect(off.published.orientation == .leftUp)
    #expect(off.camera.asked.isEmpty)
    #expect(!off.rig.core.isFaceResolving)
    let missing = FaceRig(program: nil)
    missing.turn(to: .normal)
    missing.turn(to: .leftUp)
    #expect(missing.published.orientation == .leftUp)
    #expect(missing.camera.asked.isEmpty)
    #expect(missing.rig.log.text.contains("orientd-face is not found"))
  }

  @Test func aReloadThatTurnsItOffDropsTheQuestionAndPublishesTheDetection() throws {
    let rig = FaceRig()
    rig.turn(to: .normal)
    rig.turn(to: .leftUp)
    #expect(rig.published.cameraInUse)
    rig.rig.core.reload(DaemonConfiguration())
    #expect(rig.camera.asked.last?.question.cancelled == true)
    #expect(!rig.published.cameraInUse)
    #expect(rig.published.orientation == .leftUp, "the detector's orientation, unasked")
    #expect(!rig.rig.core.isFaceResolving)
    rig.rig.core.reload(try FaceRig.configuration(enabled: true, extra: ""))
    #expect(rig.rig.core.isFaceResolving)
    rig.turn(to: .rightUp)
    #expect(rig.camera.lastArgument("--current") == "left-up")
  }

  @Test func theFaceSectionIsReadAndCheckedWithItsLine() throws {
    let configuration = try DaemonConfiguration(
      parsing: "[face]\nenabled = yes\ncamera = file:/tmp/frames\ntimeout = 900\n",
      source: "/etc/orientd.conf")
    #expect(configuration.face.enabled)
    #expect(configuration.face.camera == "file:/tmp/frames")
    #expect(configuration.face.timeoutMilliseconds == 900)
    #expect(DaemonConfiguration().face.timeoutMilliseconds == 700)
    #expect(!DaemonConfiguration().face.enabled)
    let error = #expect(throws: ConfigError.self) {
      try DaemonConfiguration(parsing: "[face]\nenabled = yes\ntimeout = 50\n", source: "f.conf")
    }
    #expect(error?.description.contains("f.conf:3") == true)
    #expect(error?.description.contains("100 to 5000") == true)
  }
}

/// A core with `[face] enabled`, the session unlocked, and a scripted camera.
struct FaceRig {
  let rig: CoreRig
  let camera = ScriptedCamera()
  var scheduler: ManualScheduler { rig.scheduler }
  var published: PublishedState { rig.core.published }
  private let clock = Counter()

  static func configuration(enabled: Bool, extra: String) throws -> DaemonConfiguration {
    try DaemonConfiguration(
      parsing: "[face]\nenabled = \(enabled ? "yes" : "no")\ncamera = file:/frames\n\(extra)",
      source: "test.conf")
  }

  init(
    enabled: Bool = true, extra: String = "", program: String? = "/usr/bin/orientd-face",
    conditions: FaceConditions = FaceConditions(sessionLocked: false)
  ) {
    let configuration =
      (try? FaceRig.configuration(enabled: enabled, extra: extra)) ?? DaemonConfiguration()
    rig = CoreRig(configuration: configuration, faceAsker: camera, faceProgram: program)
    rig.core.faceConditions = conditions
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    rig.claim(":1.5", .orientd)
  }

  /// Holds the device in `orientation` for 3 s of readings (long enough for the detector
  /// to commit it).
  func turn(to orientation: Orientation) {
    for _ in 0..<30 {
      clock.value += 0.1
      rig.sensors.deliver(.accelerometer, FakeSensor.gravity(orientation), at: clock.value)
    }
  }
}

final class Counter {
  var value = 1000.0
}

/// orientd-face's stand-in: records each question; the test answers or lets it stall.
final class ScriptedCamera: FaceAsking {
  final class Question: FaceQuestion {
    private(set) var cancelled = false
    func cancel() { cancelled = true }
    var isRunning: Bool { false }
  }

  struct Asked {
    let arguments: [String]
    let question: Question
    let complete: (FaceQuery.Outcome) -> Void

    /// Completes it as orientd-face would: not after a cancel.
    func completion(_ outcome: FaceQuery.Outcome) {
      if !question.cancelled { complete(outcome) }
    }
  }

  private(set) var asked: [Asked] = []

  func ask(
    _ arguments: [String], timeout: Duration, completion: @escaping (FaceQuery.Outcome) -> Void
  ) throws(SystemError) -> any FaceQuestion {
    let question = Question()
    asked.append(Asked(arguments: arguments, question: question, complete: completion))
    return question
  }

  /// The last question's value of `option`.
  func lastArgument(_ option: String) -> String? {
    guard let arguments = asked.last?.arguments, let i = arguments.firstIndex(of: option),
      i + 1 < arguments.count
    else { return nil }
    return arguments[i + 1]
  }

  func reply(_ answer: FaceAnswer, _ reason: String) {
    finish(.answered(FaceReply(answer: answer, reason: reason)))
  }

  func finish(_ outcome: FaceQuery.Outcome) { asked.last?.completion(outcome) }
}
