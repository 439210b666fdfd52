import Imaging
import OrientCore
import V4L2Kit

/// Walks command-line arguments: `--name value`, `--name=value`, `-o value`, flags and
/// positionals; `--` ends the options. Shared by every orientcam command's parser.
public struct ArgumentScanner {
  /// One argument.
  public enum Token: Equatable, Sendable {
    /// `--name`, with the value if written `--name=value`.
    case option(String, inline: String?)
    /// Anything else.
    case positional(String)
  }

  private let arguments: [String]
  private var index = 0
  private var optionsEnded = false

  /// Creates a scanner over the arguments after the command name.
  public init(_ arguments: [String]) { self.arguments = arguments }

  /// The next argument, or `nil` at the end.
  public mutating func next() -> Token? {
    guard index < arguments.count else { return nil }
    let arg = arguments[index]
    index += 1
    if optionsEnded || arg == "-" || !arg.hasPrefix("-") { return .positional(arg) }
    if arg == "--" {
      optionsEnded = true
      return next()
    }
    if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
      return .option(String(arg[..<eq]), inline: String(arg[arg.index(after: eq)...]))
    }
    return .option(arg, inline: nil)
  }

  /// The option's value: inline (`--a=b`) or the next argument.
  ///
  /// - Throws: `CaptureError.usage` when the arguments end first.
  public mutating func value(for name: String, inline: String?) throws(CaptureError) -> String {
    if let inline { return inline }
    guard index < arguments.count else {
      throw CaptureError(.usage, "\(name) needs a value; see orientcam --help")
    }
    index += 1
    return arguments[index - 1]
  }

  /// The usage error for an argument `command` does not take.
  public static func reject(_ token: Token, command: String) -> CaptureError {
    switch token {
    case .option(let name, _):
      return CaptureError(.usage, "unknown option \(name) for orientcam \(command); see --help")
    case .positional(let text):
      return CaptureError(
        .usage, "unexpected argument \"\(text)\" for orientcam \(command); see --help")
    }
  }
}

/// Where `orientcam capture` takes the orientation from.
public enum OrientationChoice: Equatable, Sendable {
  /// Ask orientd over the system bus (`--orientation auto`, the default).
  case auto
  /// `--orientation NAME`.
  case fixed(Orientation)
  /// `--orientation-from -|FILE`.
  case watchLines(String)
}

/// `orientcam capture` options.
public struct CaptureOptions: Equatable, Sendable {
  /// `--source` (default: the first camera).
  public var source: SourceSpec = .camera(path: nil)
  /// `--resolution WxH` (default: the largest).
  public var resolution: FrameSize?
  /// `--format a,b` (default: MJPEG, JPEG, YUYV, NV12, RGB24, BGR24 in that order).
  public var formats: [PixelFormat] = PixelFormat.preference
  /// Whether `--format` was given.
  public var formatGiven = false
  /// `--skip N` warm-up frames (default 3 for cameras, 0 otherwise).
  public var skip: Int?
  /// `--count N` photos (default 1; for `file:` every matched file).
  public var count: Int?
  /// `--orientation` / `--orientation-from`.
  public var orientation: OrientationChoice = .auto
  /// `--orientation-fallback NAME`.
  public var fallback: Orientation?
  /// `--sensor-rotation DEG` (default: what the driver reports, else 0).
  public var sensorRotation: Int?
  /// `--mirror`.
  public var mirror = false
  /// `--rotate`.
  public var rotate: RotateMode = .both
  /// `--lossless`.
  public var lossless: LosslessPolicy = .reencode
  /// `--quality`.
  public var quality = 90
  /// `-o`.
  public var output: OutputTemplate
  /// `--force`.
  public var force = false
  /// `--min-resolution WxH`.
  public var minimumResolution: FrameSize?
  /// `--json`.
  public var json = false
  /// `-v`/`--verbose`.
  public var verbose = false
  /// Whether `--orientation` or `--orientation-from` was given (they exclude each other).
  var orientationGiven = false

  /// Defaults.
  public init() {
    output = OutputTemplate.standard
  }

  /// Parses the arguments after `capture`.
  ///
  /// - Throws: `CaptureError.usage` for unknown options, missing or bad values, conflicts.
  public init(arguments: [String]) throws(CaptureError) {
    self.init()
    var scanner = ArgumentScanner(arguments)
    while let token = scanner.next() {
      guard case .option(let name, let inline) = token,
        try apply(name, inline: inline, scanner: &scanner)
      else {
        throw ArgumentScanner.reject(token, command: "capture")
      }
    }
    try validate()
  }

  /// Applies one capture option (source, orientation, rotation and output options), taking
  /// its value from `scanner`; returns `false` for an option that is not a capture option, so
  /// that other commands (`session`) can share these options and add their own.
  ///
  /// - Throws: `CaptureError.usage` for a missing or bad value.
  public mutating func apply(_ name: String, inline: String?, scanner: inout ArgumentScanner)
    throws(CaptureError) -> Bool
  {
    func value() throws(CaptureError) -> String {
      try scanner.value(for: name, inline: inline)
    }
    func flag() throws(CaptureError) {
      if inline != nil { throw CaptureError(.usage, "\(name) takes no value") }
    }
    switch name {
    case "--source", "-s": source = try SourceSpec(parsing: try value())
    case "--resolution", "-r": resolution = try Self.size(name, try value())
    case "--min-resolution": minimumResolution = try Self.size(name, try value())
    case "--format", "-f":
      formats = try Self.formats(try value())
      formatGiven = true
    case "--skip": skip = try Self.integer(name, try value(), in: 0...1000)
    case "--count", "-n": count = try Self.integer(name, try value(), in: 1...100_000)
    case "--orientation":
      let text = try value()
      if orientationGiven { throw Self.orientationConflict }
      orientationGiven = true
      if text == "auto" {
        orientation = .auto
      } else {
        orientation = .fixed(try Self.orientation(name, text))
      }
    case "--orientation-from":
      if orientationGiven { throw Self.orientationConflict }
      orientationGiven = true
      orientation = .watchLines(try value())
    case "--orientation-fallback": fallback = try Self.orientation(name, try value())
    case "--sensor-rotation":
      let degrees = try Self.integer(name, try value(), in: -270...360)
      guard degrees % 90 == 0 else {
        throw CaptureError(.usage, "--sensor-rotation takes 0, 90, 180 or 270, not \(degrees)")
      }
      sensorRotation = ((degrees % 360) + 360) % 360
    case "--mirror":
      try flag()
      mirror = true
    case "--rotate":
      let text = try value()
      guard let mode = RotateMode(rawValue: text) else {
        throw CaptureError(.usage, "--rotate takes pixels, exif, both or none, not \"\(text)\"")
      }
      rotate = mode
    case "--lossless":
      let text = try value()
      guard let policy = LosslessPolicy(rawValue: text) else {
        throw CaptureError(
          .usage, "--lossless takes strict, trim or reencode, not \"\(text)\"")
      }
      lossless = policy
    case "--quality", "-q": quality = try Self.integer(name, try value(), in: 1...100)
    case "--output", "-o": output = try OutputTemplate(try value())
    case "--force":
      try flag()
      force = true
    case "--json":
      try flag()
      json = true
    case "--verbose", "-v":
      try flag()
      verbose = true
    default:
      return false
    }
    return true
  }

  /// Checks the combinations `apply` cannot see one option at a time.
  ///
  /// - Throws: `CaptureError.usage` naming the conflicting options.
  public func validate() throws(CaptureError) {
    if fallback != nil, case .fixed = orientation {
      throw CaptureError(
        .usage, "--orientation-fallback only applies to --orientation auto or --orientation-from")
    }
    if minimumResolution != nil, case .file = source {
      throw CaptureError(.usage, "--min-resolution applies to cameras and the pattern, not files")
    }
  }

  static let orientationConflict = CaptureError(
    .usage, "give only one of --orientation and --orientation-from")

  static func size(_ name: String, _ text: String) throws(CaptureError) -> FrameSize {
    guard let size = FrameSize(parsing: text) else {
      throw CaptureError(.usage, "\(name) takes WIDTHxHEIGHT such as 1920x1080, not \"\(text)\"")
    }
    return size
  }

  static func integer(_ name: String, _ text: String, in range: ClosedRange<Int>)
    throws(CaptureError) -> Int
  {
    guard let n = Int(text), range.contains(n) else {
      throw CaptureError(
        .usage,
        "\(name) takes a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(text)\""
      )
    }
    return n
  }

  static func orientation(_ name: String, _ text: String) throws(CaptureError) -> Orientation {
    guard let o = Orientation(rawValue: text), o != .undefined else {
      let extra = name == "--orientation" ? "auto, " : ""
      throw CaptureError(
        .usage,
        "\(name) takes \(extra)normal, left-up, bottom-up or right-up, not \"\(text)\"")
    }
    return o
  }

  static func formats(_ text: String) throws(CaptureError) -> [PixelFormat] {
    var result: [PixelFormat] = []
    for part in text.split(separator: ",") {
      guard let format = PixelFormat(rawValue: part.lowercased()) else {
        let known = PixelFormat.allCases.map(\.rawValue).joined(separator: ", ")
        throw CaptureError(.usage, "--format: unknown format \"\(part)\"; known: \(known)")
      }
      if !result.contains(format) { result.append(format) }
    }
    guard !result.isEmpty else { throw CaptureError(.usage, "--format needs a format name") }
    return result
  }
}

/// The `orientcam` command line.
public enum OrientcamCommand: Equatable, Sendable {
  /// `orientcam capture ...`.
  case capture(CaptureOptions)
  /// `orientcam list [--json]`.
  case list(json: Bool)
  /// `orientcam inspect FILE... [--json]`.
  case inspect(paths: [String], json: Bool)
  /// `--help`, `help`, `CMD --help`: the usage of a command (or all).
  case help(String?)
  /// `--version`.
  case version

  /// Parses the whole command line (without the program name).
  ///
  /// - Throws: `CaptureError.usage`.
  public init(arguments: [String]) throws(CaptureError) {
    guard let first = arguments.first else {
      throw CaptureError(.usage, "missing command; see orientcam --help")
    }
    let rest = Array(arguments.dropFirst())
    // --version works after any command, as in orientd.
    if rest.contains("--version"), ["capture", "list", "inspect"].contains(first) {
      self = .version
      return
    }
    if rest.contains("--help") || rest.contains("-h") {
      guard ["capture", "list", "inspect"].contains(first) else {
        throw CaptureError(.usage, "unknown command \"\(first)\"; see orientcam --help")
      }
      self = .help(first)
      return
    }
    switch first {
    case "--help", "-h", "help":
      self = .help(rest.first)
    case "--version":
      self = .version
    case "capture":
      self = .capture(try CaptureOptions(arguments: rest))
    case "list":
      var json = false
      var scanner = ArgumentScanner(rest)
      while let token = scanner.next() {
        guard token == .option("--json", inline: nil) else {
          throw ArgumentScanner.reject(token, command: "list")
        }
        json = true
      }
      self = .list(json: json)
    case "inspect":
      var json = false
      var paths: [String] = []
      var scanner = ArgumentScanner(rest)
      while let token = scanner.next() {
        switch token {
        case .option("--json", nil): json = true
        case .positional(let path): paths.append(path)
        default: throw ArgumentScanner.reject(token, command: "inspect")
        }
      }
      guard !paths.isEmpty else { throw CaptureError(.usage, "inspect needs a JPEG file") }
      self = .inspect(paths: paths, json: json)
    default:
      throw CaptureError(
        .usage,
        first.hasPrefix("-")
          ? "unknown option \(first); see orientcam --help"
          : "unknown command \"\(first)\"; see orientcam --help")
    }
  }
}

/// The help texts.
public enum Usage {
  /// `orientcam --help`.
  public static let main = """
    usage: orientcam COMMAND [options]

    Photos that come out upright however the device is held, from a V4L2 camera, the built-in
    test pattern or JPEG files, turned from orientd's orientation, with correct EXIF.

    commands:
      capture    take photos (orientcam capture --help)
      session    keep the camera open: a photo per trigger (Enter, SIGUSR1, volume keys,
                 the preview's shutter button), live preview with overlay controls
      layout     lay out (and render) the overlay for an orientation and preview size
      list       show the cameras: device, driver, card, formats, largest size, front/back
      inspect    show a JPEG's size, EXIF Orientation and, for test-pattern photos, which way
                 the pattern is turned

      --help     this text (COMMAND --help for a command)
      --version  the version

    exit status: 0 done, 64 usage, 65 bad data, 66 missing input, 69 camera or orientd
    unavailable, 70 internal, 73 cannot create the photo, 74 write or camera I/O error
    """

  /// `orientcam capture --help`.
  public static let capture = """
    usage: orientcam capture [options]

    source:
      --source v4l2[:/dev/videoN]   a camera (default: the first capture device)
               pattern[:ORIENT]     the test pattern, as a camera in a device held as the
                                    capture believes (or held ORIENT)
               file:PATH            JPEG file(s) replayed as camera frames; PATH may be a glob
      --resolution WxH              frame size (default: the largest offered)
      --format F[,F...]             formats to accept, in order of preference (default:
                                    mjpeg,jpeg,yuyv,nv12,rgb24,bgr24); sets the pattern's format
      --skip N                      warm-up frames to drop (default 3 for cameras, else 0)
      --count N                     photos to take (default 1; for file: every matched file)
      --min-resolution WxH          refuse, before streaming, a camera whose largest size is
                                    below WxH (the front-camera guard), and name those that pass

    orientation:
      --orientation auto|NAME       auto (default): ask orientd on the system bus; or force
                                    normal, left-up, bottom-up, right-up
      --orientation-from -|FILE     use the latest line of `orientd --watch --json` output;
                                    malformed lines are skipped with a warning
      --orientation-fallback NAME   use NAME when orientd cannot be reached
      --sensor-rotation DEG         the camera's mounting correction, clockwise (default: the
                                    driver's V4L2_CID_CAMERA_SENSOR_ROTATION, else 0)
      --mirror                      a front camera: turn the other way for left-up and right-up
                                    and mirror the upright photo left-right

    rotation and output:
      --rotate both|pixels|exif|none
                                    both (default): upright pixels and Orientation=1;
                                    pixels: upright pixels, no tag; exif: pixels as captured and
                                    the Orientation tag; none: as captured, no tag
      --lossless reencode|trim|strict
                                    JPEG frames are turned losslessly; when the size is not a
                                    multiple of the JPEG block size: reencode (default) keeps
                                    every pixel, trim drops the partial edge blocks, strict
                                    refuses. Which one happened is reported.
      --quality N                   JPEG quality 1-100 (default 90)
      -o, --output TEMPLATE         file name with strftime fields, {n} (first free number)
                                    and {orientation} (default %Y%m%d-%H%M%S-{n}.jpg)
      --force                       replace an existing file (otherwise refused)
      --json                        one JSON object per photo: path, size, orientation, how it
                                    was turned, timings
      -v, --verbose                 more detail on stderr

    Photos are written atomically: never a partial file, never an overwritten photo unless
    --force. Without --json each photo's path is printed on stdout.
    """

  /// `orientcam list --help`.
  public static let list = """
    usage: orientcam list [--json]

    Every V4L2 capture device with its driver, card name, bus, formats and sizes, the largest
    size, and front/back when the driver (V4L2_CID_CAMERA_ORIENTATION) or the firmware (ACPI
    _PLD panel) says so.
    """

  /// `orientcam inspect --help`.
  public static let inspect = """
    usage: orientcam inspect FILE... [--json]

    A JPEG's size, subsampling, EXIF Orientation, Make/Model and capture time, and for photos of
    the test pattern, how the pattern is turned (none = upright).
    """
}
