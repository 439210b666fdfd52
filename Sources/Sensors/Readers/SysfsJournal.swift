import OrientLog
import SystemKit

/// Writes sysfs attributes and remembers what they held, so that `restore()` puts the device
/// back exactly as it was found (in reverse order: the buffer is disabled before the scan
/// elements, trigger and frequency it depends on are put back).
///
/// Owned by one sampler on the event loop.
final class SysfsJournal {
  private var entries: [(path: String, original: String, written: String)] = []
  private let logger: Logger

  init(logger: Logger) {
    self.logger = logger
  }

  /// Sets `path` to `value` unless it already holds it; remembers the first original value.
  ///
  /// Values are written with a trailing newline, as `echo` does; every IIO attribute parser
  /// accepts it, and it makes an empty value (detaching a trigger) a real one-byte write.
  ///
  /// - Returns: whether a write happened.
  /// - Throws: `SystemError` from reading or writing the attribute.
  @discardableResult
  func set(_ path: String, _ value: String) throws(SystemError) -> Bool {
    let current = try Sysfs.read(path)
    let index = entries.firstIndex { $0.path == path }
    if let index { entries[index].written = value }
    if current == value { return false }
    if index == nil { entries.append((path, current, value)) }
    logger.debug("set \(path) = \(value) (was \(current.isEmpty ? "empty" : current))")
    try Sysfs.write(path, value + "\n")
    return true
  }

  /// Writes every value set again, oldest first, except `skipping` (the buffer's `enable`,
  /// which the caller switches around this): a device that lost its configuration (a sensor
  /// hub powered up after a system resume) gets it back, and a hub that waits for its feature
  /// report to be written before it reports again gets that write.
  ///
  /// - Throws: the first `SystemError`; the values before it are written.
  func rewrite(skipping: Set<String> = []) throws(SystemError) {
    for entry in entries where !skipping.contains(entry.path) {
      try Sysfs.write(entry.path, entry.written + "\n")
    }
    logger.debug("wrote again: \(entries.map(\.path).filter { !skipping.contains($0) })")
  }

  /// Writes every original value back, newest change first, and forgets them. Failures are
  /// logged, not thrown: after an unplug every write fails and that is expected.
  func restore(deviceGone: Bool = false) {
    for entry in entries.reversed() {
      do {
        try Sysfs.write(entry.path, entry.original + "\n")
        logger.debug("restored \(entry.path) = \(entry.original)")
      } catch {
        if deviceGone || error.isDeviceGone {
          logger.debug("cannot restore \(entry.path): device gone")
        } else {
          logger.warning("cannot restore \(entry.path) to \"\(entry.original)\": \(error)")
        }
      }
    }
    entries.removeAll()
  }
}
