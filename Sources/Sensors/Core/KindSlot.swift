import OrientCore
import OrientLog
import SystemKit

/// One kind's sensor in the `SensorHub`: which one is chosen, its reader while the kind is
/// wanted, retries of a sensor that cannot be opened, a stalled driver replaced by the next.
/// The same for every kind.
final class KindSlot {
  let kind: SensorKind
  unowned let hub: SensorHub
  /// The chosen sensor and how it is (or would be) read.
  private(set) var status: SensorStatus?
  /// The running reader.
  private(set) var reader: (any SensorReader)?
  /// Whether the kind is wanted.
  private(set) var wanted = false
  /// Sensors that could not be opened: not chosen until they change or a retry works.
  var unusable: Set<String> = []
  /// Readings delivered since creation.
  private(set) var delivered = 0
  /// Readings skipped by readers that have finished.
  private(set) var skippedBefore = 0
  /// Readings a second the consumer asks for (0: none), for this and every later reader.
  private(set) var requestedRate = 0.0

  /// Drivers that stalled, by syspath: not used again until the kind stops being read.
  private var stalled: [String: Set<String>] = [:]
  /// The driver of the running reader.
  private var readerDriver: String?
  /// Whether a base accelerometer was present when the running reader was opened.
  private var openedPaired = false
  private var problems = LogOnce()
  private var calibration = CalibrationWatch()
  private var lastChoiceLog = ""
  private let logger: Logger
  private lazy var retry = RetryBackoff(loop: hub.loop) { [weak self] in self?.retryUnusable() }

  init(_ kind: SensorKind, hub: SensorHub) {
    self.kind = kind
    self.hub = hub
    logger = hub.logger
  }

  /// "base " for the base accelerometer's log lines.
  private var prefix: String { kind == .baseAccelerometer ? "base " : "" }

  // MARK: Wanted

  func start() {
    guard !wanted else { return }
    wanted = true
    // A sensor that failed to open before gets another chance with the new claim.
    let failedBefore = !unusable.isEmpty
    if status != nil { startReader() }
    if failedBefore { retryUnusable() }
  }

  func stop() {
    guard wanted else { return }
    wanted = false
    stopReader()
    retry.cancel()
    stalled.removeAll()
    if var now = status {
      now.isSampling = false
      status = now
    }
  }

  /// Asks the running reader, and every later one, for `rate` readings a second; a reader
  /// that retuned is announced with its new rate.
  func request(rate: Double) {
    guard rate != requestedRate else { return }
    requestedRate = rate
    guard let reader else { return }
    reader.request(rate: rate, for: kind)
    announceRate(of: reader, why: "\(AvailableValues.format(rate)) asked")
  }

  /// Tells the consumer the running reader's rate when it is no longer the one announced (a
  /// retune, or a reader of two kinds reopened for the other).
  private func announceRate(of reader: any SensorReader, why: String) {
    guard var now = status, now.rate != reader.rate else { return }
    logger.info(
      "sampling \(prefix)\(now.sensor.sysname) at \(AvailableValues.format(reader.rate)) Hz "
        + "(\(why))")
    now.rate = reader.rate
    status = now
    hub.emit(.changed(kind, now))
  }

  // MARK: System sleep

  /// Before a suspend: the reader stops (its journal puts the device's settings back, the
  /// buffer off); the kind stays wanted.
  func suspend() {
    retry.cancel()
    guard reader != nil else { return }
    stopReader()
    status?.isSampling = false
  }

  /// After a resume: a wanted kind is read afresh, its best driver tried again (a stall before
  /// the suspend says nothing about the device after it), its settings written once more
  /// after the device is on (`SensorReader.rearm()`). A reader that ran through the
  /// suspend unnoticed (`wasSuspended` false) is replaced too: the device may have lost its
  /// settings.
  func resume(wasSuspended: Bool) {
    guard wanted else { return }
    stalled.removeAll()
    if !wasSuspended { stopReader() }
    startReader()
    // Opening wrote the settings and switched the device on; a hub that dropped them at that
    // power-up (or waits for a write before it reports again) gets them once more.
    reader?.rearm()
    if !unusable.isEmpty { retryUnusable() }
  }

  /// A new reader for the kind; with `fallBack`, the running reader's driver is avoided (as
  /// for a stall) when the sensor has another one.
  func restart(fallBack: Bool) {
    guard wanted, status != nil else { return }
    if fallBack { _ = avoidRunningDriver(because: "no reading since the resume") }
    stopReader()
    startReader()
    reader?.rearm()
  }

  // MARK: Choice

  /// Chooses the kind's sensor again; keeps the reader of a sensor that did not change
  /// (unless `force`), opens one for a new sensor while wanted.
  func reselect(force: Bool = false) {
    let sensors = hub.sensors(for: kind)
    let mode = hub.configuration.sampling.mode
    var choice = kind.choose(sensors.filter { !unusable.contains($0.syspath) }, mode: mode)
    if choice.chosen == nil && !kind.hidesSensorsThatCannotOpen {
      // None opens: the kind's sensor is still there (its retries go on).
      choice = kind.choose(sensors, mode: mode)
    }
    logChoice(choice, anyPresent: !sensors.isEmpty)
    let chosen = choice.chosen
    if !force {
      switch (status?.sensor, chosen) {
      case (nil, nil): return
      case (let current?, let chosen?) where current.isSame(as: chosen):
        // Same device, same calibration: keep reading; refresh the facts shown. (Removed and
        // back within one batch of uevents: its reader was stopped, open a new one.)
        status?.sensor = chosen
        if wanted && reader == nil && !unusable.contains(chosen.syspath) { startReader() }
        if wanted, let reader, reader.dependsOnPairing, openedPaired != hub.isPaired {
          logger.info(
            "a base accelerometer \(hub.isPaired ? "appeared" : "went away"): reading "
              + "\(chosen.sysname) afresh to choose its still wakeups again")
          stopReader()
          startReader()
        }
        return
      default: break
      }
    }
    stopReader()
    let had = status
    status = chosen.map { sensor in
      let plan = plannedDriver(for: sensor).map { $0.plan(sensor, hub.configuration) }
      return SensorStatus(
        sensor: sensor, mode: plan?.mode ?? .polled, rate: plan?.rate ?? 0, isSampling: false)
    }
    if had != nil || status != nil {
      announce(had?.sensor, status?.sensor)
      hub.emit(.changed(kind, status))
    }
    if wanted, let sensor = status?.sensor, !unusable.contains(sensor.syspath) { startReader() }
  }

  /// The driver that would read `sensor` first.
  private func plannedDriver(for sensor: Sensor) -> (any SensorDriver.Type)? {
    drivers(for: sensor).first
  }

  /// The drivers that may read `sensor`, best first: enabled by the configuration, not stalled.
  private func drivers(for sensor: Sensor) -> [any SensorDriver.Type] {
    let avoided = stalled[sensor.syspath] ?? []
    return sensor.drivers.compactMap(SensorDrivers.named).filter {
      $0.isEnabled(by: hub.configuration) && !avoided.contains($0.name)
    }
  }

  private func logChoice(_ choice: SensorKind.Choice, anyPresent: Bool) {
    guard kind == .accelerometer else { return }
    let outcome = SensorChoice.Outcome(
      chosen: choice.chosen?.accelerometer, notChosen: choice.notChosen)
    let text = SensorChoice.summary(outcome, anyPresent: anyPresent)
    if text != lastChoiceLog {
      lastChoiceLog = text
      logger.notice(text)
    }
  }

  /// Says which sensor serves the kind now (the display accelerometer's choice is logged
  /// with its reasons by `logChoice`).
  private func announce(_ before: Sensor?, _ now: Sensor?) {
    guard before?.detail != now?.detail else { return }
    switch kind {
    case .accelerometer:
      break
    case .baseAccelerometer:
      if let d = now?.accelerometer {
        logger.info("base accelerometer \(d.sysname) (\(d.locationSource))")
      } else {
        logger.notice("no base accelerometer: hinge angle unavailable until one appears")
      }
    case .hinge:
      if let d = now?.hingeAngle {
        logger.notice("hinge angle sensor \(d.sysname) (\(d.source)): the posture follows it")
      } else if let before {
        logger.notice("hinge angle sensor \(before.sysname) removed")
      }
    case .gyroscope, .rotation, .magnetometer:
      if let d = now?.motion {
        logger.notice(
          "\(kind.noun) \(d.sysname) (\(d.name ?? "no name"), mount matrix \(d.mountMatrixSource))")
      } else if let before {
        logger.notice("\(kind.noun) \(before.sysname) removed")
      }
    case .light, .proximity, .compass:
      if let info = now?.ambient {
        logger.notice(
          "\(kind.noun) \(info.sysname) (\(info.driver), \(info.classifiedBy))"
            + (info.nearLevel.map { ", near level \($0) from \(info.nearLevelSource ?? "?")" }
              ?? (info.isPolledProximity ? ", no near level: near above 0" : "")))
      } else if let before {
        logger.notice("\(kind.noun) \(before.sysname) removed")
      }
    }
  }

  // MARK: Reading

  /// What trying to open a reader gave.
  private enum OpenOutcome {
    case opened(any SensorReader, driver: String)
    /// The device vanished while being opened.
    case gone(String)
    /// No driver could read it; the reasons say why.
    case failed(String)
  }

  private func startReader() {
    guard let sensor = status?.sensor, reader == nil, !hub.isSuspended else { return }
    openedPaired = hub.isPaired
    switch open(sensor) {
    case .opened(let opened, let driver): install(opened, driver: driver, for: sensor)
    case .gone(let reason): dropGone(sensor.syspath, reason: reason)
    case .failed(let reason):
      startFailed(sensor, reason)
      unusable.insert(sensor.syspath)
      reselect()
    }
  }

  /// Opens `sensor` with the first driver that can read it.
  private func open(_ sensor: Sensor) -> OpenOutcome {
    let syspath = sensor.syspath
    let candidates = drivers(for: sensor)
    var reasons: [String] = []
    for (index, driver) in candidates.enumerated() {
      var opened: (any SensorReader)?
      // The reader keeps its handler: the handler must not keep the reader (a cycle that
      // outlives the slot; LeakSanitizer found it), so it knows its source only weakly.
      let source = WeakReader()
      let context = hub.openContext(for: sensor, logger: logger, rate: requestedRate)
      do {
        opened = try driver.open(sensor, context) { [weak self, source] event in
          self?.event(event, syspath: syspath, from: source.reader)
        }
        source.reader = opened
      } catch {
        if error.isDeviceGone { return .gone(error.message) }
        if index + 1 < candidates.count {
          logger.warning("\(error.message); \(candidates[index + 1].takeOverNote)")
        } else {
          reasons.append(error.message)
        }
        continue
      }
      if let opened { return .opened(opened, driver: driver.name) }
    }
    if candidates.isEmpty {
      reasons.append(
        "\(sensor.sysname): no way to read it in mode \(hub.configuration.sampling.mode)")
    }
    return .failed(reasons.joined(separator: "; "))
  }

  /// Makes `opened` the running reader of `sensor` and tells the consumer.
  private func install(_ opened: any SensorReader, driver: String, for sensor: Sensor) {
    reader = opened
    readerDriver = driver
    retry.cancel()
    calibration.reset()
    problems.clear("start \(sensor.syspath)", logger: logger, "\(sensor.sysname): started at last")
    let now = SensorStatus(
      sensor: sensor, mode: opened.mode, rate: opened.rate, trigger: opened.trigger,
      isSampling: true)
    logger.log(
      kind.isAmbient ? .debug : .info,
      "sampling \(prefix)\(sensor.sysname) \(opened.mode.rawValue) at "
        + "\(AvailableValues.format(opened.rate)) Hz")
    status = now
    hub.emit(.changed(kind, now))
  }

  func stopReader() {
    guard let current = reader else { return }
    skippedBefore += current.skipped
    reader = nil
    readerDriver = nil
    current.stop()
    if let sensor = status?.sensor {
      logger.log(kind.isAmbient ? .debug : .info, "stopped sampling \(prefix)\(sensor.sysname)")
    }
  }

  /// Logs a failed start once per episode (the retries are counted, not logged) and schedules
  /// the next attempt.
  private func startFailed(_ sensor: Sensor, _ reason: String) {
    problems.report(
      "start \(sensor.syspath)", level: .error, logger: logger,
      "\(reason); cannot sample \(sensor.sysname) (\(kind.noun)) for now: trying again in "
        + "\(AvailableValues.format(retry.delay.seconds)) s, then less often (logged once)")
    guard wanted else { return }
    do {
      try retry.schedule()
    } catch {
      logger.error("cannot schedule a retry of \(sensor.sysname): \(error)")
    }
  }

  /// Tries again the sensor that would be chosen if none had failed, when it is one that
  /// failed; it replaces what is read now only once it has opened, so that consumers do not
  /// see the sensor come and go with each attempt.
  private func retryUnusable() {
    guard wanted, !hub.isSuspended, !unusable.isEmpty,
      let best = kind.choose(hub.sensors(for: kind), mode: hub.configuration.sampling.mode)
        .chosen,
      unusable.contains(best.syspath)
    else {
      retry.cancel()
      return
    }
    switch open(best) {
    case .opened(let opened, let driver):
      unusable.remove(best.syspath)
      stopReader()
      install(opened, driver: driver, for: best)
    case .gone(let reason):
      unusable.remove(best.syspath)
      dropGone(best.syspath, reason: reason)
    case .failed(let reason):
      startFailed(best, reason)
    }
  }

  private func event(_ event: SensorEvent, syspath: String, from source: (any SensorReader)?) {
    guard let current = reader, source === current, status?.sensor.syspath == syspath else {
      return
    }
    switch event {
    case .reading(let reading):
      if let vector = reading.acceleration, calibrationChanged(vector, syspath: syspath) {
        return
      }
      delivered += 1
      hub.emit(.reading(kind, reading))
    case .gone(let reason):
      dropGone(syspath, reason: reason)
    case .stalled(let reason):
      guard let sensor = status?.sensor else { return }
      guard avoidRunningDriver(because: reason) else {
        problems.report("stalled", logger: logger, "\(prefix)\(sensor.sysname): \(reason)")
        return
      }
      stopReader()
      startReader()
    case .retuned(let why):
      announceRate(of: current, why: why)
    }
  }

  /// Marks the running reader's driver stalled, so that the next reader uses the sensor's
  /// next driver until the kind stops being read; logs why.
  ///
  /// - Returns: false (and nothing marked) when the sensor has no other driver.
  private func avoidRunningDriver(because reason: String) -> Bool {
    guard let sensor = status?.sensor, let driver = readerDriver,
      let next = drivers(for: sensor).first(where: { $0.name != driver })
    else { return false }
    logger.warning("\(sensor.sysname): \(reason); \(next.stallNote) until sampling stops")
    stalled[sensor.syspath, default: []].insert(driver)
    return true
  }

  /// Describes the device again when `CalibrationWatch` says readings have kept an
  /// implausible magnitude for long enough (a range switched without a uevent).
  ///
  /// - Returns: whether the reader was replaced (the reading, made with the old calibration,
  ///   is then dropped).
  private func calibrationChanged(_ vector: Vector3, syspath: String) -> Bool {
    let now = hub.loop.now
    guard calibration.isDue(vector, now: now), let old = status?.accelerometer else {
      return false
    }
    calibration.checked(at: now)
    let current = reader
    hub.rediscover(syspath)
    if let new = hub.sensor(at: syspath, for: kind)?.accelerometer,
      new.scale != old.scale || new.offset != old.offset
    {
      let g = vector.magnitude / standardGravity
      logger.notice(
        "\(old.sysname): readings of \(FixedPoint.format(g, decimals: 2)) g made orientd re-read "
          + "the calibration: scale \(old.scale) -> \(new.scale), offset \(old.offset) -> "
          + "\(new.offset)")
    }
    return reader !== current
  }

  /// The device vanished under a reader: forget it until udev announces it again.
  private func dropGone(_ syspath: String, reason: String) {
    logger.notice("\(kind.noun) \(status?.sensor.sysname ?? syspath) is gone (\(reason))")
    stopReader()
    hub.forget(syspath)
  }
}

extension SensorKind {
  /// Light, proximity or compass: their readers log their own start.
  var isAmbient: Bool { self == .light || self == .proximity || self == .compass }

  /// Whether a sensor that cannot be opened stops counting as the kind's sensor (until it
  /// changes or a retry opens it): an accelerometer's, so that another one takes over and no
  /// client waits for an orientation that will not come. An ambient sensor that is the only
  /// one of its kind stays present (`HasProximity` true) while it is retried.
  var hidesSensorsThatCannotOpen: Bool { !isAmbient }
}

extension Sensor {
  /// Whether switching from `self` to `other` needs no new reader: the same device described
  /// the same way (for an accelerometer, `SensorChoice.isSameSensor`: a change event also
  /// reports the frequency orientd itself set).
  func isSame(as other: Sensor) -> Bool {
    if let a = accelerometer, let b = other.accelerometer {
      return SensorChoice.isSameSensor(a, b)
    }
    return self == other
  }
}

extension AmbientDescription {
  /// A proximity sensor read as a number (not a switch): its near level matters.
  var isPolledProximity: Bool {
    if kind == .proximity, case .iioPoll = driver { return true }
    return false
  }
}

/// A reader known without keeping it alive.
private final class WeakReader {
  weak var reader: (any SensorReader)?
}
