import Glibc
import SystemKit

/// Something `orientd calibrate --write/--revert` could not do, with the exit status to use.
typealias InstallError = StatusError

/// Files and programs for installing a calibration: atomic writes, `systemd-hwdb update`,
/// `udevadm trigger`.
enum CalibrationInstall {
  /// The first line of every file (and config block) `orientd calibrate` writes; `--revert`
  /// removes only what carries it.
  static let marker = "# Written by orientd calibrate"
  /// Where the config block starts and ends.
  static let beginMarker = "# BEGIN orientd calibrate"
  /// The end of the config block.
  static let endMarker = "# END orientd calibrate"

  /// The contents of `path`, or `nil` when it does not exist.
  ///
  /// - Throws: `InstallError` (74) when it exists but cannot be read.
  static func read(_ path: String) throws(InstallError) -> String? {
    guard access(path, F_OK) == 0 else { return nil }
    do {
      let file = try FileDescriptor(path: path)
      return String(decoding: try file.readToEnd(limit: 4 << 20), as: UTF8.self)
    } catch {
      throw InstallError(.ioError, "cannot read \(path): \(error)")
    }
  }

  /// Checks that a file can be created in `path`'s directory (creating the directory if
  /// needed), by creating and removing a scratch file, so that a read-only /etc or a missing
  /// permission is found before anything else is done.
  static func checkWritable(_ path: String) throws(InstallError) {
    let directory = AtomicFileWriter.parentDirectory(of: path)
    let made = AtomicFileWriter.makeDirectories(directory, permissions: 0o755)
    guard made == 0 else {
      throw InstallError(
        .cannotCreate, "cannot create \(directory): \(String(cString: strerror(made)))")
    }
    let probe = "\(directory)/.orientd-calibrate-probe-\(getpid())"
    let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      let reason = String(cString: strerror(errno))
      throw InstallError(
        .cannotCreate,
        "cannot write in \(directory): \(reason)"
          + (geteuid() != 0 ? " (run as root: sudo orientd calibrate --write)" : ""))
    }
    close(fd)
    unlink(probe)
  }

  /// Replaces `path` with `text` atomically (`AtomicFileWriter`: written, synced, then renamed
  /// over it), so that readers see the old or the new file, never half of one.
  ///
  /// - Throws: `InstallError` (73) naming the path and the reason; `path` is left as it was.
  static func writeAtomically(_ path: String, _ text: String, mode: mode_t = 0o644)
    throws(InstallError)
  {
    do {
      try AtomicFileWriter.write(
        Array(text.utf8), to: path, overwrite: true, permissions: mode, makeFolders: true,
        tag: "orientd")
    } catch {
      throw InstallError(.cannotCreate, "cannot write \(path): \(error)")
    }
  }

  /// Removes `path`.
  static func remove(_ path: String) throws(InstallError) {
    guard unlink(path) == 0 || errno == ENOENT else {
      throw InstallError(
        .cannotCreate, "cannot remove \(path): \(String(cString: strerror(errno)))")
    }
  }

  /// The absolute path of `program` found in `PATH`, or `nil`.
  static func locate(_ program: String) -> String? {
    if program.contains("/") { return access(program, X_OK) == 0 ? program : nil }
    let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin:/usr/sbin:/sbin"
    for directory in path.split(separator: ":") where !directory.isEmpty {
      let candidate = "\(directory)/\(program)"
      if access(candidate, X_OK) == 0 { return candidate }
    }
    return nil
  }

  /// Runs `argv` (the program looked up in `PATH`), waits, and returns its exit status and
  /// its stdout and stderr (in that order, trailing newlines removed); 127 when it is not on
  /// `PATH`, 126 when it cannot be started otherwise (the shell's codes).
  static func run(_ argv: [String]) -> (status: Int32, output: String) {
    do {
      let outcome = try ProgramRunner.run(argv)
      var text = outcome.output + outcome.errors
      while text.last == "\n" { text.removeLast() }
      return (outcome.status, text)
    } catch  where error.code == .noSuchFileOrDirectory {
      return (127, "\(argv.first ?? "?"): not found in PATH")
    } catch {
      return (126, error.description)
    }
  }

  /// `systemd-hwdb update`.
  static func updateHwdb() throws(InstallError) {
    let result = run(["systemd-hwdb", "update"])
    guard result.status == 0 else {
      throw InstallError(
        .cannotCreate,
        "systemd-hwdb update failed (exit \(result.status))"
          + (result.output.isEmpty ? "" : ": \(result.output)"))
    }
  }

  /// `udevadm control --reload`, then `udevadm trigger --action=change` on one device (a
  /// syspath), or on every IIO device, then `udevadm settle`.
  ///
  /// - Returns: what failed, or `nil`.
  static func trigger(_ syspath: String?) -> String? {
    // udevd looks for a changed hwdb.bin at most every 3 s, when events come: make it re-read
    // the database now, so the triggered event already sees the new entry.
    let reload = run(["udevadm", "control", "--reload"])
    if reload.status != 0 {
      return "udevadm control --reload failed (exit \(reload.status)): \(reload.output)"
    }
    let target = syspath.map { [$0] } ?? ["--subsystem-match=iio"]
    let result = run(["udevadm", "trigger", "--action=change"] + target)
    if result.status != 0 {
      return "udevadm trigger failed (exit \(result.status)): \(result.output)"
    }
    _ = run(["udevadm", "settle", "--timeout=10"])
    return nil
  }

  /// The config file text with the block this tool wrote removed (and `nil` if none was).
  static func removingBlock(_ text: String) -> String? {
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let begin = lines.firstIndex(where: { $0.hasPrefix(beginMarker) }),
      let end = lines[begin...].firstIndex(where: { $0.hasPrefix(endMarker) })
    else { return nil }
    var upper = end + 1
    // The blank line written before the block goes with it.
    var lower = begin
    if lower > 0, lines[lower - 1].isEmpty { lower -= 1 }
    if lower == 0, upper < lines.count, lines[upper].isEmpty { upper += 1 }
    lines.removeSubrange(lower..<upper)
    return lines.joined(separator: "\n")
  }
}
