import OrientCore
import OrientLog
import SystemKit

/// What a `StillStrategy` may do to the buffered sampler that owns it.
protocol StillHost: AnyObject {
  /// The sensor.
  var description: AccelerometerDescription { get }
  /// Every sysfs change, restored when sampling stops.
  var journal: SysfsJournal { get }
  /// The sampler's logger.
  var logger: Logger { get }
  /// The data-ready trigger the sampler attached, if any.
  var attachedTrigger: String? { get }
  /// The still threshold `AdaptiveSampling` learnt from the noise, m/s^2.
  var stillThreshold: Double { get }
  /// `[sampling] settle-time`, seconds.
  var settleTime: Double { get }
  /// Whether the sampler has stopped (a callback may have stopped it).
  var isStopped: Bool { get }
  /// `buffer/enable` 0, `change`, then 1 (`BufferSwitch.cycle`); failures are logged once and
  /// a vanished device ends the sampler.
  ///
  /// - Returns: whether the whole change was made.
  @discardableResult
  func reconfigure(_ what: String, _ change: () throws(SystemError) -> Void) -> Bool
  /// Enables or disables the buffer alone (motion events); failures as `reconfigure`.
  @discardableResult
  func setBuffer(enabled: Bool, _ what: String) -> Bool
  /// Lets the stall watchdog look only once a quiet check interval (silence is expected).
  func slowDownWatchdog(_ slow: Bool)
  /// The adaptation starts afresh at the full rate.
  func resetAdaptive()
  /// The device vanished.
  func gone(_ reason: String)
  /// Delivers `acceleration` again, stamped now (a hub's last report while it is silent).
  func repeatReading(_ acceleration: Vector3)
  /// Counts a period without the scans there should have been: re-arms the buffer, and after
  /// `StallWatchdog.stallsBeforeGivingUp` in a row tells the owner it stalled.
  func stallNoticed(_ message: String, giveUp: String)
  /// Logs `message` once until `clear` (LogOnce).
  func report(_ key: String, _ message: String)
}

/// How a buffered sampler keeps a still device from waking orientd, chosen once when sampling
/// starts from what the device offers (`StillStrategies.choose`, best first). Each strategy
/// keeps its own state; the sampler tells it what happens.
protocol StillStrategy: AnyObject {
  /// The name in the log (`while still: ...`).
  var name: String { get }
  /// Whether no scan is what was asked for right now: the watchdog then checks with a polled
  /// read instead of calling the silence a stall.
  var expectsSilence: Bool { get }
  /// The sampler runs: set up what the strategy watches.
  func start(_ host: StillHost, loop: EventLoop) throws(SystemError)
  /// `AdaptiveSampling` changed pace.
  func paceChanged(to pace: AdaptiveSampling.Pace, _ host: StillHost)
  /// A batch of scans arrived, the last stamped `lastScan` (nil without kernel timestamps),
  /// before it is delivered.
  func batchArrived(lastScan: MonotonicTime?, _ host: StillHost)
  /// A batch was delivered, its last reading `last`, at `period` per scan.
  func delivered(_ last: Vector3, period: Duration, _ host: StillHost)
  /// A polled read while silence was expected moved by `moved` m/s^2 (formatted).
  func missedMovement(_ moved: String, _ host: StillHost)
  /// Its own threshold, m/s^2, for the quiet check (0 if none).
  var threshold: Double { get }
  /// Closes what it opened (sysfs is restored by the sampler's journal).
  func stop()
}

extension StillStrategy {
  var expectsSilence: Bool { false }
  var threshold: Double { 0 }
  func start(_ host: StillHost, loop: EventLoop) throws(SystemError) {}
  func batchArrived(lastScan: MonotonicTime?, _ host: StillHost) {}
  func delivered(_ last: Vector3, period: Duration, _ host: StillHost) {}
  func missedMovement(_ moved: String, _ host: StillHost) {}
  func stop() {}
}

/// Nothing to save: adaptation off, or no attribute to use.
final class NoStillStrategy: StillStrategy {
  let name = "none"
  func paceChanged(to pace: AdaptiveSampling.Pace, _ host: StillHost) {}
}

/// `buffer/watermark` raised while still: the kernel wakes orientd once per still interval's
/// worth of scans (the detector still sees every scan, up to one still interval late).
final class WatermarkStrategy: StillStrategy {
  let name = "watermark"
  /// Scans per wakeup while still.
  let stillWatermark: Int

  init(stillWatermark: Int) { self.stillWatermark = stillWatermark }

  func paceChanged(to pace: AdaptiveSampling.Pace, _ host: StillHost) {
    let scans = pace == .still ? stillWatermark : 1
    let sys = host.description.facts.syspath
    host.reconfigure("\(scans > 1 ? "still" : "moving"), buffer/watermark \(scans)") {
      () throws(SystemError) in
      try host.journal.set("\(sys)/buffer/watermark", String(scans))
    }
  }
}

/// A HID sensor hub with a change sensitivity (`in_accel_hysteresis`): the hub sends a report
/// only when a field moved by at least it, so a still device sends none; silence means
/// "unchanged". Its last report is repeated at the device rate for `settle-time` after each
/// report, which is what the detector's time-based evidence needs to commit a turn that ended
/// in a single report.
final class HubSensitivityStrategy: StillStrategy {
  let hub: HubSensitivity
  /// Whether the sensitivity is written (from then on the hub reports changes only).
  private(set) var written: Bool
  /// The sensitivity written, m/s^2 (0 before).
  private(set) var threshold: Double
  private var holdTimer: EventLoop.Timer?
  private var held: Vector3?
  private var holdUntil: MonotonicTime = MonotonicTime(nanoseconds: 0)
  private weak var host: StillHost?

  init(_ hub: HubSensitivity, written: Double?) {
    self.hub = hub
    self.written = written != nil
    threshold = written ?? 0
  }

  var name: String { hub.relative ? "hub sensitivity (relative)" : "hub sensitivity" }
  var expectsSilence: Bool { written }

  func start(_ host: StillHost, loop: EventLoop) throws(SystemError) {
    self.host = host
    holdTimer = try loop.makeTimer { [weak self] in self?.holdTick() }
    if written { host.slowDownWatchdog(true) }
  }

  func paceChanged(to pace: AdaptiveSampling.Pace, _ host: StillHost) {
    guard pace == .still, !written else { return }
    let description = host.description
    do {
      try host.journal.set(hub.path, hub.text(forThreshold: host.stillThreshold))
      written = true
      threshold = host.stillThreshold
      host.slowDownWatchdog(true)
      host.logger.info(
        "\(description.sysname): still; hub sensitivity \(AvailableValues.format(threshold)) "
          + "m/s^2 from the noise (\(hub.path.split(separator: "/").last ?? "") "
          + "\(Sysfs.readIfPresent(hub.path) ?? "?")): the hub now reports changes only")
    } catch {
      if error.isDeviceGone { return host.gone("\(hub.path): \(error.reason)") }
      host.report(
        "sensitivity", "\(description.sysname): cannot set \(hub.path): \(error) (logged once)")
    }
  }

  func delivered(_ last: Vector3, period: Duration, _ host: StillHost) {
    guard written, let holdTimer else { return }
    held = last
    holdUntil =
      MonotonicTime(nanoseconds: Clock.monotonicNanoseconds()) + .seconds(host.settleTime)
    do {
      // Half a period of slack so that a hub reporting at the rate is not doubled.
      try holdTimer.schedule(after: period + period / 2, interval: period)
    } catch {
      host.report(
        "timer",
        "\(host.description.sysname): cannot schedule the repeat of the hub's last report: "
          + "\(error)")
    }
  }

  private func holdTick() {
    guard let host, !host.isStopped, let held else {
      holdTimer?.disarm()
      return
    }
    if MonotonicTime(nanoseconds: Clock.monotonicNanoseconds()) >= holdUntil {
      holdTimer?.disarm()
      self.held = nil
      return
    }
    host.repeatReading(held)
  }

  func missedMovement(_ moved: String, _ host: StillHost) {
    host.stallNoticed(
      "\(host.description.sysname): the hub sent nothing although the sensor moved by "
        + "\(moved) m/s^2; re-enabling the buffer (logged once until scans flow again)",
      giveUp: "the hub sends nothing although the sensor moves")
  }

  func stop() {
    holdTimer?.cancel()
    holdTimer = nil
  }
}

/// Changes the trigger or watermark while still and back once moving; shared by the motion
/// trigger and the hardware FIFO.
class QuietSwitchStrategy {
  /// Whether the still state is in effect.
  fileprivate(set) var quiet = false

  /// Leaves the still state: the data-ready trigger (and watermark 1), the adaptation afresh.
  func leaveQuiet(_ why: String, _ host: StillHost, watermark: Bool) {
    guard quiet else { return }
    quiet = false
    let sys = host.description.facts.syspath
    host.reconfigure("data-ready trigger (\(why))") { () throws(SystemError) in
      if let trigger = host.attachedTrigger {
        try host.journal.set("\(sys)/trigger/current_trigger", trigger)
      }
      if watermark { try host.journal.set("\(sys)/buffer/watermark", "1") }
    }
    host.resetAdaptive()
    host.slowDownWatchdog(false)
  }
}

/// A motion trigger of the device's own (bmc150, kxcjk-1013 `<name>-any-motion-dev<N>`): it
/// fires only when the chip's slope detector sees movement. Attached while still; the first
/// scan it produces switches back to the data-ready trigger.
final class MotionTriggerStrategy: QuietSwitchStrategy, StillStrategy {
  let name = "motion trigger"
  let motion: String
  /// When the motion trigger was attached.
  private var quietSince = MonotonicTime(nanoseconds: 0)

  init(_ motion: String) { self.motion = motion }

  var expectsSilence: Bool { quiet }

  func paceChanged(to pace: AdaptiveSampling.Pace, _ host: StillHost) {
    guard pace == .still, !quiet else { return }
    let sys = host.description.facts.syspath
    let switched = host.reconfigure("motion trigger \(motion)") { () throws(SystemError) in
      try host.journal.set("\(sys)/trigger/current_trigger", motion)
    }
    quiet = !host.isStopped
    quietSince = MonotonicTime(nanoseconds: Clock.monotonicNanoseconds())
    // Half a switch (the trigger taken, the buffer not enabled again) must not pass for quiet:
    // put the data-ready trigger back and keep reading at the full rate.
    if quiet && !switched { leaveQuiet("the switch failed", host, watermark: false) }
    if quiet { host.slowDownWatchdog(true) }
  }

  /// A scan stamped after the trigger was attached is motion (a data-ready scan queued just
  /// before the switch is none); without kernel timestamps every scan counts.
  func batchArrived(lastScan: MonotonicTime?, _ host: StillHost) {
    guard quiet, lastScan.map({ $0 >= quietSince }) ?? true else { return }
    // The device moves. Back to the data-ready trigger first, so the scans that follow come
    // at the full rate.
    leaveQuiet("the motion trigger fired", host, watermark: false)
  }

  func missedMovement(_ moved: String, _ host: StillHost) {
    host.report(
      "missed",
      "\(host.description.sysname): the \(name) missed a movement of \(moved) m/s^2; reading "
        + "at the full rate again (logged once)")
    leaveQuiet("a polled read moved", host, watermark: false)
  }
}

/// A hardware FIFO (`buffer/hwfifo_watermark_max`): while still the trigger is detached
/// (bmc150 fills its FIFO only without one) and the watermark raised, so the chip collects the
/// scans and interrupts once per batch.
final class HardwareFIFOStrategy: QuietSwitchStrategy, StillStrategy {
  let name = "hardware FIFO"
  /// The scans per wakeup while still.
  let scans: Int

  init(maximum: Int, stillWatermark: Int) { scans = min(stillWatermark, maximum) }

  func paceChanged(to pace: AdaptiveSampling.Pace, _ host: StillHost) {
    let sys = host.description.facts.syspath
    if pace == .still && !quiet {
      let switched = host.reconfigure("hardware FIFO, watermark \(scans)") {
        () throws(SystemError) in
        try host.journal.set("\(sys)/trigger/current_trigger", "")
        try host.journal.set("\(sys)/buffer/watermark", String(scans))
      }
      quiet = !host.isStopped
      if quiet && !switched { leaveQuiet("the switch failed", host, watermark: true) }
    } else if pace == .fast && quiet {
      leaveQuiet("moving", host, watermark: true)
    }
  }
}

/// IIO motion events (`events/in_accel_*_{roc,thresh,mag}_{rising,either}_en`), read from the
/// event descriptor (`IIO_GET_EVENT_FD_IOCTL`): while still the events are enabled and the
/// buffer disabled; the first event enables the buffer again.
final class MotionEventsStrategy: StillStrategy {
  let name = "motion events"
  let events: [String]
  private var eventFile: FileDescriptor?
  private var eventWatch: EventLoop.Watch?
  private var quiet = false
  private weak var host: StillHost?

  init(_ events: [String], eventFile: FileDescriptor) {
    self.events = events
    self.eventFile = eventFile
  }

  var expectsSilence: Bool { quiet }

  func start(_ host: StillHost, loop: EventLoop) throws(SystemError) {
    self.host = host
    guard let eventFile else { return }
    eventWatch = try loop.watch(eventFile.rawValue, for: .readable) { [weak self] _ in
      self?.motionEvent()
    }
  }

  func paceChanged(to pace: AdaptiveSampling.Pace, _ host: StillHost) {
    guard pace == .still, !quiet else { return }
    let sys = host.description.facts.syspath
    do {
      for event in events { try host.journal.set("\(sys)/events/\(event)", "1") }
    } catch {
      if error.isDeviceGone { return host.gone("\(sys)/events: \(error.reason)") }
      host.report(
        "events",
        "\(host.description.sysname): cannot arm the motion events: \(error) (logged once)")
      return
    }
    guard host.setBuffer(enabled: false, "still, buffer off until a motion event") else { return }
    quiet = true
    host.slowDownWatchdog(true)
  }

  /// The event descriptor is readable: a motion event while still.
  private func motionEvent() {
    guard let host, !host.isStopped, let eventFile else { return }
    var event = [UInt8](repeating: 0, count: 16 * 8)
    // Drain every queued event; only that one came matters.
    while true {
      let n: Int?
      do {
        n = try event.withUnsafeMutableBytes { raw in
          Result { () throws(SystemError) in try eventFile.read(into: raw) }
        }.get()
      } catch {
        if error.isDeviceGone { return host.gone("\(eventFile.path): \(error.reason)") }
        break
      }
      guard let count = n, count == event.count else { break }
    }
    leaveQuiet("a motion event", host)
  }

  func missedMovement(_ moved: String, _ host: StillHost) {
    host.report(
      "missed",
      "\(host.description.sysname): the \(name) missed a movement of \(moved) m/s^2; reading "
        + "at the full rate again (logged once)")
    leaveQuiet("a polled read moved", host)
  }

  /// The buffer first: an event attribute that refuses to be disarmed must not leave the
  /// device unread (at worst it wakes orientd once more).
  private func leaveQuiet(_ why: String, _ host: StillHost) {
    guard quiet else { return }
    quiet = false
    guard host.setBuffer(enabled: true, "moving (\(why)), buffer on") else { return }
    let sys = host.description.facts.syspath
    do {
      for event in events { try host.journal.set("\(sys)/events/\(event)", "0") }
    } catch {
      if error.isDeviceGone { return host.gone("\(sys)/events: \(error.reason)") }
      host.report(
        "events",
        "\(host.description.sysname): cannot disarm the motion events after a motion event: "
          + "\(error) (logged once)")
    }
    host.resetAdaptive()
    host.slowDownWatchdog(false)
  }

  func stop() {
    eventWatch?.cancel()
    eventWatch = nil
    eventFile?.close()
    eventFile = nil
  }
}

/// Chooses how a still device is kept from waking orientd, best first.
enum StillStrategies {
  /// The strategy for a device just set up, a configured hub sensitivity written here.
  ///
  /// - Parameters:
  ///   - adaptive: `[sampling] adaptive`.
  ///   - silent: whether a still device may be left silent (not for readings paired with a
  ///     base sensor's, nor for `calibrate` and `record`).
  ///   - stillWatermark: scans per still interval that the buffer can hold (1: none).
  static func choose(
    _ setup: BufferSetup, description: AccelerometerDescription, adaptive: Bool,
    sensitivity: HubSensitivitySetting, silent: Bool, stillWatermark: Int,
    attachedTrigger: String?, triggers: [TriggerInfo], deviceParent: String?,
    node: FileDescriptor
  ) -> any StillStrategy {
    let sys = setup.syspath
    let device = setup.device
    if silent, sensitivity != .off,
      let hub = HubSensitivity.find(syspath: sys, scale: description.scale.x)
    {
      guard case .fixed(let threshold) = sensitivity else {
        return adaptive ? HubSensitivityStrategy(hub, written: nil) : NoStillStrategy()
      }
      do {
        try setup.journal.set(hub.path, hub.text(forThreshold: threshold))
        setup.logger.info(
          "\(device): hub sensitivity \(AvailableValues.format(threshold)) m/s^2 "
            + "(\(hub.path.split(separator: "/").last ?? "") \(Sysfs.readIfPresent(hub.path) ?? "?"))"
        )
        return HubSensitivityStrategy(hub, written: threshold)
      } catch {
        setup.logger.warning(
          "\(device): cannot set \(hub.path): \(error); the hub reports every interval")
      }
    }
    guard adaptive else { return NoStillStrategy() }
    if silent, attachedTrigger != nil,
      let motion = MotionWakeups.trigger(
        deviceName: description.facts.name, deviceNumber: description.facts.deviceNumber,
        deviceParent: deviceParent, triggers: triggers)
    {
      return MotionTriggerStrategy(motion)
    }
    let events = silent ? MotionWakeups.events(in: Sysfs.list("\(sys)/events")) : []
    if !events.isEmpty {
      do {
        return MotionEventsStrategy(events, eventFile: try node.iioEventDescriptor())
      } catch {
        setup.logger.info(
          "\(device): has motion events (\(events.joined(separator: ", "))) but no event "
            + "descriptor: \(error)")
      }
    }
    if attachedTrigger != nil, stillWatermark >= 2,
      let maximum = MotionWakeups.hardwareFIFO(syspath: sys)
    {
      return HardwareFIFOStrategy(maximum: maximum, stillWatermark: stillWatermark)
    }
    return stillWatermark >= 2
      ? WatermarkStrategy(stillWatermark: stillWatermark) : NoStillStrategy()
  }
}
