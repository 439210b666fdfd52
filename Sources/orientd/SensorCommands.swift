import Accelerometer
import Glibc
import Logging
import Orientation
import SystemKit

/// Options shared by `orientd --list-sensors` and `orientd record`, parsed purely.
struct SensorCommandOptions: Equatable {
  /// `--json`.
  var json = false
  /// `--config FILE`.
  var configPath: String?
  /// `--duration S` (record only).
  var duration: Double?
  /// `-v`/`--verbose`.
  var verbose = false

  /// A usage problem (exit 64).
  struct UsageError: Error, Equatable {
    var message: String
  }

  /// Parses `arguments` (without the program name and subcommand word).
  ///
  /// - Parameter allowed: the options this command accepts.
  init(_ arguments: [String], allowed: Set<String>) throws(UsageError) {
    var index = 0
    func value(_ option: String) throws(UsageError) -> String {
      index += 1
      guard index < arguments.count else { throw UsageError(message: "\(option) needs a value") }
      return arguments[index]
    }
    while index < arguments.count {
      let argument = arguments[index]
      var name = argument
      var inline: String?
      if argument.hasPrefix("--"), let eq = argument.firstIndex(of: "=") {
        name = String(argument[..<eq])
        inline = String(argument[argument.index(after: eq)...])
      }
      guard allowed.contains(name) else {
        throw UsageError(message: "unknown option '\(argument)'")
      }
      switch name {
      case "--json": json = true
      case "-v", "--verbose": verbose = true
      case "--list-sensors": break
      case "--config":
        if let inline { configPath = inline } else { configPath = try value(name) }
      case "--duration":
        let text: String
        if let inline { text = inline } else { text = try value(name) }
        guard let seconds = try? DecimalText.parseDouble(text), seconds > 0, seconds < 1e7 else {
          throw UsageError(message: "--duration '\(text)' is not a positive number of seconds")
        }
        duration = seconds
      default: throw UsageError(message: "unknown option '\(argument)'")
      }
      index += 1
    }
  }
}

/// Loading the accelerometer configuration for the sensor commands.
enum SensorCommandSupport {
  /// Reads `path` (if given) into an `AccelerometerConfiguration`, or exits with a message:
  /// 64 when the file cannot be read, 65 when its content is wrong.
  static func loadConfiguration(_ path: String?) -> AccelerometerConfiguration {
    guard let path else { return AccelerometerConfiguration() }
    let bytes: [UInt8]
    do {
      let file = try FileDescriptor(path: path)
      bytes = try file.readToEnd(limit: ConfigFile.maxBytes)
    } catch {
      fail(64, "cannot read configuration \(error)")
    }
    do {
      let file = try ConfigFile(parsing: String(decoding: bytes, as: UTF8.self), source: path)
      return try AccelerometerConfiguration(file)
    } catch {
      fail(65, "\(error)")
    }
  }

  /// A logger on stderr at info (debug with `-v`).
  static func logger(verbose: Bool) -> Logger {
    Logger(label: "orientd", level: verbose ? .debug : .notice)
  }

  /// Writes `message` to stderr and exits with `code`.
  static func fail(_ code: Int32, _ message: String) -> Never {
    let line = "orientd: \(message)\n"
    _ = line.withCString { Glibc.write(2, $0, strlen($0)) }
    exit(code)
  }

  /// Writes a whole line to stdout with one `write(2)` (no stdio buffering, so a pipe reader
  /// sees each line at once).
  ///
  /// - Returns: false when stdout is gone (EPIPE).
  @discardableResult
  static func writeLine(_ text: String) -> Bool {
    var line = text
    line += "\n"
    return line.withUTF8 { bytes in
      var done = 0
      while done < bytes.count {
        let n = Glibc.write(1, bytes.baseAddress.map { $0 + done }, bytes.count - done)
        if n < 0 {
          if errno == EINTR { continue }
          return false
        }
        done += n
      }
      return true
    }
  }
}
