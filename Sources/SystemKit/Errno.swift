import Glibc

/// A POSIX error number (`errno`), as a type: named constants instead of bare `Int32`s.
///
/// Like swift-system's `Errno`: the raw value is the C value (`ENOENT`...), the description is
/// `strerror(3)`'s text. Only the numbers the project looks at are named; any other is
/// `Errno(rawValue:)`.
public struct Errno: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  /// The C `errno` value.
  public var rawValue: Int32

  /// Wraps a C `errno` value.
  public init(rawValue: Int32) { self.rawValue = rawValue }

  /// The calling thread's `errno` right now.
  public static var current: Errno { Errno(rawValue: Glibc.errno) }

  /// `EPERM`: operation not permitted.
  public static let notPermitted = Errno(rawValue: EPERM)
  /// `ENOENT`: no such file or directory.
  public static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
  /// `EINTR`: interrupted by a signal.
  public static let interrupted = Errno(rawValue: EINTR)
  /// `EIO`: input/output error.
  public static let ioError = Errno(rawValue: EIO)
  /// `ENXIO`: no such device or address.
  public static let noSuchAddressOrDevice = Errno(rawValue: ENXIO)
  /// `EAGAIN`/`EWOULDBLOCK`: nothing to read or write on a non-blocking descriptor now.
  public static let resourceTemporarilyUnavailable = Errno(rawValue: EAGAIN)
  /// `EACCES`: permission denied.
  public static let permissionDenied = Errno(rawValue: EACCES)
  /// `EBUSY`: device or resource busy.
  public static let resourceBusy = Errno(rawValue: EBUSY)
  /// `EEXIST`: the file exists.
  public static let fileExists = Errno(rawValue: EEXIST)
  /// `ENODEV`: no such device (an IIO device unplugged mid-read).
  public static let noSuchDevice = Errno(rawValue: ENODEV)
  /// `EISDIR`: is a directory.
  public static let isDirectory = Errno(rawValue: EISDIR)
  /// `EINVAL`: invalid argument.
  public static let invalidArgument = Errno(rawValue: EINVAL)
  /// `ENOTTY`: inappropriate ioctl for device.
  public static let inappropriateIOCTLForDevice = Errno(rawValue: ENOTTY)
  /// `EFBIG`: file too large.
  public static let fileTooLarge = Errno(rawValue: EFBIG)
  /// `EPROTONOSUPPORT`: protocol not supported.
  public static let protocolNotSupported = Errno(rawValue: EPROTONOSUPPORT)
  /// `EOPNOTSUPP`: operation not supported.
  public static let notSupported = Errno(rawValue: EOPNOTSUPP)

  /// `strerror(3)` for this number.
  public var description: String { String(cString: strerror(rawValue)) }
}

/// A failed system call: its `Errno`, thrown by every wrapper in this module.
///
/// Like swift-system's `Errno` errors, with the operation and path that say what failed where.
public struct SystemError: Error, Equatable, CustomStringConvertible, Sendable {
  /// The error number.
  public var code: Errno
  /// The system call or operation that failed, e.g. `"open"`.
  public var operation: String
  /// The file or device involved, when there is one.
  public var path: String?

  /// Creates an error.
  public init(_ code: Errno, operation: String, path: String? = nil) {
    self.code = code
    self.operation = operation
    self.path = path
  }

  /// Creates an error from a C `errno` value (what a call just left in `errno`, or a negated
  /// libudev return code).
  public init(errno: Int32, operation: String, path: String? = nil) {
    self.init(Errno(rawValue: errno), operation: operation, path: path)
  }

  /// `strerror(3)` for this error number.
  public var reason: String { code.description }

  /// `"open /sys/...: No such file or directory"`.
  public var description: String {
    if let path { return "\(operation) \(path): \(reason)" }
    return "\(operation): \(reason)"
  }

  /// True for the error numbers that mean the device or file has disappeared.
  public var isDeviceGone: Bool {
    [.noSuchDevice, .noSuchFileOrDirectory, .noSuchAddressOrDevice].contains(code)
  }
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
