import Glibc
import SystemKit

/// A program started for a test with `posix_spawn`, its output captured to files.
///
/// The child starts with an empty signal mask and default handlers (test runners and the event
/// loop block signals, and a blocked SIGTERM would be inherited). `deinit` kills it with
/// SIGKILL, so a failing test never leaves fixtures behind.
public final class ChildProcess {
  /// The process id.
  public let pid: pid_t
  /// Where stdout goes.
  public let stdoutPath: String
  /// Where stderr goes.
  public let stderrPath: String
  /// The command line, for messages.
  public let commandLine: String
  private var status: Int32?

  /// Starts `arguments[0]` (looked up in `PATH` if it has no slash).
  ///
  /// - Parameters:
  ///   - environment: extra variables, added to (and overriding) this process's environment.
  ///   - stdin: a file to read stdin from (default `/dev/null`).
  ///   - directory: where the output files go.
  public init(
    _ arguments: [String], environment: [String: String] = [:], stdin: String = "/dev/null",
    outputDirectory directory: String
  ) throws {
    precondition(!arguments.isEmpty)
    let tag = "\(arguments[0].split(separator: "/").last ?? "child")-\(ChildProcess.nextTag())"
    stdoutPath = "\(directory)/\(tag).out"
    stderrPath = "\(directory)/\(tag).err"
    commandLine = arguments.joined(separator: " ")

    let out = open(stdoutPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    let err = open(stderrPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    defer {
      if out >= 0 { close(out) }
      if err >= 0 { close(err) }
    }
    guard out >= 0, err >= 0 else {
      throw TestFailure("cannot create \(stdoutPath): \(String(cString: strerror(errno)))")
    }
    let child: pid_t
    do {
      child = try ProgramRunner.spawn(
        arguments, environment: environment, input: stdin, output: out, errors: err,
        newProcessGroup: true)
    } catch {
      throw TestFailure("cannot start \(arguments[0]): \(error)")
    }
    pid = child
  }

  deinit {
    if status == nil {
      kill(-pid, SIGKILL)
      kill(pid, SIGKILL)
      var s: Int32 = 0
      waitpid(pid, &s, 0)
    }
  }

  /// Sends `signal` to the child.
  public func signal(_ signal: Int32) { kill(pid, signal) }

  /// Whether the child is still running (reaps it if it ended).
  public var isRunning: Bool {
    if status != nil { return false }
    var s: Int32 = 0
    if waitpid(pid, &s, WNOHANG) == pid {
      status = s
      return false
    }
    return true
  }

  /// Waits up to `timeout` seconds; returns the exit status (128+signal if killed), or `nil` on
  /// timeout.
  @discardableResult
  public func wait(timeout: Double) -> Int32? {
    let deadline = monotonicSeconds() + timeout
    while isRunning {
      if monotonicSeconds() > deadline { return nil }
      usleep(2000)
    }
    return exitCode
  }

  /// The exit code once ended: the status, or 128 + signal number.
  public var exitCode: Int32? {
    status.map { ProgramRunner.exitCode(waitStatus: $0) }
  }

  /// Kills with SIGKILL and reaps.
  public func killNow() {
    guard isRunning else { return }
    kill(pid, SIGKILL)
    _ = wait(timeout: 10)
  }

  /// What the child wrote to stdout so far.
  public var standardOutput: String { readFile(stdoutPath) }
  /// What the child wrote to stderr so far.
  public var standardError: String { readFile(stderrPath) }

  /// Runs a command to completion and returns its exit code and output.
  public static func run(
    _ arguments: [String], environment: [String: String] = [:], stdin: String = "/dev/null",
    outputDirectory: String, timeout: Double = 60
  ) throws -> (status: Int32, stdout: String, stderr: String) {
    let child = try ChildProcess(
      arguments, environment: environment, stdin: stdin, outputDirectory: outputDirectory)
    guard let code = child.wait(timeout: timeout) else {
      child.killNow()
      throw TestFailure(
        "timed out after \(timeout)s: \(child.commandLine)\nstderr: \(child.standardError)")
    }
    return (code, child.standardOutput, child.standardError)
  }

  private nonisolated(unsafe) static var counter = 0
  private static let counterLock = MutexBox()

  private static func nextTag() -> Int {
    counterLock.withLock {
      counter += 1
      return counter
    }
  }
}

/// A pthread mutex for the few bits of shared state in test support.
final class MutexBox: @unchecked Sendable {
  private var mutex = pthread_mutex_t()
  init() { pthread_mutex_init(&mutex, nil) }
  func withLock<T>(_ body: () throws -> T) rethrows -> T {
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    return try body()
  }
}

/// An error that makes a test fail with a message.
public struct TestFailure: Error, CustomStringConvertible {
  /// What went wrong.
  public var description: String
  /// Creates a failure.
  public init(_ description: String) { self.description = description }
}

/// `CLOCK_MONOTONIC` in seconds.
public func monotonicSeconds() -> Double {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Reads a whole file as UTF-8 ("" if it cannot be read).
public func readFile(_ path: String) -> String {
  guard let f = fopen(path, "rb") else { return "" }
  defer { fclose(f) }
  var bytes: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 65536)
  while true {
    let n = fread(&buffer, 1, buffer.count, f)
    if n <= 0 { break }
    bytes += buffer[0..<n]
  }
  return String(decoding: bytes, as: UTF8.self)
}

/// Writes a file (bytes), creating or truncating it.
public func writeFile(_ path: String, _ bytes: [UInt8]) throws {
  guard let f = fopen(path, "wb") else {
    throw TestFailure("cannot write \(path): \(String(cString: strerror(errno)))")
  }
  defer { fclose(f) }
  guard fwrite(bytes, 1, bytes.count, f) == bytes.count else {
    throw TestFailure("short write to \(path)")
  }
}

/// Writes a text file.
public func writeFile(_ path: String, _ text: String) throws {
  try writeFile(path, Array(text.utf8))
}

/// How much longer than written a wait may take before it fails:
/// `ORIENTD_TEST_TIMEOUT_SCALE` (default 3). A wait returns as soon as its condition holds, so
/// the stretch costs nothing when a test passes; it keeps a loaded machine (a parallel build,
/// the sanitizer run) from failing a test that is merely slow. No test asserts with a wait that
/// its condition stays false, so a longer wait can only turn a spurious failure into a pass.
public let testTimeoutScale: Double = {
  guard let text = getenv("ORIENTD_TEST_TIMEOUT_SCALE").map({ String(cString: $0) }),
    let value = Double(text), value >= 1
  else { return 3 }
  return value
}()

/// Polls `condition` every few milliseconds until it holds or `timeout` seconds (stretched by
/// `testTimeoutScale`) pass.
@discardableResult
public func waitFor(timeout: Double, _ condition: () throws -> Bool) rethrows -> Bool {
  let deadline = monotonicSeconds() + timeout * testTimeoutScale
  while monotonicSeconds() < deadline {
    if try condition() { return true }
    usleep(5000)
  }
  return try condition()
}
