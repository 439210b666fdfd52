/// What a sensor source tells its consumer, on the loop.
public enum SensorSourceEvent: Sendable {
  /// The sensor of a kind appeared, changed, started or stopped being read, or went away
  /// (`nil`).
  case changed(SensorKind, SensorStatus?)
  /// A reading of a kind being read.
  case reading(SensorKind, Reading)
}

/// The sensors as the daemon's logic sees them: which sensor serves each kind, reading a kind
/// while it is wanted, and the readings. `SensorHub` is the real one (udev, sysfs, device
/// nodes); unit tests give the daemon a scripted one, so that claims, the first-reading hold
/// and hotplug are tested without devices.
public protocol SensorSource: AnyObject {
  /// Called with every change and reading.
  var onEvent: ((SensorSourceEvent) -> Void)? { get set }
  /// The sensor serving `kind`, read or not.
  func status(of kind: SensorKind) -> SensorStatus?
  /// Reads `kind` (now, or when a sensor of that kind appears) or stops reading it, closing
  /// everything and restoring the device's settings.
  func setWanted(_ kind: SensorKind, _ wanted: Bool)
  /// Whether `kind` is being read right now.
  func isReading(_ kind: SensorKind) -> Bool
  /// Applies a new configuration: a changed accelerometer part re-describes the sensors and
  /// opens the accelerometers afresh; new ambient intervals apply from the next start.
  func update(configuration: SensorsConfiguration)
  /// Stops reading every kind (shutdown).
  func stopAll()
}
