/// One accelerometer reading with its time.
///
/// The acceleration is in m/s^2 in the display frame, Linux IIO convention: the reading points
/// along gravity, so an upright display (`normal`) reads (0, -g, 0), `right-up` (-g, 0, 0),
/// `left-up` (+g, 0, 0), `bottom-up` (0, +g, 0) and a display lying face up (0, 0, -g).
public struct Sample: Sendable, Equatable {
  /// Monotonic time in seconds (any origin; only differences matter).
  public var time: Double
  /// The acceleration in m/s^2, display frame, mount matrix already applied.
  public var acceleration: Vector3

  /// Creates a sample.
  @inlinable
  public init(time: Double, acceleration: Vector3) {
    self.time = time
    self.acceleration = acceleration
  }

  /// Creates a sample from its components.
  @inlinable
  public init(time: Double, _ x: Double, _ y: Double, _ z: Double) {
    self.init(time: time, acceleration: Vector3(x, y, z))
  }
}

/// What changed at one sample: the orientation, the tilt, or both.
public struct DetectorUpdate: Sendable, Equatable {
  /// The time of the sample at which the change was committed.
  public var time: Double
  /// The orientation after the sample.
  public var orientation: Orientation
  /// The tilt after the sample.
  public var tilt: Tilt
  /// Whether `orientation` changed at this sample.
  public var orientationChanged: Bool
  /// Whether `tilt` changed at this sample.
  public var tiltChanged: Bool
}

/// How many samples the detector ignored, by reason.
public struct RejectionCounts: Sendable, Equatable {
  /// A component or the time was NaN or infinite.
  public var notFinite = 0
  /// All three components were exactly zero (a sensor that is not running).
  public var zeroVector = 0
  /// The time was earlier than the previous sample's.
  public var timeBackwards = 0
  /// The magnitude was further from g than `magnitude-tolerance` (free fall, hard impact, or a
  /// wrong `in_accel_scale`).
  public var magnitude = 0

  /// Creates zero counts.
  public init() {}

  /// The sum of all counts.
  public var total: Int { notFinite + zeroVector + timeBackwards + magnitude }
}
