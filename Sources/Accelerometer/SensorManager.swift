import DeviceDiscovery
import Logging
import SystemKit

/// The accelerometer in use, as consumers (D-Bus properties, `orientd record`) describe it.
public struct SensorStatus: Equatable, Sendable {
  /// Device, name, label, location, calibration and where each came from.
  public var description: AccelerometerDescription
  /// How it is read (or would be read once started).
  public var mode: SamplingMode
  /// Readings per second: the poll rate, or the device's sampling frequency when buffered.
  public var rate: Double
  /// The trigger orientd attached, if it attached one.
  public var trigger: String?
  /// Whether it is being sampled right now.
  public var isSampling: Bool
}

/// Finds accelerometers, follows hotplug, and samples the display accelerometer on demand.
///
/// Lives on one `EventLoop` with all its libudev objects. While stopped, it holds only the udev
/// monitor socket: no sysfs attribute or device node is open, nothing is enabled, and the loop
/// has no timer of its own, so it never wakes up unless a device comes or goes.
///
/// `start()` samples the chosen display sensor (buffered when possible, polled otherwise) and
/// delivers the first reading as soon as it exists; `stop()` closes everything and puts the
/// device's sysfs settings back as they were. A sensor that appears is used without a restart;
/// one that disappears, also in the middle of a read, is dropped, `onSensorChange(nil)` tells the
/// consumer there is none, and sampling resumes on the next one that appears.
public final class SensorManager {
  /// Called with each calibrated reading of the active sensor, on the loop.
  public var onSample: ((AccelerometerSample) -> Void)?
  /// Called when the active sensor changes or goes away (`nil`: no accelerometer).
  public var onSensorChange: ((SensorStatus?) -> Void)?

  /// The active display sensor (chosen, sampled or not), if there is one.
  public private(set) var active: SensorStatus?
  /// Whether sampling was requested.
  public private(set) var isStarted = false
  /// Readings delivered since creation.
  public private(set) var samplesDelivered = 0
  /// Readings skipped as garbage by samplers that have finished, plus the running one.
  public var readingsSkipped: Int { skippedBefore + (sampler?.skipped ?? 0) }

  private let loop: EventLoop
  private var logger: Logger
  private var configuration: AccelerometerConfiguration
  private let context: UdevContext
  private var monitor: UdevMonitor?
  private var monitorWatch: EventLoop.Watch?
  private var facts: [String: DeviceFacts] = [:]
  private var parents: [String: String] = [:]
  private var triggers: [String: TriggerInfo] = [:]
  private var unusable: Set<String> = []
  private var sampler: (any Sampler)?
  private var skippedBefore = 0
  private var lastChoiceLog = ""

  /// Creates a manager; call `begin()` to enumerate and follow hotplug.
  public init(
    loop: EventLoop, configuration: AccelerometerConfiguration, logger: Logger,
    context: UdevContext? = nil
  ) throws(SystemError) {
    self.loop = loop
    self.configuration = configuration
    self.logger = logger
    if let context {
      self.context = context
    } else {
      self.context = try UdevContext()
    }
  }

  deinit { sampler?.stop() }

  /// Every accelerometer present (display and base), ordered by device number.
  public var sensors: [AccelerometerDescription] {
    facts.values.map { AccelerometerDescription(facts: $0, configuration: configuration) }
      .sorted {
        ($0.facts.deviceNumber ?? Int.max, $0.sysname) < (
          $1.facts.deviceNumber ?? Int.max, $1.sysname
        )
      }
  }

  /// The trigger devices present.
  public var knownTriggers: [TriggerInfo] { triggers.values.sorted { $0.name < $1.name } }

  /// The choice among the present sensors and why the others were not chosen.
  public var choice: SensorChoice.Outcome {
    SensorChoice.choose(
      sensors.filter { !unusable.contains($0.facts.syspath) }, mode: configuration.sampling.mode)
  }

  /// Starts following udev events (unless `monitor` is false, for one-shot listings), then
  /// enumerates the `iio` subsystem and chooses the display sensor.
  ///
  /// The monitor is created before the enumeration, so that a device appearing in between is
  /// not missed (it may be seen twice, which is harmless).
  ///
  /// - Throws: `SystemError` if udev cannot be enumerated or monitored.
  public func begin(monitor wantMonitor: Bool = true) throws(SystemError) {
    if wantMonitor {
      let monitor = try UdevMonitor(context: context, subsystems: ["iio"])
      self.monitor = monitor
      monitorWatch = try loop.watch(monitor.fileDescriptor, for: .readable) { [weak self] _ in
        self?.drainMonitor()
      }
    }
    for device in try context.devices(subsystem: "iio") {
      consider(device, action: .add, announce: false)
    }
    reselect()
  }

  /// Requests sampling: the active sensor (now or when one appears) is read and its readings
  /// delivered to `onSample`, the first one right away.
  public func start() {
    guard !isStarted else { return }
    isStarted = true
    if active != nil { startSampler() }
  }

  /// Stops sampling: closes every descriptor and restores the device's sysfs settings.
  public func stop() {
    guard isStarted else { return }
    isStarted = false
    stopSampler()
    if var status = active {
      status.isSampling = false
      active = status
    }
  }

  /// Applies a new configuration (mount matrices, locations, rates), restarting the sampler if
  /// the active sensor's calibration or choice changes.
  public func update(configuration: AccelerometerConfiguration) {
    self.configuration = configuration
    unusable.removeAll()
    reselect(force: true)
  }

  // MARK: - udev

  private func drainMonitor() {
    guard let monitor else { return }
    // Bounded, so that a storm of events cannot starve the rest of the loop.
    for _ in 0..<256 {
      guard let device = monitor.receive() else { return }
      let action = device.action ?? .change
      logger.debug("uevent \(action) \(device.syspath)")
      consider(device, action: action, announce: true)
      reselect()
    }
  }

  private func consider(_ device: UdevDevice, action: UdevAction, announce: Bool) {
    let syspath = device.syspath
    if device.sysname.hasPrefix("trigger") {
      if action == .remove {
        triggers.removeValue(forKey: syspath)
      } else if let name = Sysfs.readIfPresent("\(syspath)/name") {
        triggers[syspath] = TriggerInfo(name: name, parentSyspath: device.parent?.syspath)
      }
      return
    }
    switch action {
    case .remove:
      if facts.removeValue(forKey: syspath) != nil {
        logger.notice("accelerometer \(device.sysname) removed")
      }
      parents.removeValue(forKey: syspath)
      unusable.remove(syspath)
    case .add, .change, .bind, .unbind, .other:
      let gathered = DeviceFacts.gather(device)
      guard gathered.isAccelerometer else {
        facts.removeValue(forKey: syspath)
        return
      }
      let previous = facts[syspath]
      facts[syspath] = gathered
      parents[syspath] = device.parent?.syspath
      if previous != gathered {
        unusable.remove(syspath)
        describe(
          AccelerometerDescription(facts: gathered, configuration: configuration),
          appeared: previous == nil && announce, changed: previous != nil)
      }
    }
  }

  private func describe(_ d: AccelerometerDescription, appeared: Bool, changed: Bool) {
    let modes = [d.canBuffer ? "buffered" : nil, d.canPoll ? "polled" : nil].compactMap { $0 }
    let verb = changed ? "changed" : (appeared ? "appeared" : "found")
    logger.notice(
      "accelerometer \(verb): \(d.sysname) name=\(d.facts.name ?? "?") location=\(d.location.rawValue)"
        + " (\(d.locationSource)) modes=\(modes.joined(separator: ","))"
        + " mount-matrix=\"\(d.mountMatrix)\" (\(d.mountMatrixSource))")
    for problem in d.problems { logger.warning(problem) }
  }

  // MARK: - choice and sampling

  private func reselect(force: Bool = false) {
    let outcome = choice
    let chosen = outcome.chosen
    logChoice(outcome)
    if !force {
      switch (active, chosen) {
      case (nil, nil): return
      case (let current?, let chosen?) where SensorManager.sameSensor(current.description, chosen):
        // Same device, same calibration: keep sampling; refresh the facts shown.
        active?.description = chosen
        return
      default: break
      }
    }
    stopSampler()
    let hadSensor = active != nil
    active = chosen.map {
      SensorStatus(
        description: $0, mode: predictedMode($0), rate: predictedRate($0), trigger: nil,
        isSampling: false)
    }
    if hadSensor || active != nil { onSensorChange?(active) }
    if isStarted && active != nil { startSampler() }
  }

  /// Whether switching from `a` to `b` needs no restart: same device, location, capabilities
  /// and calibration (a change event also reports the frequency orientd itself set).
  private static func sameSensor(_ a: AccelerometerDescription, _ b: AccelerometerDescription)
    -> Bool
  {
    a.facts.syspath == b.facts.syspath && a.facts.devnode == b.facts.devnode
      && a.location == b.location && a.canPoll == b.canPoll && a.canBuffer == b.canBuffer
      && a.mountMatrix == b.mountMatrix && a.mountMatrixSource == b.mountMatrixSource
      && a.scale == b.scale && a.offset == b.offset
  }

  private func logChoice(_ outcome: SensorChoice.Outcome) {
    var text: String
    if let chosen = outcome.chosen {
      text =
        "using \(chosen.sysname) (\(chosen.facts.name ?? "?")) for orientation: "
        + "\(chosen.location == .display ? "display sensor" : "location unknown, assumed display")"
    } else if facts.isEmpty {
      text = "no accelerometer present"
    } else {
      text = "no display accelerometer: orientation undefined"
    }
    if !outcome.notChosen.isEmpty {
      text += "; not used: " + outcome.notChosen.joined(separator: "; ")
    }
    if text != lastChoiceLog {
      lastChoiceLog = text
      logger.notice(text)
    }
  }

  private func predictedMode(_ d: AccelerometerDescription) -> SamplingMode {
    switch configuration.sampling.mode {
    case .polled: return .polled
    case .buffered: return .buffered
    case .auto: return d.canBuffer ? .buffered : .polled
    }
  }

  private func predictedRate(_ d: AccelerometerDescription) -> Double {
    switch predictedMode(d) {
    case .polled: return configuration.sampling.pollRate
    case .buffered:
      return d.availableFrequencies?.smallest(atLeast: configuration.sampling.bufferedRate).value
        ?? configuration.sampling.bufferedRate
    }
  }

  private func startSampler() {
    guard let status = active, sampler == nil else { return }
    let d = status.description
    let syspath = d.facts.syspath
    let handler: (SamplerEvent) -> Void = { [weak self] event in
      self?.samplerEvent(event, syspath: syspath)
    }
    let sampling = configuration.sampling
    var started: (any Sampler)?
    var trigger: String?
    if sampling.mode != .polled && d.canBuffer {
      do {
        let buffered = try BufferSampler(
          description: d, rate: sampling.bufferedRate, bufferLength: sampling.bufferLength,
          triggers: Array(triggers.values), deviceParent: parents[syspath], loop: loop,
          logger: logger, handler: handler)
        trigger = buffered.attachedTrigger
        started = buffered
      } catch {
        if error.deviceGone {
          dropGone(syspath, reason: error.reason)
          return
        }
        if sampling.mode == .auto && d.canPoll {
          logger.warning("\(error.reason); polling instead")
        } else {
          logger.error("\(error.reason); cannot sample \(d.sysname)")
        }
      }
    }
    if started == nil && sampling.mode != .buffered && d.canPoll {
      do {
        started = try PollSampler(
          description: d, rate: sampling.pollRate, loop: loop, logger: logger, handler: handler)
      } catch {
        if error.isDeviceGone {
          dropGone(syspath, reason: error.description)
          return
        }
        logger.error("\(d.sysname): cannot poll: \(error)")
      }
    }
    guard let started else {
      unusable.insert(syspath)
      reselect()
      return
    }
    sampler = started
    let now = SensorStatus(
      description: d, mode: started.mode, rate: started.rate, trigger: trigger, isSampling: true)
    logger.info(
      "sampling \(d.sysname) \(started.mode.rawValue) at \(AvailableValues.format(started.rate)) Hz"
    )
    active = now
    onSensorChange?(now)
  }

  private func stopSampler() {
    guard let current = sampler else { return }
    skippedBefore += current.skipped
    sampler = nil
    current.stop()
    if let status = active { logger.info("stopped sampling \(status.description.sysname)") }
  }

  private func samplerEvent(_ event: SamplerEvent, syspath: String) {
    guard let status = active, status.description.facts.syspath == syspath else { return }
    switch event {
    case .reading(let raw):
      samplesDelivered += 1
      let vector = status.description.calibrate(x: raw.x, y: raw.y, z: raw.z)
      onSample?(AccelerometerSample(timestamp: raw.timestamp, acceleration: vector))
    case .gone(let reason):
      dropGone(syspath, reason: reason)
    }
  }

  /// The device vanished under a sampler: forget it until udev announces it again.
  private func dropGone(_ syspath: String, reason: String) {
    logger.notice("accelerometer \(facts[syspath]?.sysname ?? syspath) is gone (\(reason))")
    if let current = sampler {
      skippedBefore += current.skipped
      sampler = nil
      current.stop()
    }
    facts.removeValue(forKey: syspath)
    parents.removeValue(forKey: syspath)
    reselect()
  }
}
