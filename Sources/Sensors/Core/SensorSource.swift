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
  /// Before a system suspend: stops every reader (buffers off, the devices' settings put
  /// back) and opens none until `resume()`; what is wanted stays wanted.
  func suspend()
  /// After a system resume: opens the reader of every wanted kind afresh (rates, sampling
  /// frequency and hysteresis written again, buffers and triggers armed again), also when no
  /// `suspend()` came first.
  func resume()
  /// Reads `kind` afresh with a new reader; with `fallBack`, with the sensor's next driver
  /// (a buffered accelerometer is then polled), as for a stalled reader, until the kind stops
  /// being read.
  func restart(_ kind: SensorKind, fallBack: Bool)
  /// Asks for at least `rate` readings a second of `kind` (0: the reader's default), from its
  /// running reader and every reader opened for it later, until asked again
  /// (`SensorReader.request(rate:for:)`); a reader that retunes is announced with `.changed`.
  func request(rate: Double, for kind: SensorKind)
}

extension SensorSource {
  /// Ignored: a source whose sensors run at their own rates.
  public func request(rate: Double, for kind: SensorKind) {}
}
