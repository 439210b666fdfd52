import DBusKit
import OrientWire
import Sensors

/// The D-Bus interfaces orientd exports, described once; `dbus/*.xml` are these descriptions
/// written out (a test compares them with what the daemon serves).
///
/// Each interface's claim and release methods are the `ClaimTarget`s whose `interface` it is
/// (OrientWire), all handled by one claim path (`Handlers.claim`, `Handlers.release`); the
/// properties are the cases of the wire's property enums, whose values the daemon publishes
/// (`DBusConnection.publish`).
enum BusInterfaces {
  /// What the exported methods ask the daemon.
  struct Handlers {
    /// A claim of `target` (authorized when the target has a polkit action); answer the
    /// invocation now or later.
    var claim: (DBusMethodInvocation, ClaimTarget) -> Void
    /// A release of `target` (authorized likewise); answer the invocation.
    var release: (DBusMethodInvocation, ClaimTarget) -> Void
    /// `GetReading`.
    var reading: () throws(DBusError) -> [DBusValue]
    /// A `org.orientd.Motion1` property's value for one caller (claimers see the values).
    var motionValue: (MotionProperty, _ sender: String) -> DBusValue = { name, _ in
      name.value(in: PublishedState())
    }
    /// `OpenStream(a{sv})`: answered later with the socket and what was granted.
    var openStream: (DBusMethodInvocation) -> Void = {
      $0.fail(.notSupported, "streams are not served here")
    }
  }

  /// The `Claim*`/`Release*` methods of the targets claimed through `interface`.
  private static func claimMethods(_ h: Handlers, interface: String) -> [DBusMethod] {
    ClaimTarget.allCases.filter { $0.interface == interface }.flatMap { target in
      [
        DBusMethod(target.claimMethod) { (invocation) throws(DBusError) in
          h.claim(invocation, target)
        },
        DBusMethod(target.releaseMethod) { (invocation) throws(DBusError) in
          h.release(invocation, target)
        },
      ]
    }
  }

  /// `org.orientd.Orientation1` at `/org/orientd/Orientation1`.
  static func orientd(_ h: Handlers) -> DBusInterface {
    DBusInterface(
      OrientdProperty.interface,
      methods: claimMethods(h, interface: OrientdProperty.interface) + [
        DBusMethod(
          Wire.getReadingMethod,
          out: [
            DBusArgument("x", .double), DBusArgument("y", .double), DBusArgument("z", .double),
            DBusArgument("timestamp", .uint64),
          ]
        ) { (_) throws(DBusError) -> [DBusValue] in try h.reading() }
      ],
      properties: OrientdProperty.allCases.map(DBusProperty.published))
  }

  /// `org.orientd.Posture1` at `/org/orientd/Posture1`: its own claim, so that the base
  /// accelerometer is read only for clients that want the posture.
  static func posture(_ h: Handlers) -> DBusInterface {
    DBusInterface(
      PostureProperty.interface, methods: claimMethods(h, interface: PostureProperty.interface),
      properties: PostureProperty.allCases.map(DBusProperty.published))
  }

  /// `net.hadess.SensorProxy` at `/net/hadess/SensorProxy`: iio-sensor-proxy's accelerometer,
  /// ambient light and proximity.
  static func sensorProxy(_ h: Handlers) -> DBusInterface {
    DBusInterface(
      SensorProxyProperty.interface,
      methods: claimMethods(h, interface: SensorProxyProperty.interface),
      properties: SensorProxyProperty.allCases.map(DBusProperty.published),
      readOnlyPropertyError: .invalidArgs)
  }

  /// `net.hadess.SensorProxy.Compass` at `/net/hadess/SensorProxy/Compass`.
  static func compass(_ h: Handlers) -> DBusInterface {
    DBusInterface(
      CompassProperty.interface, methods: claimMethods(h, interface: CompassProperty.interface),
      properties: CompassProperty.allCases.map(DBusProperty.published),
      readOnlyPropertyError: .invalidArgs)
  }
}

extension BusInterfaces {
  /// `org.orientd.Motion1` at `/org/orientd/Motion1`: its own claim behind its own polkit
  /// action; the angular velocity, rotation and their time only for claimers (`Get` answers
  /// each caller: zero and identity for the others).
  static func motion(_ h: Handlers) -> DBusInterface {
    DBusInterface(
      MotionProperty.interface,
      methods: claimMethods(h, interface: MotionProperty.interface) + [
        DBusMethod(
          Wire.openStreamMethod, in: [DBusArgument("options", .stringVariantDictionary)],
          out: [
            DBusArgument("stream", .unixFD), DBusArgument("granted", .stringVariantDictionary),
          ],
          deferred: { (invocation) throws(DBusError) in h.openStream(invocation) })
      ],
      properties: MotionProperty.allCases.map { name in
        var property = DBusProperty.published(name)
        if name.isPrivate {
          property.getForCaller = { (sender) throws(DBusError) -> DBusValue in
            h.motionValue(name, sender)
          }
        }
        return property
      })
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

extension OrientdProperty: PublishedProperty {
  /// The value in `state`.
  public func value(in state: PublishedState) -> DBusValue {
    switch self {
    case .hasAccelerometer: .boolean(state.hasAccelerometer)
    case .orientation: .string(state.orientation.rawValue)
    case .rotation: .uint32(state.rotation)
    case .tilt: .string(state.tilt.rawValue)
    case .sensor: .stringVariantDictionary(state.sensor)
    case .cameraInUse: .boolean(state.cameraInUse)
    case .suggestedOrientation: .string(state.suggestedOrientation?.rawValue ?? "")
    }
  }
}

extension SensorProxyProperty: PublishedProperty {
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

extension CompassProperty: PublishedProperty {
  /// The value in `state`.
  public func value(in state: PublishedState) -> DBusValue {
    switch self {
    case .hasCompass: .boolean(state.ambient.hasCompass)
    case .compassHeading: .double(state.ambient.compassHeading)
    }
  }
}

extension MotionProperty: PublishedProperty {
  /// The value in `state`.
  public func value(in state: PublishedState) -> DBusValue {
    let m = state.motion
    switch self {
    case .hasGyroscope: return .boolean(m.hasGyroscope)
    case .hasRotation: return .boolean(m.hasRotation)
    case .rotationSource: return .string(m.rotationSource)
    case .angularVelocity:
      let v = m.angularVelocity
      return .structure([.double(v.x), .double(v.y), .double(v.z)])
    case .rotation:
      let q = m.rotation
      return .structure([.double(q.w), .double(q.x), .double(q.y), .double(q.z)])
    case .motionTimestamp: return .uint64(m.timestamp)
    case .propertyRate: return .double(m.propertyRate)
    case .sensors:
      return .dictionary(
        key: .string, value: .stringVariantDictionary,
        m.sensors.sorted { $0.key < $1.key }.map {
          DBusDictEntry(key: .string($0.key), value: .stringVariantDictionary($0.value))
        })
    }
  }
}

extension PostureProperty: PublishedProperty {
  /// The value in `state`.
  public func value(in state: PublishedState) -> DBusValue {
    let p = state.posture
    switch self {
    case .hasHinge: return .boolean(p.hasHinge)
    case .hingeAngle: return .double(p.hinge.angle)
    case .hingeAngleReliable: return .boolean(p.hinge.isReliable)
    case .posture: return .string(p.hinge.posture.rawValue)
    case .tabletMode: return .boolean(p.tabletMode)
    case .tabletModeSource: return .string(p.tabletModeSource)
    }
  }
}
