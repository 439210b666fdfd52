import CLinuxShims
import Glibc

/// An open file descriptor that this object owns and closes in `deinit` (`close(2)`).
///
/// Every operation retries `EINTR` and throws `SystemError` naming the path it was opened with.
public final class FileDescriptor {
  /// The C descriptor, valid until `close()` or deinitialisation.
  public private(set) var rawValue: Int32
  /// The path it was opened from (for messages), or a description such as `"signalfd"`.
  public let path: String

  /// Flags for `open(2)`, as an option set over the C `O_*` constants.
  public struct OpenOptions: OptionSet, Sendable {
    /// The C flag bits.
    public let rawValue: Int32
    /// Creates options from C `O_*` bits.
    public init(rawValue: Int32) { self.rawValue = rawValue }
    /// `O_RDONLY`.
    public static let readOnly = OpenOptions([])
    /// `O_WRONLY`.
    public static let writeOnly = OpenOptions(rawValue: O_WRONLY)
    /// `O_RDWR`.
    public static let readWrite = OpenOptions(rawValue: O_RDWR)
    /// `O_NONBLOCK`.
    public static let nonBlocking = OpenOptions(rawValue: O_NONBLOCK)
    /// `O_CLOEXEC` (always added by `open`).
    public static let closeOnExec = OpenOptions(rawValue: O_CLOEXEC)
    /// `O_CREAT`.
    public static let create = OpenOptions(rawValue: O_CREAT)
    /// `O_EXCL`.
    public static let exclusive = OpenOptions(rawValue: O_EXCL)
    /// `O_TRUNC`.
    public static let truncate = OpenOptions(rawValue: O_TRUNC)
    /// `O_DIRECTORY`.
    public static let directory = OpenOptions(rawValue: O_DIRECTORY)
    /// `O_TMPFILE` (an unnamed file in a directory, linked later), as the C headers of the
    /// target architecture define it.
    public static let temporaryFile = OpenOptions(rawValue: orient_o_tmpfile())
  }

  /// Takes ownership of an already open descriptor.
  public init(owning rawValue: Int32, path: String) {
    self.rawValue = rawValue
    self.path = path
  }

  /// Opens `path` with `open(2)`; `O_CLOEXEC` is always set.
  ///
  /// - Throws: `SystemError` (operation `open`, with the path).
  public convenience init(
    path: String, options: OpenOptions = .readOnly, permissions: mode_t = 0o644
  ) throws(SystemError) {
    let flags = options.union(.closeOnExec).rawValue
    let fd = try retryingInterrupts("open", path: path) {
      orient_open(path, flags, permissions)
    }
    self.init(owning: fd, path: path)
  }

  deinit {
    if rawValue >= 0 { _ = Glibc.close(rawValue) }
  }

  /// Closes now; later calls are no-ops. Errors from `close(2)` are returned, not thrown,
  /// because the descriptor is released either way (see close(2) on Linux).
  @discardableResult
  public func close() -> SystemError? {
    guard rawValue >= 0 else { return nil }
    let result = Glibc.close(rawValue)
    rawValue = -1
    return result == 0 ? nil : SystemError(errno: errno, operation: "close", path: path)
  }

  /// `pread(2)` into `buffer` at `offset`; returns the byte count (0 at end of file).
  public func pread(into buffer: UnsafeMutableRawBufferPointer, offset: Int) throws(SystemError)
    -> Int
  {
    let fd = rawValue
    return try retryingInterrupts("read", path: path) {
      Glibc.pread(fd, buffer.baseAddress, buffer.count, off_t(offset))
    }
  }

  /// `read(2)` into `buffer`; returns the byte count, or `nil` when a non-blocking read would
  /// block (`EAGAIN`).
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int? {
    let fd = rawValue
    do {
      return try retryingInterrupts("read", path: path) {
        Glibc.read(fd, buffer.baseAddress, buffer.count)
      }
    } catch  where error.code == .resourceTemporarilyUnavailable {
      return nil
    }
  }

  /// `read(2)` into `buffer` only if `poll(2)` says a read will not block; returns the byte
  /// count (0 at end of input), or `nil` when nothing has arrived.
  ///
  /// For descriptors shared with other processes (stdin): it needs no `O_NONBLOCK`, which is a
  /// flag of the open file description and so would stay set for the shell and every other
  /// program using the same terminal or pipe after this process ends, however it ends.
  public func readIfReady(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int? {
    var pfd = pollfd(fd: rawValue, events: Int16(POLLIN), revents: 0)
    let ready = try retryingInterrupts("poll", path: path) { Glibc.poll(&pfd, 1, 0) }
    guard ready > 0 else { return nil }
    return try read(into: buffer)
  }

  /// Writes all of `bytes`, looping over short writes (`write(2)`).
  public func writeAll(_ bytes: UnsafeRawBufferPointer) throws(SystemError) {
    var done = 0
    let fd = rawValue
    while done < bytes.count {
      let n = try retryingInterrupts("write", path: path) {
        Glibc.write(fd, bytes.baseAddress.map { $0 + done }, bytes.count - done)
      }
      done += n
    }
  }

  /// Writes all bytes of a byte array.
  public func writeAll(_ bytes: [UInt8]) throws(SystemError) {
    try bytes.withUnsafeBytes { raw in Result { () throws(SystemError) in try writeAll(raw) } }
      .get()
  }

  /// Writes a string's UTF-8 bytes.
  public func writeAll(_ string: String) throws(SystemError) {
    try writeAll(Array(string.utf8))
  }

  /// `fsync(2)`.
  public func sync() throws(SystemError) {
    let fd = rawValue
    _ = try retryingInterrupts("fsync", path: path) { Glibc.fsync(fd) }
  }

  /// Reads everything from the current position to end of file (for small files and pipes).
  ///
  /// - Parameter limit: refuses files larger than this many bytes (`EFBIG`).
  public func readToEnd(limit: Int = 1 << 20) throws(SystemError) -> [UInt8] {
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let n = try chunk.withUnsafeMutableBytes { raw in
        Result { () throws(SystemError) in try read(into: raw) ?? 0 }
      }.get()
      if n == 0 { return out }
      out.append(contentsOf: chunk[0..<n])
      if out.count > limit { throw SystemError(.fileTooLarge, operation: "read", path: path) }
    }
  }
}
