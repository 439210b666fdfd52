import CLinuxShims
import Glibc

/// Runs helper programs (rotate's hooks and wlr-randr, calibrate's systemd-hwdb and udevadm)
/// with `posix_spawnp`: an empty signal mask and default handlers (the event loop blocks
/// SIGINT/SIGTERM, which a child would inherit), stdin from /dev/null, output captured.
public enum ProgramRunner {
  /// The result of one run.
  public struct Outcome: Equatable, Sendable {
    /// The exit status, or 128+signal.
    public var status: Int32
    /// What it wrote to stdout.
    public var output: String
    /// What it wrote to stderr.
    public var errors: String

    /// Creates an outcome.
    public init(status: Int32, output: String, errors: String) {
      self.status = status
      self.output = output
      self.errors = errors
    }
  }

  /// Why `run` could not run a program.
  public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
    /// The step that failed.
    public enum Step: Sendable, Equatable {
      /// Making the output pipes (out of descriptors: the system's problem, not the program's).
      case pipe
      /// Starting the program (`posix_spawnp`): not on PATH, not executable.
      case start
    }

    /// The step.
    public var step: Step
    /// The system call's error.
    public var error: SystemError

    /// The error number.
    public var code: Errno { error.code }
    /// The system call's message.
    public var description: String { error.description }
  }

  /// Runs `arguments` (looked up in PATH) with `environment` added to this process's, waits
  /// for it and returns its status and output.
  ///
  /// - Throws: `Failure`: step `pipe` when the pipes cannot be made, `start` when the program
  ///   cannot be started, e.g. it is not on PATH.
  public static func run(_ arguments: [String], environment: [String: String] = [:])
    throws(Failure) -> Outcome
  {
    precondition(!arguments.isEmpty)
    var outPipe: [Int32] = [-1, -1]
    var errPipe: [Int32] = [-1, -1]
    guard orient_pipe_cloexec(&outPipe) == 0 else {
      throw Failure(
        step: .pipe, error: SystemError(errno: errno, operation: "pipe", path: arguments[0]))
    }
    guard orient_pipe_cloexec(&errPipe) == 0 else {
      let code = errno
      close(outPipe[0])
      close(outPipe[1])
      throw Failure(
        step: .pipe, error: SystemError(errno: code, operation: "pipe", path: arguments[0]))
    }
    let child: pid_t
    do {
      child = try spawn(arguments, environment: environment, output: outPipe[1], errors: errPipe[1])
    } catch {
      for fd in outPipe + errPipe { close(fd) }
      throw Failure(step: .start, error: error)
    }
    close(outPipe[1])
    close(errPipe[1])
    let (output, errors) = drain(outPipe[0], errPipe[0])
    close(outPipe[0])
    close(errPipe[0])
    var status: Int32 = 0
    while waitpid(child, &status, 0) < 0 && errno == EINTR {}
    return Outcome(status: exitCode(waitStatus: status), output: output, errors: errors)
  }

  /// The exit status in a `waitpid` status, or 128+signal for a child killed by a signal.
  public static func exitCode(waitStatus status: Int32) -> Int32 {
    (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
  }

  /// Starts `arguments` (looked up in PATH) with `environment` added to this process's, stdin
  /// read from `input` (a path, /dev/null by default) and stdout, stderr on the descriptors
  /// `output`, `errors`; returns its pid without waiting (the caller reaps it: `run`,
  /// `HookQueue` on the event loop, or the tests' `ChildProcess`). With `newProcessGroup` the
  /// child leads a process group of its own, so that whatever it starts can be signalled with it.
  ///
  /// - Throws: `SystemError` `posix_spawnp` (with the program as its path) when the program
  ///   cannot be started or `input` cannot be opened.
  public static func spawn(
    _ arguments: [String], environment: [String: String] = [:], input: String = "/dev/null",
    output: Int32, errors: Int32, newProcessGroup: Bool = false
  ) throws(SystemError) -> pid_t {
    precondition(!arguments.isEmpty)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, output, 1)
    posix_spawn_file_actions_adddup2(&actions, errors, 2)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    var defaults = sigset_t()
    sigfillset(&defaults)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    let group = newProcessGroup ? POSIX_SPAWN_SETPGROUP : 0
    posix_spawnattr_setflags(
      &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | group))

    var env: [String: String] = [:]
    var entry = environ
    while let pointer = entry.pointee {
      let text = String(cString: pointer)
      if let equals = text.firstIndex(of: "=") {
        env[String(text[..<equals])] = String(text[text.index(after: equals)...])
      }
      entry += 1
    }
    for (key, value) in environment { env[key] = value }
    var cArgs = arguments.map { strdup($0) } + [nil]
    var cEnv = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for p in cArgs { free(p) }
      for p in cEnv { free(p) }
    }
    var child: pid_t = 0
    let rc = posix_spawnp(&child, arguments[0], &actions, &attributes, &cArgs, &cEnv)
    guard rc == 0 else {
      throw SystemError(errno: rc, operation: "posix_spawnp", path: arguments[0])
    }
    return child
  }

  /// Reads both pipes to their end with poll(2), so a child filling one cannot block.
  private static func drain(_ out: Int32, _ err: Int32) -> (String, String) {
    var buffers: [[UInt8]] = [[], []]
    var fds = [
      pollfd(fd: out, events: Int16(POLLIN), revents: 0),
      pollfd(fd: err, events: Int16(POLLIN), revents: 0),
    ]
    var chunk = [UInt8](repeating: 0, count: 4096)
    while fds.contains(where: { $0.fd >= 0 }) {
      let n = poll(&fds, nfds_t(fds.count), -1)
      if n < 0 {
        if errno == EINTR { continue }
        break
      }
      for i in 0..<2 where fds[i].fd >= 0 && fds[i].revents != 0 {
        let got = chunk.withUnsafeMutableBytes { read(fds[i].fd, $0.baseAddress, $0.count) }
        if got > 0 {
          buffers[i] += chunk[0..<got]
        } else if got == 0 || errno != EINTR {
          fds[i].fd = -1
        }
      }
    }
    return (
      String(decoding: buffers[0], as: UTF8.self), String(decoding: buffers[1], as: UTF8.self)
    )
  }
}
