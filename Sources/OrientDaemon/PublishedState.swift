import DBusKit
import OrientCore
import Sensors

/// What the daemon tells clients: the values behind the D-Bus properties of both APIs (each
/// property's `value(in:)` reads them).
public struct PublishedState: Equatable, Sendable {
  /// A display accelerometer is present.
  public var hasAccelerometer = false
  /// The committed orientation (`undefined` with no sensor or before the first reading).
  public var orientation: Orientation = .undefined
  /// The tilt.
  public var tilt: Tilt = .undefined
  /// `AccelerometerTilt`: the same gravity by iio-sensor-proxy's rule (`Tilt.sensorProxy`).
  public var sensorProxyTilt: Tilt = .undefined
  /// The `Sensor` property (empty with no sensor).
  public var sensor: [String: DBusValue] = [:]
  /// `org.orientd.Posture1`'s properties.
  public var posture = PostureState()
  /// Light, proximity and compass (Services/AmbientService.swift).
  public var ambient = AmbientState()
  /// `CameraInUse`: orientd-face runs for a proposal (Services/FaceService.swift).
  public var cameraInUse = false
  /// `SuggestedOrientation`: the accelerometer's orientation while a face veto keeps
  /// `orientation` (`nil`: none).
  public var suggestedOrientation: Orientation?
  /// `org.orientd.Motion1`'s properties (Services/MotionService.swift).
  public var motion = MotionState()

  /// No sensor, nothing known.
  public init() {}

  /// `Rotation`: the clockwise device rotation, 0 while undefined.
  public var rotation: UInt32 { UInt32(orientation.clockwiseRotation ?? 0) }
}

extension SensorStatus {
  /// The `Sensor` property: a{sv} with `device`, `syspath`, `name`, `label` (when known),
  /// `location`, `location-source`, `mode`, `rate` (d, Hz), `mount-matrix`,
  /// `mount-matrix-source` (s) and `scale` (ad, x y z).
  public var busDescription: [String: DBusValue] {
    guard let d = accelerometer else { return [:] }
    var result: [String: DBusValue] = [
      "device": .string(d.sysname),
      "syspath": .string(d.facts.syspath),
      "location": .string(d.location.rawValue),
      "location-source": .string(d.locationSource),
      "mode": .string(mode.rawValue),
      "rate": .double(rate),
      "mount-matrix": .string(d.mountMatrix.description),
      "mount-matrix-source": .string(d.mountMatrixSource.description),
      "scale": .array(
        element: .double, [.double(d.scale.x), .double(d.scale.y), .double(d.scale.z)]),
    ]
    if let name = d.facts.name { result["name"] = .string(name) }
    if let label = d.facts.label { result["label"] = .string(label) }
    // libdbus aborts on invalid UTF-8 or NUL: sysfs text is checked before it goes out.
    return result.filter { _, value in
      guard case .string(let text) = value else { return true }
      return DBusNames.isValidString(text)
    }
  }
}
