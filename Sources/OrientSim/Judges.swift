import OrientCore

#if canImport(Glibc)
  import Glibc
#endif

/// Anything that turns samples into orientation changes: our detector and the two baselines.
///
/// The benchmark calls it generically (no existential in the loop) and compares the commits
/// against the ground truth.
public protocol OrientationJudge {
  /// The column name in the benchmark table.
  static var name: String { get }
  /// Feeds one sample; returns the orientation committed at this sample if it changed.
  mutating func process(_ sample: Sample) -> Orientation?
}

/// orientd's detector as a judge.
public struct EngineJudge: OrientationJudge {
  /// `orientd`.
  public static let name = "orientd"
  /// The detector.
  public var detector: OrientationDetector

  /// Creates a judge with the given parameters.
  public init(parameters: DetectorParameters = DetectorParameters()) {
    detector = OrientationDetector(parameters: parameters)
  }

  /// Feeds the detector.
  public mutating func process(_ sample: Sample) -> Orientation? {
    guard let update = detector.process(sample), update.orientationChanged else { return nil }
    return update.orientation
  }
}

/// iio-sensor-proxy 3.x's orientation rule, as it runs in the daemon.
///
/// The accelerometer is read every 700 ms (the newest sample at or after each poll tick, as a
/// sysfs read of `in_accel_*_raw` would see it); no filter, no settle time, no flat state.
/// Readings are scaled so 1 g = 256 and truncated to integers; the daemon's drivers negate x and
/// y first. If |atan(x / sqrt(y^2 + z^2))| > 35 degrees the result is left-up or right-up by the
/// sign; otherwise if |atan(y / sqrt(x^2 + z^2))| > 35 it is bottom-up or normal; otherwise the
/// previous orientation stays. (Behaviour from the published source; this is a re-implementation.)
public struct SensorProxyJudge: OrientationJudge {
  /// `iio-sensor-proxy`.
  public static let name = "iio-sensor-proxy"
  /// The poll period in seconds.
  public var period = 0.7
  private var nextPoll: Double?
  private var state: Orientation = .undefined

  /// Creates a judge in the `undefined` state.
  public init() {}

  /// Evaluates the rule on the first sample at or after each poll tick.
  public mutating func process(_ sample: Sample) -> Orientation? {
    let t = sample.time
    if nextPoll == nil { nextPoll = t }
    guard let due = nextPoll, t >= due else { return nil }
    var next = due
    while next <= t { next += period }
    nextPoll = next
    let factor = 256.0 / 9.81
    // The drivers invert x and y before the rule; C casts truncate towards zero.
    let x = Int(-sample.acceleration.x * factor)
    let y = Int(-sample.acceleration.y * factor)
    let z = Int(sample.acceleration.z * factor)
    var result = state
    let portrait = roundedDegrees(atan(Double(x) / Double(y * y + z * z).squareRoot()))
    if abs(portrait) > 35 {
      result = portrait < 0 ? .leftUp : .rightUp
    } else {
      let landscape = roundedDegrees(atan(Double(y) / Double(x * x + z * z).squareRoot()))
      if abs(landscape) > 35 {
        result = landscape < 0 ? .bottomUp : .normal
      }
    }
    guard result != state else { return nil }
    state = result
    return result
  }

  private func roundedDegrees(_ radians: Double) -> Int {
    let degrees = radians * 180 / Double.pi
    guard degrees.isFinite else { return 0 }
    return Int(degrees.rounded())
  }
}

/// Android's WindowOrientationListener accelerometer judge (AccelSensorJudge), as published in
/// AOSP, re-implemented from its documented behaviour.
///
/// Low-pass filter alpha = dt / (200 ms + dt), reset when samples are more than 1 s apart;
/// tilt = asin(z / |a|) of the filtered vector; "accelerating" outside g +- 4 m/s^2, "flat"
/// when the tilt has stayed >= 80 degrees for 1 s, "swinging" when the tilt rose 20 degrees
/// within 300 ms, "overhead" below -40 (left above -15); no proposal beyond 80 degrees of tilt
/// or outside the per-rotation tilt ranges [-25,70], [-25,65], [-25,60], [-25,65]; the angle is
/// rounded to the nearest rotation with a 45 degree gap (22 on each side) towards adjacent
/// rotations of the current screen rotation; a prediction must be stable for 40 ms, and
/// 500 ms must have passed since flat or acceleration ended and 300 ms since a swing. The
/// screen rotation follows the proposal at once (no window-manager delay is modelled).
/// Android's frame is the negative of the Linux IIO one, so the sample is negated first.
public struct AndroidJudge: OrientationJudge {
  /// `android`.
  public static let name = "android"

  private let filterTimeConstantMS: Float = 200
  private let flatAngle: Float = 80
  private let flatTime = 1.0
  private let swingAngle: Float = 20
  private let swingTime = 0.3
  private let settleTime = 0.04
  private let sinceFlat = 0.5
  private let sinceSwing = 0.3
  private let sinceAcceleration = 0.5
  private let maxFilterGap = 1.0
  private let minMagnitude: Float = 9.80665 - 4
  private let maxMagnitude: Float = 9.80665 + 4
  private let tiltTolerance: [(Int, Int)] = [(-25, 70), (-25, 65), (-25, 60), (-25, 65)]
  private let gapHalf = 22  // ADJACENT_ORIENTATION_ANGLE_GAP / 2 in integer arithmetic

  private var lastFilteredTime = -Double.infinity
  private var filtered = (x: Float(0), y: Float(0), z: Float(0))
  private var proposed = -1
  private var predicted = -1
  private var predictedTime = -Double.infinity
  private var flatTimestamp = -Double.infinity
  private var swingTimestamp = -Double.infinity
  private var accelerationTimestamp = -Double.infinity
  private var overhead = false
  private var tiltHistory = [Float](repeating: 0, count: 200)
  private var tiltHistoryTime = [Double](repeating: -.infinity, count: 200)
  private var tiltIndex = 0
  /// The screen rotation (Surface.ROTATION_*), -1 before the first proposal.
  private var currentRotation = -1

  /// Creates a judge with no screen rotation yet.
  public init() {
    clearTiltHistory()
  }

  /// Runs the judge on one sample.
  public mutating func process(_ sample: Sample) -> Orientation? {
    var x = Float(-sample.acceleration.x)
    var y = Float(-sample.acceleration.y)
    var z = Float(-sample.acceleration.z)
    let now = sample.time
    let then = lastFilteredTime
    var skip: Bool
    if now < then || now > then + maxFilterGap || (x == 0 && y == 0 && z == 0) {
      reset()
      skip = true
    } else {
      let dtMS = Float((now - then) * 1000)
      let alpha = dtMS / (filterTimeConstantMS + dtMS)
      x = alpha * (x - filtered.x) + filtered.x
      y = alpha * (y - filtered.y) + filtered.y
      z = alpha * (z - filtered.z) + filtered.z
      skip = false
    }
    lastFilteredTime = now
    filtered = (x, y, z)

    if !skip {
      let magnitude = (x * x + y * y + z * z).squareRoot()
      if magnitude < 1 {
        clearPrediction()
      } else {
        if magnitude < minMagnitude || magnitude > maxMagnitude {
          accelerationTimestamp = now
        }
        let tilt = javaRound(Double(asin(z / magnitude)) * 57.295780181884766)
        addTilt(Float(tilt), at: now)
        if isFlat(now) { flatTimestamp = now }
        if isSwinging(now, tilt: Float(tilt)) { swingTimestamp = now }
        if tilt <= -40 {
          overhead = true
        } else if tilt >= -15 {
          overhead = false
        }
        if overhead || abs(tilt) > 80 {
          clearPrediction()
        } else {
          var angle = javaRound(-atan2(Double(-x), Double(y)) * 57.295780181884766)
          if angle < 0 { angle += 360 }
          var nearest = (angle + 45) / 90
          if nearest == 4 { nearest = 0 }
          if isTiltAcceptable(nearest, tilt), isAngleAcceptable(nearest, angle) {
            if predicted != nearest {
              predicted = nearest
              predictedTime = now
            }
          } else {
            clearPrediction()
          }
        }
      }
    }
    if predicted < 0 || isPredictionAcceptable(now) {
      proposed = predicted
    }
    guard proposed >= 0, proposed != currentRotation else { return nil }
    currentRotation = proposed
    // ROTATION_90 is the device turned counter-clockwise: right edge up.
    switch proposed {
    case 0: return .normal
    case 1: return .rightUp
    case 2: return .bottomUp
    default: return .leftUp
    }
  }

  private func javaRound(_ value: Double) -> Int {
    guard value.isFinite else { return 0 }
    return Int((value + 0.5).rounded(.down))
  }

  private mutating func reset() {
    lastFilteredTime = -Double.infinity
    proposed = -1
    flatTimestamp = -Double.infinity
    swingTimestamp = -Double.infinity
    accelerationTimestamp = -Double.infinity
    overhead = false
    clearPrediction()
    clearTiltHistory()
  }

  private mutating func clearPrediction() {
    predicted = -1
    predictedTime = -Double.infinity
  }

  private mutating func clearTiltHistory() {
    tiltHistoryTime[0] = -Double.infinity
    tiltIndex = 1
    for i in 0..<tiltHistoryTime.count { tiltHistoryTime[i] = -Double.infinity }
  }

  private mutating func addTilt(_ tilt: Float, at now: Double) {
    tiltHistory[tiltIndex] = tilt
    tiltHistoryTime[tiltIndex] = now
    tiltIndex = (tiltIndex + 1) % tiltHistory.count
    tiltHistoryTime[tiltIndex] = -Double.infinity
  }

  private func previousIndex(_ index: Int) -> Int {
    let i = (index == 0 ? tiltHistory.count : index) - 1
    return tiltHistoryTime[i] != -Double.infinity ? i : -1
  }

  private func isFlat(_ now: Double) -> Bool {
    var i = tiltIndex
    while true {
      i = previousIndex(i)
      if i < 0 || tiltHistory[i] < flatAngle { return false }
      if tiltHistoryTime[i] + flatTime <= now { return true }
    }
  }

  private func isSwinging(_ now: Double, tilt: Float) -> Bool {
    var i = tiltIndex
    while true {
      i = previousIndex(i)
      if i < 0 || tiltHistoryTime[i] + swingTime < now { return false }
      if tiltHistory[i] + swingAngle <= tilt { return true }
    }
  }

  private func isTiltAcceptable(_ rotation: Int, _ tilt: Int) -> Bool {
    tilt >= tiltTolerance[rotation].0 && tilt <= tiltTolerance[rotation].1
  }

  private func isAngleAcceptable(_ rotation: Int, _ angle: Int) -> Bool {
    let current = currentRotation
    guard current >= 0 else { return true }
    if rotation == current || rotation == (current + 1) % 4 {
      let lower = rotation * 90 - 45 + gapHalf
      if rotation == 0 {
        if angle >= 315 && angle < lower + 360 { return false }
      } else if angle < lower {
        return false
      }
    }
    if rotation == current || rotation == (current + 3) % 4 {
      let upper = rotation * 90 + 45 - gapHalf
      if rotation == 0 {
        if angle <= 45 && angle > upper { return false }
      } else if angle > upper {
        return false
      }
    }
    return true
  }

  private func isPredictionAcceptable(_ now: Double) -> Bool {
    now >= predictedTime + settleTime && now >= flatTimestamp + sinceFlat
      && now >= swingTimestamp + sinceSwing && now >= accelerationTimestamp + sinceAcceleration
  }
}
