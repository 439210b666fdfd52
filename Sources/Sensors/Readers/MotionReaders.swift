import OrientCore
import OrientLog
import SystemKit
import TextFormats

/// A motion sensor's polled attributes, for `PolledAttributeReader`: a gyroscope's or
/// magnetometer's three `in_{anglvel,magn}_{x,y,z}_raw`, a rotation sensor's
/// `in_rot_quaternion_raw` (four numbers in one file, `"x y z w "`). Counts that make no value
/// (a missing or unparsable number, a quaternion that is no rotation) are skipped, not counted
/// as failed reads.
struct MotionAttributeParser: AttributeParser {
  let info: MotionDescription

  func parse(_ texts: [String]) -> Result<SensorValue, AttributeProblem> {
    // Numbers separated by spaces, a trailing one after a quaternion's last.
    let numbers = texts.flatMap { text in
      text.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Double(String($0)) }
    }
    guard let value = MotionValues.value(info, numbers) else {
      return .failure(
        AttributeProblem(message: "not a \(info.kind.noun)'s reading (skipped)", isFailure: false))
    }
    return .success(value)
  }
}

/// The value raw counts of a motion sensor mean: three for a gyroscope or magnetometer, four
/// (x, y, z, w) for a rotation.
enum MotionValues {
  static func value(_ info: MotionDescription, _ n: [Double]) -> SensorValue? {
    if info.kind == .rotation {
      guard n.count == 4, let q = info.rotation(x: n[0], y: n[1], z: n[2], w: n[3]) else {
        return nil
      }
      return .rotation(q)
    }
    guard n.count == 3, let v = info.angularVelocity(x: n[0], y: n[1], z: n[2]) else {
      return nil
    }
    return info.kind == .magnetometer ? .magneticField(v) : .angularVelocity(v)
  }

  /// The attributes a motion sensor is polled through.
  static func paths(_ info: MotionDescription) -> [String] {
    if info.kind == .rotation { return ["\(info.syspath)/in_rot_quaternion_raw"] }
    let channel = info.kind == .magnetometer ? "magn" : "anglvel"
    return ["x", "y", "z"].map { "\(info.syspath)/in_\(channel)_\($0)_raw" }
  }
}

/// Reads a gyroscope's `anglvel` or a rotation sensor's `in_rot_quaternion` scan elements
/// through the IIO buffer: every scan is one reading, stamped by the kernel (a rotation
/// sensor's stamp taken from the scan's last 8 bytes, where hid-sensor-rotation writes it,
/// not from its layout offset). Its sampling frequency follows the rate asked for
/// (`request(rate:for:)`, `MotionDescription.bufferedFrequency(for:)`), written with the
/// buffer off. A `StallWatchdog` notices a node that stops delivering: the buffer is re-armed,
/// then the sensor's next driver (polling) takes over. Stopped: the node is closed and sysfs
/// put back.
final class MotionBufferReader: SensorReader {
  let mode = SamplingMode.buffered
  private(set) var rate: Double
  let trigger: String?
  private let info: MotionDescription
  private let logger: Logger
  private let deliver: (SensorEvent) -> Void
  private var problems = LogOnce()
  private var running: Running?
  private var drain = NodeDrain()

  private struct Running {
    let journal: SysfsJournal
    let file: FileDescriptor
    let buffer: BufferSwitch
    let watch: EventLoop.Watch
    let watchdog: StallWatchdog
    let layout: ScanLayout
    let elements: [ScanLayout.Element]
    let timestamp: ScanLayout.Element?
    let converter: TimestampConverter
  }

  init(
    _ info: MotionDescription, triggers: [TriggerInfo], parent: String?, requestedRate: Double,
    loop: EventLoop, logger: Logger, deliver: @escaping (SensorEvent) -> Void
  ) throws(SensorError) {
    self.info = info
    self.logger = logger
    self.deliver = deliver
    rate = info.samplingFrequency ?? 0
    guard let devnode = info.devnode, !info.scanElements.isEmpty else {
      throw SensorError(.unavailable, "\(info.sysname): no scan elements and node to read")
    }
    let setup = BufferSetup(
      syspath: info.syspath, device: info.sysname, journal: SysfsJournal(logger: logger),
      logger: logger)
    let file = try setup.openNode(devnode)
    let layout = try setup.enableChannels(info.scanElements, timestamp: true)
    let elements = info.scanElements.compactMap { layout.element(named: $0) }
    guard elements.count == info.scanElements.count else {
      throw setup.fail("\(info.sysname): \(info.scanElements) missing from the scan layout")
    }
    let stamp = layout.element(named: ScanLayout.timestampChannel)
    let clock = setup.timestampClock(hasTimestamps: stamp != nil)
    trigger = try setup.attachTrigger(
      deviceName: info.name, deviceNumber: Int(info.sysname.drop { !$0.isNumber }),
      deviceParent: parent, triggers: triggers)
    // The rate asked for (the buffer is off: drivers take a new frequency then); put back at
    // stop like every other setting.
    setFrequency(requestedRate, journal: setup.journal)
    MotionBufferReader.reportEverySample(info, journal: setup.journal, logger: logger)
    try setup.enableBuffer(length: 128, node: file)
    do throws(SystemError) {
      let watch = try loop.watch(file.rawValue, for: .readable) { [weak self] events in
        self?.readable(events)
      }
      let watchdog: StallWatchdog
      do throws(SystemError) {
        watchdog = try StallWatchdog(loop: loop, rate: rate) { [weak self] in self?.silence() }
      } catch {
        watch.cancel()
        throw error
      }
      running = Running(
        journal: setup.journal, file: file, buffer: BufferSwitch(syspath: info.syspath),
        watch: watch, watchdog: watchdog, layout: layout, elements: elements, timestamp: stamp,
        converter: TimestampConverter(clock: clock))
    } catch {
      file.close()
      throw setup.fail("\(info.sysname): cannot watch \(devnode): \(error)", error)
    }
    logger.info(
      "\(info.sysname): reading its \(info.kind.noun) buffered from \(devnode) at "
        + "\(AvailableValues.format(rate)) Hz")
  }

  deinit { stop() }

  func stop() { halt(deviceGone: false) }

  /// Sets the sampling frequency for `requested` readings a second (0: the default) while
  /// the buffer is off (opening).
  private func setFrequency(_ requested: Double, journal: SysfsJournal) {
    guard let attribute = info.frequencyAttribute else { return }
    let target = info.bufferedFrequency(for: requested)
    do {
      // Written unless the attribute holds it already (what discovery read may be stale).
      try journal.set("\(info.syspath)/\(attribute)", target.text)
      rate = target.value
    } catch {
      logger.notice("\(info.sysname): cannot set \(attribute) to \(target.text): \(error)")
    }
  }

  /// A HID hub with a change sensitivity (`in_anglvel_hysteresis`, `in_rot_hysteresis`) sends
  /// nothing while the sensor holds still: every sample is a stream record, and silence must
  /// mean a stall to the watchdog, so it is set to 0 (put back at stop).
  private static func reportEverySample(
    _ info: MotionDescription, journal: SysfsJournal, logger: Logger
  ) {
    let channel = info.kind == .rotation ? "rot" : "anglvel"
    let path = "\(info.syspath)/in_\(channel)_hysteresis"
    guard let current = Sysfs.readIfPresent(path), (try? SysfsValue.parseDecimal(current)) != 0
    else { return }
    do {
      try journal.set(path, "0")
    } catch {
      logger.notice(
        "\(info.sysname): cannot set in_\(channel)_hysteresis to 0 (\(error)): while it holds "
          + "still it may send nothing, and be polled instead after a few seconds")
    }
  }

  /// Retunes the sampling frequency to the slowest the device offers at or above `rate`
  /// (`MotionDescription.bufferedFrequency(for:)`): the buffer off, the frequency written, the
  /// buffer on again.
  func request(rate requested: Double, for kind: SensorKind) {
    guard let running, kind == info.kind, let attribute = info.frequencyAttribute else { return }
    let target = info.bufferedFrequency(for: requested)
    guard abs(target.value - rate) > 1e-9 else { return }
    do {
      try running.buffer.cycle { () throws(SystemError) in
        try running.journal.set("\(info.syspath)/\(attribute)", target.text)
      }
      rate = target.value
      logger.info(
        "\(info.sysname): \(attribute) \(target.text) Hz (\(AvailableValues.format(requested)) "
          + "asked)")
    } catch {
      if error.isDeviceGone {
        halt(deviceGone: true)
        return deliver(.gone("\(running.buffer.enablePath): \(error.reason)"))
      }
      return problems.report(
        "retune", logger: logger,
        "\(info.sysname): cannot set \(attribute) to \(target.text): \(error)")
    }
    do {
      try running.watchdog.retune(rate: rate)
    } catch {
      problems.report(
        "timer", logger: logger, "\(info.sysname): cannot reschedule the stall watchdog: \(error)")
    }
  }

  /// `buffer/enable` 0, every setting written again, then 1: restarts a stopped FIFO or
  /// trigger, and gives a device that lost its settings at a resume its frequency back.
  func rearm() {
    guard let running else { return }
    do {
      try running.buffer.cycle { () throws(SystemError) in
        try running.journal.rewrite(skipping: [running.buffer.enablePath])
      }
    } catch {
      if error.isDeviceGone {
        halt(deviceGone: true)
        return deliver(.gone("\(running.buffer.enablePath): \(error.reason)"))
      }
      problems.report(
        "rearm", logger: logger, "\(info.sysname): cannot re-enable the buffer: \(error)")
    }
  }

  /// A watchdog period without a scan: logged once, the buffer re-armed; after
  /// `StallWatchdog.stallsBeforeGivingUp` in a row the sensor's next driver takes over.
  private func silence() {
    guard let running else { return }
    let (message, giveUp) = running.watchdog.silence(info.sysname, path: running.file.path)
    let handOver = running.watchdog.countStall()
    problems.report("stall", logger: logger, message)
    rearm()
    if handOver, self.running != nil { deliver(.stalled(giveUp)) }
  }

  private func halt(deviceGone: Bool) {
    guard let running else { return }
    self.running = nil
    running.watch.cancel()
    running.watchdog.cancel()
    running.file.close()
    // Drivers take a frequency back only with the buffer off; the journal restores
    // `buffer/enable` itself, but a frequency first changed while the buffer was on comes
    // after it in the journal.
    if !deviceGone { try? running.buffer.set(false) }
    running.journal.restore(deviceGone: deviceGone)
    drain.reset()
  }

  private func readable(_ events: EventLoop.Events) {
    guard let running else { return }
    let size = running.layout.recordSize
    let records: Int
    switch drain.scans(
      running.file, recordSize: size, events: events, device: info.sysname, logger: logger,
      problems: &problems)
    {
    case .scans(let count): records = count
    case .wait: return
    case .stop: return halt(deviceGone: false)
    case .gone(let reason):
      halt(deviceGone: true)
      return deliver(.gone(reason))
    }
    if running.watchdog.dataArrived() {
      problems.clear("stall", logger: logger, "\(info.sysname): scans flow again")
    }
    let now = Clock.monotonicNanoseconds()
    let clockNow =
      running.converter.clock == .monotonic ? now : BufferSampler.read(running.converter.clock)
    for i in 0..<records {
      let record = Array(drain.pending[(i * size)..<((i + 1) * size)])
      let counts = running.elements.flatMap { element in
        record.withUnsafeBytes { running.layout.values(of: element, in: $0) } ?? []
      }.map(Double.init)
      guard let value = MotionValues.value(info, counts) else { continue }
      var time = now
      if running.timestamp != nil, let stamp = stamp(record, running) {
        let converted = running.converter.monotonic(stamp, clockNow: clockNow, monotonicNow: now)
        if converted <= now + 1_000_000_000 && converted >= now - 60_000_000_000 {
          time = converted
        }
      }
      deliver(.reading(Reading(time: MonotonicTime(nanoseconds: time), value: value)))
    }
    drain.pending.removeFirst(records * size)
  }

  /// The scan's kernel timestamp: at its layout offset, except hid-sensor-rotation's, which
  /// the driver writes into the last 8 bytes.
  private func stamp(_ record: [UInt8], _ running: Running) -> Int64? {
    guard let element = running.timestamp else { return nil }
    if info.kind == .rotation, record.count >= 8 {
      var value: Int64 = 0
      for (i, byte) in record.suffix(8).enumerated() { value |= Int64(byte) << (8 * Int64(i)) }
      return value
    }
    return running.layout.value(of: element, in: record)
  }
}
