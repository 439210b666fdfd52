import TextFormats

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Finds the magnitude a sensor reports for 1 g from its still readings, for sensors whose
/// scale is off by a constant factor.
///
/// Real devices ship with no `in_accel_scale` (raw counts of 256 or 1024 per g), with a driver
/// that reports g instead of m/s^2, or with a scale a power of two off. Axis ratios, and so the
/// orientation, are right on such a sensor; only the magnitude is wrong, and a magnitude test
/// against 9.81 m/s^2 then rejects every sample. This estimator watches the magnitude of the
/// readings while the device is still and offers the long-run still magnitude as the sensor's
/// own 1 g; when it is more than `engageDeviation` away from the nominal gravity the sensor's
/// scale is off (`isScaleOff`), which orientd logs and `--list-sensors` shows.
///
/// Readings are grouped into blocks of at least `blockDuration` and `blockSamples` samples. A
/// block is still when, through a low-pass filter of `tremorTimeConstant` (so a hand's tremor
/// counts alike at 100 Hz and at 12.5 Hz), the standard deviation of its magnitudes is at most
/// `stillSpread` of their mean and its directions stay within about `stillAngle` degrees (the
/// mean vector is almost as long as the mean magnitude): holding the device in a hand, tremor
/// included, is still; walking, shaking or a turn are not. The magnitude itself is the raw
/// readings' mean. The long-run still magnitude is the mean over still blocks,
/// weighted by their duration, forgetting with a time constant of `memory` seconds of still
/// time. It is offered (`gravity`) once `requiredStillTime` seconds of still blocks were seen;
/// until then, and for a device that is never still, `gravity` is the nominal value. Within
/// `engageDeviation` of nominal the estimate is used as well: it is the sensor's own rest
/// magnitude (offset and gain errors of a few percent), so the magnitude tests mean the same
/// thing whatever the scale, and nothing is reported. `isScaleOff` is set beyond
/// `engageDeviation` and cleared again within `releaseDeviation`.
///
/// Pure value type: no clock, no I/O, no allocation; the same samples give the same answer.
public struct GravityEstimator: Sendable, Equatable {
  /// The shortest block, in seconds.
  public static let blockDuration = 0.25
  /// The fewest samples in a block.
  public static let blockSamples = 3
  /// Largest standard deviation of the (filtered) magnitudes inside a still block, as a
  /// fraction of their mean (walking is 8-25%; a hand's tremor seen sample by sample by a
  /// 100 Hz sensor 6 cm from the wrist reaches about 9%, hence the filter). Vibration that
  /// passes (a car's engine) averages out of the mean.
  public static let stillSpread = 0.06
  /// Largest direction spread inside a still block, in degrees (about).
  public static let stillAngle = 4.0
  /// Still time needed before an estimate is offered, in seconds.
  public static let requiredStillTime = 1.0
  /// Relative distance from nominal beyond which the sensor's scale counts as off.
  public static let engageDeviation = 0.15
  /// Relative distance from nominal below which it no longer does.
  public static let releaseDeviation = 0.10
  /// Time constant of the long-run mean, in seconds of still time.
  public static let memory = 60.0
  /// A gap between samples longer than this, in seconds, ends the block without using it.
  public static let maximumGap = 1.0
  /// Time constant of the low-pass filter the magnitude's spread is judged on, in seconds: the
  /// detector's own default filter (`filter-time-constant`), so a hand's tremor (8-12 Hz),
  /// which a 100 Hz sensor sees sample by sample and a 12.5 Hz one averages out, counts
  /// alike at every rate, while a gait (1.4-2.5 Hz) passes.
  public static let tremorTimeConstant = 0.04

  /// The gravity the sensor should report at rest (`DetectorParameters.gravity`).
  public let nominal: Double
  /// The gravity the magnitude tests should use: the estimate once there is one, else
  /// `nominal`.
  public private(set) var gravity: Double
  /// Whether the estimate is more than `engageDeviation` from `nominal`: the sensor's scale is
  /// off (with hysteresis, see `releaseDeviation`).
  public private(set) var isScaleOff = false
  /// The long-run still magnitude, once `requiredStillTime` of still readings were seen.
  public var estimate: Double? { stillTime >= GravityEstimator.requiredStillTime ? mean : nil }
  /// Seconds of still blocks seen.
  public private(set) var stillTime = 0.0
  /// Blocks seen, still or not.
  public private(set) var blocks = 0

  private var mean = 0.0
  private var blockStart = 0.0
  private var lastTime = -Double.infinity
  private var count = 0
  private var sumM2 = 0.0
  /// The squared magnitude through a low-pass filter of `tremorTimeConstant`: the spread is
  /// judged on it.
  private var filteredM2 = 0.0
  private var sumF2 = 0.0
  private var sumF4 = 0.0
  private var cachedDt = -1.0
  private var cachedAlpha = 1.0
  private var filtered = Vector3.zero
  private var sumFX = 0.0
  private var sumFY = 0.0
  private var sumFZ = 0.0
  private var sumFV2 = 0.0
  private let spreadLimit: Double
  private let coherenceLimit: Double

  /// Creates an estimator with nothing seen.
  ///
  /// - Parameter nominal: what the sensor should report at rest, in its units (m/s^2).
  public init(nominal: Double = standardGravity) {
    self.nominal = nominal
    gravity = nominal
    // The spread of m^2 is twice the relative spread of m.
    spreadLimit = 4 * GravityEstimator.stillSpread * GravityEstimator.stillSpread
    let c = cos(GravityEstimator.stillAngle * Double.pi / 180)
    coherenceLimit = c * c
  }

  /// The factor the sensor's scale is off by (estimate / nominal), or `nil` while there is no
  /// estimate.
  public var factor: Double? { estimate.map { $0 / nominal } }

  /// One sentence for the log and `--list-sensors` once the scale is off: what the still
  /// readings average, what the sensor should report, and how to fix it.
  ///
  /// - Parameter scale: the scale the readings were made with (`in_accel_scale`, 1 when the
  ///   device has none), to say which value it should have; `nil` when unknown (a trace).
  public func scaleAdvice(scale: Double?) -> String {
    guard let estimate else { return "no still readings yet" }
    let factor = estimate / nominal
    var text =
      "still readings average \(shortText(estimate)) where \(shortText(nominal)) m/s^2 (1 g)"
      + " is expected: the scale is off by x\(shortText(factor)); using \(shortText(estimate))"
      + " as 1 g for the magnitude tests."
    if let scale {
      text +=
        " The scale should be \(shortText(scale / factor)) instead of \(shortText(scale))"
        + " (fix the driver, or"
    } else {
      text += " To silence this, fix the sensor's scale (or"
    }
    text += " set gravity = \(shortText(estimate)) in the [detector] section of orientd.conf)"
    return text
  }

  /// Adds one reading (any finite, non-zero vector; call it before rejecting samples by
  /// magnitude, since those are exactly what it is for).
  ///
  /// - Parameters:
  ///   - time: the sample time in seconds, not decreasing.
  ///   - x: the components.
  ///   - m2: x^2 + y^2 + z^2, which the caller has computed already.
  /// - Returns: whether `gravity` changed.
  @inline(__always)
  public mutating func add(time: Double, _ x: Double, _ y: Double, _ z: Double, m2: Double)
    -> Bool
  {
    let dt = time - lastTime
    if dt > GravityEstimator.maximumGap {
      startBlock(at: time)
      filteredM2 = m2
      filtered = Vector3(x, y, z)
    } else {
      // Sample times jitter in their last bits: recompute only for a different period.
      if abs(dt - cachedDt) > 1e-6 * dt {
        cachedDt = dt
        cachedAlpha = 1 - exp(-dt / GravityEstimator.tremorTimeConstant)
      }
      let alpha = cachedAlpha
      filteredM2 += (m2 - filteredM2) * alpha
      filtered.x += (x - filtered.x) * alpha
      filtered.y += (y - filtered.y) * alpha
      filtered.z += (z - filtered.z) * alpha
    }
    lastTime = time
    sumF2 += filteredM2
    sumF4 += filteredM2 * filteredM2
    sumFX += filtered.x
    sumFY += filtered.y
    sumFZ += filtered.z
    sumFV2 += filtered.x * filtered.x + filtered.y * filtered.y + filtered.z * filtered.z
    count += 1
    sumM2 += m2
    guard time - blockStart >= GravityEstimator.blockDuration,
      count >= GravityEstimator.blockSamples
    else { return false }
    return finishBlock(at: time)
  }

  /// Four significant digits, no exponent: `104.4`, `0.09578`.
  private func shortText(_ value: Double) -> String {
    guard value.isFinite, value > 0 else { return shortDecimal(value) }
    var digits = 3
    var magnitude = value
    while magnitude >= 10 && digits > 0 {
      magnitude /= 10
      digits -= 1
    }
    while magnitude < 1 && digits < 9 {
      magnitude *= 10
      digits += 1
    }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    return shortDecimal((value * scale).rounded() / scale)
  }

  private mutating func startBlock(at time: Double) {
    blockStart = time
    count = 0
    sumM2 = 0
    sumF2 = 0
    sumF4 = 0
    sumFX = 0
    sumFY = 0
    sumFZ = 0
    sumFV2 = 0
  }

  private mutating func finishBlock(at time: Double) -> Bool {
    let n = Double(count)
    let meanM2 = sumM2 / n
    let duration = time - blockStart
    let meanF2 = sumF2 / n
    let variance = sumF4 / n - meanF2 * meanF2
    let still =
      meanM2 > 0 && variance <= spreadLimit * meanF2 * meanF2
      && (sumFX * sumFX + sumFY * sumFY + sumFZ * sumFZ) / (n * n) >= coherenceLimit * sumFV2 / n
    startBlock(at: time)
    blocks += 1
    guard still else { return false }
    let magnitude = meanM2.squareRoot()
    stillTime += duration
    let weight = duration / min(stillTime, GravityEstimator.memory)
    mean += (magnitude - mean) * weight
    guard let estimate else { return false }
    let deviation = abs(estimate / nominal - 1)
    if isScaleOff {
      if deviation < GravityEstimator.releaseDeviation { isScaleOff = false }
    } else if deviation > GravityEstimator.engageDeviation {
      isScaleOff = true
    }
    let previous = gravity
    gravity = estimate
    return gravity != previous
  }
}
