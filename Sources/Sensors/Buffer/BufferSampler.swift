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
///
/// Better than a watermark, where the device offers it (`StillStrategy`, chosen at start, best
/// first): a HID sensor hub's change sensitivity (`in_accel_hysteresis`, written from the
/// learnt noise once the device is first still, or `[sampling] hysteresis`), after which the
/// hub reports only changes; the chip's any-motion trigger attached while still (bmc150,
/// kxcjk-1013), or its motion events armed with the buffer off, so that a still device wakes
/// orientd not at all; a hardware FIFO batching scans with the trigger detached. Where silence
/// is what was asked for, silence is not a stall: the watchdog then looks only once a
/// `quietCheckInterval`, reading the `_raw` attributes, and calls it a stall (hub) or a missed
/// movement (motion wakeups) only if they moved by twice the threshold without a scan. Since a
/// hub with a sensitivity says nothing while a value stays put, its last report is repeated
/// at the device rate for `settle-time` after each report, which is what the detector's
/// time-based evidence needs to commit a turn that ended in a single report.
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
  /// How a still device is kept from waking orientd.
  let stillStrategy: StillStrategy
  /// Whether the strategy's still state is in effect (motion trigger attached, events armed
  /// with the buffer off, FIFO batching).
  private var quiet = false
  /// When the motion trigger was attached (`CLOCK_MONOTONIC` ns).
  private var quietSince: Int64 = 0
  /// Whether the hub's sensitivity has been written (from then on the hub reports changes only).
  private var hubSensitivitySet = false
  /// The event descriptor (motion events).
  private var eventFile: FileDescriptor?
  private var eventWatch: EventLoop.Watch?
  /// Repeats the hub's last report while it is silent after one (hub sensitivity).
  private var holdTimer: EventLoop.Timer?
  private var held: RawReading?
  /// `CLOCK_MONOTONIC` ns after which the last report is no longer repeated.
  private var holdUntil: Int64 = 0
  /// The last calibrated reading delivered (for the quiet check).
  private var lastAcceleration: Vector3?
  /// Whether the stall timer runs at `quietCheckInterval`.
  private var slowWatchdog = false
  /// The hub sensitivity written, m/s^2 (0 before).
  private var sensitivityThreshold = 0.0

  /// How long without a scan counts as a stall.
  var stallTimeout: Duration { max(.seconds(1), .seconds(10 / max(rate, 0.1))) }
  /// Empty watchdog periods before the owner is told.
  static let stallsBeforeGivingUp = 3
  /// How often a device that was asked to be silent is checked with a polled read.
  private let quietCheckInterval: Duration

  static let accelChannels = ["in_accel_x", "in_accel_y", "in_accel_z"]

  /// Sets the device up and starts watching its node, in the order the type's comment gives
  /// (each step is a method of `Setup`).
  ///
  /// `quietCheckInterval` is how often a device asked to be silent is checked with a polled
  /// read (a minute: one wakeup; tests shorten it). `mayGoSilent` false keeps the strategies that stop the scans of a still device (hub
  /// sensitivity, motion trigger, motion events) out of the choice: for readings paired with
  /// another sensor's.
  ///
  /// - Throws: `BufferUnavailable` saying what failed; everything changed is restored first.
  init(
    description: AccelerometerDescription, rate target: Double, bufferLength: Int,
    adaptive: AdaptiveSampling.Parameters = AdaptiveSampling.Parameters(),
    sensitivity: HubSensitivitySetting = .auto, mayGoSilent: Bool = true,
    quietCheckInterval: Duration = .seconds(60),
    triggers: [TriggerInfo], deviceParent: String?, loop: EventLoop, logger: Logger,
    handler: @escaping (SamplerEvent) -> Void
  ) throws(BufferUnavailable) {
    self.description = description
    self.logger = logger
    self.handler = handler
    self.quietCheckInterval = quietCheckInterval
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
    let choice = setup.stillStrategy(
      adaptive: adaptive.enabled, sensitivity: mayGoSilent ? sensitivity : .off,
      silent: mayGoSilent, stillWatermark: stillWatermark,
      attachedTrigger: attachedTrigger, triggers: triggers, deviceParent: deviceParent, node: node)
    stillStrategy = choice.strategy
    eventFile = choice.eventFile
    hubSensitivitySet = choice.sensitivityWritten
    if case .fixed(let threshold) = sensitivity, hubSensitivitySet {
      sensitivityThreshold = threshold
    }
    if stillStrategy == .none || !adaptive.enabled { parameters.enabled = false }
    self.adaptive = AdaptiveSampling(parameters: parameters)
    chunk = [UInt8](repeating: 0, count: max(layout.recordSize * 16, 256))
    file = node
    do {
      try startWatching(on: loop)
    } catch {
      watch?.cancel()
      watch = nil
      eventWatch?.cancel()
      eventWatch = nil
      holdTimer?.cancel()
      holdTimer = nil
      stallTimer?.cancel()
      stallTimer = nil
      eventFile?.close()
      node.close()
      throw setup.fail("\(device): cannot watch \(devnode): \(error)", error)
    }
    if hubSensitivitySet { slowDownWatchdog(true) }
    lastData = Clock.monotonic()
    logger.info(
      "\(device): buffered, \(layout.elements.count) channels, \(layout.recordSize)-byte scans"
        + " (\(layout.elements.map { "\($0.channel.name) \($0.channel.type)@\($0.offset)" }.joined(separator: ", "))),"
        + " timestamps \(timestampElement == nil ? "from read time" : "from the kernel, \(clock.rawValue)")"
        + "; while still: \(stillStrategy.name)"
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
    if let eventFile {
      eventWatch = try loop.watch(eventFile.rawValue, for: .readable) { [weak self] _ in
        self?.motionEvent()
      }
    }
    if case .hubSensitivity = stillStrategy {
      holdTimer = try loop.makeTimer { [weak self] in self?.holdTick() }
    }
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

    /// What `stillStrategy` found: the strategy, the event descriptor (motion events) and whether
    /// a configured hub sensitivity was written already.
    struct StillChoice {
      var strategy: StillStrategy
      var eventFile: FileDescriptor?
      var sensitivityWritten = false
    }

    /// Chooses how a still device is kept from waking orientd (see `StillStrategy`, best
    /// first); a configured hub sensitivity is written here.
    func stillStrategy(
      adaptive: Bool, sensitivity: HubSensitivitySetting, silent: Bool, stillWatermark: Int,
      attachedTrigger: String?, triggers: [TriggerInfo], deviceParent: String?,
      node: FileDescriptor
    ) -> StillChoice {
      if sensitivity != .off,
        let hub = HubSensitivity.find(syspath: sys, scale: description.scale.x)
      {
        guard case .fixed(let threshold) = sensitivity else {
          return StillChoice(strategy: adaptive ? .hubSensitivity(hub) : .none)
        }
        do {
          try journal.set(hub.path, hub.text(forThreshold: threshold))
          logger.info(
            "\(device): hub sensitivity \(AvailableValues.format(threshold)) m/s^2 "
              + "(\(hub.path.split(separator: "/").last ?? "") \(Sysfs.readIfPresent(hub.path) ?? "?"))"
          )
          return StillChoice(strategy: .hubSensitivity(hub), sensitivityWritten: true)
        } catch {
          logger.warning(
            "\(device): cannot set \(hub.path): \(error); the hub reports every interval")
        }
      }
      guard adaptive else { return StillChoice(strategy: .none) }
      if silent, attachedTrigger != nil,
        let motion = MotionWakeups.trigger(
          deviceName: description.facts.name, deviceNumber: description.facts.deviceNumber,
          deviceParent: deviceParent, triggers: triggers)
      {
        return StillChoice(strategy: .motionTrigger(motion))
      }
      let events = silent ? MotionWakeups.events(in: Sysfs.list("\(sys)/events")) : []
      if !events.isEmpty {
        do {
          let eventFile = try node.iioEventDescriptor()
          return StillChoice(strategy: .motionEvents(events), eventFile: eventFile)
        } catch {
          logger.info(
            "\(device): has motion events (\(events.joined(separator: ", "))) but no event "
              + "descriptor: \(error)")
        }
      }
      if attachedTrigger != nil, stillWatermark >= 2,
        let maximum = MotionWakeups.hardwareFIFO(syspath: sys)
      {
        return StillChoice(strategy: .hardwareFIFO(maximum: maximum))
      }
      return StillChoice(strategy: stillWatermark >= 2 ? .watermark : .none)
    }

    /// Sets a small buffer length (where the device has one) and enables the buffer.
    func enableBuffer(length: Int) throws(BufferUnavailable) {
      do {
        if Sysfs.exists("\(sys)/buffer/length") {
          try journal.set("\(sys)/buffer/length", String(length))
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
    holdTimer?.cancel()
    holdTimer = nil
    eventWatch?.cancel()
    eventWatch = nil
    eventFile?.close()
    eventFile = nil
    file.close()
    if !deviceGone {
      // The kernel takes a watermark or trigger back only with the buffer disabled; the
      // journal restores `buffer/enable` itself, after the settings changed once it was on.
      try? Sysfs.write("\(description.facts.syspath)/buffer/enable", "0")
    }
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
    if silenceExpected {
      quietCheck()
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
    if quiet, case .motionTrigger = stillStrategy, firesAfterSwitch(records: records, size: size) {
      // The motion trigger fired: the device moves. Back to the data-ready trigger first, so
      // the scans that follow come at the full rate.
      leaveQuiet("the motion trigger fired")
      if stopped { return }
    }
    var paceMoved = false
    var last: RawReading?
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
            problems.report(
              "timestamp", logger: logger,
              "\(description.sysname): kernel timestamp \(stamp) (\(converter.clock.rawValue))"
                + " is not near now; using read times instead (logged once)")
          }
        }
        let before = adaptive.pace
        let acceleration = description.calibrate(x: Double(x), y: Double(y), z: Double(z))
        let pace = adaptive.observe(acceleration, at: Double(time) / 1e9)
        if pace != before { paceMoved = true }
        lastAcceleration = acceleration
        let reading = RawReading(timestamp: time, x: Double(x), y: Double(y), z: Double(z))
        last = reading
        handler(.reading(reading))
        if stopped { return }
      }
    }
    if stopped { return }
    pending.removeFirst(records * size)
    if hubSensitivitySet, let last { hold(last, period: period) }
    if paceMoved { paceChanged(to: adaptive.pace) }
  }

  /// What a change of pace does with the chosen strategy.
  private func paceChanged(to pace: AdaptiveSampling.Pace) {
    let sys = description.facts.syspath
    switch stillStrategy {
    case .none:
      break
    case .watermark:
      setWatermark(pace == .still ? stillWatermark : 1)
    case .hubSensitivity(let hub):
      guard pace == .still, !hubSensitivitySet else { return }
      do {
        try journal.set(hub.path, hub.text(forThreshold: adaptive.threshold))
        hubSensitivitySet = true
        sensitivityThreshold = adaptive.threshold
        slowDownWatchdog(true)
        logger.info(
          "\(description.sysname): still; hub sensitivity \(AvailableValues.format(adaptive.threshold)) "
            + "m/s^2 from the noise (\(hub.path.split(separator: "/").last ?? "") "
            + "\(Sysfs.readIfPresent(hub.path) ?? "?")): the hub now reports changes only")
      } catch {
        if error.isDeviceGone {
          gone("\(hub.path): \(error.reason)")
          return
        }
        problems.report(
          "sensitivity", logger: logger,
          "\(description.sysname): cannot set \(hub.path): \(error) (logged once)")
      }
    case .motionTrigger(let motion):
      guard pace == .still, !quiet else { return }
      let switched = reconfigure("motion trigger \(motion)") { () throws(SystemError) in
        try journal.set("\(sys)/trigger/current_trigger", motion)
      }
      quiet = !stopped
      quietSince = Clock.monotonicNanoseconds()
      // Half a switch (the trigger taken, the buffer not enabled again) must not pass for
      // quiet: put the data-ready trigger back and keep reading at the full rate.
      if quiet && !switched { leaveQuiet("the switch failed") }
      if quiet { slowDownWatchdog(true) }
    case .motionEvents(let events):
      guard pace == .still, !quiet else { return }
      do {
        for event in events { try journal.set("\(sys)/events/\(event)", "1") }
        try Sysfs.write("\(sys)/buffer/enable", "0")
        quiet = true
        slowDownWatchdog(true)
        logger.debug("\(description.sysname): still, buffer off until a motion event")
      } catch {
        if error.isDeviceGone {
          gone("\(sys)/events: \(error.reason)")
          return
        }
        problems.report(
          "events", logger: logger,
          "\(description.sysname): cannot arm the motion events: \(error) (logged once)")
        try? Sysfs.write("\(sys)/buffer/enable", "1")
      }
    case .hardwareFIFO(let maximum):
      let scans = min(stillWatermark, maximum)
      if pace == .still && !quiet {
        let switched = reconfigure("hardware FIFO, watermark \(scans)") {
          () throws(SystemError) in
          try journal.set("\(sys)/trigger/current_trigger", "")
          try journal.set("\(sys)/buffer/watermark", String(scans))
        }
        quiet = !stopped
        if quiet && !switched { leaveQuiet("the switch failed") }
      } else if pace == .fast && quiet {
        leaveQuiet("moving")
      }
    }
  }

  /// Whether the batch holds a scan the motion trigger made: one stamped after it was attached
  /// (a data-ready scan queued just before the switch is no motion). Without kernel
  /// timestamps every scan counts.
  private func firesAfterSwitch(records: Int, size: Int) -> Bool {
    guard let element = timestampElement else { return true }
    let now = Clock.monotonicNanoseconds()
    let clockNow = converter.clock == .monotonic ? now : BufferSampler.read(converter.clock)
    return pending.withUnsafeBytes { all in
      let record = UnsafeRawBufferPointer(rebasing: all[((records - 1) * size)..<(records * size)])
      // A stamp that cannot be right says nothing about when: count it as motion (waking
      // up for nothing costs a moment at the full rate; staying still would miss a turn).
      guard let stamp = layout.value(of: element, in: record),
        let time = plausibleTime(stamp, clockNow: clockNow, now: now)
      else { return true }
      return time >= quietSince
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

  /// Leaves the strategy's still state: the data-ready trigger, watermark 1, the buffer on,
  /// the events disarmed; the adaptation starts afresh at the full rate.
  private func leaveQuiet(_ why: String) {
    guard quiet else { return }
    quiet = false
    let sys = description.facts.syspath
    switch stillStrategy {
    case .motionTrigger, .hardwareFIFO:
      reconfigure("data-ready trigger (\(why))") { () throws(SystemError) in
        if let attachedTrigger {
          try journal.set("\(sys)/trigger/current_trigger", attachedTrigger)
        }
        if case .hardwareFIFO = stillStrategy {
          try journal.set("\(sys)/buffer/watermark", "1")
        }
      }
    case .motionEvents(let events):
      // The buffer first: an event attribute that refuses to be disarmed must not leave the
      // device unread (at worst it wakes orientd once more).
      do {
        try Sysfs.write("\(sys)/buffer/enable", "1")
        logger.debug("\(description.sysname): moving (\(why)), buffer on")
        for event in events { try journal.set("\(sys)/events/\(event)", "0") }
      } catch {
        if error.isDeviceGone {
          gone("\(sys)/buffer/enable: \(error.reason)")
          return
        }
        problems.report(
          "events", logger: logger,
          "\(description.sysname): cannot re-enable the buffer or disarm the motion events "
            + "after a motion event: \(error) (logged once)")
      }
    case .none, .watermark, .hubSensitivity:
      break
    }
    adaptive.reset()
    slowDownWatchdog(false)
  }

  /// Changes settings the kernel takes only while the buffer is disabled: `buffer/enable` 0,
  /// `change`, then 1 (the buffer is left running whatever happened).
  ///
  /// - Returns: whether the whole change was made (false: logged, the buffer enabled again).
  @discardableResult
  private func reconfigure(_ what: String, _ change: () throws(SystemError) -> Void) -> Bool {
    let enable = "\(description.facts.syspath)/buffer/enable"
    do {
      try Sysfs.write(enable, "0")
      try change()
      try Sysfs.write(enable, "1")
      logger.debug("\(description.sysname): \(what)")
      return true
    } catch {
      if error.isDeviceGone {
        gone("\(enable): \(error.reason)")
        return false
      }
      problems.report(
        "reconfigure", logger: logger,
        "\(description.sysname): cannot switch to \(what): \(error) (logged once)")
      try? Sysfs.write(enable, "1")
      return false
    }
  }

  /// The event descriptor is readable: a motion event while still.
  private func motionEvent() {
    guard !stopped, let eventFile else { return }
    var event = [UInt8](repeating: 0, count: 16 * 8)
    // Drain every queued event; only that one came matters.
    while true {
      let n: Int?
      do {
        n = try event.withUnsafeMutableBytes { raw in
          Result { () throws(SystemError) in try eventFile.read(into: raw) }
        }.get()
      } catch {
        if error.isDeviceGone {
          gone("\(file.path) events: \(error.reason)")
          return
        }
        break
      }
      guard let count = n, count == event.count else { break }
    }
    leaveQuiet("a motion event")
  }

  /// Whether no scan is what was asked for (the watchdog must not call it a stall).
  private var silenceExpected: Bool {
    if hubSensitivitySet { return true }
    switch stillStrategy {
    case .motionTrigger, .motionEvents: return quiet
    default: return false
    }
  }

  /// The watchdog's period: `quietCheckInterval` while silence is expected, else `stallTimeout`.
  private func slowDownWatchdog(_ slow: Bool) {
    guard slow != slowWatchdog, let stallTimer else { return }
    slowWatchdog = slow
    let period = slow ? quietCheckInterval : stallTimeout
    sawData = false
    do {
      try stallTimer.schedule(after: period, interval: period)
    } catch {
      problems.report(
        "timer", logger: logger,
        "\(description.sysname): cannot reschedule the stall watchdog: \(error)")
    }
  }

  /// A silent device checked with one polled read: if it moved by twice the threshold without
  /// a scan, the hub or the motion wakeup missed it.
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
      (now - before).magnitude > 2 * max(adaptive.threshold, sensitivityThreshold)
    else { return }
    let moved = AvailableValues.format((now - before).magnitude)
    if case .hubSensitivity = stillStrategy {
      emptyPeriods += 1
      problems.report(
        "stall", logger: logger,
        "\(description.sysname): the hub sent nothing although the sensor moved by \(moved) m/s^2;"
          + " re-enabling the buffer (logged once until scans flow again)")
      rearm()
      if stopped { return }
      if emptyPeriods == BufferSampler.stallsBeforeGivingUp {
        handler(.stalled("the hub sends nothing although the sensor moves"))
      }
    } else {
      problems.report(
        "missed", logger: logger,
        "\(description.sysname): the \(stillStrategy.name) missed a movement of \(moved) m/s^2; "
          + "reading at the full rate again (logged once)")
      leaveQuiet("a polled read moved")
    }
  }

  /// Repeats `reading` every `period` ns while the hub stays silent, for `settle-time`.
  private func hold(_ reading: RawReading, period: Int64) {
    guard let holdTimer else { return }
    held = reading
    holdUntil =
      Clock.monotonicNanoseconds() + Duration.seconds(adaptive.parameters.settleTime).nanoseconds
    let interval = Duration.nanoseconds(period)
    do {
      // Half a period of slack so that a hub reporting at the rate is not doubled.
      try holdTimer.schedule(after: interval + interval / 2, interval: interval)
    } catch {
      problems.report(
        "timer", logger: logger,
        "\(description.sysname): cannot schedule the repeat of the hub's last report: \(error)")
    }
  }

  private func holdTick() {
    guard !stopped, let held else {
      holdTimer?.disarm()
      return
    }
    let now = Clock.monotonicNanoseconds()
    if now >= holdUntil {
      holdTimer?.disarm()
      self.held = nil
      return
    }
    handler(.reading(RawReading(timestamp: now, x: held.x, y: held.y, z: held.z)))
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
