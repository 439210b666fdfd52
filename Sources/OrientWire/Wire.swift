import DBusKit

/// orientd's D-Bus contract, spelt once: bus names, object paths, error names and the polkit
/// action. The daemon serves it, `OrientClient` and `orientd-rotate` call it, the tests check
/// it; `dbus/*.xml` are its interfaces written out (a test compares them with what is served).
///
/// The properties of each interface are the cases of `OrientdProperty`, `SensorProxyProperty`,
/// `CompassProperty` and `PostureProperty` (Properties.swift); the claim methods are the cases
/// of `ClaimTarget` (Claims.swift).
public enum Wire {
  /// orientd's own bus name (and the interface at `orientationPath`).
  public static let orientdName = "org.orientd.Orientation1"
  /// iio-sensor-proxy's bus name (and interface), which orientd also serves.
  public static let sensorProxyName = "net.hadess.SensorProxy"
  /// `org.orientd.Posture1`: convertibles, served under `orientdName`.
  public static let postureInterface = "org.orientd.Posture1"
  /// `net.hadess.SensorProxy.Compass`, served under `sensorProxyName`.
  public static let compassInterface = "net.hadess.SensorProxy.Compass"

  /// `/org/orientd/Orientation1`.
  public static let orientationPath = path("/org/orientd/Orientation1")
  /// `/org/orientd/Posture1`.
  public static let posturePath = path("/org/orientd/Posture1")
  /// `/net/hadess/SensorProxy`.
  public static let sensorProxyPath = path("/net/hadess/SensorProxy")
  /// `/net/hadess/SensorProxy/Compass`.
  public static let compassPath = path("/net/hadess/SensorProxy/Compass")

  /// `GetReading` on `org.orientd.Orientation1`: `(dddt)` x, y, z in m/s^2 and the time in
  /// microseconds.
  public static let getReadingMethod = "GetReading"
  /// `org.orientd.Orientation1.Error.NoAccelerometer`: `GetReading` with no sensor.
  public static let noAccelerometerError = DBusError.Name(
    "org.orientd.Orientation1.Error.NoAccelerometer")
  /// `org.orientd.Orientation1.Error.NoReading`: `GetReading` before the first sample.
  public static let noReadingError = DBusError.Name("org.orientd.Orientation1.Error.NoReading")

  /// The polkit action iio-sensor-proxy 3.4+ checks on every claim and release of its API
  /// (orientd too, with polkit/org.orientd.SensorProxy.policy), so that rules written for it
  /// apply to orientd.
  public static let claimSensorAction = "net.hadess.SensorProxy.claim-sensor"

  /// `org.freedesktop.DBus.Properties`: `GetAll` and `PropertiesChanged`.
  public static let propertiesInterface = "org.freedesktop.DBus.Properties"

  private static func path(_ text: String) -> DBusObjectPath {
    (try? DBusObjectPath(text)) ?? .root
  }
}
