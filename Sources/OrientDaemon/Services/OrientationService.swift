import DBusKit
import OrientCore
import OrientLog
import OrientWire
import Sensors

/// The display accelerometer's readings through the detector: orientation, tilt, the
/// gravity vector of `GetReading`, and the sensor's description; what `DaemonCore` publishes
/// on `org.orientd.Orientation1` and as iio-sensor-proxy's accelerometer.
final class OrientationService {
  private var logger: Logger
  private(set) var detector: OrientationDetector
  /// The filtered gravity and the detector's time of it (seconds, the pure core's unit).
  private var lastGravity: (vector: Vector3, time: Double)?
  /// Whether the detector's finding that the sensor's scale is off was logged.
  private var scaleReported = false
  /// The sensor as last announced.
  private var status: SensorStatus?
  /// Samples fed to the detector since start.
  private(set) var samplesProcessed = 0

  init(parameters: DetectorParameters, logger: Logger) {
    detector = OrientationDetector(parameters: parameters)
    self.logger = logger
  }

  /// New detector parameters start a fresh detector (the next reading is committed at once).
  func reload(_ parameters: DetectorParameters) {
    guard parameters != detector.parameters else { return }
    detector = OrientationDetector(parameters: parameters)
    logger.info("new detector parameters")
  }

  /// Reading starts afresh: decide from the first reading, not from before the pause.
  func restart() { detector.reset() }

  /// The display accelerometer changed or went away (`nil`); returns the state to publish.
  func sensorChanged(_ status: SensorStatus?, in state: PublishedState) -> PublishedState {
    let before = self.status
    self.status = status
    guard let status else {
      logger.notice("no display accelerometer: orientation undefined until one appears")
      detector.reset()
      detector.resetGravityEstimate()
      scaleReported = false
      lastGravity = nil
      var cleared = PublishedState()
      cleared.posture = state.posture
      cleared.ambient = state.ambient
      return cleared
    }
    var next = state
    next.hasAccelerometer = true
    next.sensor = status.busDescription
    // The detector's evidence is counted in seconds, not samples: a sensor whose rate alone
    // changed (a BMI160's scans taken to a gyroscope stream's 200 Hz and back) goes on where
    // it was. The same sensor announced again (reopened, after a resume) starts afresh.
    let retuned = before.map { status.isRetune(of: $0) && status.rate != $0.rate } ?? false
    if status.isSampling, !retuned { detector.reset() }
    return next
  }

  /// Feeds one reading to the detector.
  ///
  /// - Returns: the update when the orientation or the tilt changed at that reading.
  func process(_ reading: Reading, sensor: AccelerometerDescription?) -> DetectorUpdate? {
    guard let a = reading.acceleration else { return nil }
    samplesProcessed += 1
    let update = detector.process(time: reading.time.seconds, a.x, a.y, a.z)
    if detector.hasReading {
      lastGravity = (detector.gravity, detector.gravityTime)
    }
    if !scaleReported, detector.gravityEstimator.isScaleOff {
      scaleReported = true
      let scale = sensor.map {
        $0.scale.x == $0.scale.y && $0.scale.y == $0.scale.z ? $0.scale.x : nil
      }
      logger.warning(
        "\(sensor?.sysname ?? "accelerometer"): "
          + detector.gravityEstimator.scaleAdvice(scale: scale ?? nil))
    }
    return update
  }

  /// `AccelerometerTilt`: iio-sensor-proxy's tilt of the filtered gravity, once there is one.
  var sensorProxyTilt: Tilt? {
    detector.hasReading ? Tilt.sensorProxy(gravity: detector.gravity) : nil
  }

  /// `GetReading`: the filtered gravity vector and the time of its last sample.
  func reading(hasAccelerometer: Bool) throws(DBusError) -> [DBusValue] {
    guard hasAccelerometer else {
      throw DBusError(Wire.noAccelerometerError, "orientd has no display accelerometer")
    }
    guard let last = lastGravity else {
      throw DBusError(
        Wire.noReadingError,
        "no reading yet: the sensor is read only while a client holds a claim; call Claim first")
    }
    let micros = UInt64(max(0, (last.time * 1e6).rounded()))
    return [
      .double(last.vector.x), .double(last.vector.y), .double(last.vector.z), .uint64(micros),
    ]
  }
}
