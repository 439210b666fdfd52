import Glibc

/// The process's standard output or standard error, written a whole line at a time.
///
/// Unbuffered `write(2)` on fd 1 or 2: C's `stdout`/`stderr` globals are not usable under
/// strict concurrency, and a pipe reader (`orientd --watch | ...`) must see each line at once.
/// A line is one `write(2)` when the pipe takes it whole, so concurrent writers do not
/// interleave within it.
public enum StandardStream: Int32, Sendable {
  /// fd 1.
  case output = 1
  /// fd 2.
  case error = 2

  /// Writes `text` and a newline, retrying `EINTR` and short writes.
  ///
  /// - Returns: false when the stream is closed (`EPIPE`) or cannot be written.
  @discardableResult
  public func writeLine(_ text: String) -> Bool {
    var line = text
    line += "\n"
    let fd = rawValue
    return line.withUTF8 { bytes in
      var done = 0
      while done < bytes.count {
        let n = Glibc.write(fd, bytes.baseAddress.map { $0 + done }, bytes.count - done)
        if n < 0 && Glibc.errno == EINTR { continue }
        if n <= 0 { return false }
        done += n
      }
      return true
    }
  }
}
