import OrientLog
import Sensors
import SystemKit

/// What tells the daemon about system sleep: logind's `PrepareForSleep` and its `delay`
/// inhibitor on the real bus (`LogindSleep`), a scripted one in unit tests.
public protocol SleepSignals: AnyObject {
  /// Called on the loop with `PrepareForSleep`'s argument: true just before the system
  /// sleeps, false once it has resumed.
  var onPrepareForSleep: ((_ sleeping: Bool) -> Void)? { get set }
  /// Holds a `delay` inhibitor (taking one if none is held) or lets it go (closing its
  /// descriptor). Idempotent; without logind it does nothing.
  func holdDelayLock(_ hold: Bool)
  /// Lets the lock go for good and stops listening (shutdown).
  func close()
}

/// System suspend and resume for the kinds being read, on seams (`SensorSource`,
/// `SleepSignals`, `Scheduler`): what iio-sensor-proxy lacks, sensors that come back dead.
///
/// - While a kind is wanted it holds a `delay` inhibitor, so that the suspend waits for it.
/// - `PrepareForSleep(true)`: every reader stops (buffers off, the settings put back:
///   `SensorSource.suspend()`), then the inhibitor is let go. Claims stay as they are.
/// - `PrepareForSleep(false)`: every wanted kind is read afresh (`SensorSource.resume()`:
///   rates, sampling frequency and hysteresis written again, buffers and triggers armed
///   again), the inhibitor taken again, and the flow check starts: each kind read by a buffer
///   or a timer must deliver a reading within `flowDeadline`; one that does not is read afresh
///   once more, and if it still gives nothing, with its next driver (a buffer is polled).
///   A resume without a suspend before it (a missed signal) reads the kinds afresh as well.
final class SleepGuard {
  /// How long after a resume a kind read by a buffer or a timer may stay silent.
  static let flowDeadline: Duration = .seconds(3)

  /// The kinds being read.
  var wanted: Set<SensorKind> = [] {
    didSet {
      if !isAsleep { signals?.holdDelayLock(!wanted.isEmpty) }
      if !silent.isEmpty {
        silent.formIntersection(wanted)
        if silent.isEmpty { endFlowCheck() }
      }
    }
  }
  /// Whether the system is between `PrepareForSleep(true)` and `(false)`.
  private(set) var isAsleep = false

  private let sensors: any SensorSource
  private let scheduler: any Scheduler
  private var logger: Logger
  private var signals: (any SleepSignals)?
  /// The kinds that have not delivered since the resume, while the flow check runs.
  private var silent: Set<SensorKind> = []
  /// Deadlines passed since the resume without every kind delivering.
  private var misses = 0
  private var resumedAt: Duration = .zero
  private var deadline: (any LoopTimer)?

  init(sensors: any SensorSource, scheduler: any Scheduler, logger: Logger) {
    self.sensors = sensors
    self.scheduler = scheduler
    self.logger = logger
  }

  /// Follows `signals` from now on.
  func attach(_ signals: any SleepSignals) {
    self.signals = signals
    signals.onPrepareForSleep = { [weak self] sleeping in
      if sleeping { self?.suspending() } else { self?.resumed() }
    }
    signals.holdDelayLock(!wanted.isEmpty && !isAsleep)
  }

  /// A reading of `kind` arrived.
  func reading(_ kind: SensorKind) {
    guard !silent.isEmpty, silent.remove(kind) != nil, silent.isEmpty else { return }
    let ms = (scheduler.now - resumedAt).nanoseconds / 1_000_000
    logger.info("readings flow again after the resume (all within \(ms) ms)")
    endFlowCheck()
  }

  /// Shutdown: the lock goes, the flow check ends.
  func close() {
    endFlowCheck()
    signals?.close()
    signals = nil
  }

  // MARK: Sleep

  private func suspending() {
    guard !isAsleep else { return }
    isAsleep = true
    endFlowCheck()
    // Also with nothing wanted: a claim that comes before the freeze opens nothing.
    sensors.suspend()
    if !wanted.isEmpty {
      logger.info(
        "the system is going to sleep: stopped reading \(names(wanted)); the claims stay")
    }
    signals?.holdDelayLock(false)
  }

  private func resumed() {
    let wasAsleep = isAsleep
    isAsleep = false
    sensors.resume()
    signals?.holdDelayLock(!wanted.isEmpty)
    guard !wanted.isEmpty else { return }
    logger.info(
      wasAsleep
        ? "the system resumed: reading \(names(wanted)) afresh"
        : "the system resumed without saying it would sleep: reading \(names(wanted)) afresh")
    startFlowCheck()
  }

  // MARK: Flow check

  private func startFlowCheck() {
    endFlowCheck()
    silent = wanted.filter { kind in
      guard let status = sensors.status(of: kind), sensors.isReading(kind) else { return false }
      // An evdev node reports changes only: silence is no sign of a dead sensor there.
      return status.mode != .events
    }
    guard !silent.isEmpty else { return }
    resumedAt = scheduler.now
    misses = 0
    do {
      let timer = try scheduler.timer { [weak self] in self?.deadlinePassed() }
      try timer.schedule(after: SleepGuard.flowDeadline, interval: SleepGuard.flowDeadline)
      deadline = timer
    } catch {
      logger.warning("cannot check that readings flow after the resume: \(error)")
      silent = []
    }
  }

  private func deadlinePassed() {
    misses += 1
    let kinds = silent
    let seconds = misses * Int(SleepGuard.flowDeadline.components.seconds)
    if misses == 1 {
      logger.warning(
        "no reading from \(names(kinds)) within \(seconds) s of the resume: reading it afresh")
      for kind in kinds.sorted() { sensors.restart(kind, fallBack: false) }
    } else {
      logger.warning(
        "still no reading from \(names(kinds)) \(seconds) s after the resume: falling back "
          + "to its next driver")
      for kind in kinds.sorted() { sensors.restart(kind, fallBack: true) }
      endFlowCheck()
    }
  }

  private func endFlowCheck() {
    deadline?.cancel()
    deadline = nil
    silent = []
  }

  private func names(_ kinds: Set<SensorKind>) -> String {
    kinds.sorted().map(\.noun).joined(separator: ", ")
  }
}
