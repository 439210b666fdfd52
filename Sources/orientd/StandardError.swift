import Glibc

/// Writes `message` and a newline to stderr (fd 2) unbuffered; C's `stderr` global is not
/// usable under strict concurrency.
func printError(_ message: String) {
  var bytes = Array(message.utf8)
  bytes.append(0x0A)
  var done = 0
  while done < bytes.count {
    let n = bytes[done...].withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    if n < 0 && errno == EINTR { continue }
    if n <= 0 { return }
    done += n
  }
}
