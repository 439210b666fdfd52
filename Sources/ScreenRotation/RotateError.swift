import SystemKit

/// Why `orientd rotate` could not do something: the message names what, where and what to do,
/// and `status` is the sysexits code the command exits with.
public struct RotateError: Error, Equatable, CustomStringConvertible {
  /// The exit status (69 no compositor / output / protocol, 70 a compositor refused, 74 I/O).
  public var status: ExitStatus
  /// The message.
  public var message: String

  /// Creates an error.
  public init(_ status: ExitStatus, _ message: String) {
    self.status = status
    self.message = message
  }

  /// The message.
  public var description: String { message }
}
