import Glibc
import OrientCore
import OrientLog
import SystemKit

/// Reads one ambient channel (light, compass heading) through the IIO buffer, for devices
/// that expose it only as a scan element (`scan_elements/in_illuminance_en`, no `_raw` to poll;
/// iio-sensor-proxy's `iio-buffer-als` and `iio-buffer-compass`).
///
/// Opened (a claim): the node is opened and the channel enabled alone (`BufferSetup`, shared
/// with the accelerometer's `BufferSampler`), the device's own trigger attached when it has
/// none, the buffer enabled; each batch of scans read when the node is readable gives one
/// reading, its last scan's. Stopped: the node is closed and every sysfs setting put back.
/// There is no stall watchdog: a sensor hub reports light only when it changes, so silence is
/// the normal state of a steady light.
final class BufferedChannelReader: SensorReader {
  let mode = SamplingMode.buffered
  let rate: Double = 0
  let trigger: String?
  /// The sensor.
  let info: AmbientDescription
  private let logger: Logger
  private let deliver: (SensorEvent) -> Void
  private var interpreter: AmbientInterpreter
  private var problems = LogOnce()
  private var running: Running?

  /// What is open while reading.
  private struct Running {
    let journal: SysfsJournal
    let file: FileDescriptor
    let watch: EventLoop.Watch
    let layout: ScanLayout
    let element: ScanLayout.Element
  }

  private var drain = NodeDrain()

  /// Sets the buffer of `info` (its driver is `.iioBuffer`) up and starts reading.
  ///
  /// - Throws: `SensorError` saying what failed (the node busy, a scan element missing);
  ///   everything changed is put back first.
  init(
    _ info: AmbientDescription, triggers: [TriggerInfo], loop: EventLoop, logger: Logger,
    deliver: @escaping (SensorEvent) -> Void
  ) throws(SensorError) {
    self.info = info
    self.logger = logger
    self.deliver = deliver
    interpreter = AmbientInterpreter(info)
    guard case .iioBuffer(let channel) = info.driver, let devnode = info.devnode else {
      throw SensorError(.unavailable, "\(info.sysname): no scan element and node to read")
    }
    let setup = BufferSetup(
      syspath: info.syspath, device: info.sysname, journal: SysfsJournal(logger: logger),
      logger: logger)
    let file = try setup.openNode(devnode)
    let layout = try setup.enableChannels([channel], timestamp: false)
    guard let element = layout.element(named: channel) else {
      throw setup.fail("\(info.sysname): \(channel) missing from the scan layout")
    }
    let number = Int(info.sysname.drop { !$0.isNumber })
    trigger = try setup.attachTrigger(
      deviceName: info.name, deviceNumber: number, deviceParent: nil, triggers: triggers)
    try setup.enableBuffer(length: nil, node: file)
    do {
      let watch = try loop.watch(file.rawValue, for: .readable) { [weak self] events in
        self?.readable(events)
      }
      running = Running(
        journal: setup.journal, file: file, watch: watch, layout: layout, element: element)
    } catch {
      file.close()
      throw setup.fail("\(info.sysname): cannot watch \(devnode): \(error)", error)
    }
    logger.info("\(info.sysname): reading \(channel) buffered from \(devnode)")
  }

  deinit { stop() }

  /// Stops reading and puts the device back as it was.
  func stop() { halt(deviceGone: false) }

  /// Stops reading; a device that is gone has nothing left to put back.
  private func halt(deviceGone: Bool) {
    guard let running else { return }
    self.running = nil
    running.watch.cancel()
    running.file.close()
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
    // Only the newest scan matters: a level, not a motion.
    let last = Array(drain.pending[((records - 1) * size)..<(records * size)])
    drain.pending.removeFirst(records * size)
    guard let raw = running.layout.value(of: running.element, in: last) else { return }
    deliver(
      .reading(
        Reading(
          time: MonotonicTime(nanoseconds: Clock.monotonicNanoseconds()),
          value: interpreter.interpret(raw: Double(raw)).value)))
  }
}
