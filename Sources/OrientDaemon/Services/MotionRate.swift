/// The rate the motion sensors are asked for (`SensorSource.request(rate:for:)`): the fastest
/// any motion client needs now, so that a sensor runs no faster than its clients use it
/// (issue 26: the hardware rate follows the clients). The reader takes the slowest rate its
/// device offers at or above it (`MotionDescription.bufferedFrequency(for:)`).
///
/// - a stream needs the rate it asked for (`MotionStreamOptions.rate`);
/// - a claim without a stream reads the properties, which change at most `PropertyRate` times
///   a second: that rate is enough for the values themselves;
/// - a rotation fused from the gyroscope needs `fusionFloor` whatever the clients read: the
///   fusion integrates every gyroscope sample, and a slower gyroscope turns fast motion into
///   a wrong rotation that the accelerometer corrects only over seconds.
public enum MotionRate {
  /// The slowest gyroscope rate the fusion is run at: 25 Hz. `motion-bench`'s IMU at 26 Hz
  /// (`--profile imu-26Hz`) is within a few tenths of a degree of 100 Hz, and so is 12.5 Hz on
  /// its smooth paths; 25 Hz keeps a hand's tremor (8-12 Hz) below half the rate, and is what
  /// hubs and st_lsm6dsx (26) commonly offer (docs/motion.md, "The sensor's rate follows its
  /// clients").
  public static let fusionFloor = 25.0

  /// What the gyroscope (and rotation sensor) are asked for: 0 when nobody claims motion
  /// (nothing is asked then: the sensors stop).
  public static func needed(
    claimed: Bool, streams: [Double], propertyRate: Double, fused: Bool
  ) -> Double {
    guard claimed else { return 0 }
    var rate = max(propertyRate, streams.max() ?? 0)
    if fused { rate = max(rate, fusionFloor) }
    return rate
  }

  /// What the magnetometer is asked for: it only corrects the fused heading (a 4 s time
  /// constant), so the gyroscope's rate up to `fusionFloor`; 0 when unclaimed.
  public static func magnetometer(gyroscope rate: Double) -> Double {
    rate > 0 ? min(rate, fusionFloor) : 0
  }
}
