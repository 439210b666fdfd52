import OrientCore

#if canImport(Glibc)
  import Glibc
#endif

/// Angle errors of one filter against the truth, in degrees, one entry per scored sample.
public struct FusionScore: Sendable {
  /// Inclination errors: the angle between the true and the estimated vertical.
  public var inclination: [Double] = []
  /// Heading errors: the rotation about vertical left between the true and the estimated
  /// earth frames (absolute with a magnetometer; without one, the drift since the end of the
  /// warm-up, when the two frames are aligned).
  public var heading: [Double] = []

  /// No errors yet.
  public init() {}

  /// Adds another score's errors.
  public mutating func merge(_ other: FusionScore) {
    inclination += other.inclination
    heading += other.heading
  }

  /// Root mean square of `values`.
  public static func rms(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    return (values.reduce(0) { $0 + $1 * $1 } / Double(values.count)).squareRoot()
  }
}

/// The inclination and heading parts of the difference between two rotations (display to
/// earth), in degrees.
public func fusionErrors(estimate: Quaternion, truth: Quaternion) -> (
  inclination: Double, heading: Double
) {
  let up = Vector3(0, 0, 1)
  let inclination = estimate.conjugate.rotate(up).angle(to: truth.conjugate.rotate(up))
  // The earth-frame difference, and its twist about vertical.
  let e = estimate * truth.conjugate
  var heading = 2 * atan2(e.z, e.w)
  while heading > Double.pi { heading -= 2 * Double.pi }
  while heading < -Double.pi { heading += 2 * Double.pi }
  return (inclination * 180 / Double.pi, heading * 180 / Double.pi)
}

/// The fusion benchmark: every scenario on every profile through each filter, with and
/// without the magnetometer.
public struct FusionBenchmark: Sendable {
  /// A sensor set: accelerometer, gyroscope and magnetometer rates and qualities.
  public struct Profile: Sendable {
    /// The name, e.g. `100Hz`.
    public var name: String
    /// The accelerometer.
    public var accelerometer: SensorProfile
    /// The gyroscope (its rate is the sample rate).
    public var gyroscope: GyroProfile
    /// The magnetometer's rate.
    public var magnetometerRate: Double

    /// Creates a profile.
    public init(
      name: String, accelerometer: SensorProfile, gyroscope: GyroProfile,
      magnetometerRate: Double
    ) {
      self.name = name
      self.accelerometer = accelerometer
      self.gyroscope = gyroscope
      self.magnetometerRate = magnetometerRate
    }

    /// A phone-class IMU at 100 Hz (BMI160-class gyroscope, magnetometer at 50 Hz).
    public static let fast = Profile(
      name: "100Hz", accelerometer: SensorProfile.fast, gyroscope: .bmi160(rate: 100),
      magnetometerRate: 50)
    /// A sensor hub at 25 Hz (calibrated gyroscope, magnetometer at 12.5 Hz).
    public static let hub = Profile(
      name: "25Hz-hub",
      accelerometer: SensorProfile(
        name: "25Hz-12bit", rate: 25, bits: 12, range: 4, noiseDensity: 250),
      gyroscope: .hub(rate: 25), magnetometerRate: 12.5)

    /// Both profiles.
    public static let all = [fast, hub]

    /// The phone-class IMU of `fast` run at `rate` (accelerometer and gyroscope; the
    /// magnetometer at half of it): the cost of running the gyroscope slower for the fusion
    /// (docs/motion.md, "The sensor's rate follows its clients").
    public static func imu(rate: Double) -> Profile {
      var accelerometer = SensorProfile.fast
      accelerometer.rate = rate
      accelerometer.name = "\(Int(rate))Hz-16bit"
      return Profile(
        name: "imu-\(rate == rate.rounded() ? String(Int(rate)) : String(rate))Hz",
        accelerometer: accelerometer, gyroscope: .bmi160(rate: rate), magnetometerRate: rate / 2)
    }

    /// The IMU at the rates st_lsm6dsx offers below 100 Hz: `--profile imu-52Hz` and so on.
    public static let slower = [imu(rate: 52), imu(rate: 26), imu(rate: 12.5)]
  }

  /// The scores of one scenario on one profile: per filter, 6-axis and 9-axis.
  public struct Result: Sendable {
    /// The scenario.
    public var scenario: FusionScenario
    /// The profile's name.
    public var profile: String
    /// Filter names, in column order.
    public var filters: [String]
    /// Without the magnetometer, per filter.
    public var imu: [FusionScore]
    /// With the magnetometer, per filter.
    public var marg: [FusionScore]
    /// Samples per run and filter.
    public var samples: Int
  }

  /// The seed of every random stream.
  public var seed: UInt64
  /// Runs per scenario.
  public var repetitions: Int
  /// orientd's fusion parameters.
  public var parameters: MotionFusion.Parameters

  /// Creates a configuration.
  public init(
    seed: UInt64 = 1, repetitions: Int = 3, parameters: MotionFusion.Parameters = .init()
  ) {
    self.seed = seed
    self.repetitions = repetitions
    self.parameters = parameters
  }

  /// The samples of run `index` of `scenario` on `profile` (deterministic).
  public func samples(of path: MotionPath, index: Int, scenario: FusionScenario, profile: Profile)
    -> [MotionSample]
  {
    var random = SimRandom(
      seed: seed ^ UInt64(profile.gyroscope.rate * 1000),
      stream: 0xF0_0000 + UInt64(FusionScenario.allCases.firstIndex(of: scenario) ?? 0) << 8
        + UInt64(index))
    let accelerometer = SimulatedSensor(profile: profile.accelerometer, random: &random)
    let gyroscope = SimulatedGyroscope(profile: profile.gyroscope, random: &random)
    let magnetometer = SimulatedMagnetometer(rate: profile.magnetometerRate, random: &random)
    return MotionSynthesizer.samples(
      of: path, accelerometer: accelerometer, gyroscope: gyroscope, magnetometer: magnetometer,
      random: &random)
  }

  /// Scores `filter` over `samples`; `magnetometer` says whether it may use the field.
  public static func score<F: FusionFilter>(
    _ filter: inout F, over samples: [MotionSample], magnetometer: Bool, warmUp: Double
  ) -> FusionScore {
    var score = FusionScore()
    score.inclination.reserveCapacity(samples.count)
    score.heading.reserveCapacity(samples.count)
    var offset: Double?
    for s in samples {
      filter.update(s, magnetometer: magnetometer)
      guard s.time >= warmUp else { continue }
      var (inclination, heading) = fusionErrors(estimate: filter.estimate, truth: s.truth)
      if !magnetometer {
        let base = offset ?? heading
        offset = base
        heading -= base
        while heading > 180 { heading -= 360 }
        while heading < -180 { heading += 360 }
      }
      score.inclination.append(inclination)
      score.heading.append(abs(heading))
    }
    return score
  }

  /// Runs one scenario on one profile.
  public func run(_ scenario: FusionScenario, on profile: Profile) -> Result {
    let names = [OrientdFusionFilter.name, MadgwickFilter.name, MahonyFilter.name]
    var imu = [FusionScore](repeating: FusionScore(), count: names.count)
    var marg = imu
    var count = 0
    for (index, path) in scenario.runs(seed: seed, repetitions: repetitions).enumerated() {
      let samples = self.samples(of: path, index: index, scenario: scenario, profile: profile)
      count += samples.count
      let warmUp = FusionScenario.warmUp
      for (column, useMagnetometer) in [(0, false), (1, true)] {
        var ours = OrientdFusionFilter(parameters: parameters)
        var madgwick = MadgwickFilter()
        var mahony = MahonyFilter()
        let scores = [
          Self.score(&ours, over: samples, magnetometer: useMagnetometer, warmUp: warmUp),
          Self.score(&madgwick, over: samples, magnetometer: useMagnetometer, warmUp: warmUp),
          Self.score(&mahony, over: samples, magnetometer: useMagnetometer, warmUp: warmUp),
        ]
        for (i, s) in scores.enumerated() {
          if column == 0 { imu[i].merge(s) } else { marg[i].merge(s) }
        }
      }
    }
    return Result(
      scenario: scenario, profile: profile.name, filters: names, imu: imu, marg: marg,
      samples: count)
  }
}
