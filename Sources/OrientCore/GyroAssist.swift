/// An optional layer in front of `OrientationDetector` for devices with a gyroscope: the
/// detector is fed the gravity the fusion estimates instead of the raw acceleration.
///
/// The detector itself is unchanged: this layer only rewrites what it sees. The fusion
/// (`MotionFusion`, accelerometer and gyroscope) follows a turn as the gyroscope measures it,
/// without the accelerometer's low-pass lag, and keeps the vertical through footsteps, a car's
/// vibration and shaking, which only move the accelerometer. Whether that helps is measured by
/// `orient-bench --gyro` (docs/motion.md, "Does a gyroscope help the detector?").
public struct GyroAssist: Sendable {
  /// What magnitude the fused gravity direction is handed on with.
  public enum Magnitude: String, Sendable, CaseIterable {
    /// The accelerometer's own magnitude, so the detector's motion and impact gates still see
    /// footsteps and jolts.
    case measured
    /// Exactly the configured gravity: the gates never close (the fused direction is trusted
    /// through linear acceleration).
    case gravity
    /// Exactly gravity while the gyroscope sees a deliberate turn (`turningRate` and faster),
    /// the accelerometer's magnitude otherwise: the gates stay for footsteps and jolts, but do
    /// not hold up a turn the gyroscope has measured.
    case turning
  }

  /// The low-passed turn rate (rad/s) from which `.turning` hands on exactly gravity.
  public static let turningRate = 60 * Double.pi / 180

  /// The fusion (6-axis).
  public private(set) var fusion: MotionFusion
  /// The magnitude rule.
  public let magnitude: Magnitude

  /// A layer with its own fusion.
  public init(parameters: MotionFusion.Parameters = .init(), magnitude: Magnitude = .measured) {
    fusion = MotionFusion(parameters: parameters)
    self.magnitude = magnitude
  }

  /// The sample to give the detector for an accelerometer reading and the gyroscope reading
  /// taken with it (same time; rad/s, display frame).
  ///
  /// Until the fusion has its first reading the acceleration passes unchanged; invalid input
  /// also passes unchanged, so the detector counts and rejects it as before.
  public mutating func sample(time: Double, acceleration: Vector3, gyro: Vector3) -> Sample {
    fusion.integrate(gyro: gyro, time: time)
    fusion.correct(acceleration: acceleration, time: time)
    guard fusion.isInitialized, acceleration.isFinite, acceleration != .zero else {
      return Sample(time: time, acceleration: acceleration)
    }
    let down = fusion.gravity.normalized
    let scale: Double
    switch magnitude {
    case .measured: scale = acceleration.magnitude
    case .gravity: scale = fusion.parameters.gravity
    case .turning:
      scale =
        fusion.turnRate >= GyroAssist.turningRate
        ? fusion.parameters.gravity : acceleration.magnitude
    }
    return Sample(time: time, acceleration: down * scale)
  }
}
