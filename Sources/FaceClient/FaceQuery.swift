import CLinuxShims
import Glibc
import JSON
import OrientCore
import SystemKit

/// Where the orientd-face program is.
public enum FaceProgram {
  /// Its file name.
  public static let name = "orientd-face"

  /// Where it may be relative to the directory of the running binary: beside it (the build
  /// tree, /usr/bin), then `PREFIX/libexec/orientd` for `PREFIX/bin`.
  public static func candidates(besides directory: String) -> [String] {
    let prefix = directory.hasSuffix("/bin") ? String(directory.dropLast(4)) : directory + "/.."
    return ["\(directory)/\(name)", "\(prefix)/libexec/orientd/\(name)"]
  }

  /// `configured` if given, else the first executable candidate beside this process's binary
  /// (`/proc/self/exe`); `nil` when none is there.
  public static func locate(configured: String?) -> String? {
    if let configured { return access(configured, X_OK) == 0 ? configured : nil }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard n > 0 else { return nil }
    let exe = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let directory = exe.lastIndex(of: "/").map { String(exe[..<$0]) } ?? "."
    return candidates(besides: directory.isEmpty ? "/" : directory).first {
      access($0, X_OK) == 0
    }
  }
}

/// orientd-face's answer line (`orientd-face resolve` prints one JSON object).
public struct FaceReply: Equatable, Sendable {
  /// veto, accept or unknown.
  public var answer: FaceAnswer
  /// Why, for the log.
  public var reason: String
  /// The orientation in which a face is upright (`nil`: no face).
  public var face: Orientation?
  /// How long orientd-face took by its own clock, in milliseconds.
  public var elapsedMilliseconds: Double?
  /// The camera it used.
  public var camera: String?

  /// Creates a reply.
  public init(answer: FaceAnswer, reason: String, face: Orientation? = nil) {
    self.answer = answer
    self.reason = reason
    self.face = face
  }

  /// Parses the answer line; `nil` when it is not one.
  public init?(line: String) {
    guard let value = try? JSONValue(parsing: line), let text = value["answer"]?.stringValue,
      let answer = FaceAnswer(rawValue: text)
    else { return nil }
    self.answer = answer
    reason = value["reason"]?.stringValue ?? ""
    face = value["face"]?.stringValue.flatMap { Orientation(rawValue: $0) }
    elapsedMilliseconds = value["elapsed_ms"]?.numberValue
    camera = value["camera"]?.stringValue
  }
}

/// One question to orientd-face, run as a child on an event loop with a hard timeout.
///
/// The child's stdout is a pipe read on the loop; its exit is watched with a pidfd; a timer
/// kills it (SIGKILL) at the deadline and reports `timedOut` at once, whatever the child is
/// doing (a camera driver that hangs cannot hold up the caller). Its stderr is the caller's
/// (orientd-face logs every camera use there: the daemon's journal). The child is reaped
/// when it exits, also after a timeout or `cancel()`.
public final class FaceQuery {
  /// How a query ended.
  public enum Outcome: Equatable, Sendable {
    /// orientd-face printed an answer.
    case answered(FaceReply)
    /// It failed without an answer (could not start, exited with an error, printed nonsense).
    case failed(String)
    /// The deadline passed first; the child was killed.
    case timedOut
  }

  private let loop: EventLoop
  private let pid: pid_t
  private let output: FileDescriptor
  private let exited: FileDescriptor
  private var outputWatch: EventLoop.Watch?
  private var exitWatch: EventLoop.Watch?
  private var timer: EventLoop.Timer?
  private var received: [UInt8] = []
  private var completion: ((Outcome) -> Void)?
  private var selfReference: FaceQuery?
  private var outputClosed = false
  private var exitStatus: Int32?
  /// The program and arguments, for messages.
  public let commandLine: String

  /// Starts `arguments` (the program first) and calls `completion` once on the loop.
  ///
  /// - Throws: `SystemError` when the pipe, the child or its pidfd cannot be made.
  public init(
    _ arguments: [String], timeout: Duration, loop: EventLoop,
    completion: @escaping (Outcome) -> Void
  ) throws(SystemError) {
    self.loop = loop
    self.completion = completion
    commandLine = arguments.joined(separator: " ")
    var fds: [Int32] = [-1, -1]
    guard orient_pipe_cloexec(&fds) == 0 else {
      throw SystemError(errno: errno, operation: "pipe", path: arguments[0])
    }
    let readEnd = FileDescriptor(owning: fds[0], path: "pipe:\(FaceProgram.name)")
    let writeEnd = FileDescriptor(owning: fds[1], path: "pipe:\(FaceProgram.name)")
    _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
    pid = try ProgramRunner.spawn(arguments, output: fds[1], errors: 2)
    _ = writeEnd.close()
    output = readEnd
    let raw = orient_pidfd_open(pid)
    guard raw >= 0 else {
      let code = errno
      kill(pid, SIGKILL)
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
      throw SystemError(errno: code, operation: "pidfd_open", path: arguments[0])
    }
    exited = FileDescriptor(owning: raw, path: "pidfd:\(pid)")
    selfReference = self
    do {
      outputWatch = try loop.watch(output.rawValue, for: .readable) { [unowned self] _ in
        self.drain()
      }
      exitWatch = try loop.watch(raw, for: .readable) { [unowned self] _ in self.reap() }
      let made = try loop.makeTimer { [unowned self] in self.expire() }
      try made.schedule(after: timeout)
      timer = made
    } catch {
      kill(pid, SIGKILL)
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
      outputWatch = nil
      exitWatch = nil
      self.completion = nil
      selfReference = nil
      throw error
    }
  }

  /// Stops the question: kills the child; `completion` is not called. The child is still
  /// reaped when it exits.
  public func cancel() {
    guard completion != nil else { return }
    completion = nil
    timer?.cancel()
    kill(pid, SIGKILL)
  }

  /// Whether the child has not been reaped yet.
  public var isRunning: Bool { exitStatus == nil }

  private func expire() {
    timer?.cancel()
    guard completion != nil else { return }
    kill(pid, SIGKILL)
    finish(.timedOut)
  }

  private func drain() {
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let n: Int?
      do {
        n = try chunk.withUnsafeMutableBytes { try output.read(into: $0) }
      } catch {
        n = 0
      }
      guard let n else { return }
      if n == 0 {
        outputClosed = true
        outputWatch?.cancel()
        outputWatch = nil
        settle()
        return
      }
      if received.count < 64 * 1024 { received += chunk[0..<n] }
    }
  }

  private func reap() {
    var status: Int32 = 0
    var got: pid_t
    repeat { got = waitpid(pid, &status, WNOHANG) } while got < 0 && errno == EINTR
    guard got == pid else { return }
    exitWatch?.cancel()
    exitWatch = nil
    exitStatus = ProgramRunner.exitCode(waitStatus: status)
    drain()
    settle()
  }

  /// Both the output's end and the exit are known: report (once) and let go.
  private func settle() {
    guard outputClosed, let code = exitStatus else { return }
    timer?.cancel()
    if completion != nil {
      let text = String(decoding: received, as: UTF8.self)
      let last = text.split(separator: "\n").last.map(String.init) ?? ""
      if let reply = FaceReply(line: last) {
        finish(.answered(reply))
      } else if code != 0 {
        finish(.failed("\(FaceProgram.name) exited with status \(code)"))
      } else {
        finish(.failed("\(FaceProgram.name) printed no answer (\"\(last.prefix(120))\")"))
      }
    }
    selfReference = nil
  }

  private func finish(_ outcome: Outcome) {
    guard let done = completion else { return }
    completion = nil
    done(outcome)
  }
}
