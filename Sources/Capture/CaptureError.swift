import JPEGKit
import SystemKit
import V4L2Kit

/// A failure of `orientcam`, with the message for the user and the exit status (sysexits.h).
public struct CaptureError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The class of failure; each has a sysexits(3) status (`status`).
  public enum Kind: Sendable {
    /// `EX_USAGE` 64: bad options or template.
    case usage
    /// `EX_DATAERR` 65: bad input data (a corrupt JPEG, no usable orientation line, a
    /// rotation that cannot be done as strictly as asked, an overlay that does not fit).
    case badData
    /// `EX_NOINPUT` 66: an input file is missing or unreadable.
    case noInput
    /// `EX_UNAVAILABLE` 69: no camera, camera refused or busy, orientd not reachable.
    case unavailable
    /// `EX_SOFTWARE` 70: an internal failure (a library could not start).
    case software
    /// `EX_CANTCREAT` 73: the photo cannot be created (exists, read-only or missing folder).
    case cannotCreate
    /// `EX_IOERR` 74: writing failed (disk full, I/O error) or the camera failed mid-stream.
    case ioError

    /// The process exit status for this class.
    public var status: ExitStatus {
      switch self {
      case .usage: .usage
      case .badData: .dataError
      case .noInput: .noInput
      case .unavailable: .unavailable
      case .software: .software
      case .cannotCreate: .cannotCreate
      case .ioError: .ioError
      }
    }
  }

  /// The class.
  public var kind: Kind
  /// What went wrong, where, and what to do.
  public var message: String
  /// Whether another program holds the camera (`EBUSY`): orientd-face answers `unknown` then.
  public var cameraBusy = false

  /// Creates an error.
  public init(_ kind: Kind, _ message: String) {
    self.kind = kind
    self.message = message
  }

  /// The process exit status.
  public var status: ExitStatus { kind.status }

  /// The message.
  public var description: String { message }

  /// Wraps a camera error.
  public init(_ error: V4L2Error) {
    let kind: Kind =
      switch error.kind {
      case .notFound, .permissionDenied, .busy, .notACamera, .unsupported, .timeout: .unavailable
      case .io: .ioError
      }
    self.init(kind, error.description)
    cameraBusy = error.kind == .busy
  }

  /// Wraps a JPEG error about `what` (a file name or frame label).
  public init(_ error: JPEGError, about what: String) {
    self.init(.badData, "\(what): \(error.description)")
  }
}
