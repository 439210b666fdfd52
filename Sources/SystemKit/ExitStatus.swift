import Glibc

/// A process exit status, with the sysexits(3) meanings every executable of the project uses.
///
/// One type for orientd, orientcam and the benchmark programs, so that a status is named where
/// it is chosen (`ExitStatus.unavailable`) and documented once (`<sysexits.h>`).
public struct ExitStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  /// The value passed to `exit(3)`.
  public var rawValue: Int32

  /// Creates a status from its numeric value.
  public init(rawValue: Int32) { self.rawValue = rawValue }

  /// 0: success.
  public static let success = ExitStatus(rawValue: 0)
  /// 1: a check or benchmark target failed (not an error of the program).
  public static let failure = ExitStatus(rawValue: 1)
  /// `EX_USAGE` 64: bad options or arguments.
  public static let usage = ExitStatus(rawValue: 64)
  /// `EX_DATAERR` 65: bad input data (a malformed trace, configuration or file).
  public static let dataError = ExitStatus(rawValue: 65)
  /// `EX_NOINPUT` 66: an input file is missing or unreadable.
  public static let noInput = ExitStatus(rawValue: 66)
  /// `EX_UNAVAILABLE` 69: a service or device is missing or went away.
  public static let unavailable = ExitStatus(rawValue: 69)
  /// `EX_SOFTWARE` 70: an internal failure.
  public static let software = ExitStatus(rawValue: 70)
  /// `EX_OSERR` 71: an operating system call failed (cannot create a descriptor, fork...).
  public static let osError = ExitStatus(rawValue: 71)
  /// `EX_CANTCREAT` 73: an output file cannot be created.
  public static let cannotCreate = ExitStatus(rawValue: 73)
  /// `EX_IOERR` 74: reading or writing failed (disk full, I/O error).
  public static let ioError = ExitStatus(rawValue: 74)
  /// `EX_TEMPFAIL` 75: a temporary failure; trying again later may work.
  public static let temporaryFailure = ExitStatus(rawValue: 75)
  /// `EX_NOPERM` 77: not permitted (not root, policy refused).
  public static let noPermission = ExitStatus(rawValue: 77)
  /// `EX_CONFIG` 78: the configuration is wrong.
  public static let configuration = ExitStatus(rawValue: 78)

  /// `"69 (unavailable)"`, for logs and tests.
  public var description: String {
    let name: String
    switch rawValue {
    case 0: name = "success"
    case 1: name = "failure"
    case 64: name = "usage"
    case 65: name = "data error"
    case 66: name = "no input"
    case 69: name = "unavailable"
    case 70: name = "software"
    case 71: name = "os error"
    case 73: name = "cannot create"
    case 74: name = "i/o error"
    case 75: name = "temporary failure"
    case 77: name = "no permission"
    case 78: name = "configuration"
    default: name = "status"
    }
    return "\(rawValue) (\(name))"
  }
}

/// Ends the process with `status` (`exit(3)`: stdio buffers are flushed).
public func exit(_ status: ExitStatus) -> Never {
  Glibc.exit(status.rawValue)
}

/// A failure a user can cause or meet, with what to tell them and the status to exit with: the
/// one `{status, message}` error of the project (the daemon's start-up and configuration,
/// `orientd rotate`, `orientd calibrate --write`, `orientd replay`).
public struct StatusError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The exit status (sysexits(3)).
  public var status: ExitStatus
  /// What went wrong, where, and what to do.
  public var message: String

  /// Creates an error.
  public init(_ status: ExitStatus, _ message: String) {
    self.status = status
    self.message = message
  }

  /// The message.
  public var description: String { message }
}
