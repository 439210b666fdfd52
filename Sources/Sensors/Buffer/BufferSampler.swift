import Glibc
import OrientCore
import OrientLog
import SystemKit

/// Reads an accelerometer's scans from `/dev/iio:deviceN`.
///
/// Start-up, in this order, each change recorded in a `SysfsJournal` (`BufferSetup`): open the
/// node non-blocking (refused with EBUSY when another program reads it; a buffer left enabled
/// with no reader is taken over and disabled), enable exactly the x/y/z accel channels and the
/// timestamp (disabling any other enabled channel), read each enabled channel's `_type` and
/// `_index` to lay out the record, ask for `monotonic` timestamps, attach the device's own
/// trigger when `trigger/current_trigger` exists and is empty, set the sampling frequency and a
/// small buffer length, then enable the buffer. `stop()` closes the node and undoes it all in
/// reverse. Each scan is calibrated once, here, and delivered as a `Reading`.
///
/// A `StallWatchdog` notices a node that stops delivering (re-armed, then handed over to
/// polling after `StallWatchdog.stallsBeforeGivingUp` empty periods); it is the one periodic
/// wakeup of buffered mode, and only while sampling.
///
/// Adaptive sampling: while `AdaptiveSampling` finds the readings still, the `StillStrategy`
/// chosen at start keeps the device from waking orientd (StillStrategies.swift: a hub's change
/// sensitivity, the any-motion trigger, motion events, a hardware FIFO or a raised watermark).
/// Where silence is what was asked for, silence is not a stall: the watchdog then looks only
/// once a `quietCheckInterval`, reading the `_raw` attributes, and the strategy decides what a
/// movement without a scan means.
///
/// A companion (`ScanCompanion`: a BMI160's gyroscope on the same IIO device, read for
/// `SharedIMUBuffer`) has its channels enabled beside the accelerometer's and a reading of its
/// own made from every scan, or from every n-th where it runs slower than the scans come (a
/// BMI160's gyroscope at 25 Hz beside the accelerometer at 50: every 2nd), so that its
/// readings come at the rate announced for it (`companionRate`: a stream's every-n-th). Every
/// still strategy is off then (the companion's readings must not wait for the accelerometer to
/// move), and the scans come at the faster of the two rates.
final class BufferSampler: SensorReader, StillHost {
  let mode = SamplingMode.buffered
  private(set) var rate: Double
  private(set) var skipped = 0
  /// The trigger attached by this sampler, if any (for the sensor description).
  let attachedTrigger: String?
  var trigger: String? { attachedTrigger }
  /// Opened afresh when a base accelerometer comes or goes: whether it may go silent depends
  /// on it.
  let dependsOnPairing: Bool
  /// The record layout in use.
  let layout: ScanLayout
  /// How a still device is kept from waking orientd.
  let strategy: any StillStrategy

  let description: AccelerometerDescription
  let logger: Logger
  let journal: SysfsJournal
  private let deliverEvent: (SensorEvent) -> Void
  private let file: FileDescriptor
  private let buffer: BufferSwitch
  private var watch: EventLoop.Watch?
  private var pending: [UInt8] = []
  private var chunk: [UInt8]
  private let xElement: ScanLayout.Element
  private let yElement: ScanLayout.Element
  private let zElement: ScanLayout.Element
  private let timestampElement: ScanLayout.Element?
  private let converter: TimestampConverter
  private var problems = LogOnce()
  private var stopped = false
  private var stallWatchdog: StallWatchdog?
  /// Decides between waking per scan and per still interval.
  private var adaptive: AdaptiveSampling
  /// The last reading delivered (for the quiet check).
  private var lastAcceleration: Vector3?
  /// How often a device that was asked to be silent is checked with a polled read.
  private let quietCheckInterval: Duration
  /// The companion read from the same scans, with its elements in the layout.
  private let companion: (info: MotionDescription, elements: [ScanLayout.Element])?
  private let deliverCompanion: ((SensorEvent) -> Void)?
  /// The companion's sampling frequency (the scans' when the device has one frequency).
  private(set) var companionRate: Double = 0
  /// Scans per companion reading (`scansPerReading`), and the scans since its last one.
  private var companionEvery = 1
  private var companionScans = 0
  /// The accelerometer's rate asked for by the configuration (`buffered-rate`).
  private let bufferedRate: Double

  /// How long without a scan counts as a stall.
  var stallTimeout: Duration { StallWatchdog.timeout(rate: rate) }

  static let accelChannels = ["in_accel_x", "in_accel_y", "in_accel_z"]

  /// Sets the device up and starts watching its node, in the order the type's comment gives.
  ///
  /// `mayGoSilent` false keeps the strategies that stop the scans of a still device (hub
  /// sensitivity, motion trigger, motion events) out of the choice: for readings paired with
  /// another sensor's, and for `calibrate` and `record`.
  ///
  /// - Throws: `SensorError` saying what failed; everything changed is restored first.
  init(
    description: AccelerometerDescription, sampling: SamplingConfiguration, mayGoSilent: Bool,
    triggers: [TriggerInfo], deviceParent: String?, loop: EventLoop, logger: Logger,
    companion: ScanCompanion? = nil, deliver: @escaping (SensorEvent) -> Void
  ) throws(SensorError) {
    self.description = description
    deliverCompanion = companion?.deliver
    self.logger = logger
    deliverEvent = deliver
    quietCheckInterval = sampling.quietCheckInterval
    dependsOnPairing = sampling.silentWhileStill
    let sys = description.facts.syspath
    let device = description.sysname
    let setup = BufferSetup(
      syspath: sys, device: device, journal: SysfsJournal(logger: logger), logger: logger)
    journal = setup.journal
    buffer = BufferSwitch(syspath: sys)
    guard let devnode = description.facts.devnode else {
      throw SensorError(.unavailable, "\(device) has no device node")
    }
    let node = try setup.openNode(devnode)
    let companionChannels = companion?.info.scanElements ?? []
    let scanLayout = try setup.enableChannels(
      BufferSampler.accelChannels + companionChannels, timestamp: true)
    layout = scanLayout
    guard let x = layout.element(named: "in_accel_x"),
      let y = layout.element(named: "in_accel_y"), let z = layout.element(named: "in_accel_z")
    else {
      throw setup.fail("\(device): accel channels missing from the scan layout")
    }
    let companionElements = companionChannels.compactMap { scanLayout.element(named: $0) }
    guard companionElements.count == companionChannels.count else {
      throw setup.fail("\(device): \(companionChannels) missing from the scan layout")
    }
    self.companion = companion.map { ($0.info, companionElements) }
    (xElement, yElement, zElement) = (x, y, z)
    timestampElement = layout.element(named: ScanLayout.timestampChannel)
    let clock = setup.timestampClock(hasTimestamps: timestampElement != nil)
    converter = TimestampConverter(clock: clock)
    attachedTrigger = try setup.attachTrigger(
      deviceName: description.facts.name, deviceNumber: description.facts.deviceNumber,
      deviceParent: deviceParent, triggers: triggers)
    bufferedRate = sampling.bufferedRate
    let rates = FrequencySetting.apply(
      description, companion: companion.map { ($0.info, $0.requestedRate) },
      bufferedRate: sampling.bufferedRate, journal: journal, logger: logger)
    (rate, companionRate) = rates
    companionEvery = BufferSampler.scansPerReading(
      scans: rates.accelerometer, companion: rates.companion)
    try setup.enableBuffer(length: sampling.bufferLength, node: node)
    let scansPerStillInterval = Int(
      (rate / max(sampling.adaptive.stillRate, 0.01)).rounded(.down))
    // The watermark cannot exceed the buffer length; at least two scans or it saves nothing.
    let stillWatermark =
      Sysfs.exists("\(sys)/buffer/watermark")
      ? max(1, min(scansPerStillInterval, sampling.bufferLength)) : 1
    strategy = StillStrategies.choose(
      setup, description: description, adaptive: sampling.adaptive.enabled,
      sensitivity: sampling.hysteresis, silent: mayGoSilent && companion == nil,
      stillWatermark: companion == nil ? stillWatermark : 1,
      attachedTrigger: attachedTrigger, triggers: triggers, deviceParent: deviceParent,
      node: node)
    var parameters = sampling.adaptive
    if strategy is NoStillStrategy || companion != nil { parameters.enabled = false }
    adaptive = AdaptiveSampling(parameters: parameters)
    chunk = [UInt8](repeating: 0, count: max(layout.recordSize * 16, 256))
    file = node
    do {
      try startWatching(on: loop)
    } catch {
      watch?.cancel()
      watch = nil
      stallWatchdog?.cancel()
      stallWatchdog = nil
      strategy.stop()
      node.close()
      throw setup.fail("\(device): cannot watch \(devnode): \(error)", error)
    }
    logger.info(
      "\(device): buffered\(companion.map { " with its \($0.info.kind.noun)" } ?? ""), "
        + "\(layout.elements.count) channels, \(layout.recordSize)-byte scans"
        + " (\(layout.elements.map { "\($0.channel.name) \($0.channel.type)@\($0.offset)" }.joined(separator: ", "))),"
        + " timestamps \(timestampElement == nil ? "from read time" : "from the kernel, \(clock.rawValue)")"
        + "; while still: \(strategy.name)"
    )
  }

  /// The node's reader, the stall watchdog and the strategy's own watches.
  private func startWatching(on loop: EventLoop) throws(SystemError) {
    watch = try loop.watch(file.rawValue, for: .readable) { [weak self] events in
      self?.readable(events)
    }
    stallWatchdog = try StallWatchdog(loop: loop, rate: rate) { [weak self] in self?.watchdog() }
    try strategy.start(self, loop: loop)
  }

  deinit { close(deviceGone: false) }

  func stop() { close(deviceGone: false) }

  private func close(deviceGone: Bool) {
    if stopped { return }
    stopped = true
    watch?.cancel()
    watch = nil
    stallWatchdog?.cancel()
    stallWatchdog = nil
    strategy.stop()
    file.close()
    if !deviceGone {
      // The kernel takes a watermark or trigger back only with the buffer disabled; the
      // journal restores `buffer/enable` itself, after the settings changed once it was on.
      try? buffer.set(false)
    }
    journal.restore(deviceGone: deviceGone)
  }

  // MARK: StillHost

  var stillThreshold: Double { adaptive.threshold }
  var settleTime: Double { adaptive.parameters.settleTime }
  var isStopped: Bool { stopped }

  func gone(_ reason: String) {
    close(deviceGone: true)
    deliverEvent(.gone(reason))
  }

  func report(_ key: String, _ message: String) {
    problems.report(key, logger: logger, message)
  }

  func resetAdaptive() { adaptive.reset() }

  func repeatReading(_ acceleration: Vector3) {
    deliverEvent(
      .reading(
        Reading(
          time: MonotonicTime(nanoseconds: Clock.monotonicNanoseconds()),
          value: .acceleration(acceleration))))
  }

  @discardableResult
  func reconfigure(_ what: String, _ change: () throws(SystemError) -> Void) -> Bool {
    do {
      try buffer.cycle(change)
      logger.debug("\(description.sysname): \(what)")
      return true
    } catch {
      if error.isDeviceGone {
        gone("\(buffer.enablePath): \(error.reason)")
        return false
      }
      report(
        "reconfigure", "\(description.sysname): cannot switch to \(what): \(error) (logged once)")
      return false
    }
  }

  @discardableResult
  func setBuffer(enabled: Bool, _ what: String) -> Bool {
    do {
      try buffer.set(enabled)
      logger.debug("\(description.sysname): \(what)")
      return true
    } catch {
      if error.isDeviceGone {
        gone("\(buffer.enablePath): \(error.reason)")
        return false
      }
      report("enable", "\(description.sysname): cannot switch to \(what): \(error) (logged once)")
      if !enabled { try? buffer.set(true) }
      return false
    }
  }

  /// The watchdog's period: `quietCheckInterval` while silence is expected, else `stallTimeout`.
  func slowDownWatchdog(_ slow: Bool) {
    do {
      try stallWatchdog?.slowDown(to: slow ? quietCheckInterval : nil)
    } catch {
      report("timer", "\(description.sysname): cannot reschedule the stall watchdog: \(error)")
    }
  }

  func stallNoticed(_ message: String, giveUp: String) {
    let handOver = stallWatchdog?.countStall() ?? false
    report("stall", message)
    rearm()
    if stopped { return }
    if handOver { deliverEvent(.stalled(giveUp)) }
  }

  // MARK: Reading

  private func readable(_ events: EventLoop.Events) {
    guard !stopped else { return }
    var readAny = false
    for _ in 0..<16 {
      let n: Int?
      do {
        n = try chunk.withUnsafeMutableBytes { raw in
          Result { () throws(SystemError) in try file.read(into: raw) }
        }.get()
      } catch {
        if error.isDeviceGone {
          gone("\(file.path): \(error.reason)")
          return
        }
        report(
          "read-\(error.code.rawValue)",
          "\(description.sysname): reading \(file.path): \(error) (logged once)")
        break
      }
      guard let count = n else { break }  // EAGAIN: drained
      if count == 0 {
        gone("\(file.path): end of file")
        return
      }
      readAny = true
      dataArrived()
      pending.append(contentsOf: chunk[0..<count])
      if count < chunk.count { break }
    }
    if !readAny && !events.intersection([.hangup, .error]).isEmpty {
      gone("\(file.path): hang-up")
      return
    }
    deliver()
  }

  private func dataArrived() {
    if stallWatchdog?.dataArrived() == true {
      problems.clear("stall", logger: logger, "\(description.sysname): scans flow again")
    }
  }

  private func deliver() {
    let size = layout.recordSize
    let records = pending.count / size
    guard records > 0 else { return }
    let now = Clock.monotonicNanoseconds()
    let clockNow = converter.clock == .monotonic ? now : BufferSampler.read(converter.clock)
    let period = Int64((1e9 / max(rate, 0.1)).rounded())
    strategy.batchArrived(lastScan: lastScanTime(records: records, size: size), self)
    if stopped { return }
    var paceMoved = false
    var last: Vector3?
    pending.withUnsafeBytes { all in
      for i in 0..<records {
        let record = UnsafeRawBufferPointer(rebasing: all[(i * size)..<((i + 1) * size)])
        guard let x = layout.value(of: xElement, in: record),
          let y = layout.value(of: yElement, in: record),
          let z = layout.value(of: zElement, in: record)
        else {
          skipped += 1
          continue
        }
        // Without kernel timestamps, spread a batch back from now at the sampling period.
        var time = now - Int64(records - 1 - i) * period
        if let element = timestampElement, let stamp = layout.value(of: element, in: record) {
          if let converted = plausibleTime(stamp, clockNow: clockNow, now: now) {
            time = converted
          } else {
            report(
              "timestamp",
              "\(description.sysname): kernel timestamp \(stamp) (\(converter.clock.rawValue))"
                + " is not near now; using read times instead (logged once)")
          }
        }
        let before = adaptive.pace
        let acceleration = description.calibrate(x: Double(x), y: Double(y), z: Double(z))
        let stamp = MonotonicTime(nanoseconds: time)
        if adaptive.observe(acceleration, at: stamp.seconds) != before { paceMoved = true }
        lastAcceleration = acceleration
        last = acceleration
        deliverEvent(.reading(Reading(time: stamp, value: .acceleration(acceleration))))
        if stopped { return }
        if let companion, let deliverCompanion, companionIsDue() {
          let counts = companion.elements.flatMap { layout.values(of: $0, in: record) ?? [] }
          if let value = MotionValues.value(companion.info, counts.map(Double.init)) {
            deliverCompanion(.reading(Reading(time: stamp, value: value)))
            if stopped { return }
          }
        }
      }
    }
    if stopped { return }
    pending.removeFirst(records * size)
    if let last { strategy.delivered(last, period: .nanoseconds(period), self) }
    if paceMoved { strategy.paceChanged(to: adaptive.pace, self) }
  }

  /// The time of the batch's last scan, if the kernel stamped it plausibly.
  private func lastScanTime(records: Int, size: Int) -> MonotonicTime? {
    guard let element = timestampElement else { return nil }
    let now = Clock.monotonicNanoseconds()
    let clockNow = converter.clock == .monotonic ? now : BufferSampler.read(converter.clock)
    return pending.withUnsafeBytes { all in
      let record = UnsafeRawBufferPointer(rebasing: all[((records - 1) * size)..<(records * size)])
      // A stamp that cannot be right says nothing about when: count it as now (waking up for
      // nothing costs a moment at the full rate; staying still would miss a turn).
      guard let stamp = layout.value(of: element, in: record),
        let time = plausibleTime(stamp, clockNow: clockNow, now: now)
      else { return MonotonicTime(nanoseconds: now) }
      return MonotonicTime(nanoseconds: time)
    }
  }

  /// A kernel timestamp as `CLOCK_MONOTONIC` nanoseconds, if it is near `now` (at most 1 s
  /// ahead, 60 s behind: a buffer holds no older scans); nil for one that cannot be right (a
  /// driver's counter, a clock stepped under us).
  private func plausibleTime(_ stamp: Int64, clockNow: Int64, now: Int64) -> Int64? {
    let converted = converter.monotonic(stamp, clockNow: clockNow, monotonicNow: now)
    return converted <= now + 1_000_000_000 && converted >= now - 60_000_000_000
      ? converted : nil
  }

  // MARK: Watchdog

  /// A watchdog period without a scan: a stall (`StallWatchdog`), unless silence was asked
  /// for.
  private func watchdog() {
    guard !stopped else { return }
    if strategy.expectsSilence {
      quietCheck()
      return
    }
    guard let silence = stallWatchdog?.silence(description.sysname, path: file.path) else {
      return
    }
    stallNoticed(silence.message, giveUp: silence.giveUp)
  }

  /// A silent device checked with one polled read: if it moved by twice the threshold without
  /// a scan, the strategy missed it.
  private func quietCheck() {
    let sys = description.facts.syspath
    var values: [Double] = []
    for axis in ["x", "y", "z"] {
      guard let text = Sysfs.readIfPresent("\(sys)/in_accel_\(axis)_raw"),
        let value = try? SysfsValue.parseDecimal(text)
      else {
        // Many drivers refuse polled reads while buffered (EBUSY): silence is trusted then.
        return
      }
      values.append(value)
    }
    let now = description.calibrate(x: values[0], y: values[1], z: values[2])
    guard let before = lastAcceleration,
      (now - before).magnitude > 2 * max(adaptive.threshold, strategy.threshold)
    else { return }
    strategy.missedMovement(AvailableValues.format((now - before).magnitude), self)
  }

  /// The companion's frequency for `requested` readings a second (`MotionDescription.
  /// bufferedFrequency(for:)`; the accelerometer's too where one attribute serves both): the
  /// buffer off, the frequencies written, the buffer on again; the watchdog follows the rate.
  func retuneCompanion(to requested: Double) {
    guard !stopped, let info = companion?.info else { return }
    do {
      try buffer.cycle { () throws(SystemError) in
        (rate, companionRate) = FrequencySetting.apply(
          description, companion: (info, requested), bufferedRate: bufferedRate,
          journal: journal, logger: logger)
        companionEvery = BufferSampler.scansPerReading(scans: rate, companion: companionRate)
        companionScans = 0
      }
      try stallWatchdog?.retune(rate: rate)
    } catch {
      if error.isDeviceGone {
        gone("\(buffer.enablePath): \(error.reason)")
        return
      }
      report("retune", "\(description.sysname): cannot retune to \(requested) Hz: \(error)")
    }
  }

  /// Scans per companion reading when the scans come at `scans` a second and the companion
  /// samples at `companion` (0: unknown, every scan).
  static func scansPerReading(scans: Double, companion: Double) -> Int {
    guard companion > 0, scans > companion else { return 1 }
    return max(1, Int(min((scans / companion).rounded(), 1000)))
  }

  /// Counts a scan for the companion: whether it makes one of its readings.
  private func companionIsDue() -> Bool {
    companionScans += 1
    guard companionScans >= companionEvery else { return false }
    companionScans = 0
    return true
  }

  /// `buffer/enable` 0, every setting written again, then 1: restarts the trigger and the
  /// buffer on real drivers, and gives a device that lost its configuration (or waits for it
  /// to be written: a sensor hub after a resume) its settings back. The journal still holds
  /// the values from before sampling, so `stop()` restores them as usual.
  func rearm() {
    guard !stopped else { return }
    do {
      try buffer.cycle { () throws(SystemError) in
        try journal.rewrite(skipping: [buffer.enablePath])
      }
    } catch {
      if error.isDeviceGone {
        gone("\(buffer.enablePath): \(error.reason)")
        return
      }
      report("rearm", "\(description.sysname): cannot re-enable the buffer: \(error)")
    }
  }

  static func read(_ clock: TimestampClock) -> Int64 {
    var ts = timespec()
    clock_gettime(clockid_t(clock.clockID), &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
  }
}

extension BufferSetup {
  /// Asks for timestamps in CLOCK_MONOTONIC if the kernel lets us choose (Linux 4.10+).
  ///
  /// - Returns: the clock the timestamps will be in.
  func timestampClock(hasTimestamps: Bool) -> TimestampClock {
    var clock = TimestampClock.realtime
    let clockPath = "\(syspath)/current_timestamp_clock"
    if let text = Sysfs.readIfPresent(clockPath) {
      clock = TimestampClock(attribute: text) ?? .realtime
      if clock != .monotonic, hasTimestamps {
        do {
          try journal.set(clockPath, TimestampClock.monotonic.rawValue)
          clock = Sysfs.readIfPresent(clockPath).flatMap { TimestampClock(attribute: $0) } ?? clock
        } catch {
          logger.info(
            "\(device): cannot set current_timestamp_clock (\(error)); converting from \(clock)")
        }
      }
    }
    return clock
  }
}
