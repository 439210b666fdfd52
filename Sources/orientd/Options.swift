import Orientation

/// orientd's command line, parsed without side effects so tests can check it.
///
/// Each mode is a case of `Command`; a new mode adds a case, a branch in `init(arguments:)` and
/// a paragraph in `usage`. Unknown options are rejected, never ignored.
struct Options: Equatable {
  /// What to do.
  enum Command: Equatable {
    /// Print `usage` and exit 0.
    case help
    /// Print the version and exit 0.
    case version
    /// Run the detector over a recorded trace (`orientd replay`).
    case replay(ReplayOptions)
  }

  /// The mode selected by the arguments.
  var command: Command

  /// The usage text printed by `--help`.
  static let usage = """
    usage: orientd [--help] [--version]
           orientd replay [FILE|-] [--json] [--tilt] [--config FILE] [--set KEY=VALUE ...]

    orientd replay runs the orientation detector over a recorded accelerometer trace and prints
    one line per committed change, "t,orientation" (t is the time of the sample at which the
    change was committed), or with --json one object per line:
      {"time":1.52,"orientation":"left-up","rotation":90,"tilt":"vertical"}

    The trace is CSV, "t,x,y,z" per line: t in seconds (non-decreasing), x,y,z in m/s^2 in the
    display frame (upright reads 0,-9.8,0; lying face up 0,0,-9.8). An optional header line
    "t,x,y,z", '#' comments and blank lines are allowed. FILE '-' or no FILE reads stdin.

    options for replay:
      --json            one JSON object per change instead of CSV
      --tilt            also report tilt changes (vertical, tilted-up/down, face-up/down);
                        CSV lines become "t,orientation,tilt"
      --config FILE     read detector parameters from the [detector] section of FILE
                        (the same format as /etc/orientd.conf)
      --set KEY=VALUE   override one detector parameter (repeatable; applied after --config)

    detector parameters (KEY, default, unit):
    \(Options.parameterTable)
    exit status: 0 success; 64 usage error (unknown option, bad --set); 65 malformed trace or
    config file (the message names FILE:LINE); 66 a file cannot be opened or read.
    """

  /// The parameter lines of `usage`.
  static var parameterTable: String {
    let defaults = DetectorParameters()
    return DetectorParameters.Key.allCases.map { key in
      let name = key.rawValue.padding(to: 21)
      let value = "\(shortDecimal(defaults[key])) \(key.unit)".padding(to: 20)
      return "  \(name) \(value) \(key.summary)"
    }.joined(separator: "\n")
  }

  /// Parses the arguments (without the program name).
  ///
  /// - Throws: `UsageError` for an unknown option, a missing value or a stray argument.
  init(arguments: [String]) throws(UsageError) {
    var cursor = ArgumentCursor(arguments)
    guard let first = cursor.next() else {
      throw UsageError("no command given")
    }
    switch first {
    case "--help", "-h":
      command = .help
    case "--version":
      command = .version
    case "replay":
      command = try Options.parseReplay(&cursor)
      return
    default:
      throw UsageError(
        first.hasPrefix("-") ? "unknown option '\(first)'" : "unknown command '\(first)'")
    }
    if let extra = cursor.next() {
      throw UsageError("unexpected argument '\(extra)' after \(first)")
    }
  }

  private static func parseReplay(_ cursor: inout ArgumentCursor) throws(UsageError) -> Command {
    var replay = ReplayOptions()
    var sawInput = false
    while let argument = cursor.next() {
      let (name, inline) = ArgumentCursor.split(argument)
      switch name {
      case "--help", "-h":
        return .help
      case "--json":
        try ArgumentCursor.noValue(name, inline)
        replay.json = true
      case "--tilt":
        try ArgumentCursor.noValue(name, inline)
        replay.tilt = true
      case "--config":
        replay.configPath = try cursor.value(for: name, inline: inline)
      case "--set":
        let assignment = try cursor.value(for: name, inline: inline)
        guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex
        else {
          throw UsageError("--set expects KEY=VALUE, got '\(assignment)'")
        }
        replay.overrides.append(
          ReplayOptions.Override(
            key: String(assignment[..<equals]),
            value: String(assignment[assignment.index(after: equals)...])))
      default:
        if argument.hasPrefix("-"), argument != "-" {
          throw UsageError("unknown option '\(argument)' for replay")
        } else if sawInput {
          throw UsageError("replay takes one trace file, got '\(replay.input)' and '\(argument)'")
        }
        replay.input = argument
        sawInput = true
      }
    }
    return .replay(replay)
  }
}

/// The options of `orientd replay`.
struct ReplayOptions: Equatable {
  /// One `--set KEY=VALUE`.
  struct Override: Equatable {
    /// The parameter key.
    var key: String
    /// The value as written.
    var value: String
  }

  /// The trace path, or `-` for stdin.
  var input = "-"
  /// Print JSON objects instead of CSV.
  var json = false
  /// Report tilt changes too.
  var tilt = false
  /// A configuration file with a `[detector]` section.
  var configPath: String?
  /// Parameter overrides, in order.
  var overrides: [Override] = []
}

/// A command-line mistake; printed with a pointer to `--help`, exit status 64.
struct UsageError: Error, Equatable, CustomStringConvertible {
  /// What is wrong.
  var message: String

  /// Creates an error.
  init(_ message: String) { self.message = message }

  /// The message.
  var description: String { message }
}

/// Walks the argument list; options may take their value as the next argument.
struct ArgumentCursor {
  private var arguments: [String]
  private var index = 0

  /// Creates a cursor at the first argument.
  init(_ arguments: [String]) { self.arguments = arguments }

  /// The next argument, or `nil` at the end.
  mutating func next() -> String? {
    guard index < arguments.count else { return nil }
    defer { index += 1 }
    return arguments[index]
  }

  /// The value of `option`: the next argument, which must exist.
  mutating func value(for option: String) throws(UsageError) -> String {
    guard let value = next() else { throw UsageError("\(option) needs a value") }
    return value
  }

  /// Splits `--option=value` into the option and its inline value; other arguments are
  /// returned whole with no value.
  static func split(_ argument: String) -> (name: String, inline: String?) {
    guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else {
      return (argument, nil)
    }
    return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
  }

  /// The value of `option`: the inline `--option=value` part, else the next argument.
  mutating func value(for option: String, inline: String?) throws(UsageError) -> String {
    if let inline { return inline }
    return try value(for: option)
  }

  /// Rejects `--flag=value` for an option that takes no value.
  static func noValue(_ option: String, _ inline: String?) throws(UsageError) {
    if inline != nil { throw UsageError("\(option) takes no value") }
  }
}

extension String {
  /// The string padded with spaces to at least `width` characters.
  func padding(to width: Int) -> String {
    count >= width ? self : self + String(repeating: " ", count: width - count)
  }
}
