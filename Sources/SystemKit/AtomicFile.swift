import CLinuxShims
import Glibc

/// Writes files so that a reader never sees a partial one and an existing file is never
/// replaced unless asked: the one atomic writer of the project (orientcam's photos and layouts,
/// `orientd calibrate`'s hwdb and configuration files, `orientd rotate`'s lock state).
///
/// The data goes into an unnamed `O_TMPFILE` in the target folder (or, where the filesystem
/// lacks it, a hidden `.name.TAG-PID-XXXXXX` file), is flushed with `fsync`, and then gets its
/// name in one step: `linkat(2)`, which fails instead of replacing an existing file; on
/// filesystems without hard links (vfat, exfat: `EPERM`) `renameat2(2)` with
/// `RENAME_NOREPLACE`, which fails the same way; or with `--force` `rename(2)`, which replaces it
/// atomically. The folder is synced afterwards, and a failure there is reported, not ignored. A
/// failure at any step (full disk, I/O error, killed process) leaves no file under the name.
public enum AtomicFileWriter {
  /// Why a write failed, before the user-facing message is made.
  public struct Failure: Error, Sendable, CustomStringConvertible {
    /// The step that failed.
    public enum Step: String, Sendable, CustomStringConvertible {
      /// Creating the temporary file (or making its folder).
      case create
      /// Writing the data.
      case write
      /// `fsync(2)` of the data.
      case fsync
      /// Naming it without replacing (`linkat(2)`, `renameat2(2)`): `EEXIST` means taken.
      case link
      /// `rename(2)` over the old file.
      case rename
      /// `fsync(2)` of the folder.
      case syncFolder = "sync folder"

      /// The step's name in messages.
      public var description: String { rawValue }
    }

    /// The errno.
    public var errno: Int32
    /// The step.
    public var step: Step
    /// Whether the file is there under its name all the same (`--force` replaced the old one,
    /// then syncing the folder failed): written, but perhaps not durable.
    public var isWritten = false

    /// Creates a failure.
    public init(errno: Int32, step: Step, isWritten: Bool = false) {
      self.errno = errno
      self.step = step
      self.isWritten = isWritten
    }

    /// `write failed: No space left on device`.
    public var description: String { "\(step) failed: \(String(cString: strerror(errno)))" }
  }

  /// Writes `bytes` to `path`.
  ///
  /// - Parameters:
  ///   - overwrite: replace an existing file (`--force`).
  ///   - permissions: the new file's mode.
  ///   - makeFolders: create the missing folders first (mode 0755; `folderPermissions`).
  ///   - tag: the program's name in a named temporary file (`.NAME.TAG-PID-XXXXXX`), so that
  ///     `removeStaleTemporaries(in:tag:)` finds what a killed writer left.
  ///   - unnamed: try `O_TMPFILE` first (tests pass `false` to exercise the named fallback).
  /// - Throws: `Failure`; `EEXIST` from step `link` means the name is taken.
  public static func write(
    _ bytes: [UInt8], to path: String, overwrite: Bool, permissions: mode_t = 0o644,
    makeFolders: Bool = false, folderPermissions: mode_t = 0o755, tag: String = "orientcam",
    unnamed: Bool = true
  ) throws(Failure) {
    let directory = parentDirectory(of: path)
    if makeFolders {
      let code = makeDirectories(directory, permissions: folderPermissions)
      guard code == 0 else { throw Failure(errno: code, step: .create) }
    }
    var temporary: String?
    let fd: FileDescriptor
    do throws(SystemError) {
      guard unnamed else { throw SystemError(errno: EOPNOTSUPP, operation: "open") }
      fd = try FileDescriptor(
        path: directory, options: [.writeOnly, .temporaryFile], permissions: permissions)
    } catch {
      guard [EOPNOTSUPP, EISDIR, EINVAL].contains(error.code.rawValue) else {
        throw Failure(errno: error.code.rawValue, step: .create)
      }
      // No O_TMPFILE here: a named temporary file beside the target.
      let base = path.split(separator: "/").last.map(String.init) ?? "photo"
      // The pid in the name lets a later run remove it if this process is killed before it
      // can (`removeStaleTemporaries`).
      var template = Array("\(directory)/.\(base).\(tag)-\(getpid())-XXXXXX".utf8CString)
      let raw = mkstemp(&template)
      guard raw >= 0 else { throw Failure(errno: errno, step: .create) }
      let name = String(
        decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      fchmod(raw, permissions)
      temporary = name
      fd = FileDescriptor(owning: raw, path: name)
    }
    func cleanUp() { if let temporary { unlink(temporary) } }
    do {
      try fd.writeAll(bytes)
    } catch {
      cleanUp()
      throw Failure(errno: error.code.rawValue, step: .write)
    }
    do {
      try fd.sync()
    } catch {
      cleanUp()
      throw Failure(errno: error.code.rawValue, step: .fsync)
    }
    if let temporary {
      if overwrite {
        guard rename(temporary, path) == 0 else {
          let code = errno
          cleanUp()
          throw Failure(errno: code, step: .rename)
        }
      } else {
        let (code, moved) = nameWithoutReplacing(temporary, path)
        if !moved { cleanUp() }  // linked, or failed: the temporary name is still there
        guard code == 0 else { throw Failure(errno: code, step: .link) }
      }
    } else {
      try name(fd, at: path, directory: directory, overwrite: overwrite, tag: tag)
    }
    let synced = syncDirectory(directory)
    guard synced == 0 else {
      // The data is durable but its name may not be. Without --force, take the name back so
      // that a failure means no new file; with --force the old photo is gone either way, so
      // the new one stays and the error says it may not survive a crash.
      if !overwrite { unlink(path) }
      throw Failure(errno: synced, step: .syncFolder, isWritten: overwrite)
    }
  }

  /// Gives the named temporary file `from` the name `to` unless `to` exists; 0 or an errno.
  ///
  /// `link(2)`; where the filesystem has no hard links (`EPERM` on vfat, exfat; `ENOSYS`,
  /// `EOPNOTSUPP` elsewhere) `renameat2(2)` with `RENAME_NOREPLACE`; where that flag is not
  /// supported either (`EINVAL`), a check for the name followed by `rename(2)`, which leaves a
  /// window in which another program creating the same name would lose its file.
  static func nameWithoutReplacing(_ from: String, _ to: String) -> (
    errno: Int32, moved: Bool
  ) {
    if link(from, to) == 0 { return (0, false) }
    let linkError = errno
    guard [EPERM, ENOSYS, EOPNOTSUPP].contains(linkError) else { return (linkError, false) }
    let renameError = PathOperations.renameWithoutReplacing(from, to)
    if renameError == 0 { return (0, true) }
    guard renameError == EINVAL || renameError == ENOSYS else { return (renameError, false) }
    var status = stat()
    if lstat(to, &status) == 0 { return (EEXIST, false) }
    return rename(from, to) == 0 ? (0, true) : (errno, false)
  }

  /// Removes the hidden temporary files (`.NAME.TAG-PID-...`) that a writer killed while
  /// writing left in `directory`: only those whose process no longer exists (`kill(pid,
  /// 0)` says `ESRCH`), so a photo another orientcam is writing right now is never touched
  /// (unless that orientcam runs in another pid namespace sharing the folder, where its pid
  /// means nothing here). Unnamed `O_TMPFILE` files need none of this: the kernel frees them
  /// with the process.
  ///
  /// - Returns: the names removed.
  @discardableResult
  public static func removeStaleTemporaries(in directory: String, tag: String = "orientcam")
    -> [String]
  {
    guard let dir = opendir(directory) else { return [] }
    defer { closedir(dir) }
    var removed: [String] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      guard name.hasPrefix("."), let pid = writerPID(name, tag: tag), pid != getpid(),
        kill(pid, 0) != 0, errno == ESRCH
      else { continue }
      if unlink("\(directory)/\(name)") == 0 { removed.append(name) }
    }
    return removed
  }

  /// `fsync(2)` of a folder; 0 or an errno. Filesystems that cannot sync a folder (`EINVAL`)
  /// count as synced.
  static func syncDirectory(_ directory: String) -> Int32 {
    let dir: FileDescriptor
    do { dir = try FileDescriptor(path: directory, options: [.directory]) } catch {
      return error.code.rawValue
    }
    do { try dir.sync() } catch {
      return error.code.rawValue == EINVAL ? 0 : error.code.rawValue
    }
    return 0
  }

  /// The pid in a temporary name `.NAME.TAG-PID-XXXXXX` (the last `.TAG-`).
  static func writerPID(_ name: String, tag: String) -> pid_t? {
    let bytes = Array(name.utf8)
    let marker = Array(".\(tag)-".utf8)
    guard bytes.count > marker.count else { return nil }
    for start in stride(from: bytes.count - marker.count, through: 0, by: -1)
    where bytes[start..<(start + marker.count)].elementsEqual(marker) {
      let rest = bytes[(start + marker.count)...]
      guard let dash = rest.firstIndex(of: UInt8(ascii: "-")) else { return nil }
      guard let pid = pid_t(String(decoding: rest[..<dash], as: UTF8.self)), pid > 0 else {
        return nil
      }
      return pid
    }
    return nil
  }

  /// Gives an `O_TMPFILE` descriptor a name.
  private static func name(
    _ fd: FileDescriptor, at path: String, directory: String, overwrite: Bool, tag: String
  )
    throws(Failure)
  {
    func linkTo(_ target: String) -> Int32 {
      // Through /proc (needs no privilege); AT_EMPTY_PATH as the fallback where /proc is
      // missing (needs CAP_DAC_READ_SEARCH).
      if linkat(AT_FDCWD, "/proc/self/fd/\(fd.rawValue)", AT_FDCWD, target, AT_SYMLINK_FOLLOW) == 0
      {
        return 0
      }
      let first = errno
      if first == ENOENT && access("/proc/self/fd", F_OK) != 0 {
        return linkat(fd.rawValue, "", AT_FDCWD, target, PathOperations.atEmptyPath) == 0
          ? 0 : errno
      }
      return first
    }
    if !overwrite {
      let code = linkTo(path)
      guard code == 0 else { throw Failure(errno: code, step: .link) }
      return
    }
    // Replacing: link under a unique hidden name, then rename over the target atomically.
    let base = path.split(separator: "/").last.map(String.init) ?? "photo"
    for attempt in 0..<100 {
      let hidden = "\(directory)/.\(base).\(tag)-\(getpid())-\(attempt)"
      let code = linkTo(hidden)
      if code == EEXIST { continue }
      guard code == 0 else { throw Failure(errno: code, step: .link) }
      guard rename(hidden, path) == 0 else {
        let failed = errno
        unlink(hidden)
        throw Failure(errno: failed, step: .rename)
      }
      return
    }
    throw Failure(errno: EEXIST, step: .link)
  }

  /// Creates `directory` and its missing parents; 0 or an errno.
  public static func makeDirectories(_ directory: String, permissions: mode_t) -> Int32 {
    var prefix = directory.hasPrefix("/") ? "" : "."
    for part in directory.split(separator: "/") {
      prefix += "/\(part)"
      if mkdir(prefix, permissions) != 0 && errno != EEXIST { return errno }
    }
    return 0
  }

  /// The folder part of a path (`.` for a bare name).
  public static func parentDirectory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let dir = String(path[..<slash])
    return dir.isEmpty ? "/" : dir
  }
}
