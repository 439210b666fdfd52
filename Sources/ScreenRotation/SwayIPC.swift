import Glibc
import JSON
import SystemKit

/// A client of sway's IPC (the i3-ipc protocol) over the unix socket named by `$SWAYSOCK`.
///
/// Each message is the 6 bytes `i3-ipc`, the payload length and the message type (both 32-bit,
/// native byte order), then the payload; replies have the same header and a JSON payload.
/// See sway-ipc(7). Calls block, each for at most `timeoutSeconds`.
public final class SwayIPC {
  /// Message types of sway-ipc(7) used here.
  public enum MessageType: UInt32, Sendable {
    /// `RUN_COMMAND`: run sway commands; the reply lists each one's success.
    case runCommand = 0
    /// `GET_OUTPUTS`.
    case getOutputs = 3
    /// `GET_VERSION`.
    case getVersion = 7
    /// `GET_INPUTS` (sway only, not i3).
    case getInputs = 100
  }

  /// The socket path.
  public let path: String
  private let descriptor: FileDescriptor

  /// Connects to `path`.
  ///
  /// - Throws: `RotateError` (69) naming the socket when sway is not listening there.
  public init(path: String, timeoutSeconds: Int = 5) throws(RotateError) {
    self.path = path
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else {
      throw RotateError(.osError, "cannot create a unix socket: \(errnoText())")
    }
    descriptor = FileDescriptor(owning: fd, path: path)
    var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
    _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    guard UnixAddress.connect(fd, to: path) else {
      throw RotateError(
        .unavailable,
        "cannot connect to sway's IPC socket \(path) ($SWAYSOCK): \(errnoText()); "
          + "is sway running in this session?")
    }
  }

  /// Sends one message and returns the reply's JSON payload.
  ///
  /// - Throws: `RotateError` (74) when the socket fails or the reply is not i3-ipc JSON.
  public func request(_ type: MessageType, _ payload: String = "") throws(RotateError)
    -> JSONValue
  {
    var message = Array("i3-ipc".utf8)
    let body = Array(payload.utf8)
    withUnsafeBytes(of: UInt32(body.count)) { message += $0 }
    withUnsafeBytes(of: type.rawValue) { message += $0 }
    message += body
    do {
      try descriptor.writeAll(message)
    } catch {
      throw RotateError(.ioError, "writing to sway's IPC socket \(path) failed: \(error)")
    }
    let header = try readExactly(14)
    guard header.prefix(6).elementsEqual("i3-ipc".utf8) else {
      throw RotateError(.ioError, "\(path) did not answer in the i3-ipc protocol")
    }
    let length = header[6..<10].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
    guard length < 16 << 20 else {
      throw RotateError(.ioError, "\(path) announced a reply of \(length) bytes")
    }
    let reply = try readExactly(Int(length))
    do {
      return try JSONValue(
        parsing: String(decoding: reply, as: UTF8.self),
        limits: JSONValue.Limits(maxBytes: 16 << 20))
    } catch {
      throw RotateError(.ioError, "sway's reply on \(path) is not JSON: \(error)")
    }
  }

  /// Runs sway commands (`RUN_COMMAND`).
  ///
  /// - Throws: `RotateError` (70) with sway's own error text when a command failed.
  public func run(_ command: String) throws(RotateError) {
    let reply = try request(.runCommand, command)
    for result in reply.arrayValue ?? [] where result["success"]?.boolValue != true {
      let why = result["error"]?.stringValue ?? "no reason given"
      throw RotateError(.software, "sway refused '\(command)': \(why)")
    }
  }

  private func readExactly(_ count: Int) throws(RotateError) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    var done = 0
    while done < count {
      let n = bytes.withUnsafeMutableBytes {
        recv(descriptor.rawValue, $0.baseAddress.map { $0 + done }, count - done, 0)
      }
      if n < 0 && errno == EINTR { continue }
      if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
        throw RotateError(.ioError, "sway did not answer on \(path) in time")
      }
      guard n > 0 else {
        throw RotateError(
          .ioError,
          "sway closed its IPC socket \(path)" + (n < 0 ? ": \(errnoText())" : ""))
      }
      done += n
    }
    return bytes
  }
}

/// `sockaddr_un` helpers.
enum UnixAddress {
  /// Fills a `sockaddr_un` for `path` and calls `body` with it; `false` if the path is too long.
  static func with(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32?
  {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard bytes.count < capacity else { return nil }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (i, byte) in bytes.enumerated() { raw[i] = byte }
      raw[bytes.count] = 0
    }
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
  }

  /// connect(2) to a unix socket path.
  static func connect(_ fd: Int32, to path: String) -> Bool {
    with(path) { Glibc.connect(fd, $0, $1) } == 0
  }
}
