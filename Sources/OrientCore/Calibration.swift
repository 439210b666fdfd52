#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The poses `orientd calibrate` asks for, with the gravity each reads in the display frame.
///
/// Two independent gravity directions fix a rotation; the third pose tells a proper rotation
/// from a mirror image (a sensor mounted mirrored, or the device turned the wrong way in the
/// second pose), which two readings alone cannot.
public enum CalibrationPose: String, CaseIterable, Sendable, CustomStringConvertible {
  /// Upright in its normal orientation: (0, -g, 0).
  case normal
  /// Turned a quarter clockwise so that the display's left edge is up: (+g, 0, 0).
  case leftUp = "left-up"
  /// Lying flat on its back, display facing the ceiling: (0, 0, -g).
  case faceUp = "face-up"

  /// The wire name (`normal`, `left-up`, `face-up`).
  public var description: String { rawValue }

  /// The unit gravity direction an ideal sensor reads in this pose in the display frame (the
  /// IIO convention of `Orientation.uprightGravity`, and face up reads -z).
  public var displayDirection: Vector3 {
    switch self {
    case .normal: return Vector3(0, -1, 0)
    case .leftUp: return Vector3(1, 0, 0)
    case .faceUp: return Vector3(0, 0, -1)
    }
  }

  /// What to tell the person holding the device.
  public var instruction: String {
    switch self {
    case .normal: return "hold the device upright, the way it is normally used"
    case .leftUp: return "turn it a quarter turn clockwise, so that its left edge is up"
    case .faceUp: return "lay it flat on its back, display facing the ceiling"
    }
  }
}

/// A run of recent readings, to tell whether the device is being held still.
///
/// Still means that over a stretch of readings no axis varies by more than `tolerance`
/// (largest minus smallest value, m/s^2). Pure: the caller adds readings with their times; the
/// window keeps those of the last `length` seconds.
public struct StillnessWindow: Sendable {
  /// How many seconds of readings are kept.
  public var length: Double
  /// The largest range of any axis, m/s^2, that still counts as still.
  public var tolerance: Double
  private var readings: [(time: Double, value: Vector3)] = []

  /// Creates an empty window.
  public init(length: Double = 2.5, tolerance: Double = 0.6) {
    self.length = length
    self.tolerance = tolerance
  }

  /// Adds a reading taken at `time` seconds (any monotonic origin) and forgets those older
  /// than `length`.
  public mutating func add(time: Double, _ value: Vector3) {
    if let last = readings.last, time < last.time { readings.removeAll() }
    readings.append((time, value))
    let cutoff = time - length
    var drop = 0
    while drop + 1 < readings.count, readings[drop].time < cutoff { drop += 1 }
    if drop > 0 { readings.removeFirst(drop) }
  }

  /// Forgets every reading.
  public mutating func reset() { readings.removeAll() }

  /// The number of readings held.
  public var count: Int { readings.count }

  /// The newest reading.
  public var latest: Vector3? { readings.last?.value }

  /// The largest range (max - min) of any axis over `slice`.
  private static func range(_ slice: ArraySlice<(time: Double, value: Vector3)>) -> Double {
    guard let first = slice.first?.value else { return 0 }
    var low = first
    var high = first
    for reading in slice {
      let v = reading.value
      low = Vector3(min(low.x, v.x), min(low.y, v.y), min(low.z, v.z))
      high = Vector3(max(high.x, v.x), max(high.y, v.y), max(high.z, v.z))
    }
    return max(high.x - low.x, high.y - low.y, high.z - low.z)
  }

  /// The largest range of any axis over the whole window (0 when empty).
  public var spread: Double { StillnessWindow.range(readings[...]) }

  /// The largest range of any axis over the readings of the last `seconds`.
  public func recentSpread(seconds: Double) -> Double {
    guard let newest = readings.last else { return 0 }
    let start = readings.firstIndex { $0.time >= newest.time - seconds } ?? readings.count
    return StillnessWindow.range(readings[start...])
  }

  /// The index of the oldest of the newest readings whose axes all stay within `tolerance`
  /// (found from the newest backwards); `count` when empty.
  private var stillStart: Int {
    guard let newest = readings.last?.value else { return readings.count }
    var low = newest
    var high = newest
    var start = readings.count - 1
    while start > 0 {
      let v = readings[start - 1].value
      let l = Vector3(min(low.x, v.x), min(low.y, v.y), min(low.z, v.z))
      let h = Vector3(max(high.x, v.x), max(high.y, v.y), max(high.z, v.z))
      if max(h.x - l.x, h.y - l.y, h.z - l.z) > tolerance { break }
      low = l
      high = h
      start -= 1
    }
    return start
  }

  /// Seconds the device has been still: the time span of the newest readings whose axes stay
  /// within `tolerance`.
  public var stillFor: Double {
    let start = stillStart
    guard let newest = readings.last, start < readings.count else { return 0 }
    return newest.time - readings[start].time
  }

  /// How many readings the still stretch of `stillFor` holds.
  public var stillCount: Int { readings.count - stillStart }

  /// The mean of the still stretch, or `nil` when empty.
  public var stillMean: Vector3? {
    let start = stillStart
    guard start < readings.count else { return nil }
    var sum = Vector3.zero
    for reading in readings[start...] { sum = sum + reading.value }
    return sum * (1 / Double(readings.count - start))
  }
}

/// Why a pose reading is not accepted.
public enum PoseRejection: Error, Equatable, Sendable, CustomStringConvertible {
  /// An axis varied by `spread` m/s^2 (more than `tolerance`) over `seconds`.
  case notStill(spread: Double, tolerance: Double, seconds: Double)
  /// Too few readings to judge (the sensor has not delivered for long enough).
  case tooFewReadings(count: Int)
  /// The reading's magnitude is not about 1 g: the device is moving, or the scale is wrong.
  case notGravity(magnitude: Double)
  /// The same direction as an earlier pose (within `degrees`).
  case repeats(CalibrationPose, degrees: Double)
  /// The opposite direction of an earlier pose (turned 180 degrees instead of 90).
  case opposite(CalibrationPose, degrees: Double)
  /// Neither the same nor a quarter turn away from an earlier pose.
  case notQuarterTurn(CalibrationPose, degrees: Double)
  /// Not near any sensor axis, so no signed axis permutation fits (use `--exact`).
  case offAxis(degrees: Double)

  /// A sentence saying what is wrong and what to do.
  public var description: String {
    func d(_ value: Double) -> String { String(Int(value.rounded())) }
    switch self {
    case .notStill(let spread, let tolerance, let seconds):
      return "not still: the readings varied by \(twoDecimals(spread)) m/s^2 over the last "
        + "\(twoDecimals(seconds)) s (at most \(twoDecimals(tolerance)) allowed); rest it "
        + "against something and hold it steady"
    case .tooFewReadings(let count):
      return "only \(count) reading\(count == 1 ? "" : "s") so far; hold it a moment longer"
    case .notGravity(let magnitude):
      return "the reading is \(twoDecimals(magnitude)) m/s^2, not about 9.81: the device is "
        + "moving, or the sensor's scale is wrong"
    case .repeats(let pose, let degrees):
      return "this is the \(pose) pose again (\(d(degrees)) degrees from it); turn the device"
    case .opposite(let pose, let degrees):
      return "this is the \(pose) pose turned upside down (\(d(degrees)) degrees from it); "
        + "turn it a quarter turn, not a half turn"
    case .notQuarterTurn(let pose, let degrees):
      return "this is \(d(degrees)) degrees from the \(pose) pose, expected about 90; "
        + "turn it a quarter turn from there"
    case .offAxis(let degrees):
      return "the sensor reads gravity \(d(degrees)) degrees away from any of its axes; hold "
        + "the device straighter, or use --exact for a sensor mounted at an angle"
    }
  }
}

/// Why a matrix cannot be derived from the poses given.
public struct CalibrationError: Error, Equatable, Sendable, CustomStringConvertible {
  /// What is wrong.
  public var reason: String

  /// Creates an error.
  public init(_ reason: String) { self.reason = reason }

  /// The reason.
  public var description: String { reason }
}

/// The mount matrix found by a calibration, with how well it fits.
public struct CalibrationResult: Equatable, Sendable {
  /// The matrix mapping the sensor's raw axes to the display frame (display = M x raw).
  public var matrix: MountMatrix
  /// Its determinant: +1 for a proper rotation, -1 for a mirror image.
  public var determinant: Double
  /// Whether it came from `--exact` (nearest rotation) rather than a signed axis permutation.
  public var exact: Bool
  /// For each pose given, the angle in degrees between the corrected reading and the ideal.
  public var residuals: [(pose: CalibrationPose, degrees: Double)]

  /// Whether the matrix is a proper rotation (not a mirror image).
  public var isProperRotation: Bool { determinant > 0 }

  /// Compares matrices, determinants, modes and residuals.
  public static func == (lhs: CalibrationResult, rhs: CalibrationResult) -> Bool {
    lhs.matrix == rhs.matrix && lhs.determinant == rhs.determinant && lhs.exact == rhs.exact
      && lhs.residuals.map(\.pose) == rhs.residuals.map(\.pose)
      && lhs.residuals.map(\.degrees) == rhs.residuals.map(\.degrees)
  }
}

/// The pure part of `orientd calibrate`: checking pose readings and deriving the matrix.
public enum MountCalibration {
  /// Farthest a reading may be from a sensor axis, in degrees, for the axis-permutation mode.
  public static let axisTolerance = 25.0
  /// Readings closer than this (degrees) to an earlier pose repeat it.
  public static let repeatAngle = 30.0
  /// A new pose must be this close (degrees) to a quarter turn from each earlier one.
  public static let quarterTurnTolerance = 30.0

  /// Checks a still reading for `pose` against the poses already accepted.
  ///
  /// - Parameters:
  ///   - reading: the mean raw reading, m/s^2 in the sensor's own axes.
  ///   - accepted: the readings accepted so far, by pose.
  ///   - exact: whether the matrix will be the nearest rotation (`--exact`), in which case the
  ///     reading need not lie along a sensor axis.
  /// - Returns: why the reading cannot be used, or `nil` when it can.
  public static func check(
    _ reading: Vector3, accepted: [(pose: CalibrationPose, reading: Vector3)], exact: Bool
  ) -> PoseRejection? {
    let magnitude = reading.magnitude
    guard magnitude.isFinite, magnitude > 0.7 * standardGravity, magnitude < 1.3 * standardGravity
    else {
      return .notGravity(magnitude: magnitude)
    }
    for earlier in accepted {
      let angle = degrees(between: reading, earlier.reading)
      if angle < repeatAngle { return .repeats(earlier.pose, degrees: angle) }
      if angle > 180 - repeatAngle { return .opposite(earlier.pose, degrees: angle) }
      if abs(angle - 90) > quarterTurnTolerance {
        return .notQuarterTurn(earlier.pose, degrees: angle)
      }
    }
    if !exact {
      let off = degrees(between: reading, dominantAxis(reading).vector)
      if off > axisTolerance { return .offAxis(degrees: off) }
    }
    return nil
  }

  /// Derives the mount matrix from one raw reading per pose.
  ///
  /// Without `exact`, each reading's nearest signed sensor axis is mapped to the pose's display
  /// axis, giving a signed axis permutation (entries 0 and +-1, as hwdb entries are written).
  /// With `exact`, the matrix is the rotation (or reflection) nearest in the least-squares
  /// sense to the one taking every normalised reading to its display direction: the orthogonal
  /// polar factor of `sum(d_i r_i^T)` (orthogonal Procrustes), found by Newton's iteration
  /// `X <- (X + X^-T) / 2`, which needs no SVD; entries are rounded to 4 decimals.
  ///
  /// - Throws: `CalibrationError` when a pose is missing or repeated, or the readings do not
  ///   determine a matrix (two along the same sensor axis).
  public static func derive(
    _ poses: [(pose: CalibrationPose, reading: Vector3)], exact: Bool
  ) throws(CalibrationError) -> CalibrationResult {
    for pose in CalibrationPose.allCases {
      let count = poses.filter { $0.pose == pose }.count
      if count != 1 {
        throw CalibrationError(
          "need exactly one \(pose) reading, got \(count) (poses: "
            + CalibrationPose.allCases.map(\.rawValue).joined(separator: ", ") + ")")
      }
    }
    for item in poses where !(item.reading.isFinite && item.reading.magnitude > 1e-9) {
      throw CalibrationError("the \(item.pose) reading \(item.reading) is zero or not finite")
    }
    var entries = [Double](repeating: 0, count: 9)
    if exact {
      var a = [Double](repeating: 0, count: 9)
      for item in poses {
        let r = item.reading * (1 / item.reading.magnitude)
        let d = item.pose.displayDirection
        let rv = [r.x, r.y, r.z]
        let dv = [d.x, d.y, d.z]
        for i in 0..<3 {
          for j in 0..<3 { a[i * 3 + j] += dv[i] * rv[j] }
        }
      }
      guard let polar = orthogonalPolarFactor(a) else {
        throw CalibrationError(
          "the readings do not span three directions, so they fix no rotation; "
            + "repeat the poses, each a quarter turn from the others")
      }
      entries = polar.map(roundedEntry)
    } else {
      var usedAxes = Set<Int>()
      for item in poses {
        let (axis, sign) = dominantAxis(item.reading).axisAndSign
        let target = dominantAxis(item.pose.displayDirection).axisAndSign
        guard usedAxes.insert(axis).inserted else {
          throw CalibrationError(
            "two poses read gravity along the same sensor axis (\(["x", "y", "z"][axis])); "
              + "each pose must be a quarter turn from the others")
        }
        entries[target.axis * 3 + axis] = sign * target.sign
      }
    }
    let matrix: MountMatrix
    do {
      matrix = try MountMatrix(rows: entries)
    } catch {
      throw CalibrationError("the derived matrix is unusable: \(error)")
    }
    let residuals = poses.map { item in
      (item.pose, degrees(between: matrix.apply(item.reading), item.pose.displayDirection))
    }
    return CalibrationResult(
      matrix: matrix, determinant: determinant(entries), exact: exact, residuals: residuals)
  }

  /// The angle between two vectors in degrees (0 ... 180); 180 when either is zero.
  public static func degrees(between a: Vector3, _ b: Vector3) -> Double {
    let lengths = a.magnitude * b.magnitude
    guard lengths > 0, lengths.isFinite else { return 180 }
    let cosine = max(-1, min(1, a.dot(b) / lengths))
    return acos(cosine) * 180 / Double.pi
  }

  /// The determinant of nine row-major entries.
  public static func determinant(_ m: [Double]) -> Double {
    m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6])
      + m[2] * (m[3] * m[7] - m[4] * m[6])
  }

  /// The signed sensor axis nearest to `v`.
  static func dominantAxis(_ v: Vector3) -> (
    vector: Vector3, axisAndSign: (axis: Int, sign: Double)
  ) {
    let components = [v.x, v.y, v.z]
    var axis = 0
    for i in 1..<3 where abs(components[i]) > abs(components[axis]) { axis = i }
    let sign: Double = components[axis] < 0 ? -1 : 1
    var unit = [0.0, 0, 0]
    unit[axis] = sign
    return (Vector3(unit[0], unit[1], unit[2]), (axis, sign))
  }

  /// The orthogonal factor Q of the polar decomposition A = Q P, by Newton's iteration with
  /// determinant scaling; `nil` when A is (nearly) singular.
  static func orthogonalPolarFactor(_ a: [Double]) -> [Double]? {
    var x = a
    for _ in 0..<100 {
      let det = determinant(x)
      guard det.isFinite, abs(det) > 1e-9, let inverse = inverted(x) else { return nil }
      // Scaling by |det|^(-1/3) speeds up convergence for badly scaled matrices.
      let gamma = 1 / cbrt(abs(det))
      var next = [Double](repeating: 0, count: 9)
      for i in 0..<3 {
        for j in 0..<3 {
          // X^-T (i, j) is X^-1 (j, i).
          next[i * 3 + j] = 0.5 * (gamma * x[i * 3 + j] + inverse[j * 3 + i] / gamma)
        }
      }
      let change = zip(next, x).reduce(0) { max($0, abs($1.0 - $1.1)) }
      x = next
      if change < 1e-14 { break }
    }
    return x.allSatisfy(\.isFinite) ? x : nil
  }

  private static func inverted(_ m: [Double]) -> [Double]? {
    let det = determinant(m)
    guard det.isFinite, abs(det) > 1e-300 else { return nil }
    let d = 1 / det
    return [
      (m[4] * m[8] - m[5] * m[7]) * d, (m[2] * m[7] - m[1] * m[8]) * d,
      (m[1] * m[5] - m[2] * m[4]) * d,
      (m[5] * m[6] - m[3] * m[8]) * d, (m[0] * m[8] - m[2] * m[6]) * d,
      (m[2] * m[3] - m[0] * m[5]) * d,
      (m[3] * m[7] - m[4] * m[6]) * d, (m[1] * m[6] - m[0] * m[7]) * d,
      (m[0] * m[4] - m[1] * m[3]) * d,
    ]
  }

  private static func roundedEntry(_ value: Double) -> Double {
    let rounded = (value * 10_000).rounded() / 10_000
    return rounded == 0 ? 0 : rounded
  }
}

/// A number with two decimals, for messages (`0.43`).
func twoDecimals(_ value: Double) -> String {
  guard value.isFinite else { return "\(value)" }
  let scaled = Int64((abs(value) * 100).rounded())
  let sign = value < 0 && scaled != 0 ? "-" : ""
  let fraction = scaled % 100
  return "\(sign)\(scaled / 100).\(fraction < 10 ? "0" : "")\(fraction)"
}
