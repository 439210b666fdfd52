import Glibc
import OrientLog
import SystemKit

/// The daemon as a process: configuration, signals, the loop; what `orientd` (no command)
/// runs.
public enum DaemonRunner {
  /// Runs orientd until SIGTERM/SIGINT (exit 0) or until the bus goes away (exit 69).
  ///
  /// SIGHUP re-reads the configuration. Signals are handled on the loop through a signalfd,
  /// registered before anything else exists, so they are never delivered to a handler in the
  /// middle of other work.
  ///
  /// - Returns: the exit status: `success` after a clean shutdown, `dataError`/`noInput` for
  ///   a bad or unreadable configuration, `unavailable` when udev, the bus or the bus name is
  ///   not available.
  public static func run(options: DaemonOptions, logger: Logger) -> ExitStatus {
    // A log reader that goes away must not kill the daemon.
    signal(SIGPIPE, SIG_IGN)
    // Any client can send a message of up to the bus' limit (32 MiB on the system bus), which
    // libdbus buffers whole. With glibc's default, freeing one such buffer raises the mmap
    // threshold to its size, so the next big message lands on the heap and stays resident
    // (30 MiB measured after one 31 MB Properties.Get). A fixed threshold keeps every large
    // buffer mmapped: it goes back to the system when freed.
    Memory.mapAllocations(atLeast: 128 * 1024)
    let configuration: DaemonConfiguration
    do {
      configuration = try DaemonConfiguration.load(path: options.configPath)
    } catch {
      logger.critical(error.message)
      return error.status
    }
    let loop: EventLoop
    var daemon: OrientDaemon?
    let signals: EventLoop.Watch
    do {
      loop = try EventLoop()
      signals = try loop.handleSignals([SIGTERM, SIGINT, SIGHUP]) { signo in
        if signo == SIGHUP {
          daemon?.reloadFromDisk()
        } else {
          logger.notice("\(signo == SIGTERM ? "SIGTERM" : "SIGINT"): shutting down")
          daemon?.shutdown(status: .success)
        }
      }
    } catch {
      logger.critical("cannot set up the event loop: \(error)")
      return .osError
    }
    defer { signals.cancel() }
    do {
      let made = try OrientDaemon(
        options: options, configuration: configuration, loop: loop, logger: logger)
      daemon = made
      try made.start()
    } catch {
      logger.critical(error.message)
      daemon?.shutdown(status: error.status)
      return error.status
    }
    if let source = configuration.source {
      logger.info("configuration from \(source)")
    }
    do {
      try loop.run()
    } catch {
      logger.critical("event loop failed: \(error)")
      daemon?.shutdown(status: .software)
      return .software
    }
    return daemon?.exitStatus ?? .success
  }
}
