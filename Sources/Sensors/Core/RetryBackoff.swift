import SystemKit

/// Retries a sensor that could not be started: after 1 s, then 2, 4, ... up to 30 s (every
/// kind has one, in its `KindSlot`).
///
/// Holds its timer only while a retry is pending: `cancel()` closes it (a stopped manager
/// holds no descriptor but the udev monitor's) and starts the delays from 1 s again.
public final class RetryBackoff {
  /// The first delay; doubled after each attempt.
  public static let first: Duration = .seconds(1)
  /// The longest delay.
  public static let maximum: Duration = .seconds(30)

  /// The delay the next `schedule()` waits.
  public private(set) var delay = RetryBackoff.first
  private let loop: any Scheduler
  private let action: () -> Void
  private var timer: (any LoopTimer)?

  /// A backoff that runs `action` on `loop` when a retry is due.
  public init(loop: any Scheduler, action: @escaping () -> Void) {
    self.loop = loop
    self.action = action
  }

  deinit { timer?.cancel() }

  /// Arms the next retry after `delay`, then doubles `delay` (also when arming failed).
  ///
  /// - Throws: `SystemError` if the timer cannot be made or armed.
  public func schedule() throws(SystemError) {
    defer { delay = min(delay * 2, RetryBackoff.maximum) }
    if timer == nil {
      // unowned, not weak: the timer is self's and closed in deinit, so the handler never
      // runs without self; a weak reference would give self a side table that LeakSanitizer
      // reports as leaked once the timer (the only weak reference) is closed.
      timer = try loop.timer { [unowned self] in self.action() }
    }
    try timer?.schedule(after: delay, interval: nil)
  }

  /// Closes the timer and starts the delays from `first` again.
  public func cancel() {
    timer?.cancel()
    timer = nil
    delay = RetryBackoff.first
  }
}
