import OrientCore
import OrientLog
import SystemKit

/// Reads a convertible's base (keyboard) accelerometer, which `SensorChoice` never uses for
/// orientation: for the hinge angle, and only while `start()` has been called (a posture claim).
///
/// It follows the `SensorManager`'s devices: the base sensor is the first accelerometer whose
/// location is `base` (udev `ACCEL_LOCATION=base`, label `accel-base`, cros-ec `location` base,
/// or configuration). When it appears, changes or goes away, `onChange` says so and a running
/// reader moves to it. It is read the way the display sensor would be (buffered when possible,
/// polled otherwise), with its own sampler and the same sysfs journal discipline.
public final class BaseAccelerometer {
  /// Each calibrated reading, on the loop.
  public var onSample: ((AccelerometerSample) -> Void)?
  /// The base sensor changed (`nil`: there is none).
  public var onChange: ((AccelerometerDescription?) -> Void)?

  /// The base sensor present, read or not.
  public private(set) var sensor: AccelerometerDescription?
  /// Whether reading was requested.
  public private(set) var isStarted = false
  /// Readings delivered since creation.
  public private(set) var samplesDelivered = 0

  private unowned let manager: SensorManager
  private var logger: Logger
  private var sampler: (any Sampler)?
  private var problems = LogOnce()

  /// Follows `manager`'s devices (it takes `manager.onDevicesApplied`).
  public init(manager: SensorManager, logger: Logger) {
    self.manager = manager
    self.logger = logger
    manager.onDevicesApplied = { [weak self] in self?.devicesApplied() }
    sensor = BaseAccelerometer.find(in: manager.sensors)
  }

  deinit { sampler?.stop() }

  /// Whether the base sensor is being read right now.
  public var isSampling: Bool { sampler != nil }

  /// The base sensor among `sensors`: the lowest-numbered one located in the base.
  public static func find(in sensors: [AccelerometerDescription]) -> AccelerometerDescription? {
    sensors.first { $0.location == .base }
  }

  /// Starts reading the base sensor (now, or when one appears).
  public func start() {
    guard !isStarted else { return }
    isStarted = true
    startSampler()
  }

  /// Stops reading: closes its descriptors and restores its sysfs settings.
  public func stop() {
    guard isStarted else { return }
    isStarted = false
    stopSampler()
  }

  private func devicesApplied() {
    let found = BaseAccelerometer.find(in: manager.sensors)
    if let found, let sensor, SensorChoice.isSameSensor(found, sensor) {
      self.sensor = found
      if isStarted && sampler == nil { startSampler() }
      return
    }
    if found == nil && sensor == nil { return }
    stopSampler()
    sensor = found
    if let found {
      logger.info("base accelerometer \(found.sysname) (\(found.locationSource))")
    } else {
      logger.notice("no base accelerometer: hinge angle unavailable until one appears")
    }
    onChange?(found)
    if isStarted { startSampler() }
  }

  private func startSampler() {
    guard let d = sensor, sampler == nil else { return }
    let syspath = d.facts.syspath
    let handler: (SamplerEvent) -> Void = { [weak self] event in
      self?.event(event, syspath: syspath)
    }
    switch manager.makeSampler(d, handler: handler) {
    case .started(let started, _):
      sampler = started
      problems.clear("start", logger: logger, "\(d.sysname): started")
      logger.info(
        "sampling base \(d.sysname) \(started.mode.rawValue) at "
          + "\(AvailableValues.format(started.rate)) Hz")
    case .gone(let reason), .failed(let reason):
      // Tried again on the next uevent or claim; the hinge stays unreliable meanwhile.
      problems.report(
        "start", level: .error, logger: logger,
        "\(reason); cannot read the base accelerometer: no hinge angle (logged once)")
    }
  }

  private func stopSampler() {
    guard let current = sampler else { return }
    sampler = nil
    current.stop()
    logger.info("stopped sampling base \(sensor?.sysname ?? "accelerometer")")
  }

  private func event(_ event: SamplerEvent, syspath: String) {
    guard let d = sensor, d.facts.syspath == syspath else { return }
    switch event {
    case .reading(let raw):
      samplesDelivered += 1
      onSample?(
        AccelerometerSample(
          timestamp: raw.timestamp, acceleration: d.calibrate(x: raw.x, y: raw.y, z: raw.z)))
    case .gone(let reason):
      logger.notice("base accelerometer \(d.sysname) is gone (\(reason))")
      stopSampler()
    case .stalled(let reason):
      problems.report("stalled", logger: logger, "base \(d.sysname): \(reason)")
    }
  }
}
