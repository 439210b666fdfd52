import OrientCore
import SystemKit

/// The command line of orientd-face, parsed without side effects.
struct FaceOptions: Equatable {
  /// What to do.
  enum Command: Equatable {
    /// Print `usage` and exit 0.
    case help
    /// Print the version and exit 0.
    case version
    /// `detect [--json] FILE...`.
    case detect(DetectOptions)
    /// `resolve ...`.
    case resolve(ResolveOptions)
  }

  /// `orientd-face detect`.
  struct DetectOptions: Equatable {
    /// One JSON object per file instead of a line of text.
    var json = false
    /// The pictures.
    var files: [String] = []
  }

  /// `orientd-face resolve`.
  struct ResolveOptions: Equatable {
    /// `--camera SPEC`: `auto`, `v4l2[:PATH]`, `file:DIR|GLOB`, `libcamera[:ID]`.
    var camera = "auto"
    /// `--current O`: the orientation published now.
    var current = Orientation.undefined
    /// `--proposed O`: the accelerometer's proposal.
    var proposed = Orientation.undefined
    /// `--timeout MS`: orientd-face answers `unknown` by itself when the camera has not
    /// given an answer by then (the caller's own timer is the hard limit).
    var timeoutMilliseconds = 700
    /// `--sensor-rotation`: clockwise mounting correction; `nil`: the driver's, else 0.
    var sensorRotation: Int?
    /// `--mirror` (default) / `--no-mirror`: whether frames are a mirror image of the
    /// device's view.
    var mirror = true
    /// `--frames N`: look at up to N frames (the first with a face decides).
    var frames = 3
    /// `-v`.
    var verbose = false
  }

  /// The command.
  var command: Command

  /// `--help`.
  static let usage = """
    usage: orientd-face detect [--json] FILE...
           orientd-face resolve --current O --proposed O [--camera SPEC] [--timeout MS]
                                [--sensor-rotation auto|0|90|180|270] [--mirror|--no-mirror]
                                [--frames N] [-v]
           orientd-face --help | --version

    orientd-face finds faces with dlib's frontal face detector and says which way the head
    points. It is orientd's face-aware rotation helper: orientd runs it for a proposed
    rotation; the daemon itself never opens a camera.

    detect looks for faces in each picture (JPEG, PNG, BMP) in its four quarter turns and
    prints, per file, "FILE: N faces, head toward EDGE" or with --json one object per line:
      {"file":"a.jpg","faces":1,"head_toward":"left","confidence":1.53}
    head_toward is the picture's edge the top of the head points to (top, right, bottom,
    left), null with no face; the turn with the strongest face decides.

    resolve opens the camera, looks at up to --frames frames (3) and prints one JSON line:
      {"answer":"veto","reason":"...","current":"normal","proposed":"left-up",
       "face":"normal","head_toward":"top","faces":1,"frames":1,"camera":"/dev/video0",
       "elapsed_ms":182.4}
    veto: a face is upright in the current orientation (keep it); accept: no face, or one
    upright in another orientation; unknown: the camera could not answer (busy with another
    program, missing, failed, or no frame before --timeout). Frames are never written; every
    camera use is logged on stderr.
      --camera SPEC        auto (default: the first camera facing the user), v4l2,
                           v4l2:/dev/videoN, file:DIR or file:GLOB (JPEG frames, in sorted
                           order: a file camera for tests), libcamera[:ID] (not built yet)
      --current O          the orientation shown now: normal, left-up, bottom-up, right-up
      --proposed O         the orientation the accelerometer proposes
      --timeout MS         answer unknown when no frame has decided by then (700)
      --sensor-rotation R  the camera's mounting correction, clockwise degrees (default:
                           what the driver reports, else 0)
      --mirror, --no-mirror  frames are a mirror image of the device's view (default: yes,
                           a camera facing the user); --no-mirror when the driver flips them
      --frames N           frames to look at, at most (1-10, default 3)

    Exit status: 0 (an answer was printed, even unknown), 64 usage, 65 a picture that cannot
    be decoded, 66 a picture that cannot be read, 70 the detector failed.
    """

  /// Parses the arguments after the program name.
  ///
  /// - Throws: `UsageError` for an unknown mode or option, a bad value, or missing arguments.
  init(arguments: [String]) throws(UsageError) {
    guard let mode = arguments.first else {
      throw UsageError("a mode is needed: detect or resolve")
    }
    var cursor = ArgumentCursor(Array(arguments.dropFirst()))
    switch mode {
    case "--help", "-h":
      guard arguments.count == 1 else { throw UsageError("--help takes no arguments") }
      command = .help
    case "--version":
      guard arguments.count == 1 else { throw UsageError("--version takes no arguments") }
      command = .version
    case "detect":
      var detect = DetectOptions()
      let common = try cursor.scan(takesVerbose: false) { argument, _ throws(UsageError) in
        switch argument.name {
        case "--json":
          try ArgumentCursor.noValue(argument.name, argument.inline)
          detect.json = true
        default:
          guard !argument.text.hasPrefix("-") || argument.text == "-" else {
            throw UsageError("unknown option '\(argument.text)' for detect")
          }
          detect.files.append(argument.text)
        }
      }
      if common.help {
        command = .help
      } else if common.version {
        command = .version
      } else {
        guard !detect.files.isEmpty else { throw UsageError("detect needs at least one FILE") }
        command = .detect(detect)
      }
    case "resolve":
      var resolve = ResolveOptions()
      let common = try cursor.scan { argument, cursor throws(UsageError) in
        let name = argument.name
        func orientation() throws(UsageError) -> Orientation {
          let text = try cursor.value(for: name, inline: argument.inline)
          guard let value = Orientation(rawValue: text), value != .undefined else {
            throw UsageError("\(name) '\(text)': normal, left-up, bottom-up or right-up")
          }
          return value
        }
        switch name {
        case "--camera":
          let text = try cursor.value(for: name, inline: argument.inline)
          guard FaceSettings.isCameraSpec(text) else {
            throw UsageError(
              "--camera '\(text)': auto, v4l2, v4l2:/dev/videoN, file:DIR or libcamera[:ID]")
          }
          resolve.camera = text
        case "--current": resolve.current = try orientation()
        case "--proposed": resolve.proposed = try orientation()
        case "--timeout":
          let text = try cursor.value(for: name, inline: argument.inline)
          guard let ms = Int(text), (50...60_000).contains(ms) else {
            throw UsageError("--timeout '\(text)': milliseconds, 50 to 60000")
          }
          resolve.timeoutMilliseconds = ms
        case "--sensor-rotation":
          let text = try cursor.value(for: name, inline: argument.inline)
          if text == "auto" {
            resolve.sensorRotation = nil
          } else {
            guard let degrees = Int(text), [0, 90, 180, 270].contains(degrees) else {
              throw UsageError("--sensor-rotation '\(text)': auto, 0, 90, 180 or 270")
            }
            resolve.sensorRotation = degrees
          }
        case "--mirror", "--no-mirror":
          try ArgumentCursor.noValue(name, argument.inline)
          resolve.mirror = name == "--mirror"
        case "--frames":
          let text = try cursor.value(for: name, inline: argument.inline)
          guard let n = Int(text), (1...10).contains(n) else {
            throw UsageError("--frames '\(text)': 1 to 10")
          }
          resolve.frames = n
        default:
          throw UsageError(
            argument.text.hasPrefix("-")
              ? "unknown option '\(argument.text)' for resolve"
              : "unexpected argument '\(argument.text)'")
        }
      }
      if common.help {
        command = .help
      } else if common.version {
        command = .version
      } else {
        resolve.verbose = common.verbose
        guard resolve.current != .undefined, resolve.proposed != .undefined else {
          throw UsageError("resolve needs --current and --proposed")
        }
        guard resolve.current != resolve.proposed else {
          throw UsageError("--proposed must differ from --current (nothing to resolve)")
        }
        command = .resolve(resolve)
      }
    default:
      throw UsageError(
        mode.hasPrefix("-")
          ? "unknown option '\(mode)'" : "unknown mode '\(mode)': detect or resolve")
    }
  }
}
