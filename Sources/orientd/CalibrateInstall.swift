import Glibc
import SystemKit

/// Something `orientd calibrate --write/--revert` could not do, with the exit status to use.
struct InstallError: Error, CustomStringConvertible {
  /// The sysexits status.
  var status: ExitStatus
  /// What went wrong, where, and what to do.
  var message: String

  /// Creates an error.
  init(_ status: ExitStatus, _ message: String) {
    self.status = status
    self.message = message
  }

  /// The message.
  var description: String { message }
}

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
    let directory = parent(of: path)
    try makeDirectories(directory)
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

  /// Replaces `path` with `text` atomically: a temporary file in the same directory, written,
  /// synced and renamed over it, so that readers see the old or the new file, never half of
  /// one.
  ///
  /// - Throws: `InstallError` (73) naming the path and the reason; the temporary file is
  ///   removed and `path` left as it was.
  static func writeAtomically(_ path: String, _ text: String, mode: mode_t = 0o644)
    throws(InstallError)
  {
    try makeDirectories(parent(of: path))
    let temporary = "\(parent(of: path))/.\(baseName(of: path)).\(getpid()).tmp"
    do {
      let file = try FileDescriptor(
        path: temporary, options: [.writeOnly, .create, .exclusive], permissions: mode)
      do {
        try file.writeAll(text)
        try file.sync()
      } catch {
        file.close()
        unlink(temporary)
        throw error
      }
      if let error = file.close() { throw error }
    } catch {
      unlink(temporary)
      throw InstallError(.cannotCreate, "cannot write \(path): \(error)")
    }
    guard rename(temporary, path) == 0 else {
      let reason = String(cString: strerror(errno))
      unlink(temporary)
      throw InstallError(.cannotCreate, "cannot replace \(path): \(reason)")
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
  /// its combined stdout and stderr.
  static func run(_ argv: [String]) -> (status: Int32, output: String) {
    guard let program = argv.first, let path = locate(program) else {
      return (127, "\(argv.first ?? "?"): not found in PATH")
    }
    var pipeFDs: [Int32] = [-1, -1]
    guard pipe(&pipeFDs) == 0 else {
      return (126, "pipe: \(String(cString: strerror(errno)))")
    }
    // Neither end may leak into the child beyond its dup2'd stdout/stderr.
    for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
    posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 2)
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    var cArguments: [UnsafeMutablePointer<CChar>?] = ([path] + argv.dropFirst()).map {
      strdup($0)
    }
    cArguments.append(nil)
    defer { for pointer in cArguments { free(pointer) } }
    // The event loop blocks SIGINT/SIGTERM for its signalfd; the child must not inherit that.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, path, &actions, &attributes, cArguments, environ)
    close(pipeFDs[1])
    guard spawned == 0 else {
      close(pipeFDs[0])
      return (126, "\(path): \(String(cString: strerror(spawned)))")
    }
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let n = buffer.withUnsafeMutableBytes { Glibc.read(pipeFDs[0], $0.baseAddress, $0.count) }
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { break }
      if output.count < 65536 { output += buffer[0..<n] }
    }
    close(pipeFDs[0])
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      if errno != EINTR { return (126, "waitpid: \(String(cString: strerror(errno)))") }
    }
    let exited = (status & 0x7f) == 0
    let code = exited ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    var text = String(decoding: output, as: UTF8.self)
    while text.last == "\n" { text.removeLast() }
    return (code, text)
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

  private static func parent(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let head = String(path[..<slash])
    return head.isEmpty ? "/" : head
  }

  private static func baseName(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return path }
    return String(path[path.index(after: slash)...])
  }

  private static func makeDirectories(_ directory: String) throws(InstallError) {
    var current = directory.hasPrefix("/") ? "" : "."
    for part in directory.split(separator: "/") {
      current += "/\(part)"
      if mkdir(current, 0o755) != 0 && errno != EEXIST {
        throw InstallError(
          .cannotCreate, "cannot create \(current): \(String(cString: strerror(errno)))")
      }
    }
  }
}
