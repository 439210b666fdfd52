import DBusKit

/// The D-Bus interfaces orientd exports, described once; `dbus/*.xml` are these descriptions
/// written out (a test compares them with what the daemon serves).
///
/// The handlers call back into the daemon through `Handlers`, so the descriptions stay free
/// of daemon state.
enum BusInterfaces {
  /// What the exported methods and properties ask the daemon.
  struct Handlers {
    /// The current published state.
    var state: () -> PublishedState
    /// A claim arrived through `api` (answer `invocation` now or later).
    var claim: (DBusMethodInvocation, ClaimAPI) -> Void
    /// A release arrived through `api`.
    var release: (String, ClaimAPI) -> Void
    /// `GetReading`.
    var reading: () throws(DBusError) -> [DBusValue]
  }

  /// `org.orientd.Orientation1.Error.NoAccelerometer`: `GetReading` with no sensor.
  static let noAccelerometer = DBusError.Name("org.orientd.Orientation1.Error.NoAccelerometer")
  /// `org.orientd.Orientation1.Error.NoReading`: `GetReading` before the first sample.
  static let noReading = DBusError.Name("org.orientd.Orientation1.Error.NoReading")

  /// `org.orientd.Orientation1` at `/org/orientd/Orientation1`.
  static func orientd(_ h: Handlers) -> DBusInterface {
    DBusInterface(
      "org.orientd.Orientation1",
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
      properties: [
        DBusProperty("HasAccelerometer", .boolean) { .boolean(h.state().hasAccelerometer) },
        DBusProperty("Orientation", .string) { .string(h.state().orientation.rawValue) },
        DBusProperty("Rotation", .uint32) { .uint32(h.state().rotation) },
        DBusProperty("Tilt", .string) { .string(h.state().tilt.rawValue) },
        DBusProperty("Sensor", .stringVariantDictionary) {
          .stringVariantDictionary(h.state().sensor)
        },
      ])
  }

  /// `net.hadess.SensorProxy` at `/net/hadess/SensorProxy`: the accelerometer part of
  /// iio-sensor-proxy's contract; light and proximity report no sensor and their claims
  /// succeed.
  static func sensorProxy(_ h: Handlers) -> DBusInterface {
    func nothing(_ name: String) -> DBusMethod {
      DBusMethod(name) { (_) throws(DBusError) -> [DBusValue] in [] }
    }
    return DBusInterface(
      "net.hadess.SensorProxy",
      methods: [
        DBusMethod("ClaimAccelerometer") { (invocation) throws(DBusError) in
          h.claim(invocation, .sensorProxy)
        },
        DBusMethod("ReleaseAccelerometer") { (invocation) throws(DBusError) -> [DBusValue] in
          h.release(invocation.sender, .sensorProxy)
          return []
        },
        nothing("ClaimLight"), nothing("ReleaseLight"), nothing("ClaimProximity"),
        nothing("ReleaseProximity"),
      ],
      properties: [
        DBusProperty("HasAccelerometer", .boolean) { .boolean(h.state().hasAccelerometer) },
        DBusProperty("AccelerometerOrientation", .string) {
          .string(h.state().orientation.rawValue)
        },
        DBusProperty("AccelerometerTilt", .string) { .string(h.state().tilt.rawValue) },
        DBusProperty("HasAmbientLight", .boolean) { .boolean(false) },
        DBusProperty("LightLevelUnit", .string) { .string("lux") },
        DBusProperty("LightLevel", .double) { .double(0) },
        DBusProperty("HasProximity", .boolean) { .boolean(false) },
        DBusProperty("ProximityNear", .boolean) { .boolean(false) },
      ],
      readOnlyPropertyError: .invalidArgs)
  }

  /// `net.hadess.SensorProxy.Compass` at `/net/hadess/SensorProxy/Compass`: no compass.
  static func compass() -> DBusInterface {
    DBusInterface(
      "net.hadess.SensorProxy.Compass",
      methods: [
        DBusMethod("ClaimCompass") { (_) throws(DBusError) -> [DBusValue] in [] },
        DBusMethod("ReleaseCompass") { (_) throws(DBusError) -> [DBusValue] in [] },
      ],
      properties: [
        DBusProperty("HasCompass", .boolean) { .boolean(false) },
        DBusProperty("CompassHeading", .double) { .double(-1) },
      ],
      readOnlyPropertyError: .invalidArgs)
  }
}
