import TextFormats

/// A rejected fusion setting: which key and why.
public struct MotionFusionKeyError: Error, CustomStringConvertible, Sendable, Equatable {
  /// The key as given.
  public var key: String
  /// Why it was rejected.
  public var reason: String
  /// The reason (it names the key).
  public var description: String { reason }
}

extension MotionFusion.Parameters {
  private static let degree = Double.pi / 180

  /// The settings, one row each: `[motion]` of orientd.conf (`MotionSettings`) and `set`.
  public static let table = ConfigTable<MotionFusion.Parameters>(
    section: "motion",
    keys: [
      .number(
        "inclination-time-constant", "s", 0.05...60,
        "how fast the accelerometer corrects the inclination while turning",
        \.inclinationTimeConstant),
      .number(
        "steady-inclination-time-constant", "s", 0.05...60,
        "the inclination correction's time constant while steady", \.steadyInclinationTimeConstant),
      .number(
        "steady-rate", "degrees/s", 0.1...1000,
        "below this turn rate the device counts as steady", \.steadyRate, scale: degree),
      .number(
        "heading-time-constant", "s", 0.05...600,
        "how fast the magnetometer corrects the heading", \.headingTimeConstant),
      .number(
        "bias-time-constant", "s", 0...3600,
        "how fast the bias is learnt in motion (0: only at rest)", \.biasTimeConstant),
      .number(
        "initial-bias-time-constant", "s", 0.5...3600,
        "the in-motion bias correction's time constant at first", \.initialBiasTimeConstant),
      .number(
        "bias-learning-rate", "degrees/s", 1...2000,
        "the in-motion bias correction pauses while turning faster", \.biasLearningRate,
        scale: degree),
      .number(
        "acceleration-tolerance", "fraction", 0.01...1,
        "readings off g by more count less, none at twice it", \.accelerationTolerance),
      .number(
        "rest-gyro-threshold", "degrees/s", 0...20,
        "rest: the rate's deviation stays below this", \.restGyroThreshold, scale: degree),
      .number(
        "rest-acceleration-threshold", "m/s^2", 0...5,
        "rest: the acceleration's deviation stays below this", \.restAccelerationThreshold),
      .number(
        "rest-time", "s", 0.1...60,
        "rest: for at least this long", \.restTime),
      .number(
        "maximum-bias", "degrees/s", 0...30,
        "the largest gyroscope bias believed", \.maximumBias, scale: degree),
      .number(
        "magnetic-norm-tolerance", "fraction", 0.01...1,
        "a field stronger or weaker by more is a disturbance", \.magneticNormTolerance),
      .number(
        "magnetic-dip-tolerance", "degrees", 1...90,
        "a field dipping differently by more is a disturbance", \.magneticDipTolerance,
        scale: degree),
      .number(
        "magnetic-adopt-time", "s", 1...3600,
        "a disturbance lasting this long becomes the reference", \.magneticAdoptTime),
      .number(
        "startup-time", "s", 0...30,
        "fast corrections after a start or a gap", \.startupTime),
      .number(
        "gap-reset", "s", 0.05...60,
        "a longer gap between samples is not integrated", \.gapReset),
    ])

  /// The keys, in table order.
  public static var keys: [String] { table.names }

  /// The value of `key` in its unit (as the table shows it), or `nil` for an unknown key.
  public func value(of key: String) -> Double? {
    guard let row = Self.table.key(key) else { return nil }
    return try? DecimalText.parseDouble(row.value(in: self))
  }

  /// Sets `key` from its text (a locale-free decimal in the key's unit).
  ///
  /// - Throws: `MotionFusionKeyError` for an unknown key, text that is not a number, or a
  ///   value outside the key's range (each message says what is accepted).
  public mutating func set(_ key: String, _ text: String) throws(MotionFusionKeyError) {
    guard let row = Self.table.key(key) else {
      throw MotionFusionKeyError(
        key: key, reason: "unknown key '\(key)'; known: \(Self.keys.joined(separator: ", "))")
    }
    do {
      try row.set(text, in: &self)
    } catch {
      throw MotionFusionKeyError(key: key, reason: error.reason)
    }
  }
}
