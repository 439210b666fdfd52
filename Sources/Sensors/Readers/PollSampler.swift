import OrientCore
import OrientLog
import SystemKit

/// Reads `in_accel_{x,y,z}_raw` on a timer: the three files stay open and are re-read with
/// `pread` at offset 0 (which makes sysfs call the driver again), so a reading costs three
/// system calls and no path lookups (`SysfsAttribute`, which also notices a file an emulated
/// sysfs replaced).
///
/// A reading with a bad axis (garbage, empty, out of range, EIO) is skipped and each kind of
/// problem logged once per episode. When every reading has failed for a second, the sampler
/// backs off instead of hammering a broken bus at the full rate: it polls every 250 ms, then
/// 0.5, 1 and at most every 2 s, logging that once; the first valid reading restores the rate
/// and ends every episode (so a later failure is logged again).
///
/// With adaptive sampling (`[sampling] adaptive`, on by default) the timer runs at the still
/// rate while `AdaptiveSampling` finds the readings still, and at the full rate from the
/// first reading that departs until they have settled again.
final class PollSampler: SensorReader {
  let mode = SamplingMode.polled
  let rate: Double
  private(set) var skipped = 0

  private let description: AccelerometerDescription
  private let logger: Logger
  private let handler: (SensorEvent) -> Void
  private let journal: SysfsJournal
  private var files: [SysfsAttribute] = []
  private var timer: EventLoop.Timer?
  private var problems = LogOnce()
  private var activeProblems: Set<String> = []
  private let buffer: UnsafeMutableRawBufferPointer
  private var stopped = false
  private let interval: Duration
  /// Slows the timer down while readings keep failing.
  private var backoff = PollBackoff()
  /// Decides between the full rate and the still rate.
  private var adaptive: AdaptiveSampling
  /// The timer's interval while the readings are still.
  private let stillInterval: Duration

  static let axes = ["x", "y", "z"]

  /// Opens the attributes, sets the sampling frequency, schedules the timer and posts a first
  /// reading right away.
  ///
  /// - Throws: `SystemError` if an attribute cannot be opened.
  init(
    description: AccelerometerDescription, rate: Double,
    adaptive: AdaptiveSampling.Parameters = AdaptiveSampling.Parameters(), loop: EventLoop,
    logger: Logger, handler: @escaping (SensorEvent) -> Void
  ) throws(SystemError) {
    self.description = description
    self.rate = rate
    self.logger = logger
    self.handler = handler
    journal = SysfsJournal(logger: logger)
    buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)
    interval = .seconds(1 / rate)
    var parameters = adaptive
    // A still rate at or above the full rate would save nothing.
    if parameters.stillRate >= rate { parameters.enabled = false }
    self.adaptive = AdaptiveSampling(parameters: parameters)
    stillInterval = .seconds(1 / max(parameters.stillRate, 0.01))
    do {
      for axis in PollSampler.axes {
        files.append(
          try SysfsAttribute(path: "\(description.facts.syspath)/in_accel_\(axis)_raw"))
      }
      _ = FrequencySetting.apply(
        target: rate, description: description, journal: journal, logger: logger)
      let timer = try loop.makeTimer { [weak self] in self?.poll() }
      try timer.schedule(after: interval, interval: interval)
      self.timer = timer
    } catch {
      close(deviceGone: error.isDeviceGone)
      throw error
    }
    // The first reading goes out as soon as the caller's callback returns.
    loop.post { [weak self] in self?.poll() }
  }

  deinit {
    close(deviceGone: false)
    buffer.deallocate()
  }

  func stop() { close(deviceGone: false) }

  /// Writes the sampling frequency (and what else it set) again.
  func rearm() {
    guard !stopped else { return }
    do {
      try journal.rewrite()
    } catch {
      logger.warning("\(description.sysname): cannot write its settings again: \(error)")
    }
  }

  private func close(deviceGone: Bool) {
    if stopped { return }
    stopped = true
    timer?.cancel()
    timer = nil
    for file in files { file.close() }
    files.removeAll()
    journal.restore(deviceGone: deviceGone)
  }

  private enum AxisRead {
    case value(Double)
    case bad
    case gone
  }

  /// One reading: three `pread`s, each parsed strictly; any bad axis skips the reading.
  private func poll() {
    guard !stopped, files.count == 3 else { return }
    var failed = false
    var x = 0.0
    var y = 0.0
    var z = 0.0
    switch read(axis: 0) {
    case .value(let v): x = v
    case .bad: failed = true
    case .gone: return
    }
    switch read(axis: 1) {
    case .value(let v): y = v
    case .bad: failed = true
    case .gone: return
    }
    switch read(axis: 2) {
    case .value(let v): z = v
    case .bad: failed = true
    case .gone: return
    }
    if failed {
      skipped += 1
      backOff()
      return
    }
    if backoff.succeeded() {
      adaptive.reset()
      reschedule(interval)
      problems.clear(
        "backoff", logger: logger,
        "\(description.sysname): reading at \(AvailableValues.format(rate)) Hz again")
    }
    if !activeProblems.isEmpty {
      for key in activeProblems.sorted() {
        problems.clear(key, logger: logger, "\(description.sysname): readings valid again")
      }
      activeProblems.removeAll()
    }
    let now = MonotonicTime(nanoseconds: Clock.monotonicNanoseconds())
    let acceleration = description.calibrate(x: x, y: y, z: z)
    adapt(to: acceleration, at: now)
    handler(.reading(Reading(time: now, value: .acceleration(acceleration))))
  }

  /// Switches the timer between the full and the still rate when the pace changes.
  private func adapt(to acceleration: Vector3, at time: MonotonicTime) {
    let before = adaptive.pace
    let pace = adaptive.observe(acceleration, at: time.seconds)
    guard pace != before, !stopped, !backoff.isBackingOff else { return }
    reschedule(pace == .still ? stillInterval : interval)
    logger.debug(
      "\(description.sysname): \(pace == .still ? "still" : "moving"), reading at "
        + "\(AvailableValues.format(pace == .still ? adaptive.parameters.stillRate : rate)) Hz "
        + "(threshold \(AvailableValues.format(adaptive.threshold)) m/s^2)")
  }

  /// After a second of failed readings, polls less and less often (up to `maximumBackoff`).
  private func backOff() {
    let wasBackingOff = backoff.isBackingOff
    guard let next = backoff.failed(rate: rate) else { return }
    if !wasBackingOff {
      problems.report(
        "backoff", logger: logger,
        "\(description.sysname): every reading failed for a second; reading less often (every "
          + "\(PollBackoff.first.seconds) s, slowing to \(PollBackoff.maximum.seconds) s) "
          + "until one is valid again")
    }
    reschedule(next)
  }

  private func reschedule(_ interval: Duration) {
    do {
      try timer?.schedule(after: interval, interval: interval)
    } catch {
      problems.report(
        "timer", logger: logger,
        "\(description.sysname): cannot reschedule the poll timer: \(error)")
    }
  }

  private func read(axis: Int) -> AxisRead {
    let file = files[axis]
    let result: Result<Double, RawValueProblem>
    do {
      let n = try file.read(into: buffer)
      result = SysfsValue.parseReading(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
    } catch {
      if error.isDeviceGone {
        let reason = "\(file.path): \(error.reason)"
        close(deviceGone: true)
        handler(.gone(reason))
        return .gone
      }
      result = .failure(.readError(error.code))
    }
    switch result {
    case .success(let value): return .value(value)
    case .failure(let problem):
      let name = PollSampler.axes[axis]
      let key = "\(name) \(problem.kind)"
      activeProblems.insert(key)
      problems.report(
        key, logger: logger,
        "\(description.sysname): skipping reading, in_accel_\(name)_raw: \(problem) "
          + "(logged once until readings are valid again)")
      return .bad
    }
  }
}
