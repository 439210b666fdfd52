import DBusKit

/// The properties of `org.orientd.Orientation1`, in introspection order.
public enum OrientdProperty: String, DBusPropertyName {
  /// `b`: a display accelerometer is present. Its changes are broadcast.
  case hasAccelerometer = "HasAccelerometer"
  /// `s`: the committed orientation.
  case orientation = "Orientation"
  /// `u`: the clockwise rotation in degrees; sent whenever `Orientation` is.
  case rotation = "Rotation"
  /// `s`: the tilt.
  case tilt = "Tilt"
  /// `a{sv}`: the sensor's description.
  case sensor = "Sensor"
  /// `b`: orientd-face is running for a proposed rotation (the camera may be open), for a
  /// privacy indicator. Its changes are broadcast.
  case cameraInUse = "CameraInUse"
  /// `s`: the accelerometer's orientation while a face kept `Orientation` from turning to it
  /// (a desktop can offer "rotate anyway"); empty when there is none.
  case suggestedOrientation = "SuggestedOrientation"

  /// `org.orientd.Orientation1`.
  public static let interface = Wire.orientdName

  /// The D-Bus type.
  public var type: DBusType {
    switch self {
    case .hasAccelerometer, .cameraInUse: .boolean
    case .orientation, .tilt, .suggestedOrientation: .string
    case .rotation: .uint32
    case .sensor: .stringVariantDictionary
    }
  }

  /// `Rotation` travels with `Orientation` (undefined and normal are both rotation 0).
  public var sentWith: [OrientdProperty] { self == .rotation ? [.orientation] : [] }

  /// A sensor appearing or going away is broadcast: a client that claims only once
  /// `HasAccelerometer` is true would otherwise never hear that a sensor arrived. The camera's
  /// use is broadcast too: a privacy indicator claims nothing.
  public var isBroadcastOnChange: Bool { self == .hasAccelerometer || self == .cameraInUse }
}

/// The properties of `net.hadess.SensorProxy`, in introspection order.
public enum SensorProxyProperty: String, DBusPropertyName {
  /// `b`. Its changes are broadcast.
  case hasAccelerometer = "HasAccelerometer"
  /// `s`; sent whenever `HasAccelerometer` is (iio-sensor-proxy's clients expect both in one
  /// signal).
  case accelerometerOrientation = "AccelerometerOrientation"
  /// `s`: iio-sensor-proxy's tilt of the same gravity (`Tilt.sensorProxy`), not orientd's.
  case accelerometerTilt = "AccelerometerTilt"
  /// `b`. Its changes are broadcast.
  case hasAmbientLight = "HasAmbientLight"
  /// `s`: `lux` or `vendor`.
  case lightLevelUnit = "LightLevelUnit"
  /// `d`: 0 until a claimed sensor was read.
  case lightLevel = "LightLevel"
  /// `b`. Its changes are broadcast.
  case hasProximity = "HasProximity"
  /// `b`: false until a claimed sensor was read.
  case proximityNear = "ProximityNear"

  /// `net.hadess.SensorProxy`.
  public static let interface = Wire.sensorProxyName

  /// The D-Bus type.
  public var type: DBusType {
    switch self {
    case .hasAccelerometer, .hasAmbientLight, .hasProximity, .proximityNear: .boolean
    case .accelerometerOrientation, .accelerometerTilt, .lightLevelUnit: .string
    case .lightLevel: .double
    }
  }

  /// `AccelerometerOrientation` travels with `HasAccelerometer`.
  public var sentWith: [SensorProxyProperty] {
    self == .accelerometerOrientation ? [.hasAccelerometer] : []
  }

  /// A sensor appearing or going away is broadcast.
  public var isBroadcastOnChange: Bool {
    self == .hasAccelerometer || self == .hasAmbientLight || self == .hasProximity
  }
}

/// The properties of `net.hadess.SensorProxy.Compass`.
public enum CompassProperty: String, DBusPropertyName {
  /// `b`. Its changes are broadcast.
  case hasCompass = "HasCompass"
  /// `d`: degrees from north; -1 until a claimed compass was read.
  case compassHeading = "CompassHeading"

  /// `net.hadess.SensorProxy.Compass`.
  public static let interface = Wire.compassInterface

  /// The D-Bus type.
  public var type: DBusType {
    switch self {
    case .hasCompass: .boolean
    case .compassHeading: .double
    }
  }

  /// A compass appearing or going away is broadcast.
  public var isBroadcastOnChange: Bool { self == .hasCompass }
}

/// The properties of `org.orientd.Posture1` (at `/org/orientd/Posture1`), in introspection
/// order.
public enum PostureProperty: String, DBusPropertyName {
  /// `b`: a display and a base accelerometer are present. Its changes are broadcast.
  case hasHinge = "HasHinge"
  /// `d`: the hinge angle in degrees, NaN while unreliable.
  case hingeAngle = "HingeAngle"
  /// `b`: whether `HingeAngle` can be trusted; sent whenever `HingeAngle` is.
  case hingeAngleReliable = "HingeAngleReliable"
  /// `s`: closed, laptop, flat, tent, stand, tablet or undefined.
  case posture = "Posture"
  /// `b`: tablet mode (keyboard unusable).
  case tabletMode = "TabletMode"
  /// `s`: switch, hinge or none.
  case tabletModeSource = "TabletModeSource"

  /// `org.orientd.Posture1`.
  public static let interface = Wire.postureInterface

  /// The D-Bus type.
  public var type: DBusType {
    switch self {
    case .hasHinge, .hingeAngleReliable, .tabletMode: .boolean
    case .hingeAngle: .double
    case .posture, .tabletModeSource: .string
    }
  }

  /// `HingeAngleReliable` travels with `HingeAngle`.
  public var sentWith: [PostureProperty] { self == .hingeAngleReliable ? [.hingeAngle] : [] }

  /// A hinge appearing or going away is broadcast, as `HasAccelerometer` is.
  public var isBroadcastOnChange: Bool { self == .hasHinge }
}

/// The properties of `org.orientd.Motion1` (at `/org/orientd/Motion1`), in introspection
/// order.
public enum MotionProperty: String, DBusPropertyName {
  /// `b`: a gyroscope is present. Broadcast.
  case hasGyroscope = "HasGyroscope"
  /// `b`: a rotation is available (a rotation sensor, or a gyroscope to fuse). Broadcast.
  case hasRotation = "HasRotation"
  /// `s`: `sensor`, `fusion-9`, `fusion-6` or `none`. Broadcast.
  case rotationSource = "RotationSource"
  /// `(ddd)`: rad/s, display frame; (0, 0, 0) for a client that holds no claim.
  case angularVelocity = "AngularVelocity"
  /// `(dddd)`: w, x, y, z; (1, 0, 0, 0) for a client that holds no claim.
  case rotation = "Rotation"
  /// `t`: CLOCK_MONOTONIC microseconds of the sample; sent with the two above.
  case motionTimestamp = "MotionTimestamp"
  /// `d`: at most this many PropertiesChanged a second.
  case propertyRate = "PropertyRate"
  /// `a{sa{sv}}`: `gyroscope` and `rotation`, each described. Broadcast.
  case sensors = "Sensors"

  /// `org.orientd.Motion1`.
  public static let interface = Wire.motionInterface

  /// The D-Bus type.
  public var type: DBusType {
    switch self {
    case .hasGyroscope, .hasRotation: .boolean
    case .rotationSource: .string
    case .angularVelocity: .structure([.double, .double, .double])
    case .rotation: .structure([.double, .double, .double, .double])
    case .motionTimestamp: .uint64
    case .propertyRate: .double
    case .sensors: .dictionary(key: .string, value: .stringVariantDictionary)
    }
  }

  /// The timestamp travels with the values it stamps.
  public var sentWith: [MotionProperty] {
    self == .motionTimestamp ? [.angularVelocity, .rotation] : []
  }

  /// Whether only claimers see its value (the others read zero and identity).
  public var isPrivate: Bool {
    self == .angularVelocity || self == .rotation || self == .motionTimestamp
  }

  /// A sensor appearing or going away is broadcast.
  public var isBroadcastOnChange: Bool {
    self == .hasGyroscope || self == .hasRotation || self == .rotationSource || self == .sensors
  }
}

extension DBusPropertyName {
  /// The property's value in a `GetAll` answer or a `PropertiesChanged`, if present.
  public func value(in properties: [String: DBusValue]) -> DBusValue? { properties[rawValue] }
}
