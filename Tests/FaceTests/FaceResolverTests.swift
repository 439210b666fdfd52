import OrientCore
import TestThreads
import Testing
import TextFormats

/// The resolver's state machine: what is published for each proposal, answer and timeout.
@Suite(.ownThreads) struct FaceResolverTests {
  /// A resolver that has published `normal`.
  func portrait() -> FaceResolver {
    var resolver = FaceResolver(timeout: 0.7)
    #expect(resolver.propose(.normal, at: 0) == [.commit(.normal, reason: "nothing to keep")])
    return resolver
  }

  func request(_ actions: [FaceResolver.Action]) -> FaceResolver.Request? {
    for case .ask(let request) in actions { return request }
    return nil
  }

  @Test func aVetoKeepsTheOrientation() throws {
    var resolver = portrait()
    let asked = try #require(request(resolver.propose(.leftUp, at: 10)))
    #expect(asked.current == .normal && asked.proposed == .leftUp)
    #expect(asked.deadline == 10.7)
    let actions = resolver.answer(.veto, reason: "face", for: asked.id, at: 10.3)
    #expect(actions == [.keep(.normal, proposed: .leftUp, reason: "face")])
    #expect(resolver.published == .normal && resolver.pending == nil)
    // The device turning back is no change; turning again asks again.
    #expect(resolver.propose(.normal, at: 12).isEmpty)
    #expect(request(resolver.propose(.leftUp, at: 14)) != nil)
  }

  @Test(arguments: [FaceAnswer.accept, .unknown])
  func acceptAndUnknownCommit(answer: FaceAnswer) throws {
    var resolver = portrait()
    let asked = try #require(request(resolver.propose(.rightUp, at: 1)))
    let actions = resolver.answer(answer, reason: "r", for: asked.id, at: 1.2)
    #expect(actions.count == 1)
    guard case .commit(.rightUp, _) = actions.first else {
      Issue.record("\(actions)")
      return
    }
    #expect(resolver.published == .rightUp)
  }

  @Test func aTimeoutCommitsAndALateAnswerIsIgnored() throws {
    var resolver = portrait()
    let asked = try #require(request(resolver.propose(.bottomUp, at: 5)))
    let actions = resolver.timedOut(asked.id, at: 5.7)
    #expect(actions.first == .cancel(id: asked.id, reason: "no answer within 700 ms"))
    #expect(actions.last == .commit(.bottomUp, reason: "the camera timed out after 700 ms"))
    #expect(resolver.answer(.veto, reason: "late", for: asked.id, at: 6).isEmpty)
    #expect(resolver.published == .bottomUp)
  }

  @Test func anAnswerAfterTheDeadlineCommits() throws {
    var resolver = portrait()
    let asked = try #require(request(resolver.propose(.leftUp, at: 0)))
    let actions = resolver.answer(.veto, reason: "face", for: asked.id, at: 0.9)
    #expect(actions == [.commit(.leftUp, reason: "the camera answered after the timeout")])
  }

  @Test func turningBackWhileAskingCancelsWithoutAChange() throws {
    var resolver = portrait()
    let asked = try #require(request(resolver.propose(.leftUp, at: 0)))
    #expect(
      resolver.propose(.normal, at: 0.2) == [
        .cancel(id: asked.id, reason: "the device turned back to normal")
      ])
    #expect(resolver.pending == nil && resolver.published == .normal)
    #expect(resolver.answer(.accept, reason: "", for: asked.id, at: 0.3).isEmpty)
  }

  @Test func aNewerProposalReplacesTheQuestion() throws {
    var resolver = portrait()
    let first = try #require(request(resolver.propose(.leftUp, at: 0)))
    #expect(resolver.propose(.leftUp, at: 0.1).isEmpty, "the same proposal is not asked twice")
    let actions = resolver.propose(.bottomUp, at: 0.2)
    #expect(actions.first == .cancel(id: first.id, reason: "a newer proposal, bottom-up"))
    let second = try #require(request(actions))
    #expect(second.id != first.id && second.proposed == .bottomUp)
    #expect(abs(second.deadline - 0.9) < 1e-9)
  }

  @Test func aRefusedCameraCommitsAtOnce() {
    var resolver = portrait()
    let actions = resolver.propose(.leftUp, at: 0, camera: .refused("the session is locked"))
    #expect(actions == [.commit(.leftUp, reason: "camera not used: the session is locked")])
    #expect(resolver.propose(.undefined, at: 1) == [.commit(.undefined, reason: "nothing to keep")])
  }

  @Test func policy() {
    #expect(
      FaceCameraPolicy.decide(enabled: true, sessionLocked: false, powerSaving: false) == .allowed)
    #expect(
      FaceCameraPolicy.decide(enabled: false, sessionLocked: false, powerSaving: false)
        != .allowed)
    #expect(
      FaceCameraPolicy.decide(enabled: true, sessionLocked: true, powerSaving: false)
        == .refused("the session is locked"))
    #expect(
      FaceCameraPolicy.decide(enabled: true, sessionLocked: nil, powerSaving: false) != .allowed,
      "an unknown lock state counts as locked")
    #expect(
      FaceCameraPolicy.decide(enabled: true, sessionLocked: false, powerSaving: true)
        == .refused("power saving is on"))
  }

  @Test func settings() throws {
    let config = try ConfigFile(
      parsing: """
        [face]
        enabled = yes
        camera = v4l2:/dev/video2
        timeout = 500
        sensor-rotation = 270
        mirror = no
        """, source: "orientd.conf")
    let settings = try FaceSettings(config: config)
    #expect(settings.enabled && settings.camera == "v4l2:/dev/video2")
    #expect(settings.timeoutMilliseconds == 500 && settings.sensorRotation == 270)
    #expect(!settings.mirror && settings.frames == 3)
    for (line, message) in [
      (
        "timeout = 50",
        "orientd.conf:2: timeout '50' must be a whole number from 100 to 5000"
      ),
      (
        "camera = /dev/video0",
        "orientd.conf:2: camera '/dev/video0' must be auto, v4l2[:/dev/videoN], file:DIR or libcamera[:ID]"
      ),
      (
        "colour = red",
        "orientd.conf:2: unknown key 'colour' in [face] (known: enabled, camera, timeout, sensor-rotation, mirror, frames, program)"
      ),
    ] {
      let bad = try ConfigFile(parsing: "[face]\n\(line)\n", source: "orientd.conf")
      #expect(throws: ConfigError.self) { try FaceSettings(config: bad) }
      do {
        _ = try FaceSettings(config: bad)
      } catch {
        #expect(error.description == message)
      }
    }
  }
}
