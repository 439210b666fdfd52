import TextFormats

/// One tunable setting of `MotionFusion`: its key, unit, range and place.
public struct MotionFusionKey: Sendable {
  /// The kebab-case key (`inclination-time-constant`).
  public let name: String
  /// The unit as written in files (`s`, `degrees/s`, `degrees`, `fraction`, `m/s^2`).
  public let unit: String
  /// The smallest accepted value.
  public let minimum: Double
  /// The largest accepted value.
  public let maximum: Double
  /// What it does, one line.
  public let summary: String
  /// Reads the value in the key's unit.
  let get: @Sendable (MotionFusion.Parameters) -> Double
  /// Stores a value given in the key's unit.
  let put: @Sendable (inout MotionFusion.Parameters, Double) -> Void
}

/// A rejected fusion setting: which key and why.
public struct MotionFusionKeyError: Error, CustomStringConvertible, Sendable, Equatable {
  /// The key as given.
  public var key: String
  /// Why it was rejected.
  public var reason: String
  /// `key: reason`.
  public var description: String { "\(key): \(reason)" }
}

extension MotionFusion.Parameters {
  private static let degree = Double.pi / 180

  /// The settings, one row each (`[motion]` of orientd.conf, through `configTable`).
  public static let table: [MotionFusionKey] = [
    MotionFusionKey(
      name: "inclination-time-constant", unit: "s", minimum: 0.05, maximum: 60,
      summary: "how fast the accelerometer corrects the inclination while turning",
      get: { $0.inclinationTimeConstant }, put: { $0.inclinationTimeConstant = $1 }),
    MotionFusionKey(
      name: "steady-inclination-time-constant", unit: "s", minimum: 0.05, maximum: 60,
      summary: "the inclination correction's time constant while steady",
      get: { $0.steadyInclinationTimeConstant }, put: { $0.steadyInclinationTimeConstant = $1 }),
    MotionFusionKey(
      name: "steady-rate", unit: "degrees/s", minimum: 0.1, maximum: 1000,
      summary: "below this turn rate the device counts as steady",
      get: { $0.steadyRate / degree }, put: { $0.steadyRate = $1 * degree }),
    MotionFusionKey(
      name: "heading-time-constant", unit: "s", minimum: 0.05, maximum: 600,
      summary: "how fast the magnetometer corrects the heading",
      get: { $0.headingTimeConstant }, put: { $0.headingTimeConstant = $1 }),
    MotionFusionKey(
      name: "bias-time-constant", unit: "s", minimum: 0, maximum: 3600,
      summary: "how fast the bias is learnt in motion (0: only at rest)",
      get: { $0.biasTimeConstant }, put: { $0.biasTimeConstant = $1 }),
    MotionFusionKey(
      name: "initial-bias-time-constant", unit: "s", minimum: 0.5, maximum: 3600,
      summary: "the in-motion bias correction's time constant at first",
      get: { $0.initialBiasTimeConstant }, put: { $0.initialBiasTimeConstant = $1 }),
    MotionFusionKey(
      name: "bias-learning-rate", unit: "degrees/s", minimum: 1, maximum: 2000,
      summary: "the in-motion bias correction pauses while turning faster",
      get: { $0.biasLearningRate / degree }, put: { $0.biasLearningRate = $1 * degree }),
    MotionFusionKey(
      name: "acceleration-tolerance", unit: "fraction", minimum: 0.01, maximum: 1,
      summary: "readings off g by more count less, none at twice it",
      get: { $0.accelerationTolerance }, put: { $0.accelerationTolerance = $1 }),
    MotionFusionKey(
      name: "rest-gyro-threshold", unit: "degrees/s", minimum: 0, maximum: 20,
      summary: "rest: the rate's deviation stays below this",
      get: { $0.restGyroThreshold / degree }, put: { $0.restGyroThreshold = $1 * degree }),
    MotionFusionKey(
      name: "rest-acceleration-threshold", unit: "m/s^2", minimum: 0, maximum: 5,
      summary: "rest: the acceleration's deviation stays below this",
      get: { $0.restAccelerationThreshold }, put: { $0.restAccelerationThreshold = $1 }),
    MotionFusionKey(
      name: "rest-time", unit: "s", minimum: 0.1, maximum: 60,
      summary: "rest: for at least this long", get: { $0.restTime }, put: { $0.restTime = $1 }),
    MotionFusionKey(
      name: "maximum-bias", unit: "degrees/s", minimum: 0, maximum: 30,
      summary: "the largest gyroscope bias believed",
      get: { $0.maximumBias / degree }, put: { $0.maximumBias = $1 * degree }),
    MotionFusionKey(
      name: "magnetic-norm-tolerance", unit: "fraction", minimum: 0.01, maximum: 1,
      summary: "a field stronger or weaker by more is a disturbance",
      get: { $0.magneticNormTolerance }, put: { $0.magneticNormTolerance = $1 }),
    MotionFusionKey(
      name: "magnetic-dip-tolerance", unit: "degrees", minimum: 1, maximum: 90,
      summary: "a field dipping differently by more is a disturbance",
      get: { $0.magneticDipTolerance / degree }, put: { $0.magneticDipTolerance = $1 * degree }),
    MotionFusionKey(
      name: "magnetic-adopt-time", unit: "s", minimum: 1, maximum: 3600,
      summary: "a disturbance lasting this long becomes the reference",
      get: { $0.magneticAdoptTime }, put: { $0.magneticAdoptTime = $1 }),
    MotionFusionKey(
      name: "startup-time", unit: "s", minimum: 0, maximum: 30,
      summary: "fast corrections after a start or a gap",
      get: { $0.startupTime }, put: { $0.startupTime = $1 }),
    MotionFusionKey(
      name: "gap-reset", unit: "s", minimum: 0.05, maximum: 60,
      summary: "a longer gap between samples is not integrated",
      get: { $0.gapReset }, put: { $0.gapReset = $1 }),
  ]

  /// The same rows as a `ConfigTable` (section `motion`), so that a `[motion]` section reads,
  /// reports and documents them like every other section.
  public static let configTable = ConfigTable<MotionFusion.Parameters>(
    section: "motion",
    keys: table.map { row in
      let range = row.minimum...row.maximum
      return ConfigKey(
        row.name, unit: row.unit, range: range,
        accepts: "\(shortDecimal(row.minimum)) ... \(shortDecimal(row.maximum)) \(row.unit)",
        summary: row.summary, show: { shortDecimal(row.get($0)) },
        store: {
          (parameters: inout MotionFusion.Parameters, text: String, _: String)
            throws(ConfigValueError) in
          row.put(&parameters, try ConfigValue.number(row.name, text, range, row.unit))
        })
    })

  /// The keys, in table order.
  public static var keys: [String] { table.map(\.name) }

  /// The value of `key` in its unit, or `nil` for an unknown key.
  public func value(of key: String) -> Double? {
    Self.table.first { $0.name == key }.map { $0.get(self) }
  }

  /// Sets `key` from its text (a locale-free decimal in the key's unit).
  ///
  /// - Throws: `MotionFusionKeyError` for an unknown key, text that is not a number, or a
  ///   value outside the key's range (each message says what is accepted).
  public mutating func set(_ key: String, _ text: String) throws(MotionFusionKeyError) {
    guard let row = Self.table.first(where: { $0.name == key }) else {
      throw MotionFusionKeyError(
        key: key, reason: "unknown key; known: \(Self.keys.joined(separator: ", "))")
    }
    let value: Double
    do {
      value = try DecimalText.parseDouble(text[...])
    } catch {
      throw MotionFusionKeyError(key: key, reason: "'\(text.prefix(40))' is \(error)")
    }
    guard value >= row.minimum, value <= row.maximum else {
      throw MotionFusionKeyError(
        key: key,
        reason:
          "\(shortDecimal(value)) \(row.unit) is outside \(shortDecimal(row.minimum))-"
          + "\(shortDecimal(row.maximum)) \(row.unit)")
    }
    row.put(&self, value)
  }
}
