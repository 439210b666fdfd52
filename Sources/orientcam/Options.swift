import Capture
import EvdevKit
import Imaging
import OrientCore
import Session
import V4L2Kit

// orientcam's command line: the scanner, and the parsers that fill the Capture and Session
// modules' option structs (which hold settings only), as orientd's Options.swift does.

/// Walks command-line arguments: `--name value`, `--name=value`, `-o value`, flags and
/// positionals; `--` ends the options. Shared by every orientcam command's parser.
struct ArgumentScanner {
  /// One argument.
  enum Token: Equatable, Sendable {
    /// `--name`, with the value if written `--name=value`.
    case option(String, inline: String?)
    /// Anything else.
    case positional(String)
  }

  private let arguments: [String]
  private var index = 0
  private var optionsEnded = false

  /// Creates a scanner over the arguments after the command name.
  init(_ arguments: [String]) { self.arguments = arguments }

  /// The next argument, or `nil` at the end.
  mutating func next() -> Token? {
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
  mutating func value(for name: String, inline: String?) throws(CaptureError) -> String {
    if let inline { return inline }
    guard index < arguments.count else {
      throw CaptureError(.usage, "\(name) needs a value; see orientcam --help")
    }
    index += 1
    return arguments[index - 1]
  }

  /// The usage error for an argument `command` does not take.
  static func reject(_ token: Token, command: String) -> CaptureError {
    switch token {
    case .option(let name, _):
      return CaptureError(.usage, "unknown option \(name) for orientcam \(command); see --help")
    case .positional(let text):
      return CaptureError(
        .usage, "unexpected argument \"\(text)\" for orientcam \(command); see --help")
    }
  }
}

extension CaptureOptions {
  /// Parses the arguments after `capture`.
  ///
  /// - Throws: `CaptureError.usage` for unknown options, missing or bad values, conflicts.
  init(arguments: [String]) throws(CaptureError) {
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
  mutating func apply(_ name: String, inline: String?, scanner: inout ArgumentScanner)
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
  func validate() throws(CaptureError) {
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

extension SessionOptions {
  /// Parses the arguments after `session`.
  ///
  /// - Throws: `CaptureError.usage` for unknown options, bad values and conflicts.
  init(arguments: [String]) throws(CaptureError) {
    self.init()
    var scanner = ArgumentScanner(arguments)
    while let token = scanner.next() {
      guard case .option(let name, let inline) = token else {
        throw ArgumentScanner.reject(token, command: "session")
      }
      func value() throws(CaptureError) -> String { try scanner.value(for: name, inline: inline) }
      func flag() throws(CaptureError) {
        if inline != nil { throw CaptureError(.usage, "\(name) takes no value") }
      }
      switch name {
      case "--burst": burst = try SessionOptions.integer(name, try value(), in: 1...100)
      case "--shutter-keys":
        let text = try value()
        shutterKeys = text.split(separator: ",").map(String.init)
        guard !shutterKeys.isEmpty else {
          throw CaptureError(.usage, "--shutter-keys needs key names such as volumeup,volumedown")
        }
        shutterKeyCodes = []
        for key in shutterKeys {
          guard let code = KeyCode.named(key) else {
            throw CaptureError(
              .usage,
              "--shutter-keys: unknown key \"\(key)\"; use names like volumeup, volumedown, "
                + "camera (the KEY_ names of linux/input-event-codes.h)")
          }
          shutterKeyCodes.append(code)
        }
      case "--shutter-device":
        let path = try value()
        shutterDevices = (shutterDevices ?? []) + [path]
      case "--headless":
        try flag()
        headless = true
      case "--overlay": overlayPath = try value()
      case "--preview-size":
        let text = try value()
        guard let size = FrameSize(parsing: text), size.width >= 64, size.height >= 64,
          size.width <= 8192, size.height <= 8192
        else {
          throw CaptureError(
            .usage, "--preview-size takes WIDTHxHEIGHT from 64x64 to 8192x8192, not \"\(text)\"")
        }
        previewSize = size
      case "--fullscreen":
        try flag()
        fullscreen = true
      case "--fps": fps = try SessionOptions.integer(name, try value(), in: 1...120)
      default:
        guard try capture.apply(name, inline: inline, scanner: &scanner) else {
          throw ArgumentScanner.reject(token, command: "session")
        }
      }
    }
    try capture.validate()
    if headless && fullscreen {
      throw CaptureError(.usage, "--fullscreen needs the preview window; drop --headless")
    }
    if shutterDevices != nil && shutterKeys.isEmpty {
      throw CaptureError(.usage, "--shutter-device needs --shutter-keys (which keys to take)")
    }
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
}

extension LayoutOptions {
  /// Parses the arguments after `layout`.
  ///
  /// - Throws: `CaptureError.usage`.
  init(arguments: [String]) throws(CaptureError) {
    self.init()
    var scanner = ArgumentScanner(arguments)
    while let token = scanner.next() {
      guard case .option(let name, let inline) = token else {
        throw ArgumentScanner.reject(token, command: "layout")
      }
      func value() throws(CaptureError) -> String { try scanner.value(for: name, inline: inline) }
      func flag() throws(CaptureError) {
        if inline != nil { throw CaptureError(.usage, "\(name) takes no value") }
      }
      switch name {
      case "--orientation":
        let text = try value()
        guard let o = Orientation(rawValue: text), o != .undefined else {
          throw CaptureError(
            .usage, "--orientation takes normal, left-up, bottom-up or right-up, not \"\(text)\"")
        }
        orientation = o
      case "--size":
        let text = try value()
        guard let s = FrameSize(parsing: text), s.width >= 16, s.height >= 16, s.width <= 16384,
          s.height <= 16384
        else {
          throw CaptureError(
            .usage, "--size takes the preview's WIDTHxHEIGHT such as 1280x720, not \"\(text)\"")
        }
        size = s
      case "--overlay": overlayPath = try value()
      case "--json":
        try flag()
        json = true
      case "--render":
        let path = try value()
        let lower = path.lowercased()
        guard lower.hasSuffix(".png") || lower.hasSuffix(".jpg") || lower.hasSuffix(".jpeg")
        else {
          throw CaptureError(.usage, "--render writes .png or .jpg files, not \"\(path)\"")
        }
        renderPath = path
      case "--upright":
        try flag()
        upright = true
      case "--print-overlay":
        try flag()
        printOverlay = true
      default:
        throw ArgumentScanner.reject(token, command: "layout")
      }
    }
    if size == nil && !printOverlay {
      throw CaptureError(.usage, "layout needs --size WxH (the preview size)")
    }
  }
}

/// The `orientcam` command line.
enum OrientcamCommand: Equatable, Sendable {
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
  init(arguments: [String]) throws(CaptureError) {
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
