import Accelerometer
import DBusKit

/// The D-Bus interfaces orientd exports, described once; `dbus/*.xml` are these descriptions
/// written out (a test compares them with what the daemon serves).
///
/// The methods call back into the daemon through `Handlers`, so the descriptions stay free
/// of daemon state. The properties are the cases of `OrientdProperty`, `SensorProxyProperty`
/// and `CompassProperty`; their values are published by the daemon (`DBusConnection.publish`).
enum BusInterfaces {
  /// What the exported methods ask the daemon.
  struct Handlers {
    /// A claim arrived through `api` (answer `invocation` now or later).
    var claim: (DBusMethodInvocation, ClaimAPI) -> Void
    /// A release arrived through `api`.
    var release: (String, ClaimAPI) -> Void
    /// `GetReading`.
    var reading: () throws(DBusError) -> [DBusValue]
    /// `ClaimLight`, `ClaimProximity`, `ClaimCompass` (answer now or later).
    var ambientClaim: (DBusMethodInvocation, AmbientKind) -> Void = { invocation, _ in
      invocation.reply()
    }
    /// `ReleaseLight`, `ReleaseProximity`, `ReleaseCompass`.
    var ambientRelease: (String, AmbientKind) -> Void = { _, _ in }
    /// Runs the closure once the caller may claim and release through iio-sensor-proxy's API
    /// (polkit), or fails the invocation; orientd's own API is not checked.
    var authorize: (DBusMethodInvocation, @escaping () -> Void) -> Void = { _, proceed in
      proceed()
    }
  }

  /// `org.orientd.Orientation1.Error.NoAccelerometer`: `GetReading` with no sensor.
  static let noAccelerometer = DBusError.Name("org.orientd.Orientation1.Error.NoAccelerometer")
  /// `org.orientd.Orientation1.Error.NoReading`: `GetReading` before the first sample.
  static let noReading = DBusError.Name("org.orientd.Orientation1.Error.NoReading")

  /// `org.orientd.Orientation1` at `/org/orientd/Orientation1`.
  static func orientd(_ h: Handlers) -> DBusInterface {
    DBusInterface(
      OrientdProperty.interface,
      methods: [
        DBusMethod("Claim") { (invocation) throws(DBusError) in h.claim(invocation, .orientd) },
        DBusMethod("Release") { (invocation) throws(DBusError) -> [DBusValue] in
          h.release(invocation.sender, .orientd)
          return []
        },
        DBusMethod(
          "GetReading",
          out: [
            DBusArgument("x", .double), DBusArgument("y", .double), DBusArgument("z", .double),
            DBusArgument("timestamp", .uint64),
          ]
        ) { (_) throws(DBusError) -> [DBusValue] in try h.reading() },
      ],
      properties: OrientdProperty.allCases.map(DBusProperty.published))
  }

  /// `Claim<Kind>`/`Release<Kind>` of an ambient sensor, each authorized first.
  private static func ambientMethods(_ h: Handlers, _ kind: AmbientKind, _ name: String)
    -> [DBusMethod]
  {
    [
      DBusMethod("Claim\(name)") { (invocation) throws(DBusError) in
        h.authorize(invocation) { h.ambientClaim(invocation, kind) }
      },
      DBusMethod("Release\(name)") { (invocation) throws(DBusError) in
        h.authorize(invocation) {
          h.ambientRelease(invocation.sender, kind)
          invocation.reply()
        }
      },
    ]
  }

  /// `net.hadess.SensorProxy` at `/net/hadess/SensorProxy`: iio-sensor-proxy's accelerometer,
  /// ambient light and proximity. Every claim and release is authorized first (3.4+ checks
  /// releases too).
  static func sensorProxy(_ h: Handlers) -> DBusInterface {
    DBusInterface(
      SensorProxyProperty.interface,
      methods: [
        DBusMethod("ClaimAccelerometer") { (invocation) throws(DBusError) in
          h.authorize(invocation) { h.claim(invocation, .sensorProxy) }
        },
        DBusMethod("ReleaseAccelerometer") { (invocation) throws(DBusError) in
          h.authorize(invocation) {
            h.release(invocation.sender, .sensorProxy)
            invocation.reply()
          }
        },
      ] + ambientMethods(h, .light, "Light") + ambientMethods(h, .proximity, "Proximity"),
      properties: SensorProxyProperty.allCases.map(DBusProperty.published),
      readOnlyPropertyError: .invalidArgs)
  }

  /// `net.hadess.SensorProxy.Compass` at `/net/hadess/SensorProxy/Compass`.
  static func compass(_ h: Handlers) -> DBusInterface {
    DBusInterface(
      CompassProperty.interface,
      methods: ambientMethods(h, .compass, "Compass"),
      properties: CompassProperty.allCases.map(DBusProperty.published),
      readOnlyPropertyError: .invalidArgs)
  }
}

/// A property orientd publishes: its value in a `PublishedState`.
///
/// Adding a property is one case in its enum and one arm in each of that enum's two switches
/// (`type`, `value(in:)`); the compiler points at both. Introspection, `Get`/`GetAll` and
/// `PropertiesChanged` follow from the case (update `dbus/*.xml` to match: a test compares).
public protocol PublishedProperty: DBusPropertyName {
  /// The property's value in `state`.
  func value(in state: PublishedState) -> DBusValue
}

/// The properties of `org.orientd.Orientation1`, in introspection order.
public enum OrientdProperty: String, PublishedProperty {
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

  /// `org.orientd.Orientation1`.
  public static let interface = "org.orientd.Orientation1"

  /// The D-Bus type.
  public var type: DBusType {
    switch self {
    case .hasAccelerometer: .boolean
    case .orientation, .tilt: .string
    case .rotation: .uint32
    case .sensor: .stringVariantDictionary
    }
  }

  /// `Rotation` travels with `Orientation` (undefined and normal are both rotation 0).
  public var sentWith: [OrientdProperty] { self == .rotation ? [.orientation] : [] }

  /// A sensor appearing or going away is broadcast (see `OrientDaemon`).
  public var isBroadcastOnChange: Bool { self == .hasAccelerometer }

  /// The value in `state`.
  public func value(in state: PublishedState) -> DBusValue {
    switch self {
    case .hasAccelerometer: .boolean(state.hasAccelerometer)
    case .orientation: .string(state.orientation.rawValue)
    case .rotation: .uint32(state.rotation)
    case .tilt: .string(state.tilt.rawValue)
    case .sensor: .stringVariantDictionary(state.sensor)
    }
  }
}

/// The properties of `net.hadess.SensorProxy`, in introspection order.
public enum SensorProxyProperty: String, PublishedProperty {
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
  public static let interface = "net.hadess.SensorProxy"

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

  /// A sensor appearing or going away is broadcast (see `OrientDaemon`).
  public var isBroadcastOnChange: Bool {
    self == .hasAccelerometer || self == .hasAmbientLight || self == .hasProximity
  }

  /// The value in `state`.
  public func value(in state: PublishedState) -> DBusValue {
    switch self {
    case .hasAccelerometer: .boolean(state.hasAccelerometer)
    case .accelerometerOrientation: .string(state.orientation.rawValue)
    case .accelerometerTilt: .string(state.sensorProxyTilt.rawValue)
    case .hasAmbientLight: .boolean(state.ambient.hasLight)
    case .lightLevelUnit: .string(state.ambient.lightUnit.rawValue)
    case .lightLevel: .double(state.ambient.lightLevel)
    case .hasProximity: .boolean(state.ambient.hasProximity)
    case .proximityNear: .boolean(state.ambient.proximityNear)
    }
  }
}

/// The properties of `net.hadess.SensorProxy.Compass`.
public enum CompassProperty: String, PublishedProperty {
  /// `b`. Its changes are broadcast.
  case hasCompass = "HasCompass"
  /// `d`: degrees from north; -1 until a claimed compass was read.
  case compassHeading = "CompassHeading"

  /// `net.hadess.SensorProxy.Compass`.
  public static let interface = "net.hadess.SensorProxy.Compass"

  /// The D-Bus type.
  public var type: DBusType {
    switch self {
    case .hasCompass: .boolean
    case .compassHeading: .double
    }
  }

  /// A compass appearing or going away is broadcast.
  public var isBroadcastOnChange: Bool { self == .hasCompass }

  /// The value in `state`.
  public func value(in state: PublishedState) -> DBusValue {
    switch self {
    case .hasCompass: .boolean(state.ambient.hasCompass)
    case .compassHeading: .double(state.ambient.compassHeading)
    }
  }
}
