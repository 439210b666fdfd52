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

  /// `org.orientd.Motion1`: the gyroscope and the rotation, served under `orientdName`.
  public static let motionInterface = "org.orientd.Motion1"
  /// `/org/orientd/Motion1`.
  public static let motionPath = path("/org/orientd/Motion1")
  /// The polkit action every `org.orientd.Motion1.Claim` and `OpenStream` is checked with
  /// (polkit/org.orientd.Motion1.policy: the active session only).
  public static let motionReadAction = "org.orientd.motion.read"
  /// `OpenStream` on `org.orientd.Motion1`: `(h stream, a{sv} granted)`.
  public static let openStreamMethod = "OpenStream"
  /// `org.orientd.Motion1.Error.NoSensor`: `Claim` with neither a gyroscope nor a rotation
  /// sensor.
  public static let noMotionSensorError = DBusError.Name("org.orientd.Motion1.Error.NoSensor")
  /// `org.orientd.Motion1.Error.NotClaimed`: `OpenStream` without a claim.
  public static let notClaimedError = DBusError.Name("org.orientd.Motion1.Error.NotClaimed")
  /// `org.orientd.Motion1.Error.TooManyStreams`: a fifth stream of one client.
  public static let tooManyStreamsError = DBusError.Name(
    "org.orientd.Motion1.Error.TooManyStreams")

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
