import Accelerometer
import DBusKit

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

extension SensorProxyProperty {
  /// The accelerometer's properties (iio-sensor-proxy's `mask_for_sensor_type`).
  static let accelerometer: [SensorProxyProperty] = [
    .hasAccelerometer, .accelerometerOrientation, .accelerometerTilt,
  ]

  /// The properties of one ambient kind on `/net/hadess/SensorProxy` (the compass has its own
  /// object).
  static func of(_ kind: AmbientKind) -> [SensorProxyProperty] {
    switch kind {
    case .light: [.hasAmbientLight, .lightLevelUnit, .lightLevel]
    case .proximity: [.hasProximity, .proximityNear]
    case .compass: []
    }
  }
}

extension OrientDaemon {
  /// Sends `sender` the current values of everything its claim through `api` is for, before
  /// the claim is answered.
  func sendSnapshot(of api: ClaimAPI, to sender: String) {
    guard let connection = busConnection, !sender.isEmpty else { return }
    switch api {
    case .orientd:
      emit(OrientdProperty.allCases, at: OrientDaemon.orientdPath, to: [sender], on: connection)
    case .sensorProxy where servesCompatibility:
      emit(
        SensorProxyProperty.accelerometer, at: OrientDaemon.sensorProxyPath, to: [sender],
        on: connection)
    case .sensorProxy:
      break
    case .posture:
      emit(PostureProperty.allCases, at: OrientDaemon.posturePath, to: [sender], on: connection)
    }
  }

  /// Sends `sender` the current values of an ambient kind's properties, before its claim is
  /// answered.
  func sendSnapshot(of kind: AmbientKind, to sender: String) {
    guard let connection = busConnection, servesCompatibility, !sender.isEmpty else { return }
    if kind == .compass {
      emit(CompassProperty.allCases, at: OrientDaemon.compassPath, to: [sender], on: connection)
    } else {
      emit(
        SensorProxyProperty.of(kind), at: OrientDaemon.sensorProxyPath, to: [sender],
        on: connection)
    }
  }
}
