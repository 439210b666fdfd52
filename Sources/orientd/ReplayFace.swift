import FaceClient
import JSON
import OrientCore
import OrientLog
import SystemKit
import TextFormats

/// `orientd replay --face-camera`: the detector's changes go through the face resolver
/// (`FaceResolution`, the same code the daemon runs), with a real orientd-face and a real
/// camera (or a file camera). The trace's time stands still while the camera is asked: the
/// decision is applied at the sample that proposed the change.
final class ReplayFace {
  private let loop: EventLoop
  private let resolution: FaceResolution
  private let json: Bool
  private let tilt: Bool
  private var decisions: [FaceDecision] = []

  private init(loop: EventLoop, resolution: FaceResolution, json: Bool, tilt: Bool) {
    self.loop = loop
    self.resolution = resolution
    self.json = json
    self.tilt = tilt
    resolution.onDecision = { [unowned self] decision in self.decisions.append(decision) }
  }

  /// Finds orientd-face and builds the resolver; 69 when the program is missing.
  static func make(_ settings: FaceSettings, json: Bool, tilt: Bool) -> Result<
    ReplayFace, Replay.Failure
  > {
    guard let program = FaceProgram.locate(configured: settings.program) else {
      let looked =
        settings.program.map { "\($0) is not an executable file" }
        ?? "\(FaceProgram.name) is not installed beside orientd nor in PREFIX/libexec/orientd"
      return .failure(
        Replay.Failure(
          .unavailable,
          "face-aware rotation needs orientd-face: \(looked) "
            + "(on Debian: apt install orientd-face; or --face-program PATH)"))
    }
    let loop: EventLoop
    do {
      loop = try EventLoop()
    } catch {
      return .failure(
        Replay.Failure(.osError, "cannot create an event loop: \(error)"))
    }
    // A replay has no session and no power state: the camera may be used for each proposal.
    let logger = Logger(label: "orientd replay", level: .notice)
    let resolution = FaceResolution(
      settings: settings, program: program, loop: loop, logger: logger,
      policy: {
        FaceCameraPolicy.decide(enabled: true, sessionLocked: false, powerSaving: false)
      })
    return .success(ReplayFace(loop: loop, resolution: resolution, json: json, tilt: tilt))
  }

  /// Waits (at most 5 s) until every face child is reaped, so that nothing is left running
  /// when replay exits (a question that timed out killed its child; the loop reaps it).
  func finish() {
    _ = try? loop.run(until: { !self.resolution.childrenRunning }, timeout: .seconds(5))
  }

  /// Resolves one detector update and appends what it decided.
  func process(_ update: DetectorUpdate, into output: inout OutputBuffer) {
    if update.orientationChanged {
      decisions.removeAll()
      resolution.propose(update.orientation)
      if resolution.isAsking {
        // The resolver's own timer ends the question; this bound only guards the loop.
        let limit = Duration.milliseconds(resolution.settings.timeoutMilliseconds + 5_000)
        _ = try? loop.run(until: { !self.resolution.isAsking }, timeout: limit)
      }
      for decision in decisions {
        var shown = update
        shown.orientation = decision.orientation
        var extra: [(String, JSONValue)] = []
        if !decision.changed {
          extra = [("kept", .bool(true)), ("proposed", .string(decision.proposed.rawValue))]
        }
        if decision.answer != nil || !decision.changed {
          extra.append(("face", faceObject(decision)))
        }
        if decision.changed || json {
          output.append(Replay.format(shown, json: json, tilt: tilt, extra: extra))
        }
      }
      decisions.removeAll()
    } else if tilt && update.tiltChanged {
      var shown = update
      shown.orientation = resolution.published
      output.append(Replay.format(shown, json: json, tilt: tilt))
    }
  }

  private func faceObject(_ decision: FaceDecision) -> JSONValue {
    .object([
      ("answer", decision.answer.map { .string($0) } ?? .null),
      ("reason", .string(decision.reason)),
      ("waited_ms", .number(decision.waitedMilliseconds)),
    ])
  }
}
