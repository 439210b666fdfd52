import DeviceDiscovery
import OrientLog
import SystemKit

/// The sensor layer: every sensor of every kind, found through one `DeviceWatcher`, described
/// by the drivers of `SensorDrivers.all`, one chosen per kind and read (by its `KindSlot`)
/// only while that kind is wanted.
///
/// Lives on one `EventLoop` with every libudev object. While nothing is wanted it holds only
/// the udev monitor's socket: no attribute or node open, nothing enabled, no timer, so it never
/// wakes up unless a device comes or goes.
///
/// Faults it rides out, for every kind alike (each logged once per episode):
/// - a sensor that cannot be opened is retried after 1 s, then 2, 4, ... up to 30 s while its
///   kind is wanted (`RetryBackoff`), and the next sensor of the kind is used meanwhile;
/// - a reader that stops delivering (a stalled buffer) is replaced by the sensor's next driver
///   (a buffered accelerometer is polled) until the kind stops being read;
/// - a device that vanishes, also in the middle of a read, is forgotten until udev announces it
///   again;
/// - a storm of uevents is applied in batches and the sensors chosen once it pauses
///   (`HotplugThrottle`); uevents lost to an overflowing monitor are reconciled by enumerating
///   again (`DeviceWatcher`): what is gone is forgotten, running readers start afresh;
/// - accelerometer readings whose magnitude stays far from 1 g make it describe the device
///   again (a driver that switched its range and scale without a uevent).
public final class SensorHub: SensorSource {
  /// Called with every change and reading, on the loop.
  public var onEvent: ((SensorSourceEvent) -> Void)?

  /// The watcher devices come from.
  public let watcher: DeviceWatcher
  /// The configuration in use.
  public private(set) var configuration: SensorsConfiguration
  let loop: EventLoop
  let logger: Logger
  let throttle: HotplugThrottle
  /// The devices that carry sensors, by syspath.
  private var devices: [String: [Sensor]] = [:]
  /// The IIO trigger devices, by syspath.
  private var triggers: [String: TriggerInfo] = [:]
  /// The parent device of each sensor's device.
  private var parents: [String: String] = [:]
  private var slots: [SensorKind: KindSlot] = [:]
  private var reported: Set<String> = []
  private let ownsWatcher: Bool
  /// The readers of devices whose one buffer serves two kinds.
  private let sharedBuffers = SharedBuffers()

  /// A hub that follows `watcher` (the daemon's, shared with its other subscribers) or, by
  /// default, a watcher of its own over every subsystem a driver reads.
  ///
  /// - Throws: `SystemError` if udev cannot be used.
  public init(
    loop: EventLoop, configuration: SensorsConfiguration, logger: Logger,
    watcher: DeviceWatcher? = nil
  ) throws(SystemError) {
    self.loop = loop
    self.configuration = configuration
    self.logger = logger
    throttle = HotplugThrottle(loop: loop, logger: logger)
    if let watcher {
      self.watcher = watcher
      ownsWatcher = false
    } else {
      self.watcher = try DeviceWatcher(
        subsystems: SensorDrivers.subsystems, loop: loop, logger: logger)
      ownsWatcher = true
    }
    for kind in SensorKind.allCases { slots[kind] = KindSlot(kind, hub: self) }
    self.watcher.subscribe(Set(SensorDrivers.subsystems)) { [weak self] batch in
      self?.handle(batch)
    }
  }

  deinit {
    sharedBuffers.closeAll()
    for slot in slots.values { slot.stopReader() }
  }

  /// Starts its own watcher (unless `monitor` is false, for one-shot listings): enumerates and
  /// chooses. A hub on a shared watcher starts with it.
  ///
  /// - Throws: `SystemError` if udev cannot be enumerated or monitored.
  public func begin(monitor: Bool = true) throws(SystemError) {
    if ownsWatcher { try watcher.start(monitor: monitor) }
  }

  // MARK: SensorSource

  /// The sensor serving `kind`.
  public func status(of kind: SensorKind) -> SensorStatus? { slots[kind]?.status }

  /// Reads `kind` (now or when a sensor appears), or stops reading it.
  public func setWanted(_ kind: SensorKind, _ wanted: Bool) {
    if wanted { slots[kind]?.start() } else { slots[kind]?.stop() }
  }

  /// Whether `kind` is being read.
  public func isReading(_ kind: SensorKind) -> Bool { slots[kind]?.reader != nil }

  /// Whether `kind` is wanted.
  public func isWanted(_ kind: SensorKind) -> Bool { slots[kind]?.wanted ?? false }

  /// Applies a new configuration (see `SensorSource.update(configuration:)`).
  public func update(configuration new: SensorsConfiguration) {
    let accelerometersChanged = new.accelerometer != configuration.accelerometer
    configuration = new
    guard accelerometersChanged else { return }
    rediscoverAll()
    for kind in [SensorKind.accelerometer, .baseAccelerometer] {
      slots[kind]?.unusable.removeAll()
      slots[kind]?.reselect(force: true)
    }
    reselectAll()
  }

  /// Stops reading every kind.
  public func stopAll() {
    // A device read for two kinds is closed once, not reopened for the second meanwhile.
    sharedBuffers.closeAll()
    for kind in SensorKind.allCases { setWanted(kind, false) }
  }

  /// Whether a system suspend is under way (`suspend()` without `resume()` yet): no reader is
  /// opened meanwhile.
  public private(set) var isSuspended = false

  /// Stops every reader before a system suspend (see `SensorSource.suspend()`).
  public func suspend() {
    isSuspended = true
    sharedBuffers.closeAll()
    for kind in SensorKind.allCases { slots[kind]?.suspend() }
  }

  /// Opens the readers of the wanted kinds afresh after a resume (see `SensorSource.resume()`).
  public func resume() {
    let wasSuspended = isSuspended
    isSuspended = false
    for kind in SensorKind.allCases { slots[kind]?.resume(wasSuspended: wasSuspended) }
  }

  /// Reads `kind` afresh (see `SensorSource.restart(_:fallBack:)`).
  public func restart(_ kind: SensorKind, fallBack: Bool) {
    slots[kind]?.restart(fallBack: fallBack)
  }

  /// Asks for `kind` at least `rate` times a second (see `SensorSource.request(rate:for:)`).
  public func request(rate: Double, for kind: SensorKind) {
    slots[kind]?.request(rate: rate)
  }

  // MARK: What is there

  /// Every sensor that can serve `kind`, by device.
  public func sensors(for kind: SensorKind) -> [Sensor] {
    devices.values.joined().filter { $0.kinds.contains(kind) }.sorted(by: Sensor.deviceOrder)
  }

  /// Every accelerometer present (display and base), ordered by device number.
  public var accelerometers: [AccelerometerDescription] {
    var seen = Set<String>()
    return (sensors(for: .accelerometer) + sensors(for: .baseAccelerometer))
      .filter { seen.insert($0.syspath).inserted }.sorted(by: Sensor.deviceOrder)
      .compactMap(\.accelerometer)
  }

  /// Every light, proximity and compass sensor, ordered by kind and device.
  public var ambientSensors: [AmbientDescription] {
    devices.values.joined().compactMap(\.ambient).sorted {
      ($0.kind, $0.syspath) < ($1.kind, $1.syspath)
    }
  }

  /// The choice of `kind` among the sensors present (also those that failed to start).
  public func choice(of kind: SensorKind) -> SensorKind.Choice {
    kind.choose(sensors(for: kind), mode: configuration.sampling.mode)
  }

  /// The trigger devices present, by name.
  public var knownTriggers: [TriggerInfo] { triggers.values.sorted { $0.name < $1.name } }

  /// Readings of `kind` delivered since creation.
  public func samplesDelivered(_ kind: SensorKind) -> Int { slots[kind]?.delivered ?? 0 }

  /// Readings of `kind` skipped as garbage, by finished readers and the running one.
  public func readingsSkipped(_ kind: SensorKind) -> Int {
    guard let slot = slots[kind] else { return 0 }
    return slot.skippedBefore + (slot.reader?.skipped ?? 0)
  }

  /// Enumerates again, as after lost uevents.
  public func resynchronize() { watcher.resynchronize() }

  // MARK: For the slots

  /// Whether a base accelerometer is present.
  var isPaired: Bool {
    SensorKind.baseAccelerometer.choose(
      sensors(for: .baseAccelerometer), mode: configuration.sampling.mode
    ).chosen != nil
  }

  /// What a driver needs to open `sensor`.
  func openContext(for sensor: Sensor, logger: Logger, rate: Double) -> OpenContext {
    OpenContext(
      loop: loop, logger: logger, configuration: configuration,
      triggers: Array(triggers.values), parent: parents[sensor.syspath], paired: isPaired,
      requestedRate: rate, sharedBuffers: sharedBuffers)
  }

  /// The sensor of `kind` at `syspath` now.
  func sensor(at syspath: String, for kind: SensorKind) -> Sensor? {
    devices[syspath]?.first { $0.kinds.contains(kind) }
  }

  /// Tells the consumer.
  func emit(_ event: SensorSourceEvent) { onEvent?(event) }

  /// Describes the device at `syspath` again (its calibration may have changed), then
  /// chooses every kind again.
  func rediscover(_ syspath: String) {
    guard let device = watcher.device(syspath: syspath) else { return }
    consider(device, action: .change, announce: false)
    reselectAll()
  }

  /// The device at `syspath` vanished under a reader: forget it until udev announces it again.
  func forget(_ syspath: String) {
    devices.removeValue(forKey: syspath)
    parents.removeValue(forKey: syspath)
    reselectAll()
  }

  // MARK: Devices

  private func handle(_ batch: DeviceBatch) {
    switch batch {
    case .present(let present, lost: false):
      for device in present { consider(device, action: .add, announce: false) }
      reselectAll()
    case .present(let present, lost: true):
      let paths = Set(present.map(\.syspath))
      for syspath in devices.keys where !paths.contains(syspath) {
        let gone = devices.removeValue(forKey: syspath) ?? []
        parents.removeValue(forKey: syspath)
        for slot in slots.values { slot.unusable.remove(syspath) }
        for sensor in gone.prefix(1) {
          logger.notice(
            "\(sensor.kinds.first?.noun ?? "sensor") \(syspath) is gone (found on enumerating "
              + "again)")
        }
      }
      for syspath in triggers.keys where !paths.contains(syspath) {
        triggers.removeValue(forKey: syspath)
      }
      for device in present { consider(device, action: .add, announce: true) }
      // A reader may still read the files of a device removed and added again in the lost
      // uevents: stale, or failing later as if the present device were gone. Start afresh.
      sharedBuffers.closeAll()
      for slot in slots.values { slot.stopReader() }
      reselectAll()
    case .events(let events):
      for device in events {
        consider(device, action: device.action ?? .change, announce: true)
      }
      throttle.afterBatch { [weak self] in self?.reselectAll() }
    }
  }

  private func consider(_ device: UdevDevice, action: UdevAction, announce: Bool) {
    let syspath = device.syspath
    if device.subsystem == "iio", device.sysname.hasPrefix("trigger") {
      if action == .remove {
        triggers.removeValue(forKey: syspath)
      } else if let name = Sysfs.readIfPresent("\(syspath)/name") {
        triggers[syspath] = TriggerInfo(name: name, parentSyspath: device.parent?.syspath)
      }
      return
    }
    if action == .remove {
      guard let gone = devices.removeValue(forKey: syspath) else { return }
      parents.removeValue(forKey: syspath)
      sharedBuffers.close(syspath)
      let level = throttle.level()
      if let first = gone.first, first.accelerometer != nil {
        // Other kinds say so when their choice changes.
        logger.log(level, "accelerometer \(first.sysname) removed")
      }
      for slot in slots.values {
        slot.unusable.remove(syspath)
        // Its files are gone (a device that comes back has new ones): stop reading them now,
        // so that a reader left on the old files can neither read stale data nor, failing
        // later, take the returning device for gone. The choice starts a new one if it is back.
        if slot.status?.sensor.syspath == syspath { slot.stopReader() }
      }
      return
    }
    let context = DiscoveryContext(configuration: configuration)
    let found = SensorHub.discover(device, context)
    for problem in context.problems where reported.insert(problem).inserted {
      logger.warning(problem)
    }
    let previous = devices[syspath]
    guard (previous ?? []) != found else { return }
    if found.isEmpty {
      devices.removeValue(forKey: syspath)
      parents.removeValue(forKey: syspath)
    } else {
      devices[syspath] = found
      parents[syspath] = device.parent?.syspath
    }
    for slot in slots.values { slot.unusable.remove(syspath) }
    let level = announce ? throttle.level() : .notice
    for sensor in found {
      guard let d = sensor.accelerometer else { continue }
      describe(
        d, appeared: previous == nil && announce, changed: previous != nil, level: level)
    }
  }

  /// Every driver's sensors on `device`; the same sensor found by several drivers (an IIO
  /// accelerometer buffered and polled) becomes one with their names in table order.
  static func discover(_ device: UdevDevice, _ context: DiscoveryContext) -> [Sensor] {
    guard let subsystem = device.subsystem else { return [] }
    var merged: [Sensor] = []
    for driver in SensorDrivers.all where driver.subsystems.contains(subsystem) {
      for sensor in driver.discover(device, context) {
        if let index = merged.firstIndex(where: { $0.detail == sensor.detail }) {
          merged[index].drivers += sensor.drivers.filter { !merged[index].drivers.contains($0) }
        } else {
          merged.append(sensor)
        }
      }
    }
    return merged
  }

  private func rediscoverAll() {
    for syspath in Array(devices.keys) {
      guard let device = watcher.device(syspath: syspath) else { continue }
      consider(device, action: .change, announce: false)
    }
  }

  private func reselectAll() {
    for kind in SensorKind.allCases { slots[kind]?.reselect() }
  }

  private func describe(
    _ d: AccelerometerDescription, appeared: Bool, changed: Bool, level: LogLevel
  ) {
    let verb = changed ? "changed" : (appeared ? "appeared" : "found")
    logger.log(
      level,
      "accelerometer \(verb): \(d.sysname) name=\(d.facts.name ?? "?") location=\(d.location.rawValue)"
        + " (\(d.locationSource)) modes=\(d.readModes.joined(separator: ","))"
        + " mount-matrix=\"\(d.mountMatrix)\" (\(d.mountMatrixSource))")
    for problem in d.problems { logger.log(level == .debug ? .debug : .warning, problem) }
  }
}
