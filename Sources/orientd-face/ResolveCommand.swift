import Capture
import FaceDetection
import Glibc
import JPEGKit
import JSON
import OrientCore
import OrientLog
import SystemKit

/// `orientd-face resolve`: the camera side of face-aware rotation. Opens the camera for one
/// proposal, looks at a few frames, closes it, and prints one JSON answer.
///
/// Privacy: frames stay in memory and are dropped when the answer is printed (nothing is
/// written anywhere); the opening and closing of the camera are logged at notice level with
/// what was asked and answered; a camera another program holds (`EBUSY`) is not waited for.
enum ResolveCommand {
  /// What was found, before it is printed.
  struct Outcome {
    var answer: FaceAnswer
    var reason: String
    var face: Orientation?
    var headToward: ImageEdge?
    var faces = 0
    var frames = 0
    var camera: String
  }

  /// Runs once; always prints an answer (unknown for any failure) and returns 0, or 70 when
  /// the detector itself cannot start.
  static func run(_ options: FaceOptions.ResolveOptions) -> ExitStatus {
    let logger = Logger(label: "orientd-face", level: options.verbose ? .debug : .notice)
    let start = Clock.monotonicNanoseconds()
    // Leave the caller's hard timeout a margin to read the answer.
    let deadline = start + Int64(max(options.timeoutMilliseconds - 30, 20)) * 1_000_000
    let finder: HeadFinder
    let decoder: JPEGDecoder
    do {
      let detector = try FaceDetector()
      logger.debug("detector \(detector.origin)")
      finder = HeadFinder(detector: detector)
      decoder = try JPEGDecoder()
    } catch {
      StandardStream.error.writeLine("orientd-face: cannot start the detector: \(error)")
      return .software
    }
    let outcome = resolve(
      options, finder: finder, decoder: decoder, deadline: deadline, logger: logger)
    let elapsed = Double(Clock.monotonicNanoseconds() - start) / 1e6
    let line = JSONValue.object([
      ("answer", .string(outcome.answer.rawValue)),
      ("reason", .string(outcome.reason)),
      ("current", .string(options.current.rawValue)),
      ("proposed", .string(options.proposed.rawValue)),
      ("face", outcome.face.map { .string($0.rawValue) } ?? .null),
      ("head_toward", outcome.headToward.map { .string($0.rawValue) } ?? .null),
      ("faces", .number(Double(outcome.faces))),
      ("frames", .number(Double(outcome.frames))),
      ("camera", .string(outcome.camera)),
      ("elapsed_ms", .number((elapsed * 10).rounded() / 10)),
    ]).encoded()
    StandardStream.output.writeLine(line)
    logger.notice(
      "\(options.current) -> \(options.proposed): \(outcome.answer) (\(outcome.reason)); "
        + "\(outcome.frames) frame\(outcome.frames == 1 ? "" : "s") from \(outcome.camera) in "
        + "\(Int(elapsed.rounded())) ms")
    return .success
  }

  /// Opens the camera, looks at frames until one shows a face, `frames` were seen or the
  /// deadline passed, and closes it.
  static func resolve(
    _ options: FaceOptions.ResolveOptions, finder: HeadFinder, decoder: JPEGDecoder,
    deadline: Int64, logger: Logger
  ) -> Outcome {
    var outcome = Outcome(answer: .unknown, reason: "", camera: options.camera)
    let source: FrameSource
    do {
      source = try FaceCamera.open(options.camera, logger: logger)
    } catch {
      if error.cameraBusy {
        outcome.reason = "the camera is held by another program: \(error.message)"
        logger.warning("camera not used: \(outcome.reason)")
      } else {
        outcome.reason = "cannot open the camera: \(error.message)"
        logger.warning(outcome.reason)
      }
      return outcome
    }
    outcome.camera = source.name
    logger.notice(
      "camera \(source.name) opened for a proposed rotation \(options.current) -> "
        + "\(options.proposed)")
    defer {
      source.close()
      logger.notice("camera \(source.name) closed")
    }
    let sensorRotation = options.sensorRotation ?? source.reportedSensorRotation ?? 0
    while outcome.frames < options.frames, source.remainingFrames != 0 {
      let frame: Frame
      do {
        guard let next = try nextFrame(source, deadline: deadline) else {
          outcome.reason =
            outcome.frames == 0
            ? "no frame within \(options.timeoutMilliseconds) ms"
            : "no face in \(outcome.frames) frame\(outcome.frames == 1 ? "" : "s") before the timeout"
          if outcome.frames > 0 { outcome.answer = .accept }
          return outcome
        }
        frame = next
      } catch {
        if outcome.frames > 0 {
          outcome.answer = .accept
          outcome.reason = "no face in \(outcome.frames) frames (then: \(error.message))"
        } else {
          outcome.reason = "the camera gave no frame: \(error.message)"
        }
        return outcome
      }
      outcome.frames += 1
      let finding: HeadFinding
      do {
        finding = try finder.find(in: try FaceCamera.grayImage(frame, decoder: decoder))
      } catch let error as CaptureError {
        logger.warning("\(error.message); frame skipped")
        continue
      } catch {
        outcome.reason = "the detector failed: \(error)"
        return outcome
      }
      logger.debug(
        "\(frame.label): "
          + (finding.headToward.map { "\(finding.faceCount) face(s), head toward \($0)" }
            ?? "no face"))
      if let edge = finding.headToward {
        let face = FaceGeometry.faceOrientation(
          headToward: edge, sensorRotation: sensorRotation, mirrored: options.mirror)
        let judged = FaceAnswer.judge(
          face: face, current: options.current, proposed: options.proposed)
        outcome.answer = judged.answer
        outcome.reason = judged.reason
        outcome.face = face
        outcome.headToward = edge
        outcome.faces = finding.faceCount
        return outcome
      }
    }
    outcome.answer = .accept
    outcome.reason = "no face in \(outcome.frames) frame\(outcome.frames == 1 ? "" : "s")"
    return outcome
  }

  /// The next frame, or `nil` when the deadline passes first. A streaming camera is polled
  /// with the time left; an on-demand source (files) is read directly.
  static func nextFrame(_ source: FrameSource, deadline: Int64) throws(CaptureError) -> Frame? {
    switch source.delivery {
    case .onDemand:
      return Clock.monotonicNanoseconds() < deadline ? try source.nextFrame() : nil
    case .streaming(let descriptor):
      while true {
        if let frame = try source.frameIfReady() { return frame }
        let left = (deadline - Clock.monotonicNanoseconds()) / 1_000_000
        guard left > 0 else { return nil }
        var pfd = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let n = poll(&pfd, 1, Int32(left))
        if n < 0 && errno != EINTR {
          throw CaptureError(.ioError, "poll: \(String(cString: strerror(errno)))")
        }
      }
    }
  }
}
