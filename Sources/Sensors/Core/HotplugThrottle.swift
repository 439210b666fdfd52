import OrientLog
import SystemKit

/// Keeps a storm of uevents (a flaky connector, a driver rebinding in a loop) from flooding
/// the journal and from starting and stopping a sampler for each add/remove pair.
///
/// The first `logBudget` sensor events in `window` are notices, the rest debug (one
/// line says so, and the next event after a quiet window ends the episode with its count).
/// During a storm the sensors are chosen once events have paused for `settle`. One for every
/// kind, in the `SensorHub`.
public final class HotplugThrottle {
  /// Hotplug notices logged per `window` before they go to debug level.
  public static let logBudget = 10
  /// The window of `logBudget`.
  public static let window: Duration = .seconds(10)
  /// During a storm, how long uevents must pause before the sensor is chosen again.
  public static let settle: Duration = .milliseconds(250)

  private let loop: any Scheduler
  private let logger: Logger
  private var problems = LogOnce()
  private var windowStart: Duration = .zero
  private var events = 0
  private var settleTimer: (any LoopTimer)?

  /// A throttle on `loop`'s clock and timers.
  public init(loop: any Scheduler, logger: Logger) {
    self.loop = loop
    self.logger = logger
  }

  deinit { settleTimer?.cancel() }

  /// Counts one sensor event and gives the level of its notice.
  public func level() -> LogLevel {
    let now = loop.now
    if now - windowStart > HotplugThrottle.window {
      windowStart = now
      events = 0
      problems.clear("storm", logger: logger, "sensor hotplug events are rare again")
    }
    events += 1
    if events <= HotplugThrottle.logBudget { return .notice }
    problems.report(
      "storm", level: .notice, logger: logger,
      "more than \(HotplugThrottle.logBudget) sensor hotplug events within "
        + "\(Int(HotplugThrottle.window.seconds)) s; logging them at debug level until they "
        + "are rare again")
    return .debug
  }

  /// After a batch of uevents: runs `choose` at once normally; during a storm (more than
  /// `logBudget` events in the window) once the events have paused for `settle`.
  public func afterBatch(_ choose: @escaping () -> Void) {
    guard events > HotplugThrottle.logBudget else {
      settleTimer?.disarm()
      choose()
      return
    }
    if settleTimer == nil {
      // unowned, not weak: the timer is self's and closed in deinit (see RetryBackoff).
      settleTimer = try? loop.timer { [unowned self] in
        // One-shot: closed once it has fired, so a storm leaves no descriptor behind.
        self.settleTimer?.cancel()
        self.settleTimer = nil
        choose()
      }
    }
    guard let settleTimer,
      (try? settleTimer.schedule(after: HotplugThrottle.settle, interval: nil)) != nil
    else {
      choose()
      return
    }
  }
}
