import DeviceDiscovery
import OrientCore
import OrientLog
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
///
/// Faults it rides out (each logged once per episode, see issue 8's tests):
/// - a sensor that cannot be started (buffer refused, attributes unreadable) is retried after
///   1 s, then 2, 4, ... up to 30 s while sampling is requested, instead of never;
/// - a buffered sensor that stops delivering scans (`BufferSampler`'s watchdog) is polled
///   instead, in mode `auto`, until sampling stops (the next start tries the buffer again);
/// - readings whose magnitude stays far from 1 g make it re-read the calibration (at most once
///   a second, then less often while nothing changed), so a driver that switches its range and
///   `in_accel_scale` at run time without a uevent still gives m/s^2;
/// - a udev monitor that overflowed (ENOBUFS: uevents lost in a storm) makes it enumerate the
///   devices again; a burst of uevents is applied as one batch, choosing the sensor once.
public final class SensorManager {
  /// Called with each calibrated reading of the active sensor, on the loop.
  public var onSample: ((AccelerometerSample) -> Void)?
  /// Called when the active sensor changes or goes away (`nil`: no accelerometer).
  public var onSensorChange: ((SensorStatus?) -> Void)?
  /// Called after each batch of uevents (and enumeration) has been applied: the base sensor
  /// (`BaseAccelerometer`) may have come or gone.
  public var onDevicesApplied: (() -> Void)?

  /// The active display sensor (chosen, sampled or not), if there is one.
  public private(set) var active: SensorStatus?
  /// Whether sampling was requested.
  public private(set) var isStarted = false
  /// Readings delivered since creation.
  public private(set) var samplesDelivered = 0
  /// Readings skipped as garbage by samplers that have finished, plus the running one.
  public var readingsSkipped: Int { skippedBefore + (sampler?.skipped ?? 0) }

  let loop: EventLoop
  private var logger: Logger
  private(set) var configuration: AccelerometerConfiguration
  private let context: UdevContext
  private var monitor: UdevMonitor?
  private var monitorWatch: EventLoop.Watch?
  private var registry = DeviceRegistry()
  /// Sensors that could not be started: not chosen until they change or a retry works.
  private var unusable: Set<String> = []
  private var sampler: (any Sampler)?
  /// Whether a base sensor was present when the running sampler was made: a buffered display
  /// sampler chooses its still wakeups from it (`makeSampler`), so it is made again when a base
  /// comes or goes (a detachable keyboard's base).
  private var samplerPaired = false
  private var skippedBefore = 0
  private var lastChoiceLog = ""
  private var problems = LogOnce()
  /// Sensors to poll even though they could buffer: their buffer stalled (until `stop()`).
  private var pollOnly: Set<String> = []
  private var calibration = CalibrationWatch()
  private let throttle: HotplugThrottle
  /// IIO accelerometers, and input-subsystem ones (InputAccelerometer.swift).
  static let subsystems = ["iio", "input"]
  private lazy var retry = RetryBackoff(loop: loop) { [weak self] in self?.retryUnusable() }

  /// Creates a manager; call `begin()` to enumerate and follow hotplug.
  public init(
    loop: EventLoop, configuration: AccelerometerConfiguration, logger: Logger,
    context: UdevContext? = nil
  ) throws(SystemError) {
    self.loop = loop
    self.configuration = configuration
    self.logger = logger
    throttle = HotplugThrottle(loop: loop, logger: logger)
    if let context {
      self.context = context
    } else {
      self.context = try UdevContext()
    }
  }

  deinit {
    sampler?.stop()
  }

  /// Every accelerometer present (display and base), ordered by device number.
  public var sensors: [AccelerometerDescription] {
    registry.sensors(configuration: configuration)
  }

  /// The trigger devices present.
  public var knownTriggers: [TriggerInfo] { registry.knownTriggers }

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
      let monitor = try UdevMonitor(context: context, subsystems: SensorManager.subsystems)
      self.monitor = monitor
      monitorWatch = try loop.watch(monitor.fileDescriptor, for: .readable) { [weak self] _ in
        self?.drainMonitor()
      }
    }
    for subsystem in SensorManager.subsystems {
      for device in try context.devices(subsystem: subsystem) {
        consider(device, action: .add, announce: false)
      }
    }
    reselect()
  }

  /// Requests sampling: the active sensor (now or when one appears) is read and its readings
  /// delivered to `onSample`, the first one right away.
  public func start() {
    guard !isStarted else { return }
    isStarted = true
    // A sensor that failed to start before gets another chance with the new claim.
    let failedBefore = !unusable.isEmpty
    if active != nil { startSampler() }
    if failedBefore { retryUnusable() }
  }

  /// Stops sampling: closes every descriptor and restores the device's sysfs settings.
  public func stop() {
    guard isStarted else { return }
    isStarted = false
    stopSampler()
    retry.cancel()
    pollOnly.removeAll()
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
    // Bounded, so that a storm of events cannot starve the rest of the loop (the socket stays
    // readable and the loop comes back); the sensor is chosen once per batch, so a burst of
    // add/remove pairs does not start and stop a sampler for each.
    var changed = false
    defer { if changed { throttle.afterBatch { [weak self] in self?.reselect() } } }
    for _ in 0..<256 {
      switch monitor.next() {
      case .empty: return
      case .overflow:
        problems.report(
          "overflow", logger: logger,
          "the udev monitor's receive buffer overflowed (uevents lost); enumerating the IIO "
            + "devices again (logged once)")
        resynchronize()
        changed = false
        return
      case .device(let device):
        let action = device.action ?? .change
        logger.debug("uevent \(action) \(device.syspath)")
        consider(device, action: action, announce: true)
        changed = true
      }
    }
  }

  /// Enumerates the `iio` subsystem again and brings the known devices in line with it: what
  /// is gone is forgotten, what is new or changed is considered, then the sensor is chosen
  /// again, and a running sampler is started afresh: if a remove and an add of it were both
  /// lost, it still reads the files of the removed device (stale, or failing later with
  /// ENODEV as if the present device were gone). For when uevents were lost (`ENOBUFS`).
  public func resynchronize() {
    var present: [UdevDevice] = []
    do {
      for subsystem in SensorManager.subsystems {
        present += try context.devices(subsystem: subsystem)
      }
    } catch {
      logger.error("cannot enumerate the IIO devices again: \(error)")
      return
    }
    for syspath in registry.keepOnly(Set(present.map(\.syspath))) {
      unusable.remove(syspath)
      logger.notice("accelerometer \(syspath) is gone (found on enumerating again)")
    }
    for device in present { consider(device, action: .add, announce: true) }
    stopSampler()
    reselect()
  }

  private func consider(_ device: UdevDevice, action: UdevAction, announce: Bool) {
    let syspath = device.syspath
    if device.sysname.hasPrefix("trigger") {
      if action == .remove {
        registry.setTrigger(nil, at: syspath)
      } else if let name = Sysfs.readIfPresent("\(syspath)/name") {
        registry.setTrigger(
          TriggerInfo(name: name, parentSyspath: device.parent?.syspath), at: syspath)
      }
      return
    }
    switch action {
    case .remove:
      if registry.remove(syspath) != nil {
        logger.log(throttle.level(), "accelerometer \(device.sysname) removed")
      }
      unusable.remove(syspath)
      // Its files are gone (a device that comes back has new ones): stop reading them now, so
      // that a sampler left on the old files can neither read stale data nor, failing later,
      // take the returning device for gone. `reselect` starts a new one if it is back.
      if active?.description.facts.syspath == syspath { stopSampler() }
    case .add, .change, .bind, .unbind, .other:
      let gathered = DeviceFacts.gather(device)
      guard gathered.isAccelerometer else {
        registry.remove(syspath)
        return
      }
      let previous = registry.record(gathered, at: syspath, parent: device.parent?.syspath)
      if previous != gathered {
        unusable.remove(syspath)
        describe(
          AccelerometerDescription(facts: gathered, configuration: configuration),
          appeared: previous == nil && announce, changed: previous != nil,
          level: announce ? throttle.level() : .notice)
      }
    }
  }

  private func describe(
    _ d: AccelerometerDescription, appeared: Bool, changed: Bool, level: LogLevel
  ) {
    let modes = d.readModes
    let verb = changed ? "changed" : (appeared ? "appeared" : "found")
    logger.log(
      level,
      "accelerometer \(verb): \(d.sysname) name=\(d.facts.name ?? "?") location=\(d.location.rawValue)"
        + " (\(d.locationSource)) modes=\(modes.joined(separator: ","))"
        + " mount-matrix=\"\(d.mountMatrix)\" (\(d.mountMatrixSource))")
    for problem in d.problems { logger.log(level == .debug ? .debug : .warning, problem) }
  }

  // MARK: - choice and sampling

  private func reselect(force: Bool = false) {
    defer { onDevicesApplied?() }
    let outcome = choice
    let chosen = outcome.chosen
    logChoice(outcome)
    if !force {
      switch (active, chosen) {
      case (nil, nil): return
      case (let current?, let chosen?) where SensorChoice.isSameSensor(current.description, chosen):
        // Same device, same calibration: keep sampling; refresh the facts shown. (Removed and
        // back within one batch of uevents: its sampler was stopped, start a new one.)
        active?.description = chosen
        if isStarted && sampler == nil { startSampler() }
        if isStarted, sampler is BufferSampler, configuration.sampling.silentWhileStill,
          samplerPaired != isPaired
        {
          logger.info(
            "a base accelerometer \(isPaired ? "appeared" : "went away"): reading "
              + "\(chosen.sysname) afresh to choose its still wakeups again")
          stopSampler()
          startSampler()
        }
        return
      default: break
      }
    }
    stopSampler()
    let hadSensor = active != nil
    active = chosen.map { d in
      let mode = SensorChoice.mode(
        for: d, sampling: configuration.sampling, pollOnly: pollOnly.contains(d.facts.syspath))
      return SensorStatus(
        description: d, mode: mode,
        rate: SensorChoice.rate(for: d, mode: mode, sampling: configuration.sampling),
        trigger: nil, isSampling: false)
    }
    if hadSensor || active != nil { onSensorChange?(active) }
    if isStarted && active != nil { startSampler() }
  }

  private func logChoice(_ outcome: SensorChoice.Outcome) {
    let text = SensorChoice.summary(outcome, anyPresent: !registry.isEmpty)
    if text != lastChoiceLog {
      lastChoiceLog = text
      logger.notice(text)
    }
  }

  /// Whether a base accelerometer is present (see `makeSampler`).
  private var isPaired: Bool { BaseAccelerometer.find(in: sensors) != nil }

  /// What trying to start a sampler gave.
  enum StartOutcome {
    case started(any Sampler, trigger: String?)
    /// The device vanished while being set up.
    case gone(String)
    /// Neither way of reading it worked; the reason says why.
    case failed(String)
  }

  private func startSampler() {
    guard let status = active, sampler == nil else { return }
    let d = status.description
    samplerPaired = isPaired
    switch makeSampler(d) {
    case .started(let started, let trigger): install(started, trigger: trigger, for: d)
    case .gone(let reason): dropGone(d.facts.syspath, reason: reason)
    case .failed(let reason):
      startFailed(d, reason)
      unusable.insert(d.facts.syspath)
      reselect()
    }
  }

  /// Starts reading `d`: buffered when configured and possible (and its buffer has not
  /// stalled), polled otherwise or when the buffer cannot be used in mode `auto`.
  /// `handler` receives the sampler's events (the manager's own by default; the base
  /// sensor's reader passes its own).
  func makeSampler(
    _ d: AccelerometerDescription, handler given: ((SamplerEvent) -> Void)? = nil
  ) -> StartOutcome {
    let syspath = d.facts.syspath
    let handler: (SamplerEvent) -> Void =
      given ?? { [weak self] event in self?.samplerEvent(event, syspath: syspath) }
    if d.facts.isInputAccelerometer {
      do {
        let events = try InputSampler(description: d, loop: loop, logger: logger, handler: handler)
        return .started(events, trigger: nil)
      } catch {
        return error.kind == .notFound ? .gone(error.description) : .failed(error.description)
      }
    }
    let sampling = configuration.sampling
    var reasons: [String] = []
    // With a sensor in the base, the display's and the base's readings are paired for the
    // hinge angle (HingeParameters.maximumSkew): a sampler that goes silent while still would
    // make the pair stale, so both keep reporting (watermark or FIFO batches at most).
    let paired = isPaired
    if sampling.mode != .polled && d.canBuffer && !pollOnly.contains(syspath) {
      do {
        let buffered = try BufferSampler(
          description: d, rate: sampling.bufferedRate, bufferLength: sampling.bufferLength,
          adaptive: sampling.adaptive, sensitivity: sampling.hysteresis,
          mayGoSilent: !paired && sampling.silentWhileStill,
          quietCheckInterval: sampling.quietCheckInterval,
          triggers: registry.allTriggers, deviceParent: registry.parent(of: syspath), loop: loop,
          logger: logger, handler: handler)
        return .started(buffered, trigger: buffered.attachedTrigger)
      } catch {
        if error.deviceGone { return .gone(error.reason) }
        if sampling.mode == .auto && d.canPoll {
          logger.warning("\(error.reason); polling instead")
        } else {
          reasons.append(error.reason)
        }
      }
    }
    if sampling.mode != .buffered && d.canPoll {
      do {
        let polled = try PollSampler(
          description: d, rate: sampling.pollRate, adaptive: sampling.adaptive, loop: loop,
          logger: logger, handler: handler)
        return .started(polled, trigger: nil)
      } catch {
        if error.isDeviceGone { return .gone(error.description) }
        reasons.append("\(d.sysname): cannot poll: \(error)")
      }
    }
    if reasons.isEmpty {
      reasons.append("\(d.sysname): no way to read it in mode \(sampling.mode)")
    }
    return .failed(reasons.joined(separator: "; "))
  }

  /// Logs a failed start once per episode (the retries are counted, not logged) and schedules
  /// the next attempt.
  private func startFailed(_ d: AccelerometerDescription, _ reason: String) {
    problems.report(
      "start \(d.facts.syspath)", level: .error, logger: logger,
      "\(reason); cannot sample \(d.sysname) for now: trying again in "
        + "\(AvailableValues.format(retry.delay.seconds)) s, then less often (logged once)")
    guard isStarted else { return }
    do {
      try retry.schedule()
    } catch {
      logger.error("cannot schedule a retry of \(d.sysname): \(error)")
    }
  }

  /// Tries again the sensor that would be chosen if none had failed, when it is one that
  /// failed; it replaces what is sampled now only once it has started, so that consumers do
  /// not see the sensor come and go with each attempt.
  private func retryUnusable() {
    guard isStarted, !unusable.isEmpty,
      let best = SensorChoice.choose(sensors, mode: configuration.sampling.mode).chosen,
      unusable.contains(best.facts.syspath)
    else {
      retry.cancel()
      return
    }
    let syspath = best.facts.syspath
    switch makeSampler(best) {
    case .started(let started, let trigger):
      unusable.remove(syspath)
      stopSampler()
      logChoice(choice)
      install(started, trigger: trigger, for: best)
    case .gone(let reason):
      unusable.remove(syspath)
      dropGone(syspath, reason: reason)
    case .failed(let reason):
      startFailed(best, reason)
    }
  }

  /// Makes `started` the running sampler of `d` and tells the consumer.
  private func install(_ started: any Sampler, trigger: String?, for d: AccelerometerDescription) {
    sampler = started
    retry.cancel()
    calibration.reset()
    problems.clear("start \(d.facts.syspath)", logger: logger, "\(d.sysname): started at last")
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
      let vector = status.description.calibrate(x: raw.x, y: raw.y, z: raw.z)
      if calibrationChanged(vector, syspath: syspath) { return }
      samplesDelivered += 1
      onSample?(AccelerometerSample(timestamp: raw.timestamp, acceleration: vector))
    case .gone(let reason):
      dropGone(syspath, reason: reason)
    case .stalled(let reason):
      guard configuration.sampling.mode == .auto, status.description.canPoll else { return }
      logger.warning(
        "\(status.description.sysname): \(reason); polling it instead until sampling stops")
      pollOnly.insert(syspath)
      stopSampler()
      startSampler()
    }
  }

  /// Re-reads the device's calibration when `CalibrationWatch` says readings have kept an
  /// implausible magnitude for long enough (a range switched without a uevent).
  ///
  /// - Returns: whether the sampler was restarted with a new calibration (the reading, made
  ///   with the old one, is then dropped).
  private func calibrationChanged(_ vector: Vector3, syspath: String) -> Bool {
    let now = Clock.monotonic()
    guard calibration.isDue(vector, now: now), let device = context.device(syspath: syspath),
      let old = active?.description
    else { return false }
    calibration.checked(at: now)
    consider(device, action: .change, announce: false)
    if let facts = registry.facts[syspath] {
      let new = AccelerometerDescription(facts: facts, configuration: configuration)
      if new.scale != old.scale || new.offset != old.offset {
        let g = vector.magnitude / standardGravity
        logger.notice(
          "\(old.sysname): readings of \(FixedPoint.format(g, decimals: 2)) g made orientd re-read "
            + "the calibration: scale \(old.scale) -> \(new.scale), offset \(old.offset) -> "
            + "\(new.offset)")
      }
    }
    let current = sampler
    reselect()
    return sampler !== current
  }

  /// The device vanished under a sampler: forget it until udev announces it again.
  private func dropGone(_ syspath: String, reason: String) {
    logger.notice(
      "accelerometer \(registry.facts[syspath]?.sysname ?? syspath) is gone (\(reason))")
    if let current = sampler {
      skippedBefore += current.skipped
      sampler = nil
      current.stop()
    }
    registry.remove(syspath)
    reselect()
  }
}
