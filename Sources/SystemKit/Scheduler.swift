/// A timer on a `Scheduler`: disarmed until scheduled.
public protocol LoopTimer: AnyObject {
  /// Arms the timer: first expiry after `after`, then every `interval` if given; re-arming
  /// replaces the previous schedule.
  func schedule(after: Duration, interval: Duration?) throws(SystemError)
  /// Disarms the timer; it can be scheduled again.
  func disarm()
  /// Disarms the timer for good.
  func cancel()
}

/// Time and deferred work, as the daemon's logic needs them: the seam between that logic and
/// `EventLoop` (timerfds, the monotonic clock), so that claims, the first-reading hold, retries
/// and hotplug settling can be driven by a `ManualScheduler` in unit tests that take
/// milliseconds (swift-nio's `EmbeddedEventLoop` with `advanceTime` is the model).
public protocol Scheduler: AnyObject {
  /// A disarmed timer that calls `handler` on each expiry.
  func timer(_ handler: @escaping () -> Void) throws(SystemError) -> any LoopTimer
  /// Runs `work` after the current callback returns.
  func post(_ work: @escaping () -> Void)
  /// The current `CLOCK_MONOTONIC` time.
  var now: Duration { get }
}

extension EventLoop.Timer: LoopTimer {}

extension EventLoop: Scheduler {
  /// A timerfd on this loop.
  public func timer(_ handler: @escaping () -> Void) throws(SystemError) -> any LoopTimer {
    try makeTimer(handler)
  }

  /// `Clock.monotonic()`.
  public var now: Duration { Clock.monotonic() }
}

/// A scheduler whose time moves only when told (`advance(by:)`), for unit tests: timers fire
/// in the order of their expiry, posted work runs before time moves, nothing sleeps.
public final class ManualScheduler: Scheduler {
  /// The current time; starts at 1000 s (a plausible uptime).
  public private(set) var now: Duration = .seconds(1000)
  private var timers: [ManualTimer] = []
  private var posted: [() -> Void] = []

  /// A scheduler at 1000 s.
  public init() {}

  /// A timer that fires when `advance(by:)` passes its expiry.
  public func timer(_ handler: @escaping () -> Void) throws(SystemError) -> any LoopTimer {
    let timer = ManualTimer(handler)
    timer.scheduler = self
    timers.append(timer)
    return timer
  }

  /// Queues `work` for the next `runPosted()` (or `advance(by:)`).
  public func post(_ work: @escaping () -> Void) { posted.append(work) }

  /// The timers armed now.
  public var armedTimers: Int { timers.filter { $0.due != nil }.count }

  /// Runs the posted work, including work posted while it runs.
  public func runPosted() {
    while !posted.isEmpty {
      let work = posted.removeFirst()
      work()
    }
  }

  /// Runs the posted work, then moves time forward by `duration`, firing every timer that
  /// expires on the way at its own time (repeating ones as often as they expire) and the work
  /// they post.
  public func advance(by duration: Duration) {
    runPosted()
    let end = now + duration
    while true {
      timers.removeAll { $0.isCancelled }
      let next = timers.compactMap { timer in timer.due.map { (timer, $0) } }
        .min { $0.1 < $1.1 }
      guard let (timer, due) = next, due <= end else { break }
      now = max(now, due)
      timer.due = timer.interval.map { due + $0 }
      timer.handler()
      runPosted()
    }
    now = end
  }

  private final class ManualTimer: LoopTimer {
    let handler: () -> Void
    var due: Duration?
    var interval: Duration?
    var isCancelled = false
    /// Set by the scheduler that made it, so `schedule` can read the time.
    weak var scheduler: ManualScheduler?

    init(_ handler: @escaping () -> Void) { self.handler = handler }

    func schedule(after: Duration, interval: Duration?) throws(SystemError) {
      let now = scheduler?.now ?? .zero
      due = now + max(after, .zero)
      self.interval = interval
    }

    func disarm() { due = nil }

    func cancel() {
      due = nil
      isCancelled = true
    }
  }
}
