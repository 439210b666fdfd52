import Glibc
import JSON
import OrientCore
import OrientDaemon
import SystemKit
import TextFormats

/// `orientd replay`: runs the detector over a recorded trace and prints the committed changes.
///
/// Streams: the input is read through a fixed buffer and output is flushed whenever more input
/// must be awaited, so `... | orientd replay -` reports changes as they happen.
enum Replay {
  /// Runs a replay; errors go to stderr as `orientd replay: ...`.
  ///
  /// - Returns: `success`; `usage` for a bad `--set`, `dataError` for a malformed trace or
  ///   config file, `noInput` for a file that cannot be opened or read.
  static func run(_ options: ReplayOptions) -> ExitStatus {
    let parameters: DetectorParameters
    let hingeParameters: HingeParameters
    let faceSettings: FaceSettings
    let motionParameters: MotionFusion.Parameters
    switch loadParameters(options) {
    case .success(let p): (parameters, hingeParameters, faceSettings, motionParameters) = p
    case .failure(let failure):
      complain(failure.message)
      return failure.status
    }
    // With [face] enabled or --face-camera, each change goes through the face resolver.
    var face: ReplayFace?
    if faceSettings.enabled {
      switch ReplayFace.make(faceSettings, json: options.json, tilt: options.tilt) {
      case .success(let made): face = made
      case .failure(let failure):
        complain(failure.message)
        return failure.status
      }
    }

    let input: FileDescriptor
    let source: String
    if options.input == "-" {
      input = FileDescriptor(owning: 0, path: "<stdin>")
      source = "<stdin>"
    } else {
      do {
        input = try FileDescriptor(path: options.input)
      } catch {
        complain("cannot open trace \(options.input): \(error.reason)")
        return .noInput
      }
      source = options.input
    }

    var reader = LineReader(input, maxLineLength: TraceParser.maxLineLength)
    var parser = TaggedTraceParser(source: source)
    var detector = OrientationDetector(parameters: parameters)
    // A two-sensor trace (t,sensor,x,y,z) also runs the hinge tracker: see HingeReplay.
    var hinge = HingeReplay(parameters: hingeParameters, json: options.json)
    var scaleReported = false
    var output = OutputBuffer()
    // A motion trace (orientd record --motion), known by its first line.
    var motion: MotionReplay?
    var firstLine = true
    while true {
      let line: ArraySlice<UInt8>?
      do {
        line = try reader.nextLine(beforeBlocking: { output.flush() })
      } catch {
        output.flush()
        switch error {
        case .lineTooLong(let number, let limit):
          complain("\(source):\(number): line is longer than \(limit) bytes")
          return .dataError
        case .system(let failure):
          complain("cannot read trace \(source): \(failure.reason)")
          return .noInput
        }
      }
      guard let line else { break }
      if firstLine {
        firstLine = false
        if String(decoding: line, as: UTF8.self).trimming() == MotionReplay.marker {
          motion = MotionReplay(
            source: source, parameters: motionParameters, json: options.json,
            prints: options.motion)
        }
      }
      let tagged: (part: HingePart, sample: Sample)?
      do {
        if var replay = motion {
          let (sample, text) = try replay.process(line: line)
          motion = replay
          if let text { output.append(text) }
          tagged = sample.map { (HingePart.lid, $0) }
        } else {
          tagged = try parser.parse(line: line)
        }
      } catch {
        output.flush()
        complain(error.description)
        return .dataError
      }
      if let tagged, parser.isTwoSensor == true,
        let text = hinge.process(tagged.part, tagged.sample)
      {
        output.append(text)
      }
      let sample = tagged?.part == .lid ? tagged?.sample : nil
      let update = sample.flatMap { detector.process($0) }
      if !scaleReported, detector.gravityEstimator.isScaleOff {
        scaleReported = true
        output.flush()
        complain("\(source): " + detector.gravityEstimator.scaleAdvice(scale: nil))
      }
      guard let update,
        update.orientationChanged || (options.tilt && update.tiltChanged)
      else {
        continue
      }
      if let face {
        // The trace stands still while the camera is asked.
        output.flush()
        face.process(update, into: &output)
        continue
      }
      output.append(format(update, json: options.json, tilt: options.tilt))
    }
    output.flush()
    face?.finish()
    return .success
  }

  /// One output line (with its newline) for a committed change; with `tilt`, CSV lines carry
  /// the tilt as a third field.
  static func format(
    _ update: DetectorUpdate, json: Bool, tilt: Bool = false, extra: [(String, JSONValue)] = []
  ) -> String {
    guard json else {
      let suffix = tilt ? ",\(update.tilt)" : ""
      return "\(shortDecimal(update.time)),\(update.orientation)\(suffix)\n"
    }
    var members: [(String, JSONValue)] = [
      ("time", .number(update.time)),
      ("orientation", .string(update.orientation.rawValue)),
    ]
    if let rotation = update.orientation.clockwiseRotation {
      members.append(("rotation", .number(Double(rotation))))
    } else {
      members.append(("rotation", .null))
    }
    members.append(("tilt", .string(update.tilt.rawValue)))
    return JSONValue.object(members + extra).encoded() + "\n"
  }

  typealias Failure = StatusError

  /// Defaults, then `--config`, then each `--set`, then the cross-checks; hinge keys
  /// (`[posture]`, `--set hinge-axis=...`) go to the hinge tracker.
  private static func loadParameters(_ options: ReplayOptions) -> Result<
    (DetectorParameters, HingeParameters, FaceSettings, MotionFusion.Parameters), Failure
  > {
    var parameters = DetectorParameters()
    var hinge = HingeParameters()
    var face = FaceSettings()
    var motion = MotionFusion.Parameters()
    if let path = options.configPath {
      let bytes: [UInt8]
      do {
        let file = try FileDescriptor(path: path)
        bytes = try file.readToEnd(limit: ConfigFile.maxBytes)
      } catch {
        return .failure(
          Failure(.noInput, "cannot read config \(path): \(error.reason)"))
      }
      guard let text = String(validating: bytes, as: UTF8.self) else {
        return .failure(Failure(.dataError, "\(path): not UTF-8 text"))
      }
      do {
        let config = try ConfigFile(parsing: text, source: path)
        for section in config.sections(named: "detector") {
          try parameters.apply(section: section, source: path)
        }
        hinge = try PostureSettings(config).hinge
        face = try FaceSettings(config: config)
        motion = try MotionSettings(config).fusion
      } catch {
        return .failure(Failure(.dataError, error.description))
      }
    }
    do {
      for override in options.overrides where HingeParameters.keys.contains(override.key) {
        do {
          try hinge.set(override.key, override.value)
        } catch {
          return .failure(Failure(.usage, "--set \(error)"))
        }
      }
      for override in options.overrides where !HingeParameters.keys.contains(override.key) {
        try parameters.set(key: override.key, value: override.value, source: "--set", line: 0)
      }
      try parameters.validate(source: options.overrides.isEmpty ? "config" : "--set")
    } catch {
      return .failure(Failure(.usage, error.description))
    }
    if let camera = options.faceCamera {
      face.enabled = true
      face.camera = camera
    }
    if let ms = options.faceTimeoutMilliseconds { face.timeoutMilliseconds = ms }
    if let program = options.faceProgram { face.program = program }
    return .success((parameters, hinge, face, motion))
  }

  private static func complain(_ message: String) {
    StandardStream.error.writeLine("orientd replay: \(message)")
  }
}

/// Collects output and writes it to stdout in large pieces.
struct OutputBuffer {
  private var pending: [UInt8] = []
  private let stdout = FileDescriptor(owning: 1, path: "<stdout>")

  /// Adds text; writes out once 32 KiB have gathered.
  mutating func append(_ text: String) {
    pending.append(contentsOf: text.utf8)
    if pending.count >= 32 * 1024 { flush() }
  }

  /// Writes everything gathered so far.
  mutating func flush() {
    guard !pending.isEmpty else { return }
    do {
      try stdout.writeAll(pending)
    } catch {
      StandardStream.error.writeLine("orientd replay: cannot write output: \(error.reason)")
      exit(ExitStatus.ioError)
    }
    pending.removeAll(keepingCapacity: true)
  }
}
