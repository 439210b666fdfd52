import Glibc
import Orientation
import SystemKit

/// An output file name template (`-o`): strftime(3) fields (`%Y%m%d-%H%M%S`), `{n}` (a counter)
/// and `{orientation}` (normal, left-up, ...). `%%`, `{{` and `}}` are literal.
public struct OutputTemplate: Equatable, Sendable {
  enum Part: Equatable, Sendable {
    case text(String)  // passed through strftime
    case counter
    case orientation
  }

  let parts: [Part]
  /// The template as given.
  public let text: String

  /// The default: `%Y%m%d-%H%M%S-{n}.jpg` in the current folder.
  public static let standard = OutputTemplate(
    text: "%Y%m%d-%H%M%S-{n}.jpg", parts: [.text("%Y%m%d-%H%M%S-"), .counter, .text(".jpg")])

  private init(text: String, parts: [Part]) {
    self.text = text
    self.parts = parts
  }

  /// Parses a template.
  ///
  /// - Throws: `CaptureError.usage` for an unknown `{field}`, an unclosed brace or an empty
  ///   template.
  public init(_ text: String) throws(CaptureError) {
    guard !text.isEmpty, !text.hasSuffix("/") else {
      throw CaptureError(.usage, "-o needs a file name template, e.g. photos/%Y%m%d-{n}.jpg")
    }
    self.text = text
    var parts: [Part] = []
    var literal = ""
    let chars = Array(text)
    var i = 0
    func flush() {
      if !literal.isEmpty { parts.append(.text(literal)) }
      literal = ""
    }
    while i < chars.count {
      let c = chars[i]
      if c == "{" && i + 1 < chars.count && chars[i + 1] == "{" {
        literal.append("{")
        i += 2
      } else if c == "}" && i + 1 < chars.count && chars[i + 1] == "}" {
        literal.append("}")
        i += 2
      } else if c == "{" {
        guard let close = chars[i...].firstIndex(of: "}") else {
          throw CaptureError(.usage, "-o \(text): unclosed \"{\" (write {{ for a literal brace)")
        }
        let name = String(chars[(i + 1)..<close])
        switch name {
        case "n":
          flush()
          parts.append(.counter)
        case "orientation":
          flush()
          parts.append(.orientation)
        default:
          throw CaptureError(
            .usage, "-o \(text): unknown field {\(name)}; the fields are {n} and {orientation}")
        }
        i = close + 1
      } else if c == "}" {
        throw CaptureError(.usage, "-o \(text): stray \"}\" (write }} for a literal brace)")
      } else {
        literal.append(c)
        i += 1
      }
    }
    flush()
    self.parts = parts
  }

  /// Whether the name has a `{n}` counter (then existing names are skipped, not overwritten).
  public var hasCounter: Bool { parts.contains(.counter) }

  /// The file name for photo number `counter`, taken at `realtimeNanoseconds` (local time) in
  /// `orientation`.
  public func expand(counter: Int, orientation: Orientation, realtimeNanoseconds: Int64) -> String {
    var seconds = time_t(realtimeNanoseconds / 1_000_000_000)
    var local = tm()
    localtime_r(&seconds, &local)
    var out = ""
    for part in parts {
      switch part {
      case .counter: out += String(counter)
      case .orientation: out += orientation.rawValue
      case .text(let format): out += OutputTemplate.strftime(format, &local)
      }
    }
    return out
  }

  static func strftime(_ format: String, _ time: inout tm) -> String {
    guard format.contains("%") else { return format }
    var size = 256 + format.utf8.count * 8
    while size < 1 << 16 {
      var buffer = [CChar](repeating: 0, count: size)
      let n = Glibc.strftime(&buffer, size, format, &time)
      if n > 0 || format.isEmpty {
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
      }
      size *= 4  // 0 can mean "did not fit"
    }
    return format
  }
}

/// Writes files so that a reader never sees a partial photo and an existing photo is never
/// replaced unless asked.
///
/// The data goes into an unnamed `O_TMPFILE` in the target folder (or, where the filesystem
/// lacks it, a hidden `.name.orientcam-XXXXXX` file), is flushed with `fsync`, and then gets its
/// name in one step: `linkat(2)`, which fails instead of replacing an existing file, or with
/// `--force` `rename(2)`, which replaces it atomically. The folder is synced afterwards. A
/// failure at any step (full disk, I/O error, killed process) leaves no file under the name.
public enum AtomicFileWriter {
  /// Why a write failed, before the user-facing message is made.
  public struct Failure: Error, Sendable {
    /// The errno.
    public var errno: Int32
    /// The step: `create`, `write`, `fsync`, `link`, `rename`.
    public var step: String
  }

  /// Writes `bytes` to `path`.
  ///
  /// - Parameters:
  ///   - overwrite: replace an existing file (`--force`).
  ///   - unnamed: try `O_TMPFILE` first (tests pass `false` to exercise the named fallback).
  /// - Throws: `Failure`; `EEXIST` from step `link` means the name is taken.
  public static func write(
    _ bytes: [UInt8], to path: String, overwrite: Bool, unnamed: Bool = true
  ) throws(Failure) {
    let directory = parentDirectory(of: path)
    var temporary: String?
    let fd: FileDescriptor
    do throws(SystemError) {
      guard unnamed else { throw SystemError(errno: EOPNOTSUPP, operation: "open") }
      fd = try FileDescriptor(
        path: directory, options: [.writeOnly, .temporaryFile], permissions: 0o644)
    } catch {
      guard [EOPNOTSUPP, EISDIR, EINVAL].contains(error.errno) else {
        throw Failure(errno: error.errno, step: "create")
      }
      // No O_TMPFILE here: a named temporary file beside the target.
      let base = path.split(separator: "/").last.map(String.init) ?? "photo"
      var template = Array("\(directory)/.\(base).orientcam-XXXXXX".utf8CString)
      let raw = mkstemp(&template)
      guard raw >= 0 else { throw Failure(errno: errno, step: "create") }
      let name = String(
        decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      fchmod(raw, 0o644)
      temporary = name
      fd = FileDescriptor(owning: raw, path: name)
    }
    func cleanUp() { if let temporary { unlink(temporary) } }
    do {
      try fd.writeAll(bytes)
      try fd.sync()
    } catch {
      cleanUp()
      throw Failure(errno: error.errno, step: error.operation == "fsync" ? "fsync" : "write")
    }
    if let temporary {
      if overwrite {
        guard rename(temporary, path) == 0 else {
          let code = errno
          cleanUp()
          throw Failure(errno: code, step: "rename")
        }
      } else {
        let rc = link(temporary, path)
        let code = errno
        cleanUp()
        guard rc == 0 else { throw Failure(errno: code, step: "link") }
      }
    } else {
      try name(fd, at: path, directory: directory, overwrite: overwrite)
    }
    if let dir = try? FileDescriptor(path: directory, options: [.directory]) {
      _ = try? dir.sync()
    }
  }

  /// Gives an `O_TMPFILE` descriptor a name.
  private static func name(
    _ fd: FileDescriptor, at path: String, directory: String, overwrite: Bool
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
        let emptyPath: Int32 = 0x1000  // AT_EMPTY_PATH, hidden by glibc without _GNU_SOURCE
        return linkat(fd.rawValue, "", AT_FDCWD, target, emptyPath) == 0 ? 0 : errno
      }
      return first
    }
    if !overwrite {
      let code = linkTo(path)
      guard code == 0 else { throw Failure(errno: code, step: "link") }
      return
    }
    // Replacing: link under a unique hidden name, then rename over the target atomically.
    let base = path.split(separator: "/").last.map(String.init) ?? "photo"
    for attempt in 0..<100 {
      let hidden = "\(directory)/.\(base).orientcam-\(getpid())-\(attempt)"
      let code = linkTo(hidden)
      if code == EEXIST { continue }
      guard code == 0 else { throw Failure(errno: code, step: "link") }
      guard rename(hidden, path) == 0 else {
        let failed = errno
        unlink(hidden)
        throw Failure(errno: failed, step: "rename")
      }
      return
    }
    throw Failure(errno: EEXIST, step: "link")
  }

  /// The folder part of a path (`.` for a bare name).
  public static func parentDirectory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let dir = String(path[..<slash])
    return dir.isEmpty ? "/" : dir
  }
}
