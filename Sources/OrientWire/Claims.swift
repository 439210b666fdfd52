import DBusKit

/// What a client can claim: one claim method and its release on one interface. The daemon
/// reads the sensors a target needs only while someone holds it (one claim table for every
/// target, Sources/OrientDaemon/Claims); clients call these methods.
///
/// Adding a target (a new interface with its own claim) is one case here, with its arms in the
/// switches below, and the sensor kinds it needs in the daemon's `ClaimTarget.kinds`.
public enum ClaimTarget: String, CaseIterable, Hashable, Sendable, Comparable {
  /// `org.orientd.Orientation1.Claim`: the orientation.
  case orientd
  /// `net.hadess.SensorProxy.ClaimAccelerometer`: the orientation through iio-sensor-proxy's API.
  case sensorProxy
  /// `org.orientd.Posture1.ClaimPosture`: the display and the base accelerometer.
  case posture
  /// `net.hadess.SensorProxy.ClaimLight`.
  case light
  /// `net.hadess.SensorProxy.ClaimProximity`.
  case proximity
  /// `net.hadess.SensorProxy.Compass.ClaimCompass`.
  case compass
  /// `org.orientd.Motion1.Claim`: the gyroscope and the device's rotation.
  case motion

  /// The bus name that serves it.
  public var busName: String {
    switch self {
    case .orientd, .posture, .motion: Wire.orientdName
    case .sensorProxy, .light, .proximity, .compass: Wire.sensorProxyName
    }
  }

  /// The object it is claimed at.
  public var path: DBusObjectPath {
    switch self {
    case .orientd: Wire.orientationPath
    case .posture: Wire.posturePath
    case .sensorProxy, .light, .proximity: Wire.sensorProxyPath
    case .compass: Wire.compassPath
    case .motion: Wire.motionPath
    }
  }

  /// The interface of its methods.
  public var interface: String {
    switch self {
    case .orientd: Wire.orientdName
    case .posture: Wire.postureInterface
    case .sensorProxy, .light, .proximity: Wire.sensorProxyName
    case .compass: Wire.compassInterface
    case .motion: Wire.motionInterface
    }
  }

  /// The claim method.
  public var claimMethod: String {
    switch self {
    case .orientd, .motion: "Claim"
    case .sensorProxy: "ClaimAccelerometer"
    case .posture: "ClaimPosture"
    case .light: "ClaimLight"
    case .proximity: "ClaimProximity"
    case .compass: "ClaimCompass"
    }
  }

  /// The release method.
  public var releaseMethod: String {
    switch self {
    case .orientd, .motion: "Release"
    case .sensorProxy: "ReleaseAccelerometer"
    case .posture: "ReleasePosture"
    case .light: "ReleaseLight"
    case .proximity: "ReleaseProximity"
    case .compass: "ReleaseCompass"
    }
  }

  /// The polkit action checked on every claim, `nil` for orientd's own orientation and posture
  /// (their bus policy is the gate): iio-sensor-proxy's API is checked as 3.4+ checks it,
  /// motion with an action of its own that only the active session has (raw motion can leak
  /// what is typed: iio-sensor-proxy #22).
  public var polkitAction: String? {
    switch self {
    case .orientd, .posture: nil
    case .motion: Wire.motionReadAction
    case .sensorProxy, .light, .proximity, .compass: Wire.claimSensorAction
    }
  }

  /// Whether orientd serves it only while it owns `net.hadess.SensorProxy`.
  public var isCompatibility: Bool { busName == Wire.sensorProxyName }

  /// In declaration order.
  public static func < (a: ClaimTarget, b: ClaimTarget) -> Bool {
    (allCases.firstIndex(of: a) ?? 0) < (allCases.firstIndex(of: b) ?? 0)
  }
}
