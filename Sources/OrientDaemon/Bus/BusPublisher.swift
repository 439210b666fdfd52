import DBusKit
import OrientLog
import OrientWire
import Sensors

// What a claimer is told when its claim is answered.
//
// A GDBus client (mutter, gnome-settings-daemon, geoclue, phosh) creates its proxy before it
// claims: the proxy caches every property then (GetAll) and afterwards trusts that cache plus
// PropertiesChanged, never calling Get. Changes are sent to claimers only (as iio-sensor-proxy
// 3.1+ does), so whatever changed between the proxy's creation and the claim was not sent to
// it: another client was already reading the sensor, or had read it in an earlier claim while
// this one only held its proxy. Nothing in the bus protocol says when a proxy took its
// snapshot, so every claim's answer (at once, or after the first reading) is preceded by one
// PropertiesChanged, to that client alone, carrying every property of what it claimed with
// its current value: the ones that differ from its snapshot are among them, and an unchanged
// value in a PropertiesChanged is harmless to a GDBus proxy (it stores the same value).
// iio-sensor-proxy sends a claimer only the changes that follow its claim (src/
// iio-sensor-proxy.c: the first reading's changes, to the claimers), so its clients keep a
// stale value until the next change in exactly these cases.

/// The objects whose properties the daemon publishes.
public enum PublishedObject: CaseIterable, Sendable {
  /// `org.orientd.Orientation1`.
  case orientation
  /// `net.hadess.SensorProxy`: the accelerometer, light and proximity.
  case sensorProxy
  /// `net.hadess.SensorProxy.Compass`.
  case compass
  /// `org.orientd.Posture1`.
  case posture
  /// `org.orientd.Motion1`.
  case motion
}

/// The bus as the daemon's logic sees it: publishing the state of an object (its changes
/// announced to recipients, a sensor appearing or going away to everyone) and the snapshot a
/// claimer gets before its claim is answered. `DBusPublisher` is the real one; unit tests
/// record what would be sent.
public protocol BusPublisher: AnyObject {
  /// Publishes `state` as `object`'s property values; the changed ones are announced to
  /// `recipients` (unique names) in one `PropertiesChanged`.
  func publish(_ state: PublishedState, on object: PublishedObject, to recipients: [String])
  /// Sends `sender` alone the current values of everything `target` is for.
  func sendSnapshot(_ state: PublishedState, of target: ClaimTarget, to sender: String)
}

extension SensorProxyProperty {
  /// The accelerometer's properties (iio-sensor-proxy's `mask_for_sensor_type`).
  static let accelerometer: [SensorProxyProperty] = [
    .hasAccelerometer, .accelerometerOrientation, .accelerometerTilt,
  ]
  /// The light sensor's properties.
  static let light: [SensorProxyProperty] = [.hasAmbientLight, .lightLevelUnit, .lightLevel]
  /// The proximity sensor's properties.
  static let proximity: [SensorProxyProperty] = [.hasProximity, .proximityNear]
}

/// Publishes on a `DBusConnection` where `BusInterfaces` are exported; iio-sensor-proxy's
/// objects only while orientd owns `net.hadess.SensorProxy` (`servesCompatibility`).
final class DBusPublisher: BusPublisher {
  let connection: DBusConnection
  /// Whether `net.hadess.SensorProxy` (and its compass) is served.
  var servesCompatibility = false
  private let logger: Logger

  init(connection: DBusConnection, logger: Logger) {
    self.connection = connection
    self.logger = logger
  }

  func publish(_ state: PublishedState, on object: PublishedObject, to recipients: [String]) {
    guard connection.isConnected else { return }
    switch object {
    case .orientation:
      publish(OrientdProperty.self, state, at: Wire.orientationPath, to: recipients)
    case .posture: publish(PostureProperty.self, state, at: Wire.posturePath, to: recipients)
    case .motion: publish(MotionProperty.self, state, at: Wire.motionPath, to: recipients)
    case .sensorProxy where servesCompatibility:
      publish(SensorProxyProperty.self, state, at: Wire.sensorProxyPath, to: recipients)
    case .compass where servesCompatibility:
      publish(CompassProperty.self, state, at: Wire.compassPath, to: recipients)
    case .sensorProxy, .compass: break
    }
  }

  /// Records `state` as the values of `Name`'s properties at `path` without announcing them
  /// (right after export: nobody could have read others).
  func record<Name: PublishedProperty>(
    _: Name.Type, _ state: PublishedState, at path: DBusObjectPath
  )
    throws(DBusError)
  {
    try connection.publish(at: path, to: nil) { (name: Name) in name.value(in: state) }
  }

  private func publish<Name: PublishedProperty>(
    _: Name.Type, _ state: PublishedState, at path: DBusObjectPath, to recipients: [String]
  ) {
    do {
      try connection.publish(at: path, to: recipients) { (name: Name) in name.value(in: state) }
    } catch {
      logger.warning("cannot send PropertiesChanged of \(Name.interface): \(error)")
    }
  }

  func sendSnapshot(_ state: PublishedState, of target: ClaimTarget, to sender: String) {
    guard connection.isConnected, !sender.isEmpty else { return }
    if target.isCompatibility && !servesCompatibility { return }
    switch target {
    case .orientd: emit(OrientdProperty.allCases, state, at: target.path, to: sender)
    case .sensorProxy: emit(SensorProxyProperty.accelerometer, state, at: target.path, to: sender)
    case .posture: emit(PostureProperty.allCases, state, at: target.path, to: sender)
    case .light: emit(SensorProxyProperty.light, state, at: target.path, to: sender)
    case .proximity: emit(SensorProxyProperty.proximity, state, at: target.path, to: sender)
    case .compass: emit(CompassProperty.allCases, state, at: target.path, to: sender)
    case .motion: emit(MotionProperty.allCases, state, at: target.path, to: sender)
    }
  }

  /// Sends `PropertiesChanged` of `names` with their current values to `sender` alone.
  private func emit<Name: PublishedProperty>(
    _ names: [Name], _ state: PublishedState, at path: DBusObjectPath, to sender: String
  ) {
    do {
      try connection.emitPropertiesChanged(names, at: path, destinations: [sender])
    } catch {
      logger.warning("cannot send PropertiesChanged of \(Name.interface): \(error)")
    }
  }
}
