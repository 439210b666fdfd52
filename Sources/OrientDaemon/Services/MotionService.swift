import DBusKit
import OrientCore
import OrientLog
import Sensors

/// What `org.orientd.Motion1` publishes (its properties' values, `MotionProperty`).
public struct MotionState: Equatable, Sendable {
  /// A gyroscope is present.
  public var hasGyroscope = false
  /// A device-rotation sensor is present.
  public var hasRotationSensor = false
  /// A magnetometer is present (the fusion's heading is then absolute).
  public var hasMagnetometer = false
  /// The newest angular velocity, rad/s, display frame (bias removed when fused).
  public var angularVelocity = Vector3.zero
  /// The newest rotation, display frame to earth frame.
  public var rotation = Quaternion.identity
  /// CLOCK_MONOTONIC microseconds of the sample the two come from; 0 before the first.
  public var timestamp: UInt64 = 0
  /// At most this many PropertiesChanged a second.
  public var propertyRate = MotionService.defaultPropertyRate
  /// The `Sensors` property's entries: `gyroscope`, `rotation`.
  public var sensors: [String: [String: DBusValue]] = [:]

  /// Nothing present.
  public init() {}

  /// A rotation is available: from the sensor, or fused from the gyroscope.
  public var hasRotation: Bool { hasRotationSensor || hasGyroscope }

  /// `RotationSource`: `sensor`, `fusion-9` (with a magnetometer), `fusion-6` or `none`.
  public var rotationSource: String {
    hasRotationSensor
      ? "sensor" : !hasGyroscope ? "none" : hasMagnetometer ? "fusion-9" : "fusion-6"
  }

  /// This state with the values (rate, rotation, time) of `other`: a change of presence or
  /// settings is broadcast without them.
  public func keepingValues(of other: MotionState) -> MotionState {
    var copy = self
    copy.angularVelocity = other.angularVelocity
    copy.rotation = other.rotation
    copy.timestamp = other.timestamp
    return copy
  }

  /// The values as a non-claimer reads them.
  public var withheld: MotionState {
    var copy = self
    copy.angularVelocity = .zero
    copy.rotation = .identity
    copy.timestamp = 0
    return copy
  }
}

/// The gyroscope, the rotation sensor and the fusion: each reading updates `state`; the
/// owner publishes it at most `propertyRate` times a second (`isDue`) and streams every
/// sample (`record`).
///
/// Without a rotation sensor the rotation is `MotionFusion` of the gyroscope (integrated) and
/// the display accelerometer (the inclination), each on its own clock; with one, the sensor's
/// quaternion is the rotation and the gyroscope's rate is passed on as read.
final class MotionService {
  /// The `PropertyRate` default.
  static let defaultPropertyRate = 5.0

  /// The newest values.
  private(set) var state = MotionState()
  /// Samples made since start.
  private(set) var samples = 0
  private var fusion: MotionFusion
  private var lastPublished: Int64?
  private var sequence: UInt32 = 0
  private var discontinuity = true
  /// What each motion kind's sensor was last said to be.
  private var statuses: [SensorKind: SensorStatus] = [:]
  private let logger: Logger

  init(settings: MotionSettings, logger: Logger) {
    self.logger = logger
    fusion = MotionFusion(parameters: settings.fusion)
    state.propertyRate = settings.propertyRate
  }

  /// New settings (a reload): a fresh fusion with the new parameters, the new rate.
  func reload(_ settings: MotionSettings) {
    fusion = MotionFusion(parameters: settings.fusion)
    state.propertyRate = settings.propertyRate
    restart()
  }

  /// Starts afresh (the first claim): the fusion forgets its state.
  func restart() {
    fusion.reset()
    lastPublished = nil
    discontinuity = true
  }

  /// A gyroscope or rotation sensor appeared, changed or went away.
  func sensorChanged(_ kind: SensorKind, _ status: SensorStatus?) {
    let key = kind.rawValue
    switch kind {
    case .rotation: state.hasRotationSensor = status != nil
    case .magnetometer: state.hasMagnetometer = status != nil
    default: state.hasGyroscope = status != nil
    }
    state.sensors[key] = status.map(MotionService.describe)
    if state.sensors[key] == nil { state.sensors.removeValue(forKey: key) }
    let before = statuses[kind]
    statuses[kind] = status
    // A sensor retuned to its clients' rate (`MotionRate`) is the same sensor: the fusion
    // goes on.
    if let before, let status, status.isRetune(of: before) { return }
    restart()
  }

  /// A reading of the gyroscope, the rotation sensor or the display accelerometer.
  ///
  /// - Returns: the stream record it makes (a gyroscope's sample, or a rotation sensor's
  ///   when there is no gyroscope), if any.
  func received(_ reading: Reading) -> MotionRecord? {
    let seconds = reading.time.seconds
    switch reading.value {
    case .angularVelocity(let omega):
      if state.hasRotationSensor {
        state.angularVelocity = omega
      } else {
        fusion.integrate(gyro: omega, time: seconds)
        state.angularVelocity = fusion.isInitialized ? fusion.angularVelocity : omega
        if fusion.isInitialized { state.rotation = fusion.rotation }
      }
      return record(reading.time)
    case .rotation(let q):
      state.rotation = q
      return state.hasGyroscope ? nil : record(reading.time)
    case .acceleration(let a):
      guard state.hasGyroscope, !state.hasRotationSensor else { return nil }
      fusion.correct(acceleration: a, time: seconds)
      return nil
    case .magneticField(let m):
      guard state.hasGyroscope, !state.hasRotationSensor else { return nil }
      fusion.correct(magneticField: m, time: seconds)
      return nil
    case .light, .proximity, .heading, .angle:
      return nil
    }
  }

  /// Whether the properties may change now (`propertyRate`), counting it as done if so.
  func isDue(now: Int64) -> Bool {
    let period = Int64(1e9 / max(state.propertyRate, 0.1))
    if let last = lastPublished, now - last < period { return false }
    lastPublished = now
    return true
  }

  private func record(_ time: MonotonicTime) -> MotionRecord {
    samples += 1
    state.timestamp = UInt64(max(time.nanoseconds, 0) / 1000)
    let fused = !state.hasRotationSensor
    var flags: MotionRecord.Flags = []
    if !fused { flags.insert(.hardwareRotation) }
    if !fused || fusion.isHeadingAbsolute { flags.insert(.absoluteHeading) }
    if fused && fusion.isResting { flags.insert(.resting) }
    if discontinuity { flags.insert(.discontinuity) }
    discontinuity = false
    sequence &+= 1
    let hasRotation = !fused || fusion.isInitialized
    return MotionRecord(
      timestamp: UInt64(max(time.nanoseconds, 0)), sequence: sequence,
      angularVelocity: state.hasGyroscope ? state.angularVelocity : nil,
      rotation: hasRotation ? state.rotation : nil, flags: flags)
  }

  /// A sensor's entry in `Sensors`: device, syspath, name, mode, rate, mount-matrix,
  /// mount-matrix-source, scale, max-rate.
  static func describe(_ status: SensorStatus) -> [String: DBusValue] {
    var entry: [String: DBusValue] = [
      "device": .string(status.sensor.sysname), "syspath": .string(status.sensor.syspath),
      "mode": .string(status.mode.rawValue), "rate": .double(status.rate),
    ]
    if let d = status.sensor.motion {
      entry["mount-matrix"] = .string(d.mountMatrix.description)
      entry["mount-matrix-source"] = .string(d.mountMatrixSource)
      entry["scale"] = .double(d.scale)
      entry["max-rate"] = .double(d.maximumRate ?? d.samplingFrequency ?? status.rate)
      if let name = d.name { entry["name"] = .string(name) }
    }
    return entry.filter { _, value in
      guard case .string(let text) = value else { return true }
      return DBusNames.isValidString(text)
    }
  }
}
