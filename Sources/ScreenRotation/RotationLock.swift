import CLinuxShims
import Glibc
import SystemKit

/// The rotation lock: kept per user in `$XDG_STATE_HOME/orientd/rotation-lock` (default
/// `~/.local/state`), changed through the running `orientd rotate`'s control socket
/// `$XDG_RUNTIME_DIR/orientd-rotate.sock`, so that a key binding
/// (`orientd rotate --toggle-lock`) takes effect at once.
public enum RotationLock {
  /// A request on the control socket (one line).
  public enum Request: String, Sendable {
    /// Lock the rotation.
    case lock
    /// Unlock it (the running instance applies the current orientation).
    case unlock
    /// Lock if unlocked, unlock if locked.
    case toggle
    /// Only report the state.
    case status
  }

  /// The state file, from `environment` (`XDG_STATE_HOME`, else `HOME/.local/state`).
  public static func statePath(_ environment: [String: String]) -> String? {
    if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
      return "\(state)/orientd/rotation-lock"
    }
    guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
    return "\(home)/.local/state/orientd/rotation-lock"
  }

  /// The control socket, from `XDG_RUNTIME_DIR`.
  public static func socketPath(_ environment: [String: String]) -> String? {
    guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return nil }
    return "\(runtime)/orientd-rotate.sock"
  }

  /// Whether the saved state says locked (no file: unlocked).
  public static func load(_ path: String?) -> Bool {
    guard let path, let file = fopen(path, "r") else { return false }
    defer { fclose(file) }
    var buffer = [CChar](repeating: 0, count: 32)
    guard fgets(&buffer, 32, file) != nil else { return false }
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self).hasPrefix("locked")
  }

  /// Saves the state (creating the directory), replacing the file atomically.
  ///
  /// - Throws: `RotateError` (73) naming the path.
  public static func save(_ locked: Bool, to path: String) throws(RotateError) {
    do {
      try AtomicFileWriter.write(
        Array((locked ? "locked\n" : "unlocked\n").utf8), to: path, overwrite: true,
        makeFolders: true, folderPermissions: 0o700, tag: "orientd-rotate")
    } catch {
      let status: ExitStatus = error.step == .create ? .cannotCreate : .ioError
      throw RotateError(status, "cannot save the rotation lock to \(path): \(error)")
    }
  }

  /// Sends `request` to the running instance and returns its answer (`locked`/`unlocked`), or
  /// `nil` when none listens on `socketPath`.
  ///
  /// - Throws: `RotateError` (74) when the instance does not answer.
  public static func send(_ request: Request, socketPath: String) throws(RotateError) -> String? {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw RotateError(.osError, "cannot create a socket: \(errnoText())") }
    let descriptor = FileDescriptor(owning: fd, path: socketPath)
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    guard UnixAddress.connect(fd, to: socketPath) else {
      if errno == ENOENT || errno == ECONNREFUSED { return nil }
      throw RotateError(.ioError, "cannot connect to \(socketPath): \(errnoText())")
    }
    do {
      try descriptor.writeAll("\(request.rawValue)\n")
    } catch {
      throw RotateError(.ioError, "cannot write to \(socketPath): \(error)")
    }
    var answer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64)
    while !answer.contains(0x0A) {
      let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else { break }
      answer += chunk[0..<n]
    }
    let text = String(decoding: answer, as: UTF8.self).trimmingQuotes()
    guard text == "locked" || text == "unlocked" else {
      throw RotateError(.ioError, "orientd rotate on \(socketPath) answered '\(text)'")
    }
    return text
  }
}

/// The running instance's end of the control socket, on the event loop.
public final class LockServer {
  private let listener: FileDescriptor
  private var watch: EventLoop.Watch?
  private var clients: [Int32: (FileDescriptor, EventLoop.Watch, [UInt8])] = [:]
  private let loop: EventLoop
  /// The socket path.
  public let path: String
  /// Called with each request; returns whether the rotation is locked afterwards.
  public var handler: ((RotationLock.Request) -> Bool)?

  /// Listens on `path`; a stale socket of a dead instance is replaced, a live one is an error.
  ///
  /// - Throws: `RotateError` (69 another instance runs, 71 the socket cannot be made).
  public init(path: String, loop: EventLoop) throws(RotateError) {
    self.path = path
    self.loop = loop
    if (try? RotationLock.send(.status, socketPath: path)) ?? nil != nil {
      throw RotateError(
        .unavailable, "another orientd rotate is running (it answers on \(path)); stop it first")
    }
    unlink(path)
    let fd = socket(
      AF_UNIX,
      Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard fd >= 0 else { throw RotateError(.osError, "cannot create a socket: \(errnoText())") }
    listener = FileDescriptor(owning: fd, path: path)
    let bound = UnixAddress.with(path) { bind(fd, $0, $1) }
    guard bound == 0, listen(fd, 8) == 0 else {
      throw RotateError(.osError, "cannot listen on \(path): \(errnoText())")
    }
    chmod(path, 0o600)
    do {
      watch = try loop.watch(fd, for: .readable) { [weak self] _ in self?.accept() }
    } catch {
      throw RotateError(.osError, "cannot watch \(path): \(error)")
    }
  }

  deinit {
    watch?.cancel()
    for (_, client) in clients { client.1.cancel() }
    unlink(path)
  }

  private func accept() {
    while true {
      let fd = orient_accept_cloexec(listener.rawValue)
      guard fd >= 0 else { return }
      let descriptor = FileDescriptor(owning: fd, path: path)
      guard
        let watch = try? loop.watch(fd, for: .readable, { [weak self] _ in self?.readable(fd) })
      else { continue }
      clients[fd] = (descriptor, watch, [])
    }
  }

  private func readable(_ fd: Int32) {
    guard var client = clients[fd] else { return }
    var chunk = [UInt8](repeating: 0, count: 64)
    let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
    if n < 0 && (errno == EAGAIN || errno == EINTR) { return }
    if n > 0 { client.2 += chunk[0..<n] }
    if n <= 0 || client.2.contains(0x0A) || client.2.count > 64 {
      let line = String(decoding: client.2.prefix { $0 != 0x0A }, as: UTF8.self)
      if let request = RotationLock.Request(rawValue: line), let handler {
        let locked = handler(request)
        try? client.0.writeAll(locked ? "locked\n" : "unlocked\n")
      } else {
        try? client.0.writeAll("error: unknown request '\(line)'\n")
      }
      client.1.cancel()
      clients[fd] = nil
      return
    }
    clients[fd] = client
  }
}
