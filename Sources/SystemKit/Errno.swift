import Glibc

/// A POSIX error number (`errno`), thrown by every wrapper in this module.
///
/// Like swift-system's `Errno`: the raw value is the C `errno` value, the description is
/// `strerror(3)`'s text, and the operation and path say what failed where.
public struct SystemError: Error, Equatable, CustomStringConvertible, Sendable {
  /// The C `errno` value.
  public var errno: Int32
  /// The system call or operation that failed, e.g. `"open"`.
  public var operation: String
  /// The file or device involved, when there is one.
  public var path: String?

  /// Creates an error from an explicit errno value.
  public init(errno: Int32, operation: String, path: String? = nil) {
    self.errno = errno
    self.operation = operation
    self.path = path
  }

  /// `strerror(3)` for this error number.
  public var reason: String { String(cString: strerror(errno)) }

  /// `"open /sys/...: No such file or directory"`.
  public var description: String {
    if let path { return "\(operation) \(path): \(reason)" }
    return "\(operation): \(reason)"
  }

  /// ENOENT: the file or device is gone.
  public static let noEntry: Int32 = ENOENT
  /// ENODEV: the device went away (IIO devices unplugged mid-read).
  public static let noDevice: Int32 = ENODEV
  /// EAGAIN/EWOULDBLOCK: nothing to read on a non-blocking descriptor.
  public static let wouldBlock: Int32 = EAGAIN

  /// True for the error numbers that mean the device or file has disappeared.
  public var isDeviceGone: Bool { errno == ENODEV || errno == ENOENT || errno == ENXIO }
}

/// Calls `body` until it does not fail with `EINTR`; turns a `-1` result into `SystemError`.
///
/// - Parameters:
///   - operation: the name of the call, for the error message.
///   - path: the file involved, for the error message.
/// - Returns: the non-negative result of `body`.
/// - Throws: `SystemError` with the `errno` the call left.
@inlinable
public func retryingInterrupts<T: FixedWidthInteger>(
  _ operation: String, path: String? = nil, _ body: () -> T
) throws(SystemError) -> T {
  while true {
    let result = body()
    if result != -1 { return result }
    let code = Glibc.errno
    if code == EINTR { continue }
    throw SystemError(errno: code, operation: operation, path: path)
  }
}
