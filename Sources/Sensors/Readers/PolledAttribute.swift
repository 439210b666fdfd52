import OrientCore
import OrientLog
import SystemKit

/// What polled attributes' texts mean, for `PolledAttributeReader`: a value, or why not.
protocol AttributeParser {
  /// The value `texts` (as read, untrimmed, one for each of the reader's paths in order) hold,
  /// or the problem: its log text, and whether it counts as a failed read (slowing the reader
  /// down) or only skips the value.
  mutating func parse(_ texts: [String]) -> Result<SensorValue, AttributeProblem>
}

/// A value a polled attribute held that is no reading.
struct AttributeProblem: Error {
  /// Said once per episode, after "SYSNAME: PATH holds \"TEXT\", ".
  var message: String
  /// Whether it counts toward `PollBackoff` (garbage) or is a value to skip (an EC's
  /// "unreliable" angle).
  var isFailure: Bool
}

/// Polls sysfs attributes together on a timer and hands their texts to a parser: light,
/// proximity, the compass, applesmc's light (`AmbientAttributeParser`), a hinge angle
/// (`HingeAngleParser`), a gyroscope's or magnetometer's three `_raw` files and a rotation
/// sensor's quaternion (`MotionAttributeParser`). The files stay open while reading and are
/// read again at offset 0 each time (sysfs asks the driver again; `SysfsAttribute`, which also
/// notices a file an emulated sysfs replaced); nothing is open or scheduled once stopped.
///
/// Like the accelerometer's `PollSampler`, a sensor whose every read has failed for a while
/// is read less and less often (`PollBackoff`) until a read works again, and each kind of
/// problem is logged once per episode.
final class PolledAttributeReader<Parser: AttributeParser>: SensorReader {
  let mode = SamplingMode.polled
  private(set) var rate: Double
  /// The device's name, for the log.
  let sysname: String
  /// The poll interval.
  private(set) var interval: Duration
  /// The kind whose requested rates retune the interval, and the rate to poll at for one
  /// (`request(rate:for:)`); nil: the interval stays.
  var ratePolicy: (kind: SensorKind, rate: (Double) -> Double)?
  /// The files polled, read in this order each time.
  let paths: [String]
  private let logger: Logger
  private let deliver: (SensorEvent) -> Void
  private var timer: EventLoop.Timer?
  private var parser: Parser
  private var problems = LogOnce()
  private var files: [SysfsAttribute] = []
  private var backoff = PollBackoff()

  /// Opens `paths` and reads them every `interval`; the first reading is posted to the loop
  /// at once.
  ///
  /// - Throws: `SensorError` if an attribute cannot be opened or the timer made.
  init(
    sysname: String, paths: [String], interval: Duration, parser: Parser, loop: EventLoop,
    logger: Logger, deliver: @escaping (SensorEvent) -> Void
  ) throws(SensorError) {
    self.sysname = sysname
    self.paths = paths
    self.interval = interval
    self.parser = parser
    self.logger = logger
    self.deliver = deliver
    rate = 1 / max(interval.seconds, 0.001)
    do {
      for path in paths { files.append(try SysfsAttribute(path: path)) }
      let timer = try loop.makeTimer { [weak self] in self?.poll() }
      try timer.schedule(after: interval, interval: interval)
      self.timer = timer
    } catch {
      stop()
      throw SensorError(error, "\(sysname): cannot poll")
    }
    logger.debug(
      "\(sysname): polling \(described) every \(interval.nanoseconds / 1_000_000) ms")
    // Posted, not called: the caller (a claim) finishes its bookkeeping before the reading.
    loop.post { [weak self] in self?.poll() }
  }

  deinit { stop() }

  /// The interval that polls `rate` times a second.
  static func interval(rate: Double) -> Duration {
    .nanoseconds(Int64((1e9 / max(rate, 0.1)).rounded()))
  }

  /// Polls at the rate `ratePolicy` gives for `requested` readings a second.
  func request(rate requested: Double, for kind: SensorKind) {
    guard let policy = ratePolicy, policy.kind == kind, timer != nil else { return }
    let next = PolledAttributeReader.interval(rate: policy.rate(requested))
    guard next != interval else { return }
    interval = next
    rate = 1 / max(next.seconds, 0.001)
    logger.debug("\(sysname): polling every \(next.nanoseconds / 1_000_000) ms")
    if !backoff.isBackingOff { reschedule(next) }
  }

  func stop() {
    timer?.cancel()
    timer = nil
    for file in files { file.close() }
    files = []
  }

  /// The paths, for messages.
  private var described: String { paths.joined(separator: ", ") }

  private func poll() {
    guard !files.isEmpty else { return }
    var texts: [String] = []
    for file in files {
      do {
        texts.append(try file.readText())
      } catch {
        if error.isDeviceGone {
          stop()
          deliver(.gone("\(file.path): \(error.reason)"))
          return
        }
        problems.report(
          "read", logger: logger,
          "\(sysname): cannot read \(file.path): \(error) (logged once)")
        failed()
        return
      }
    }
    let value: SensorValue
    switch parser.parse(texts) {
    case .success(let parsed): value = parsed
    case .failure(let problem):
      let held = texts.map { "\"\($0.trimming())\"" }.joined(separator: ", ")
      problems.report(
        "parse", logger: logger,
        "\(sysname): \(described) holds \(held), \(problem.message) (logged once)")
      if problem.isFailure { failed() }
      return
    }
    problems.clear("read", logger: logger, "\(sysname): \(described) readable again")
    problems.clear("parse", logger: logger, "\(sysname): \(described) readable again")
    if backoff.succeeded() { reschedule(interval) }
    deliver(
      .reading(
        Reading(time: MonotonicTime(nanoseconds: Clock.monotonicNanoseconds()), value: value)))
  }

  /// A failed read: after a second's worth of them, read less and less often.
  private func failed() {
    if let slower = backoff.failed(rate: rate) { reschedule(slower) }
  }

  private func reschedule(_ period: Duration) {
    do {
      try timer?.schedule(after: period, interval: period)
    } catch {
      problems.report(
        "timer", logger: logger, "\(sysname): cannot reschedule the poll timer: \(error)")
    }
  }
}

/// A light, proximity or compass attribute, interpreted by `AmbientInterpreter` (a fresh one
/// per reader: a fresh start decides near/far from the first reading alone).
struct AmbientAttributeParser: AttributeParser {
  private var interpreter: AmbientInterpreter

  init(_ info: AmbientDescription) { interpreter = AmbientInterpreter(info) }

  /// The attribute `info` is read from.
  static func path(of info: AmbientDescription) -> String {
    switch info.driver {
    case .iioPoll(let attribute): return "\(info.syspath)/\(attribute)"
    case .hwmonLight, .inputSwitch, .iioBuffer: return "\(info.syspath)/light"
    }
  }

  mutating func parse(_ texts: [String]) -> Result<SensorValue, AttributeProblem> {
    guard let reading = interpreter.interpret(texts.first ?? "") else {
      return .failure(
        AttributeProblem(
          message: "not a \(interpreter.description.kind) reading", isFailure: true))
    }
    return .success(reading.value)
  }
}

/// When reads keep failing, read less often: after a second's worth of failed reads every
/// `first`, doubling up to `maximum`; the first good read restores the rate. Shared by every
/// polled reader, so that a broken bus is not hammered at the full rate.
struct PollBackoff {
  /// The first slowed-down interval, doubled after each further failure.
  static let first: Duration = .milliseconds(250)
  /// The slowest a reader polls while reads fail.
  static let maximum: Duration = .seconds(2)

  /// The slowed-down interval, `nil` at the normal rate.
  private(set) var interval: Duration?
  private var failuresInARow = 0

  /// Whether the reader is slowed down.
  var isBackingOff: Bool { interval != nil }

  /// Counts a failed read at `rate` reads per second.
  ///
  /// - Returns: the interval to poll at from now, when it changes.
  mutating func failed(rate: Double) -> Duration? {
    failuresInARow += 1
    guard failuresInARow >= max(Int(rate.rounded(.up)), 1) else { return nil }
    let next = interval.map { min($0 * 2, PollBackoff.maximum) } ?? PollBackoff.first
    guard next != interval else { return nil }
    interval = next
    return next
  }

  /// Counts a good read.
  ///
  /// - Returns: whether the reader was slowed down (restore its rate).
  mutating func succeeded() -> Bool {
    failuresInARow = 0
    guard interval != nil else { return false }
    interval = nil
    return true
  }
}
