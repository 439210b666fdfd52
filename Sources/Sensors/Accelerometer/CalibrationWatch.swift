import OrientCore

/// Decides when implausible readings should make the manager re-read a sensor's calibration.
///
/// A driver that switches its range changes `in_accel_scale` without a uevent, and the old
/// scale would make every reading 2, 4 or 8 times too large or small. After
/// `implausibleBeforeCheck` readings in a row outside `plausibleGravity`, a check is due at
/// most once per `interval`, which doubles (up to a minute) while nothing changed, so a device
/// shaken for long or miscalibrated for good costs little. The scale is not re-read on every
/// reading: that would double the reads of a polled sensor.
struct CalibrationWatch {
  /// Calibrated magnitudes outside this many g are implausible for a device at rest or in a
  /// hand (the detector's default tolerance rejects them too).
  static let plausibleGravity = 0.5...1.5
  /// Implausible readings in a row before the calibration is re-read.
  static let implausibleBeforeCheck = 5
  /// The first and the longest interval between calibration re-reads.
  static let firstInterval: Duration = .seconds(1)
  static let maximumInterval: Duration = .seconds(60)

  private var implausibleInARow = 0
  private var nextCheck: Duration = .zero
  private var interval = CalibrationWatch.firstInterval

  /// A fresh start (a new sampler): no implausible readings, the shortest interval.
  mutating func reset() {
    implausibleInARow = 0
    interval = CalibrationWatch.firstInterval
  }

  /// Counts a reading of `vector`.
  ///
  /// - Returns: whether a re-read is due at `now`; if the manager does re-read, it calls
  ///   `checked(at:)`.
  mutating func isDue(_ vector: Vector3, now: Duration) -> Bool {
    let g = vector.magnitude / standardGravity
    if CalibrationWatch.plausibleGravity.contains(g) {
      implausibleInARow = 0
      interval = CalibrationWatch.firstInterval
      return false
    }
    implausibleInARow += 1
    return implausibleInARow >= CalibrationWatch.implausibleBeforeCheck && now >= nextCheck
  }

  /// The calibration was re-read at `now`: the next check waits `interval`, which doubles.
  mutating func checked(at now: Duration) {
    nextCheck = now + interval
    interval = min(interval * 2, CalibrationWatch.maximumInterval)
  }
}
