import SystemKit

/// Notices a buffered reader's node that stops delivering scans: a device whose interrupt got
/// lost or whose trigger stopped would otherwise leave its readings frozen without a word.
/// Shared by the accelerometer's `BufferSampler` and the motion sensors' `MotionBufferReader`.
///
/// Every `timeout` (10 sample periods, at least 1 s) it looks whether scans arrived since it
/// last looked (`dataArrived()`); a period without any is reported to the owner (`onSilence`),
/// which calls `countStall()`: the first empty period is logged once and the buffer re-armed
/// (`buffer/enable` 0 then 1, which restarts the trigger on real drivers); after
/// `stallsBeforeGivingUp` empty periods in a row the owner is told to hand over (`.stalled`,
/// so that the sensor's next driver, polling, takes over), and the buffer keeps being re-armed
/// quietly until it is replaced. When scans come again the episode ends with one line.
/// The watchdog is the one periodic wakeup of a buffered reader, and only while it reads.
final class StallWatchdog {
  /// Empty periods in a row before the owner is told to hand over.
  static let stallsBeforeGivingUp = 3

  /// Empty periods in a row.
  private(set) var emptyPeriods = 0
  /// Whether scan bytes arrived since the watchdog last looked.
  private var sawData = false
  /// The last data seen: when the current stall began.
  private var lastData: Duration
  private var timer: EventLoop.Timer?
  /// The period while scans are expected.
  private var timeout: Duration
  /// Whether the timer runs at a slower period (silence expected).
  private var slowed = false

  /// How long without a scan counts as a stall at `rate` scans a second.
  static func timeout(rate: Double) -> Duration {
    max(.seconds(1), .seconds(10 / max(rate, 0.1)))
  }

  /// Starts looking every `timeout(rate:)`; `onSilence` runs on the loop after each period
  /// without a scan.
  ///
  /// - Throws: `SystemError` when the timer cannot be made.
  init(loop: EventLoop, rate: Double, onSilence: @escaping () -> Void) throws(SystemError) {
    timeout = StallWatchdog.timeout(rate: rate)
    lastData = Clock.monotonic()
    let timer = try loop.makeTimer { [weak self] in self?.tick(onSilence) }
    try timer.schedule(after: timeout, interval: timeout)
    self.timer = timer
  }

  deinit { cancel() }

  /// Stops looking.
  func cancel() {
    timer?.cancel()
    timer = nil
  }

  /// Scans arrived.
  ///
  /// - Returns: whether this ends a stall episode (say so once).
  func dataArrived() -> Bool {
    sawData = true
    lastData = Clock.monotonic()
    guard emptyPeriods > 0 else { return false }
    emptyPeriods = 0
    return true
  }

  /// Milliseconds since the last scan.
  var silentMilliseconds: Int64 { (Clock.monotonic() - lastData).nanoseconds / 1_000_000 }

  /// Counts an empty period (the owner logs it once and re-arms the buffer).
  ///
  /// - Returns: whether the owner should hand over now (`.stalled`): the
  ///   `stallsBeforeGivingUp`-th in a row.
  func countStall() -> Bool {
    emptyPeriods += 1
    return emptyPeriods == StallWatchdog.stallsBeforeGivingUp
  }

  /// What the owner logs for a period without a scan of `sysname` from `path`, and what its
  /// `.stalled` says.
  func silence(_ sysname: String, path: String) -> (message: String, giveUp: String) {
    let silent = silentMilliseconds
    return (
      "\(sysname): no scan from \(path) for \(silent) ms; re-enabling the buffer (logged once "
        + "until scans flow again)",
      "no scan for \(silent) ms, also after re-enabling the buffer"
    )
  }

  /// Looks every `period` instead (silence is expected: a still device asked to be quiet),
  /// or, with nil, every `timeout` again.
  ///
  /// - Throws: `SystemError` when the timer cannot be rescheduled.
  func slowDown(to period: Duration?) throws(SystemError) {
    guard (period != nil) != slowed, let timer else { return }
    slowed = period != nil
    sawData = false
    let next = period ?? timeout
    try timer.schedule(after: next, interval: next)
  }

  /// The owner's rate changed: a stall is `timeout(rate:)` from now on.
  ///
  /// - Throws: `SystemError` when the timer cannot be rescheduled.
  func retune(rate: Double) throws(SystemError) {
    let next = StallWatchdog.timeout(rate: rate)
    guard next != timeout else { return }
    timeout = next
    guard !slowed, let timer else { return }
    try timer.schedule(after: next, interval: next)
  }

  private func tick(_ onSilence: () -> Void) {
    if sawData {
      sawData = false
      return
    }
    onSilence()
  }
}
