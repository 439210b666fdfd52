import Sensors

/// The values behind the light, proximity and compass properties of iio-sensor-proxy's API.
public struct AmbientState: Equatable, Sendable {
  /// `HasAmbientLight`.
  public var hasLight = false
  /// `LightLevel`: 0 until a claimed sensor was read (as iio-sensor-proxy).
  public var lightLevel = 0.0
  /// `LightLevelUnit`.
  public var lightUnit = LightUnit.lux
  /// `HasProximity`.
  public var hasProximity = false
  /// `ProximityNear`: false until a claimed sensor was read.
  public var proximityNear = false
  /// `HasCompass`.
  public var hasCompass = false
  /// `CompassHeading`: -1 until a claimed compass was read (and with none).
  public var compassHeading = -1.0

  /// Nothing present.
  public init() {}

  /// Whether a sensor of `kind` is present.
  public func has(_ kind: SensorKind) -> Bool {
    switch kind {
    case .light: hasLight
    case .proximity: hasProximity
    case .compass: hasCompass
    case .accelerometer, .baseAccelerometer, .hinge, .gyroscope, .rotation, .magnetometer: false
    }
  }
}

/// Light, proximity and the compass: what their sensors and readings make of `AmbientState`.
/// Their claims, holds and publishing are the daemon's one claim path (`ClaimDesk`,
/// `DaemonCore`).
enum AmbientService {
  /// The state after `kind`'s sensor appeared, changed or went away (`nil`): present or not,
  /// its value back to "unknown" until it is read.
  static func sensorChanged(
    _ kind: SensorKind, _ info: AmbientDescription?, in state: AmbientState
  ) -> AmbientState {
    var next = state
    switch kind {
    case .light:
      next.hasLight = info != nil
      next.lightUnit = info?.unit ?? .lux
      next.lightLevel = 0
    case .proximity:
      next.hasProximity = info != nil
      next.proximityNear = false
    case .compass:
      next.hasCompass = info != nil
      next.compassHeading = -1
    case .accelerometer, .baseAccelerometer, .hinge, .gyroscope, .rotation, .magnetometer:
      break
    }
    return next
  }

  /// The state after a reading.
  static func received(_ value: SensorValue, in state: AmbientState) -> AmbientState {
    var next = state
    switch value {
    case .light(let level, let unit):
      next.lightLevel = level
      next.lightUnit = unit
    case .proximity(let near): next.proximityNear = near
    case .heading(let heading): next.compassHeading = heading
    case .acceleration, .angle, .angularVelocity, .rotation, .magneticField: break
    }
    return next
  }
}
