#if canImport(Glibc)
  import Glibc
#endif

/// How important a log message is; ordered from the most verbose to the most severe.
///
/// Each level maps to a syslog priority (`LOG_DEBUG` ... `LOG_CRIT`, see syslog(3)), which is the
/// `<N>` prefix journald reads from a service's stderr (sd-daemon(3)).
public enum LogLevel: Int, Comparable, Sendable, CaseIterable {
  /// Per-sample detail; never on by default.
  case trace
  /// Diagnostics for developers (`-v`).
  case debug
  /// Normal operation worth recording.
  case info
  /// Normal but significant (a sensor appeared, a name was acquired).
  case notice
  /// Something is wrong but the program carries on (bad sysfs value, invalid matrix).
  case warning
  /// An operation failed.
  case error
  /// The program cannot continue.
  case critical

  /// The syslog priority: 7 debug ... 2 critical.
  public var syslogPriority: Int {
    switch self {
    case .trace, .debug: return 7
    case .info: return 6
    case .notice: return 5
    case .warning: return 4
    case .error: return 3
    case .critical: return 2
    }
  }

  /// The lowercase name, as printed and as accepted by `--log-level`.
  public var name: String {
    switch self {
    case .trace: return "trace"
    case .debug: return "debug"
    case .info: return "info"
    case .notice: return "notice"
    case .warning: return "warning"
    case .error: return "error"
    case .critical: return "critical"
    }
  }

  /// Parses a level name.
  public init?(name: String) {
    guard let level = LogLevel.allCases.first(where: { $0.name == name }) else { return nil }
    self = level
  }

  /// Orders by severity.
  public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Where log lines go. Implementations must be safe to call from any thread.
public protocol LogSink: Sendable {
  /// Writes one message.
  func write(level: LogLevel, label: String, message: String)
}

/// Writes to stderr: `<N>label: message` under systemd (when `JOURNAL_STREAM` is set, so
/// journald keeps the level), `label: level: message` on a terminal.
public struct StderrSink: LogSink {
  private let journal: Bool

  /// Creates a sink; `journal` defaults to whether `JOURNAL_STREAM` is in the environment.
  public init(journal: Bool? = nil) {
    self.journal = journal ?? (getenv("JOURNAL_STREAM") != nil)
  }

  /// Writes one line with a single `write(2)`, so concurrent writers do not interleave.
  public func write(level: LogLevel, label: String, message: String) {
    var line: String
    if journal {
      line = "<\(level.syslogPriority)>\(label): \(message)\n"
    } else {
      line = "\(label): \(level.name): \(message)\n"
    }
    line.withUTF8 { bytes in
      _ = Glibc.write(2, bytes.baseAddress, bytes.count)
    }
  }
}

/// A small logger shaped like apple/swift-log's: a label, a minimum level, lazily built
/// messages and one sink.
public struct Logger: Sendable {
  /// Prefixed to every line, usually the program or component name.
  public var label: String
  /// Messages below this level are not built or written.
  public var level: LogLevel
  /// Where lines go.
  public var sink: any LogSink

  /// Creates a logger writing to `sink` (stderr by default).
  public init(label: String, level: LogLevel = .info, sink: any LogSink = StderrSink()) {
    self.label = label
    self.level = level
    self.sink = sink
  }

  /// Logs `message()` at `level`; the closure runs only when the level is enabled.
  @inlinable
  public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
    if level >= self.level { sink.write(level: level, label: label, message: message()) }
  }

  /// Whether `level` would be written.
  @inlinable
  public func isEnabled(_ level: LogLevel) -> Bool { level >= self.level }

  /// Logs at `.trace`.
  @inlinable public func trace(_ message: @autoclosure () -> String) { log(.trace, message()) }
  /// Logs at `.debug`.
  @inlinable public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
  /// Logs at `.info`.
  @inlinable public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
  /// Logs at `.notice`.
  @inlinable public func notice(_ message: @autoclosure () -> String) { log(.notice, message()) }
  /// Logs at `.warning`.
  @inlinable public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
  /// Logs at `.error`.
  @inlinable public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
  /// Logs at `.critical`.
  @inlinable public func critical(_ message: @autoclosure () -> String) {
    log(.critical, message())
  }

  /// A copy with another label (`"orientd.iio"`), sharing level and sink.
  public func child(_ component: String) -> Logger {
    var copy = self
    copy.label = "\(label).\(component)"
    return copy
  }
}

/// Logs a recurring problem once, then stays quiet about it until it is cleared.
///
/// A sensor that returns garbage every 50 ms would otherwise fill the journal; this keeps one
/// line per problem per episode, plus a count when the episode ends. Not thread-safe: own it
/// from one event loop.
public struct LogOnce: Sendable {
  private var active: [String: Int] = [:]

  /// Creates an empty tracker.
  public init() {}

  /// Logs `message` if `key` is not already active; counts repeats otherwise.
  public mutating func report(
    _ key: String, level: LogLevel = .warning, logger: Logger, _ message: @autoclosure () -> String
  ) {
    if let count = active[key] {
      active[key] = count + 1
      return
    }
    active[key] = 1
    logger.log(level, message())
  }

  /// Ends the episode for `key`; logs how often it repeated if more than once.
  public mutating func clear(_ key: String, logger: Logger, _ recovered: @autoclosure () -> String)
  {
    guard let count = active.removeValue(forKey: key) else { return }
    let times = count > 1 ? " (after \(count) occurrences)" : ""
    logger.notice("\(recovered())\(times)")
  }

  /// Ends every episode whose key starts with `prefix`, without logging.
  public mutating func forget(prefix: String) {
    active = active.filter { !$0.key.hasPrefix(prefix) }
  }

  /// How many times `key` occurred in the current episode (0 if not active).
  public func count(_ key: String) -> Int { active[key] ?? 0 }
}
