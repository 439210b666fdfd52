import Glibc

/// Reading and writing small sysfs attribute files, the way the kernel expects them.
///
/// Each call opens, does one `read(2)`/`write(2)` and closes; use `FileDescriptor.pread` for
/// attributes read repeatedly on a hot path.
public enum Sysfs {
  /// Reads an attribute; returns its text without the trailing newline.
  ///
  /// - Throws: `SystemError` naming the path (`ENOENT` when the attribute does not exist,
  ///   `ENODEV` when the device went away, `EIO` from a failing driver).
  public static func read(_ path: String, limit: Int = 4096) throws(SystemError) -> String {
    let fd = try FileDescriptor(path: path)
    var buffer = [UInt8](repeating: 0, count: limit)
    let n = try buffer.withUnsafeMutableBytes { raw in
      Result { () throws(SystemError) in try fd.pread(into: raw, offset: 0) }
    }.get()
    var end = n
    while end > 0 && (buffer[end - 1] == 0x0A || buffer[end - 1] == 0) { end -= 1 }
    return String(decoding: buffer[0..<end], as: UTF8.self)
  }

  /// Reads an attribute, or returns `nil` if it does not exist or cannot be read.
  public static func readIfPresent(_ path: String) -> String? {
    try? read(path)
  }

  /// Writes `value` to an attribute in one `write(2)`, as sysfs requires.
  ///
  /// Opened with `O_TRUNC` like the shell's `echo 1 > attr`: sysfs ignores it, and an emulated
  /// attribute (a regular file in a umockdev testbed) then holds exactly the new value.
  public static func write(_ path: String, _ value: String) throws(SystemError) {
    let fd = try FileDescriptor(path: path, options: [.writeOnly, .truncate])
    try fd.writeAll(value)
  }

  /// Whether `path` exists (`access(2)` with `F_OK`).
  public static func exists(_ path: String) -> Bool {
    access(path, F_OK) == 0
  }

  /// The names in a directory (without `.` and `..`), sorted; empty if it cannot be read.
  public static func list(_ directory: String) -> [String] {
    guard let dir = opendir(directory) else { return [] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names.sorted()
  }
}

/// Time from the kernel's clocks.
public enum Clock {
  /// `CLOCK_MONOTONIC`: the time since an unspecified start (boot), for deadlines and
  /// intervals.
  public static func monotonic() -> Duration {
    .nanoseconds(read(CLOCK_MONOTONIC))
  }

  /// `CLOCK_MONOTONIC` in nanoseconds.
  public static func monotonicNanoseconds() -> Int64 {
    read(CLOCK_MONOTONIC)
  }

  /// `CLOCK_REALTIME` in nanoseconds since the Unix epoch.
  public static func realtimeNanoseconds() -> Int64 {
    read(CLOCK_REALTIME)
  }

  /// `YYYY-MM-DD HH:MM:SS.mmm` in the local time zone (localtime_r, strftime).
  public static func localTimestamp(_ nanoseconds: Int64) -> String {
    var seconds = time_t(nanoseconds / 1_000_000_000)
    var parts = tm()
    localtime_r(&seconds, &parts)
    var buffer = [CChar](repeating: 0, count: 64)
    let n = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S", &parts)
    let text = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let millis = (nanoseconds / 1_000_000) % 1000
    let padded = millis < 10 ? "00\(millis)" : (millis < 100 ? "0\(millis)" : "\(millis)")
    return "\(text).\(padded)"
  }

  private static func read(_ id: clockid_t) -> Int64 {
    var ts = timespec()
    clock_gettime(id, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
  }
}

extension Duration {
  /// The whole nanoseconds (rounded toward zero; saturates beyond ±292 years).
  public var nanoseconds: Int64 {
    let (seconds, attoseconds) = components
    let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    guard !overflow else { return seconds < 0 ? .min : .max }
    return scaled.addingReportingOverflow(attoseconds / 1_000_000_000).overflow
      ? (seconds < 0 ? .min : .max) : scaled + attoseconds / 1_000_000_000
  }

  /// The length in seconds, as a `Double` (for arithmetic and messages).
  public var seconds: Double {
    let (seconds, attoseconds) = components
    return Double(seconds) + Double(attoseconds) / 1e18
  }
}

extension timespec {
  /// A non-negative `Duration` as a `timespec` (`tv_nsec` below 10⁹).
  public init(_ duration: Duration) {
    let nanoseconds = max(duration.nanoseconds, 0)
    self.init(
      tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
  }
}
