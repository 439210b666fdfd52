import Glibc

/// A sysfs attribute kept open and re-read with `pread(2)` at offset 0, which makes sysfs ask
/// the driver again: a polled reading costs one system call and no path lookup.
///
/// Real sysfs never replaces an attribute's node: the open file is the attribute for as long
/// as the device exists. An emulated sysfs may: umockdev's `umockdev_testbed_set_attribute()`
/// (what iio-sensor-proxy's tests and distributions' tests change values with) writes a new
/// file and renames it over the old one, and a reader that keeps the old one open reads its
/// stale value for ever. So at most once per `checkInterval` a read first asks `fstat(2)`
/// whether the open file still has a name (`st_nlink` > 0); one that was renamed over or
/// removed is opened again from its path (a path that no longer exists is the device gone:
/// `ENOENT`). On real sysfs the check never finds anything; it costs one `fstat` per
/// attribute per interval, not per reading.
public final class SysfsAttribute {
  /// The attribute's path.
  public let path: String
  /// How often a read checks that the open file is still the one at `path`.
  public let checkInterval: Duration
  /// How many times the file was found replaced and opened again.
  public private(set) var reopenCount = 0
  private var file: FileDescriptor
  private var checkedAt: Int64
  private let intervalNanoseconds: Int64

  /// At most this often by default: a replaced value is read within a quarter of a second
  /// (plus one poll), and a sensor polled at 30 Hz pays one `fstat` per attribute for every
  /// seven or eight readings.
  public static let defaultCheckInterval: Duration = .milliseconds(250)

  /// Opens `path` for reading.
  ///
  /// - Throws: `SystemError` (operation `open`, with the path).
  public init(path: String, checkInterval: Duration = SysfsAttribute.defaultCheckInterval)
    throws(SystemError)
  {
    self.path = path
    self.checkInterval = checkInterval
    intervalNanoseconds = max(checkInterval.nanoseconds, 0)
    file = try FileDescriptor(path: path)
    checkedAt = Clock.monotonicNanoseconds()
  }

  /// Whether the attribute is open (`close()` was not called).
  public var isOpen: Bool { file.rawValue >= 0 }

  /// Reads the attribute from offset 0 into `buffer`; returns the byte count.
  ///
  /// - Throws: `SystemError`: the read's (`ENODEV` when the device went away, `EIO` from a
  ///   failing driver), or the reopen's when the file was replaced (`ENOENT` when nothing is at
  ///   `path` any more).
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
    let now = Clock.monotonicNanoseconds()
    if now - checkedAt >= intervalNanoseconds, isOpen {
      checkedAt = now
      try reopenIfReplaced()
    }
    return try file.pread(into: buffer, offset: 0)
  }

  /// Reads the attribute as text (up to 4096 bytes, trailing newlines and NULs removed).
  ///
  /// - Throws: `SystemError` as `read(into:)`.
  public func readText() throws(SystemError) -> String {
    var bytes = [UInt8](repeating: 0, count: 4096)
    let count = try bytes.withUnsafeMutableBytes { raw in
      Result { () throws(SystemError) in try read(into: raw) }
    }.get()
    var end = count
    while end > 0 && (bytes[end - 1] == 0x0A || bytes[end - 1] == 0) { end -= 1 }
    return String(decoding: bytes[0..<end], as: UTF8.self)
  }

  /// Closes the file; later reads fail with `EBADF`. Idempotent.
  public func close() { file.close() }

  /// Opens `path` again when the open file has no name left.
  private func reopenIfReplaced() throws(SystemError) {
    guard let links = try? file.linkCount(), links == 0 else { return }
    let fresh = try FileDescriptor(path: path)
    file.close()
    file = fresh
    reopenCount += 1
  }
}

extension FileDescriptor {
  /// The number of names the open file has (`st_nlink` from `fstat(2)`): 0 once it was
  /// removed or renamed over while open.
  ///
  /// - Throws: `SystemError` (operation `fstat`).
  public func linkCount() throws(SystemError) -> Int {
    var status = stat()
    let fd = rawValue
    _ = try retryingInterrupts("fstat", path: path) { fstat(fd, &status) }
    return Int(status.st_nlink)
  }
}
