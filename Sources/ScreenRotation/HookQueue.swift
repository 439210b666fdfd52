import CLinuxShims
import Glibc
import SystemKit

/// Runs hooks one after the other as child processes watched on the event loop, so a slow hook
/// never blocks the loop: lock requests, signals, tablet-mode switches and orientation changes
/// are handled while it runs.
///
/// Each queue keeps its own order: a batch's completion runs after its last command has exited,
/// and a later batch starts only then. The rotator has one queue for `--exec-before` (the turn
/// waits for it: those hooks must finish before the output turns) and one for `--exec`, which
/// the next turn does not wait for.
public final class HookQueue {
  private enum Job {
    case command(String, Hooks.Stage, [String: String])
    case done(() -> Void)
  }

  /// The hook being run: its pid, the descriptor that polls readable when it exits, and the
  /// anonymous file its stderr goes to (not a pipe: a hook that leaves a background process
  /// holding its stderr must not keep orientd waiting, or get SIGPIPE when orientd stops
  /// reading).
  private struct Running {
    var command: String
    var stage: Hooks.Stage
    var pid: pid_t
    var exited: FileDescriptor
    var errors: FileDescriptor
    var watch: EventLoop.Watch
  }

  private let loop: EventLoop
  private var jobs: [Job] = []
  private var running: Running?
  private var draining = false
  /// Called with a message for each hook that failed (a failed hook does not stop the turn).
  public var onFailure: (String) -> Void = { _ in }

  /// Creates an empty queue on `loop`.
  public init(loop: EventLoop) { self.loop = loop }

  /// Whether a hook is running or waiting.
  public var isBusy: Bool { running != nil || !jobs.isEmpty }

  /// Queues `commands` (`/bin/sh -c`, in order, with `environment` added) and then `done`.
  public func run(
    _ commands: [String], stage: Hooks.Stage, environment: [String: String],
    then done: @escaping () -> Void = {}
  ) {
    jobs += commands.map { .command($0, stage, environment) }
    jobs.append(.done(done))
    drain()
  }

  /// Starts queued jobs until one is a running hook (or none is left). Re-entrant calls from a
  /// completion only queue: the outer call goes on.
  private func drain() {
    guard !draining else { return }
    draining = true
    defer { draining = false }
    while running == nil, !jobs.isEmpty {
      switch jobs.removeFirst() {
      case .done(let done):
        done()
      case .command(let command, let stage, let environment):
        do {
          running = try start(command, stage: stage, environment: environment)
        } catch {
          onFailure("hook '\(command)' (\(stage.rawValue)): \(error.message)")
        }
      }
    }
  }

  private func start(_ command: String, stage: Hooks.Stage, environment: [String: String])
    throws(RotateError) -> Running
  {
    let rawErrors = orient_memfd_cloexec("orientd-hook-stderr")
    guard rawErrors >= 0 else {
      throw RotateError(.osError, "cannot create a file for its stderr: \(errnoText())")
    }
    let errors = FileDescriptor(owning: rawErrors, path: "memfd:orientd-hook-stderr")
    let null: FileDescriptor
    do {
      null = try FileDescriptor(path: "/dev/null", options: .writeOnly)
    } catch {
      throw RotateError(.osError, error.description)
    }
    let pid = try ProgramRunner.spawnHelper(
      ["/bin/sh", "-c", command], environment: environment, output: null.rawValue,
      errors: errors.rawValue)
    let rawExited = orient_pidfd_open(pid)
    guard rawExited >= 0 else {
      // Without pidfd (Linux < 5.3) the hook is waited for here, as before.
      let reason = errnoText()
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
      report(command, stage: stage, status: status, errors: errors)
      throw RotateError(.osError, "pidfd_open failed (\(reason)); it was waited for")
    }
    let exited = FileDescriptor(owning: rawExited, path: "pidfd:\(pid)")
    let watch: EventLoop.Watch
    do {
      watch = try loop.watch(rawExited, for: .readable) { [unowned self] _ in self.reap() }
    } catch {
      kill(pid, SIGKILL)
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
      throw RotateError(.osError, "cannot watch it: \(error)")
    }
    return Running(
      command: command, stage: stage, pid: pid, exited: exited, errors: errors, watch: watch)
  }

  /// The running hook exited: reap it, report a failure, start the next job.
  private func reap() {
    guard let hook = running else { return }
    var status: Int32 = 0
    var got: pid_t
    repeat { got = waitpid(hook.pid, &status, WNOHANG) } while got < 0 && errno == EINTR
    guard got == hook.pid else { return }
    hook.watch.cancel()
    running = nil
    report(hook.command, stage: hook.stage, status: status, errors: hook.errors)
    drain()
  }

  private func report(
    _ command: String, stage: Hooks.Stage, status: Int32, errors: FileDescriptor
  ) {
    let code = ProgramRunner.exitCode(waitStatus: status)
    guard code != 0 else { return }
    var buffer = [UInt8](repeating: 0, count: 2048)
    let n = buffer.withUnsafeMutableBytes { pread(errors.rawValue, $0.baseAddress, $0.count, 0) }
    let text = n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self).trimmingQuotes() : ""
    onFailure(
      "hook '\(command)' (\(stage.rawValue)) exited with \(code)"
        + (text.isEmpty ? "" : ": \(text)"))
  }

  deinit {
    // Hooks still running when orientd rotate stops are left to finish (they are reparented);
    // only the loop's registration goes.
    running?.watch.cancel()
  }
}
