import OrientCore
import TextFormats

#if canImport(Glibc)
  import Glibc
#endif

/// A simulated gyroscope: rate, resolution, range, noise and the errors of a consumer part.
///
/// The figures are data-sheet values: Bosch's BMI160 (noise 0.007 deg/s/sqrt(Hz), zero-rate
/// offset +-3 deg/s, sensitivity error +-1%), ST's LSM6DSx (0.004-0.005, +-1 to 2 deg/s), and a
/// HID sensor hub whose firmware calibrates the offset (about +-0.5 deg/s left).
public struct GyroProfile: Sendable, Equatable {
  /// A short name such as `100Hz-bmi160`.
  public var name: String
  /// Output data rate in Hz.
  public var rate: Double
  /// Bits per sample over +-`range`.
  public var bits: Int
  /// Full-scale range in degrees per second.
  public var range: Double
  /// Noise density in deg/s/sqrt(Hz).
  public var noiseDensity: Double
  /// The turn-on bias of each axis is drawn from +-this, in deg/s.
  public var biasRange: Double
  /// Bias random walk in deg/s/sqrt(s) (temperature drift, in-run instability).
  public var biasWalk: Double
  /// Sensitivity error of each axis, drawn from +-this fraction.
  public var scaleError: Double

  /// Creates a profile.
  public init(
    name: String, rate: Double, bits: Int = 16, range: Double = 2000, noiseDensity: Double,
    biasRange: Double, biasWalk: Double = 0.002, scaleError: Double = 0.01
  ) {
    self.name = name
    self.rate = rate
    self.bits = bits
    self.range = range
    self.noiseDensity = noiseDensity
    self.biasRange = biasRange
    self.biasWalk = biasWalk
    self.scaleError = scaleError
  }

  /// A BMI160-class part at `rate`: 0.007 deg/s/sqrt(Hz), +-3 deg/s offset, 16 bits over
  /// +-2000 deg/s (the drivers' default range).
  public static func bmi160(rate: Double) -> GyroProfile {
    GyroProfile(
      name: "\(shortDecimal(rate))Hz-bmi160", rate: rate, noiseDensity: 0.007, biasRange: 3)
  }

  /// A calibrated sensor-hub gyroscope at `rate`: 0.01 deg/s/sqrt(Hz), +-0.5 deg/s offset.
  public static func hub(rate: Double) -> GyroProfile {
    GyroProfile(
      name: "\(shortDecimal(rate))Hz-hub", rate: rate, noiseDensity: 0.01, biasRange: 0.5)
  }

  /// One line describing the profile.
  public var summary: String {
    "\(name): \(shortDecimal(rate)) Hz, \(bits)-bit over +-\(shortDecimal(range)) deg/s, noise "
      + "\(shortDecimal(noiseDensity)) deg/s/sqrt(Hz), offset +-\(shortDecimal(biasRange)) deg/s"
  }
}

/// One gyroscope drawn from a profile: its own bias, sensitivity and misalignment.
///
/// Each sample is the mean true rate over the sample interval (the decimation filter), through
/// misalignment and sensitivity errors, plus the bias (which wanders) and white noise, then
/// quantised and clipped.
public struct SimulatedGyroscope: Sendable {
  /// The profile.
  public let profile: GyroProfile
  /// The current bias, rad/s (it wanders with `biasWalk`).
  public private(set) var bias: Vector3
  /// Per-axis sensitivity.
  public let scale: Vector3
  /// The axes' misalignment (about 0.5-1.5 degrees about a random axis).
  public let misalignment: Quaternion
  private let noiseSigma: Double
  private let walkSigma: Double
  private let lsb: Double
  private let maxCount: Double

  /// Draws a gyroscope from `profile` with `random`.
  public init(profile: GyroProfile, random: inout SimRandom) {
    self.profile = profile
    let radians = Double.pi / 180
    bias = Vector3(
      random.uniform(-1, 1) * profile.biasRange * radians,
      random.uniform(-1, 1) * profile.biasRange * radians,
      random.uniform(-1, 1) * profile.biasRange * radians)
    scale = Vector3(
      1 + random.uniform(-1, 1) * profile.scaleError,
      1 + random.uniform(-1, 1) * profile.scaleError,
      1 + random.uniform(-1, 1) * profile.scaleError)
    misalignment = Quaternion(
      axis: SimulatedSensor.randomUnit(&random), angle: random.uniform(0.5, 1.5) * radians)
    noiseSigma = profile.noiseDensity * radians * (profile.rate / 2).squareRoot()
    walkSigma = profile.biasWalk * radians / profile.rate.squareRoot()
    lsb = 2 * profile.range * radians / Double(1 << profile.bits)
    maxCount = Double(1 << (profile.bits - 1))
  }

  /// What the gyroscope reports for a true mean rate (rad/s, display frame).
  public mutating func measure(_ truth: Vector3, random: inout SimRandom) -> Vector3 {
    bias = bias + Vector3(random.gaussian(), random.gaussian(), random.gaussian()) * walkSigma
    let r = misalignment.rotate(truth)
    return Vector3(
      quantise(r.x * scale.x + bias.x + noiseSigma * random.gaussian()),
      quantise(r.y * scale.y + bias.y + noiseSigma * random.gaussian()),
      quantise(r.z * scale.z + bias.z + noiseSigma * random.gaussian()))
  }

  private func quantise(_ value: Double) -> Double {
    let count = (value / lsb).rounded()
    return max(-maxCount, min(maxCount - 1, count)) * lsb
  }
}

/// The earth's field where the simulation happens, and a simulated magnetometer in it.
///
/// The field is 50 uT with a dip of 60 degrees (central Europe); the earth frame is x east,
/// y magnetic north, z up. The magnetometer keeps a residual hard-iron offset of up to 2 uT
/// after calibration and 0.4 uT of noise per axis (AK09911/BMM150 class), and reads in uT.
public struct SimulatedMagnetometer: Sendable {
  /// The field in the earth frame, uT.
  public static let earthField = Vector3(0, 50 * cos(Double.pi / 3), -50 * sin(Double.pi / 3))
  /// Output data rate in Hz.
  public let rate: Double
  /// The residual offset in the display frame, uT.
  public let offset: Vector3
  private let noise: Double

  /// Draws a magnetometer at `rate` Hz with `random`.
  public init(rate: Double, random: inout SimRandom) {
    self.rate = rate
    offset = Vector3(
      random.uniform(-2, 2), random.uniform(-2, 2), random.uniform(-2, 2))
    noise = 0.4
  }

  /// The reading for an orientation (display to earth) and an extra field (a magnet nearby,
  /// earth frame, uT).
  public func measure(orientation q: Quaternion, disturbance: Vector3, random: inout SimRandom)
    -> Vector3
  {
    let field = q.conjugate.rotate(SimulatedMagnetometer.earthField + disturbance)
    return field + offset
      + Vector3(random.gaussian(), random.gaussian(), random.gaussian()) * noise
  }
}

/// One synthesised sample of a full IMU with the truth it was made from.
public struct MotionSample: Sendable, Equatable {
  /// Time in seconds.
  public var time: Double
  /// The accelerometer reading (m/s^2, display frame, orientd's convention).
  public var acceleration: Vector3
  /// The gyroscope reading (rad/s, display frame).
  public var gyro: Vector3
  /// The magnetometer reading (uT, display frame), when one was taken at this sample.
  public var magneticField: Vector3?
  /// The true rotation from the display frame to the earth frame at `time`.
  public var truth: Quaternion

  /// Creates a sample.
  public init(
    time: Double, acceleration: Vector3, gyro: Vector3, magneticField: Vector3?,
    truth: Quaternion
  ) {
    self.time = time
    self.acceleration = acceleration
    self.gyro = gyro
    self.magneticField = magneticField
    self.truth = truth
  }
}

/// Anything whose true orientation over time is known: the fusion paths and orient-bench's
/// motion scripts.
public protocol OrientationTruth {
  /// The rotation from the display frame to the earth frame (x east, y north, z up) at `t`.
  func orientation(at t: Double) -> Quaternion
}

extension OrientationTruth {
  /// The mean body rate (rad/s, display frame) over [t0, t1]: the rotation between the two
  /// orientations divided by the time, as a rate-integrating sensor's decimation filter sees it.
  public func meanRate(from t0: Double, to t1: Double) -> Vector3 {
    guard t1 > t0 else { return .zero }
    let step = orientation(at: t0).conjugate * orientation(at: t1)
    return step.rotationVector * (1 / (t1 - t0))
  }
}

extension MotionScript: OrientationTruth {
  /// The script's pose as a rotation into the earth frame: its world (x right, y up, z
  /// towards the user) is earth (x east, y up to z, z towards the user to -y, south).
  public func orientation(at t: Double) -> Quaternion {
    let (angle, tilt) = pose(at: t)
    let radians = Double.pi / 180
    // toDisplay is Rz(angle) Rx(tilt) from world to display; its inverse, then world to earth.
    let worldFromDisplay =
      Quaternion(axis: Vector3(1, 0, 0), angle: -tilt * radians)
      * Quaternion(axis: Vector3(0, 0, 1), angle: -angle * radians)
    return Quaternion(axis: Vector3(1, 0, 0), angle: Double.pi / 2) * worldFromDisplay
  }
}

/// Gyroscope samples for accelerometer samples already made (same times), so a detector fed
/// with and without the gyroscope sees the very same accelerometer readings.
public enum GyroSynthesizer {
  /// One gyroscope reading per sample time: the mean true rate since the previous one.
  public static func readings(
    at samples: [Sample], truth: some OrientationTruth, gyroscope: inout SimulatedGyroscope,
    random: inout SimRandom
  ) -> [Vector3] {
    var out: [Vector3] = []
    out.reserveCapacity(samples.count)
    var previous = (samples.first?.time ?? 0) - 1 / gyroscope.profile.rate
    for s in samples {
      let start = min(previous, s.time - 1e-4)
      out.append(gyroscope.measure(truth.meanRate(from: start, to: s.time), random: &random))
      previous = s.time
    }
    return out
  }
}
