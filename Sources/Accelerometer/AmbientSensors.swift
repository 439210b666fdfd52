import DeviceDiscovery
import OrientLog
import SystemKit

/// Where readings of one ambient sensor come from while it is claimed.
///
/// orientd's own source polls sysfs (`PolledAmbientSource`); a source from another subsystem
/// (an input device's `SW_FRONT_PROXIMITY` switch, say) conforms too and is handed to
/// `AmbientSensors.setExternal(_:)`, so the daemon claims, publishes and releases it like an
/// IIO one.
public protocol AmbientSource: AnyObject {
  /// What it is (kind, device, how it is read) for logs and listings.
  var info: AmbientDescription { get }
  /// Starts reading: `deliver` runs on the loop with each reading, the first as soon as
  /// there is one (a switch: its current state at once).
  ///
  /// - Throws: `SystemError` if the device cannot be opened.
  func start(deliver: @escaping (AmbientReading) -> Void) throws(SystemError)
  /// Stops reading and closes what `start` opened. Idempotent.
  func stop()
}

/// A proximity source: the seam the input subsystem's `SW_FRONT_PROXIMITY` switches plug into
/// (their `info.kind` is `.proximity` and they deliver `.proximity(near:)`).
public typealias ProximitySource = AmbientSource

/// Polls one sysfs attribute on a timer and interprets it (`AmbientInterpreter`). The file
/// stays open while started and is re-read with `pread` at offset 0 (sysfs asks the driver
/// again; `SysfsAttribute`, which also notices a file an emulated sysfs replaced); nothing is
/// open or scheduled while stopped.
public final class PolledAmbientSource: AmbientSource {
  /// The sensor.
  public let info: AmbientDescription
  /// The poll interval.
  public let interval: Duration
  private let loop: EventLoop
  private let logger: Logger
  private var timer: EventLoop.Timer?
  private var interpreter: AmbientInterpreter
  private var deliver: ((AmbientReading) -> Void)?
  private var problems = LogOnce()
  private var file: SysfsAttribute?

  /// A source for `info`, polled every `interval`.
  public init(_ info: AmbientDescription, interval: Duration, loop: EventLoop, logger: Logger) {
    self.info = info
    self.interval = interval
    self.loop = loop
    self.logger = logger
    interpreter = AmbientInterpreter(info)
  }

  deinit { timer?.cancel() }

  /// The file polled.
  public var path: String {
    switch info.driver {
    case .iioPoll(let attribute): "\(info.syspath)/\(attribute)"
    case .hwmonLight, .external, .inputSwitch, .iioBuffer: "\(info.syspath)/light"
    }
  }

  /// Starts polling: the first reading is posted to the loop at once.
  public func start(deliver: @escaping (AmbientReading) -> Void) throws(SystemError) {
    file = try SysfsAttribute(path: path)
    self.deliver = deliver
    // A fresh start decides near/far from the first reading alone.
    interpreter = AmbientInterpreter(info)
    let timer: EventLoop.Timer
    if let existing = self.timer {
      timer = existing
    } else {
      timer = try loop.makeTimer { [unowned self] in self.poll() }
      self.timer = timer
    }
    try timer.schedule(after: interval, interval: interval)
    logger.debug("\(info.sysname): polling \(path) every \(interval.nanoseconds / 1_000_000) ms")
    // Posted, not called: the caller (a claim) finishes its bookkeeping before the reading.
    loop.post { [weak self] in self?.poll() }
  }

  /// Stops polling.
  public func stop() {
    timer?.disarm()
    deliver = nil
    file?.close()
    file = nil
  }

  private func poll() {
    guard let deliver, let file else { return }
    var bytes = [UInt8](repeating: 0, count: 64)
    let text: String
    do {
      let count = try bytes.withUnsafeMutableBytes { raw in
        Result { () throws(SystemError) in try file.read(into: raw) }
      }.get()
      text = String(decoding: bytes[0..<count], as: UTF8.self)
    } catch {
      problems.report(
        "read", logger: logger, "\(info.sysname): cannot read \(path): \(error) (logged once)")
      return
    }
    guard let reading = interpreter.interpret(text) else {
      problems.report(
        "parse", logger: logger,
        "\(info.sysname): \(path) holds \"\(text)\", not a \(info.kind) reading (logged once)")
      return
    }
    problems.clear("read", logger: logger, "\(info.sysname): \(path) readable again")
    problems.clear("parse", logger: logger, "\(info.sysname): \(path) readable again")
    deliver(reading)
  }
}

/// Finds the ambient light, proximity and compass sensors (IIO, hwmon/applesmc), follows
/// hotplug, and reads each kind only while `start(_:)` asked for it.
///
/// One sensor per kind is used: an IIO one before applesmc's, then the first by sysfs path, or the external source of that kind if there is no IIO/hwmon one. Lives on one
/// `EventLoop` with its libudev objects; idle (nothing started) it holds only the monitor
/// socket.
public final class AmbientSensors {
  /// A kind's sensor appeared, changed or went away (`nil`); runs on the loop.
  public var onSensorChange: ((AmbientKind, AmbientDescription?) -> Void)?
  /// A reading of a started kind; runs on the loop.
  public var onReading: ((AmbientReading) -> Void)?

  /// The poll interval of each kind: proximity fastest (it blanks a phone's screen in a call).
  public var intervals: [AmbientKind: Duration] = [
    .light: .milliseconds(500), .proximity: .milliseconds(200), .compass: .milliseconds(500),
  ]

  private let loop: EventLoop
  private let logger: Logger
  private let context: UdevContext
  private var monitor: UdevMonitor?
  private var monitorWatch: EventLoop.Watch?
  /// Every sensor found, by syspath (a device may carry several kinds).
  private var found: [String: [AmbientDescription]] = [:]
  private var external: [AmbientKind: any AmbientSource] = [:]
  private var sources: [AmbientKind: any AmbientSource] = [:]
  private var started: Set<AmbientKind> = []
  private var reported: Set<String> = []

  /// The subsystems searched: IIO for light/proximity/compass; hwmon and platform for
  /// applesmc's `light` (the attribute sits on the platform device, not its hwmon child);
  /// input for `SW_FRONT_PROXIMITY` switches.
  public static let subsystems = ["iio", "hwmon", "platform", "input"]

  /// Creates the finder; `begin()` enumerates.
  ///
  /// - Throws: `SystemError` if udev cannot be used.
  public init(loop: EventLoop, logger: Logger, context: UdevContext? = nil) throws(SystemError) {
    self.loop = loop
    self.logger = logger
    if let context { self.context = context } else { self.context = try UdevContext() }
  }

  deinit { for source in sources.values { source.stop() } }

  /// The sensor in use for each kind present.
  public var active: [AmbientKind: AmbientDescription] {
    var result: [AmbientKind: AmbientDescription] = [:]
    for kind in AmbientKind.allCases { result[kind] = chosen(kind)?.info }
    return result
  }

  /// Every sensor found (also those not in use), ordered by kind and device.
  public var all: [AmbientDescription] {
    (found.values.flatMap { $0 } + external.values.map(\.info)).sorted {
      ($0.kind, $0.syspath) < ($1.kind, $1.syspath)
    }
  }

  /// Follows udev (unless `monitor` is false, for one-shot listings), then enumerates.
  ///
  /// - Throws: `SystemError` if udev cannot be enumerated or monitored.
  public func begin(monitor wantMonitor: Bool = true) throws(SystemError) {
    if wantMonitor {
      let monitor = try UdevMonitor(context: context, subsystems: AmbientSensors.subsystems)
      self.monitor = monitor
      monitorWatch = try loop.watch(monitor.fileDescriptor, for: .readable) { [weak self] _ in
        self?.drainMonitor()
      }
    }
    let before = active
    for subsystem in AmbientSensors.subsystems {
      for device in try context.devices(subsystem: subsystem) {
        consider(device, removed: false)
      }
    }
    announce(changesFrom: before)
  }

  /// Uses `source` for its kind when no IIO/hwmon sensor of that kind is present (`nil`
  /// removes the external source of `kind`).
  public func setExternal(_ source: (any AmbientSource)?, for kind: AmbientKind) {
    let before = active
    external[kind] = source
    announce(changesFrom: before)
  }

  /// Starts reading `kind` (now, or when a sensor of that kind appears).
  public func start(_ kind: AmbientKind) {
    guard started.insert(kind).inserted else { return }
    startSource(kind)
  }

  /// Stops reading `kind` and closes its files.
  public func stop(_ kind: AmbientKind) {
    guard started.remove(kind) != nil else { return }
    sources.removeValue(forKey: kind)?.stop()
  }

  /// Whether `kind` is being read.
  public func isReading(_ kind: AmbientKind) -> Bool { sources[kind] != nil }

  // MARK: - udev

  private func drainMonitor() {
    guard let monitor else { return }
    let before = active
    defer { announce(changesFrom: before) }
    for _ in 0..<256 {
      switch monitor.next() {
      case .empty: return
      case .overflow:
        logger.warning("the udev monitor overflowed; enumerating ambient sensors again")
        found = [:]
        for subsystem in AmbientSensors.subsystems {
          for device in (try? context.devices(subsystem: subsystem)) ?? [] {
            consider(device, removed: false)
          }
        }
        return
      case .device(let device):
        consider(device, removed: device.action == .remove)
      }
    }
  }

  private func consider(_ device: UdevDevice, removed: Bool) {
    let syspath = device.syspath
    guard !removed, let subsystem = device.subsystem else {
      found.removeValue(forKey: syspath)
      return
    }
    if subsystem == "input" {
      let proximity = AmbientDescription.inputProximity(
        syspath: syspath, sysname: device.sysname, devnode: device.devnode,
        name: device.parent?.attribute("name"), property: { device.property($0) },
        capabilities: device.parent?.attribute("capabilities/sw"))
      found[syspath] = proximity.map { [$0] }
      return
    }
    // Most platform devices are not sensors: read only what a sensor would have.
    if subsystem != "iio" && !Sysfs.exists("\(syspath)/light") {
      found.removeValue(forKey: syspath)
      return
    }
    let (sensors, problems) = AmbientDescription.describe(
      syspath: syspath, sysname: device.sysname, subsystem: subsystem, devnode: device.devnode,
      property: { device.property($0) }, read: { Sysfs.readIfPresent("\(syspath)/\($0)") })
    for problem in problems where reported.insert(problem).inserted { logger.warning(problem) }
    found[syspath] = sensors.isEmpty ? nil : sensors
  }

  private func chosen(_ kind: AmbientKind) -> (any AmbientSource)? {
    // IIO first; then applesmc's coarse percentage; an input switch last (a number with a
    // near level says more than a switch); then by device path.
    func order(_ info: AmbientDescription) -> (Int, String) {
      if case .inputSwitch = info.driver { return (2, info.syspath) }
      if info.driver == .hwmonLight { return (1, info.syspath) }
      return (0, info.syspath)
    }
    if let info = found.values.flatMap({ $0 }).filter({ $0.kind == kind })
      .min(by: { order($0) < order($1) })
    {
      if let running = sources[kind], running.info == info { return running }
      if case .inputSwitch = info.driver {
        return InputProximitySource(info, loop: loop, logger: logger)
      }
      if case .iioBuffer = info.driver {
        return AmbientBufferSource(info, loop: loop, logger: logger)
      }
      return PolledAmbientSource(
        info, interval: intervals[kind] ?? .milliseconds(500), loop: loop,
        logger: logger)
    }
    return external[kind]
  }

  /// Tells the consumer about kinds whose sensor changed, and moves running readers over.
  private func announce(changesFrom before: [AmbientKind: AmbientDescription]) {
    let now = active
    for kind in AmbientKind.allCases where before[kind] != now[kind] {
      if let info = now[kind] {
        logger.notice(
          "\(kind) sensor \(info.sysname) (\(info.driver), \(info.classifiedBy))"
            + (info.nearLevel.map { ", near level \($0) from \(info.nearLevelSource ?? "?")" }
              ?? (info.isPolledProximity ? ", no near level: near above 0" : "")))
      } else if before[kind] != nil {
        logger.notice("\(kind) sensor \(before[kind]?.sysname ?? "?") removed")
      }
      sources.removeValue(forKey: kind)?.stop()
      if started.contains(kind) { startSource(kind) }
      onSensorChange?(kind, now[kind])
    }
  }

  private func startSource(_ kind: AmbientKind) {
    guard let source = chosen(kind) else { return }
    do {
      sources[kind] = source
      try source.start { [weak self] reading in self?.onReading?(reading) }
    } catch {
      sources[kind] = nil
      logger.error("cannot read the \(kind) sensor \(source.info.sysname): \(error)")
    }
  }
}

extension AmbientDescription {
  /// A proximity sensor read as a number (not a switch): its near level matters.
  var isPolledProximity: Bool {
    if kind == .proximity, case .iioPoll = driver { return true }
    return false
  }
}
