import Glibc
import OrientCore
import OrientLog
import SystemKit

/// Why a buffered sampler could not start; the manager then polls instead (mode `auto`).
public struct BufferUnavailable: Error, CustomStringConvertible, Sendable {
  /// What went wrong, naming the device and attribute.
  public var reason: String
  /// Whether the device disappeared while being set up.
  public var deviceGone: Bool

  /// The reason.
  public var description: String { reason }
}

/// Reads scans from `/dev/iio:deviceN`.
///
/// Start-up, in this order, each change recorded in a `SysfsJournal`: open the node
/// non-blocking (refused with EBUSY when another program reads it; a buffer left enabled with
/// no reader is taken over and disabled), enable exactly the x/y/z accel channels and the timestamp
/// (disabling any other enabled channel), read each enabled channel's `_type` and `_index` to
/// lay out the record, ask for `monotonic` timestamps, attach the device's own trigger when
/// `trigger/current_trigger` exists and is empty, set the sampling frequency and a small buffer
/// length, then enable the buffer. `stop()` closes the node and undoes it all in reverse.
///
/// A stall watchdog checks every `stallTimeout` (10 sample periods, at least 1 s) that scans
/// arrived since the last check; a device whose interrupt got lost or whose trigger stopped
/// would otherwise leave the orientation frozen without a word. The first empty period is
/// logged once and the buffer re-armed (`buffer/enable` 0 then 1, which restarts the trigger
/// on real drivers); after `stallsBeforeGivingUp` empty periods in a row the owner is told
/// (`.stalled`) so that it can poll instead, and the buffer keeps being re-armed quietly until
/// it is replaced. When scans come again the episode ends with one line saying after how long.
/// The watchdog is the one periodic wakeup of buffered mode, and only while sampling.
///
/// Adaptive sampling: the device keeps its rate, but while `AdaptiveSampling` finds the
/// readings still, `buffer/watermark` is raised so that the kernel wakes orientd only once a
/// still interval's worth of scans has queued (the detector still sees every scan, up to one
/// still interval late); the first departing scan lowers it to 1 again. The kernel accepts a
/// new watermark only while the buffer is disabled, so each change is `buffer/enable` 0,
/// the watermark, then 1 (recorded in the journal and restored on stop). Without the
/// attribute (kernels before 4.2) nothing changes.
final class BufferSampler: Sampler {
  let mode = SamplingMode.buffered
  private(set) var rate: Double
  private(set) var skipped = 0

  /// The trigger attached by this sampler, if any (for the sensor description).
  private(set) var attachedTrigger: String?
  /// The record layout in use.
  let layout: ScanLayout

  private let description: AccelerometerDescription
  private let logger: Logger
  private let handler: (SamplerEvent) -> Void
  private let journal: SysfsJournal
  private let file: FileDescriptor
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
  private var stallTimer: EventLoop.Timer?
  /// Whether scan bytes arrived since the watchdog last looked.
  private var sawData = false
  /// Watchdog periods in a row without a scan.
  private var emptyPeriods = 0
  /// When the current stall began (`CLOCK_MONOTONIC` ns): the last data seen.
  private var lastData: Duration = .zero
  /// Decides between waking per scan and per still interval.
  private var adaptive: AdaptiveSampling
  /// Scans per wakeup while still (1: adaptation off or no `buffer/watermark`).
  private let stillWatermark: Int

  /// How long without a scan counts as a stall.
  var stallTimeout: Duration { max(.seconds(1), .seconds(10 / max(rate, 0.1))) }
  /// Empty watchdog periods before the owner is told.
  static let stallsBeforeGivingUp = 3

  static let accelChannels = ["in_accel_x", "in_accel_y", "in_accel_z"]

  /// Sets the device up and starts watching its node, in the order the type's comment gives
  /// (each step is a method of `Setup`).
  ///
  /// - Throws: `BufferUnavailable` saying what failed; everything changed is restored first.
  init(
    description: AccelerometerDescription, rate target: Double, bufferLength: Int,
    adaptive: AdaptiveSampling.Parameters = AdaptiveSampling.Parameters(),
    triggers: [TriggerInfo], deviceParent: String?, loop: EventLoop, logger: Logger,
    handler: @escaping (SamplerEvent) -> Void
  ) throws(BufferUnavailable) {
    self.description = description
    self.logger = logger
    self.handler = handler
    let setup = Setup(
      description: description, journal: SysfsJournal(logger: logger), logger: logger)
    journal = setup.journal
    let device = description.sysname
    guard let devnode = description.facts.devnode else {
      throw BufferUnavailable(reason: "\(device) has no device node", deviceGone: false)
    }
    let node = try setup.openNode(devnode)
    layout = try setup.enableChannels()
    (xElement, yElement, zElement) = try setup.accelElements(in: layout)
    timestampElement = layout.element(named: ScanLayout.timestampChannel)
    let clock = setup.timestampClock(hasTimestamps: timestampElement != nil)
    converter = TimestampConverter(clock: clock)
    attachedTrigger = try setup.attachTrigger(triggers: triggers, deviceParent: deviceParent)
    rate =
      FrequencySetting.apply(
        target: target, description: description, journal: setup.journal, logger: logger)
      ?? target
    try setup.enableBuffer(length: bufferLength)
    let scansPerStillInterval = Int((rate / max(adaptive.stillRate, 0.01)).rounded(.down))
    var parameters = adaptive
    if Sysfs.exists("\(description.facts.syspath)/buffer/watermark") {
      // The watermark cannot exceed the buffer length; at least two scans or it saves nothing.
      stillWatermark = max(1, min(scansPerStillInterval, bufferLength))
    } else {
      stillWatermark = 1
    }
    if stillWatermark < 2 { parameters.enabled = false }
    self.adaptive = AdaptiveSampling(parameters: parameters)
    chunk = [UInt8](repeating: 0, count: max(layout.recordSize * 16, 256))
    file = node
    do {
      try startWatching(on: loop)
    } catch {
      watch?.cancel()
      watch = nil
      node.close()
      throw setup.fail("\(device): cannot watch \(devnode): \(error)", error)
    }
    lastData = Clock.monotonic()
    logger.info(
      "\(device): buffered, \(layout.elements.count) channels, \(layout.recordSize)-byte scans"
        + " (\(layout.elements.map { "\($0.channel.name) \($0.channel.type)@\($0.offset)" }.joined(separator: ", "))),"
        + " timestamps \(timestampElement == nil ? "from read time" : "from the kernel, \(clock.rawValue)")"
    )
  }

  /// The node's reader and the stall watchdog.
  private func startWatching(on loop: EventLoop) throws(SystemError) {
    watch = try loop.watch(file.rawValue, for: .readable) { [weak self] events in
      self?.readable(events)
    }
    let timer = try loop.makeTimer { [weak self] in self?.watchdog() }
    try timer.schedule(after: stallTimeout, interval: stallTimeout)
    stallTimer = timer
  }

  /// The steps of setting a device up; a failing step restores what the journal recorded.
  private struct Setup {
    let description: AccelerometerDescription
    let journal: SysfsJournal
    let logger: Logger

    var sys: String { description.facts.syspath }
    var device: String { description.sysname }
    var scanDirectory: String { "\(sys)/scan_elements" }

    /// Restores the settings changed so far; the error to throw.
    func fail(_ reason: String, _ error: SystemError? = nil) -> BufferUnavailable {
      journal.restore(deviceGone: error?.isDeviceGone ?? false)
      return BufferUnavailable(reason: reason, deviceGone: error?.isDeviceGone ?? false)
    }

    /// The steps shared with the ambient sensors' buffered source, for this device.
    var shared: BufferSetup {
      BufferSetup(syspath: sys, device: device, journal: journal, logger: logger)
    }

    /// Opens the node non-blocking and takes over a buffer left enabled with no reader.
    func openNode(_ devnode: String) throws(BufferUnavailable) -> FileDescriptor {
      try shared.openNode(devnode)
    }

    /// Enables exactly the x, y, z accel channels and the timestamp, and lays out the record.
    func enableChannels() throws(BufferUnavailable) -> ScanLayout {
      try shared.enableChannels(BufferSampler.accelChannels, timestamp: true)
    }

    /// The x, y and z elements of `layout`.
    func accelElements(in layout: ScanLayout) throws(BufferUnavailable) -> (
      ScanLayout.Element, ScanLayout.Element, ScanLayout.Element
    ) {
      guard let x = layout.element(named: "in_accel_x"),
        let y = layout.element(named: "in_accel_y"), let z = layout.element(named: "in_accel_z")
      else {
        throw fail("\(device): accel channels missing from the scan layout")
      }
      return (x, y, z)
    }

    /// Asks for timestamps in CLOCK_MONOTONIC if the kernel lets us choose (Linux 4.10+).
    ///
    /// - Returns: the clock the timestamps will be in.
    func timestampClock(hasTimestamps: Bool) -> TimestampClock {
      var clock = TimestampClock.realtime
      let clockPath = "\(sys)/current_timestamp_clock"
      if let text = Sysfs.readIfPresent(clockPath) {
        clock = TimestampClock(attribute: text) ?? .realtime
        if clock != .monotonic, hasTimestamps {
          do {
            try journal.set(clockPath, TimestampClock.monotonic.rawValue)
            clock =
              Sysfs.readIfPresent(clockPath).flatMap { TimestampClock(attribute: $0) } ?? clock
          } catch {
            logger.info(
              "\(device): cannot set current_timestamp_clock (\(error)); converting from \(clock)")
          }
        }
      }
      return clock
    }

    /// Attaches the device's own trigger when it needs one and has none.
    ///
    /// - Returns: the trigger attached, if any.
    func attachTrigger(triggers: [TriggerInfo], deviceParent: String?) throws(BufferUnavailable)
      -> String?
    {
      let triggerPath = "\(sys)/trigger/current_trigger"
      guard let current = Sysfs.readIfPresent(triggerPath) else { return nil }
      guard current.isEmpty else {
        logger.debug("\(device): keeping current trigger \(current)")
        return nil
      }
      guard
        let (trigger, reason) = TriggerChoice.choose(
          deviceName: description.facts.name, deviceNumber: description.facts.deviceNumber,
          deviceParent: deviceParent, triggers: triggers)
      else {
        logger.info("\(device): no trigger of its own found; trying without one")
        return nil
      }
      do {
        try journal.set(triggerPath, trigger.name)
      } catch {
        throw fail("\(device): cannot attach trigger \(trigger.name): \(error)", error)
      }
      logger.info("\(device): attached trigger \(trigger.name) (\(reason))")
      return trigger.name
    }

    /// Sets a small buffer length (where the device has one) and enables the buffer.
    func enableBuffer(length: Int) throws(BufferUnavailable) {
      do {
        if Sysfs.exists("\(sys)/buffer/length") {
          try journal.set("\(sys)/buffer/length", String(length))
        }
        // Adaptive sampling may change the watermark later; the kernel refuses it while the
        // buffer is enabled (EBUSY), so its original value must be restored after the buffer
        // is disabled, that is recorded before the enable.
        if Sysfs.exists("\(sys)/buffer/watermark") {
          try journal.remember("\(sys)/buffer/watermark")
        }
        try journal.set("\(sys)/buffer/enable", "1")
      } catch {
        throw fail("\(device): cannot enable the buffer: \(error)", error)
      }
    }
  }

  deinit { close(deviceGone: false) }

  func stop() { close(deviceGone: false) }

  private func close(deviceGone: Bool) {
    if stopped { return }
    stopped = true
    watch?.cancel()
    watch = nil
    stallTimer?.cancel()
    stallTimer = nil
    file.close()
    journal.restore(deviceGone: deviceGone)
  }

  private func gone(_ reason: String) {
    close(deviceGone: true)
    handler(.gone(reason))
  }

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
        problems.report(
          "read-\(error.code.rawValue)", logger: logger,
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
    sawData = true
    lastData = Clock.monotonic()
    if emptyPeriods > 0 {
      emptyPeriods = 0
      problems.clear(
        "stall", logger: logger,
        "\(description.sysname): scans flow again")
    }
  }

  /// Runs every `stallTimeout`: a period without a scan is a stall (see the type's comment).
  private func watchdog() {
    guard !stopped else { return }
    if sawData {
      sawData = false
      return
    }
    emptyPeriods += 1
    let silent = (Clock.monotonic() - lastData).nanoseconds / 1_000_000
    problems.report(
      "stall", logger: logger,
      "\(description.sysname): no scan from \(file.path) for \(silent) ms; re-enabling the buffer "
        + "(logged once until scans flow again)")
    rearm()
    if stopped { return }
    if emptyPeriods == BufferSampler.stallsBeforeGivingUp {
      handler(.stalled("no scan for \(silent) ms, also after re-enabling the buffer"))
    }
  }

  /// `buffer/enable` 0 then 1: restarts the trigger and the buffer on real drivers. The
  /// journal still holds the value from before sampling, so `stop()` restores it as usual.
  private func rearm() {
    let path = "\(description.facts.syspath)/buffer/enable"
    do {
      try Sysfs.write(path, "0")
      try Sysfs.write(path, "1")
    } catch {
      if error.isDeviceGone {
        gone("\(path): \(error.reason)")
        return
      }
      problems.report(
        "rearm", logger: logger, "\(description.sysname): cannot re-enable the buffer: \(error)")
    }
  }

  private func deliver() {
    let size = layout.recordSize
    let records = pending.count / size
    guard records > 0 else { return }
    let now = Clock.monotonicNanoseconds()
    let clockNow = converter.clock == .monotonic ? now : BufferSampler.read(converter.clock)
    let period = Int64((1e9 / max(rate, 0.1)).rounded())
    var paceChanged = false
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
          let converted = converter.monotonic(stamp, clockNow: clockNow, monotonicNow: now)
          if converted <= now + 1_000_000_000 && converted >= now - 60_000_000_000 {
            time = converted
          } else {
            problems.report(
              "timestamp", logger: logger,
              "\(description.sysname): kernel timestamp \(stamp) (\(converter.clock.rawValue))"
                + " is not near now; using read times instead (logged once)")
          }
        }
        let before = adaptive.pace
        let pace = adaptive.observe(
          description.calibrate(x: Double(x), y: Double(y), z: Double(z)),
          at: Double(time) / 1e9)
        if pace != before { paceChanged = true }
        handler(.reading(RawReading(timestamp: time, x: Double(x), y: Double(y), z: Double(z))))
        if stopped { return }
      }
    }
    if stopped { return }
    pending.removeFirst(records * size)
    if paceChanged { setWatermark(adaptive.pace == .still ? stillWatermark : 1) }
  }

  /// Re-enables the buffer with a new watermark (the kernel refuses one while it is enabled).
  private func setWatermark(_ scans: Int) {
    let sys = description.facts.syspath
    do {
      try Sysfs.write("\(sys)/buffer/enable", "0")
      try journal.set("\(sys)/buffer/watermark", String(scans))
      try Sysfs.write("\(sys)/buffer/enable", "1")
      logger.debug(
        "\(description.sysname): \(scans > 1 ? "still" : "moving"), buffer/watermark \(scans)")
    } catch {
      if error.isDeviceGone {
        gone("\(sys)/buffer/watermark: \(error.reason)")
        return
      }
      problems.report(
        "watermark", logger: logger,
        "\(description.sysname): cannot set buffer/watermark to \(scans): \(error) "
          + "(logged once)")
      // Leave the buffer running whatever happened to the watermark.
      try? Sysfs.write("\(sys)/buffer/enable", "1")
    }
  }

  static func read(_ clock: TimestampClock) -> Int64 {
    var ts = timespec()
    clock_gettime(clockid_t(clock.clockID), &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
  }
}
