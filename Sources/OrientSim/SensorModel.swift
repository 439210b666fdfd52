import OrientCore
import TextFormats

#if canImport(Glibc)
  import Glibc
#endif

/// A simulated accelerometer: sampling rate, resolution, range and noise.
///
/// The three profiles span what Linux tablets and convertibles ship: a modern 16-bit part at
/// 100 Hz, a 12-bit part at 25 Hz, and an old 8-bit part at 12.5 Hz.
public struct SensorProfile: Sendable, Equatable {
  /// A short name such as `100Hz-16bit`, used by `--profile`.
  public var name: String
  /// Output data rate in Hz.
  public var rate: Double
  /// Bits per sample (two's complement, full scale is +-`range`).
  public var bits: Int
  /// Full-scale range in g.
  public var range: Double
  /// Noise density in micro-g per square-root hertz.
  public var noiseDensity: Double
  /// Standard deviation of the timestamp jitter, in seconds.
  public var timestampJitter: Double

  /// Creates a profile.
  public init(
    name: String, rate: Double, bits: Int, range: Double, noiseDensity: Double,
    timestampJitter: Double = 0.0003
  ) {
    self.name = name
    self.rate = rate
    self.bits = bits
    self.range = range
    self.noiseDensity = noiseDensity
    self.timestampJitter = timestampJitter
  }

  /// 100 Hz, 16 bits over +-4 g, 150 ug/sqrt(Hz).
  public static let fast = SensorProfile(
    name: "100Hz-16bit", rate: 100, bits: 16, range: 4, noiseDensity: 150)
  /// 25 Hz, 12 bits over +-2 g, 250 ug/sqrt(Hz).
  public static let medium = SensorProfile(
    name: "25Hz-12bit", rate: 25, bits: 12, range: 2, noiseDensity: 250)
  /// 12.5 Hz, 8 bits over +-2 g, 400 ug/sqrt(Hz).
  public static let slow = SensorProfile(
    name: "12.5Hz-8bit", rate: 12.5, bits: 8, range: 2, noiseDensity: 400)

  /// The three benchmark profiles.
  public static let all: [SensorProfile] = [.fast, .medium, .slow]

  /// The profile called `name`, if any.
  public static func named(_ name: String) -> SensorProfile? {
    all.first { $0.name == name }
  }

  /// One line describing the profile.
  public var summary: String {
    "\(name): \(shortDecimal(rate)) Hz, \(bits)-bit over +-\(shortDecimal(range)) g, "
      + "noise \(shortDecimal(noiseDensity)) ug/sqrt(Hz)"
  }
}

/// One physical sensor drawn from a profile: its own offset, scale error and misalignment.
///
/// Each sample is the average of the true reading over the sample interval (the decimation
/// filter every MEMS accelerometer has), passed through misalignment, scale and offset errors,
/// white noise, then quantised and clipped to the range.
public struct SimulatedSensor: Sendable {
  /// The profile.
  public let profile: SensorProfile
  /// Per-axis offset in m/s^2 (tens of mg).
  public let offset: Vector3
  /// Per-axis scale factor (about 1 +- 1%).
  public let scale: Vector3
  /// Row-major rotation for about 1 degree of misalignment.
  public let misalignment: [Double]
  private let noiseSigma: Double
  private let lsb: Double
  private let maxCount: Double

  /// Draws a sensor from `profile` with `random`.
  public init(profile: SensorProfile, random: inout SimRandom) {
    self.profile = profile
    let g = standardGravity
    offset = Vector3(
      random.uniform(-0.04, 0.04) * g, random.uniform(-0.04, 0.04) * g,
      random.uniform(-0.04, 0.04) * g)
    scale = Vector3(
      1 + 0.01 * max(-2, min(2, random.gaussian())),
      1 + 0.01 * max(-2, min(2, random.gaussian())),
      1 + 0.01 * max(-2, min(2, random.gaussian())))
    // A 1 degree rotation about a random axis (Rodrigues).
    let axis = SimulatedSensor.randomUnit(&random)
    let angle = random.uniform(0.5, 1.5) * Double.pi / 180
    let c = cos(angle)
    let s = sin(angle)
    let t = 1 - c
    let (x, y, z) = (axis.x, axis.y, axis.z)
    misalignment = [
      t * x * x + c, t * x * y - s * z, t * x * z + s * y,
      t * x * y + s * z, t * y * y + c, t * y * z - s * x,
      t * x * z - s * y, t * y * z + s * x, t * z * z + c,
    ]
    noiseSigma = profile.noiseDensity * 1e-6 * g * (profile.rate / 2).squareRoot()
    lsb = 2 * profile.range * g / Double(1 << profile.bits)
    maxCount = Double(1 << (profile.bits - 1))
  }

  /// A unit vector in a uniformly random direction.
  public static func randomUnit(_ random: inout SimRandom) -> Vector3 {
    while true {
      let v = Vector3(random.uniform(-1, 1), random.uniform(-1, 1), random.uniform(-1, 1))
      let m = v.magnitude
      if m > 0.1, m <= 1 { return v * (1 / m) }
    }
  }

  /// What the sensor reports for a true (interval-averaged) reading.
  public func measure(_ truth: Vector3, random: inout SimRandom) -> Vector3 {
    let m = misalignment
    let r = Vector3(
      m[0] * truth.x + m[1] * truth.y + m[2] * truth.z,
      m[3] * truth.x + m[4] * truth.y + m[5] * truth.z,
      m[6] * truth.x + m[7] * truth.y + m[8] * truth.z)
    return Vector3(
      quantise(r.x * scale.x + offset.x + noiseSigma * random.gaussian()),
      quantise(r.y * scale.y + offset.y + noiseSigma * random.gaussian()),
      quantise(r.z * scale.z + offset.z + noiseSigma * random.gaussian()))
  }

  private func quantise(_ value: Double) -> Double {
    let count = (value / lsb).rounded()
    return max(-maxCount, min(maxCount - 1, count)) * lsb
  }
}
