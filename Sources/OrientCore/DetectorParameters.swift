import TextFormats

/// The tunable parameters of `OrientationDetector`, with their defaults, units and limits.
///
/// They are read from the `[detector]` section of `/etc/orientd.conf` and from
/// `orientd replay --set key=value`; the keys are the kebab-case names in `Key`. Angles are in
/// degrees, times in seconds, accelerations as a fraction of `gravity`.
///
/// The defaults come from `orient-bench` (see docs/benchmark.md): they are the values with which
/// every quality target passes on every simulated sensor profile.
public struct DetectorParameters: Sendable, Equatable {
  /// Time constant of the low-pass filter on the acceleration, in seconds (0 disables it).
  ///
  /// A time constant rather than a per-sample factor, so the filter behaves the same at 12.5 Hz
  /// and at 200 Hz.
  public var filterTimeConstant: Double = 0.04

  /// How far past the 45 degree boundary, in degrees, the in-plane angle must go before the
  /// neighbouring orientation is even considered. A device held near a diagonal does not flicker.
  public var hysteresis: Double = 14

  /// How deep into the new orientation's 90 degree sector (degrees from its edge, at most 45 =
  /// its centre) the angle must be for a change to count as decisive and settle in
  /// `settleTimeFast`.
  public var decisiveAngle: Double = 26

  /// How long, in seconds, a decisive new orientation must hold before it is committed.
  public var settleTimeFast: Double = 0.04

  /// How long, in seconds, a marginal new orientation (just past the hysteresis band) must hold;
  /// between the band and `decisiveAngle` the wait shrinks to `settleTimeFast`, slowly at first
  /// (as 1 - x^2 of the normalised depth x).
  public var settleTimeSlow: Double = 1.0

  /// Fastest apparent rotation of the gravity direction, in degrees per second, at which the
  /// device still counts as steady. It is estimated rate-independently as the angle between a
  /// sample and the previous filtered vector divided by (filter time constant + sample
  /// interval). Only a steady device settles faster than `settleTimeSlow`: while it is turning
  /// fast, or being jolted sideways, one wild sample cannot commit a change.
  public var steadyRate: Double = 200

  /// A reading that has settled also counts as steady, whatever `steadyRate` says: two
  /// consecutive raw samples within this many degrees of each other. A sensor whose value jumps
  /// between two polls (an abrupt, complete turn) is then decided in two samples instead of
  /// waiting for the filter to catch up, while a device still turning (its samples keep moving,
  /// faster than this angle per sample) stays unsteady, so a quick 180 degree turn does not
  /// commit the sideways orientation it passes through. 0 turns it off.
  public var settledAngle: Double = 1.5

  /// A deliberate turn: when the in-plane angle has moved at least this many degrees away from
  /// the current orientation within about `turnTimeConstant` (the lead of the filtered angle
  /// over a slower reference filter), a steady candidate past the band settles in
  /// `settleTimeFast` without waiting for `decisiveAngle`. Hand sway while walking stays well
  /// below it. 90 disables the rule.
  public var turnAngle: Double = 15

  /// Time constant, in seconds, of the slower reference filter that `turnAngle` is measured
  /// against.
  public var turnTimeConstant: Double = 0.25

  /// Tilt from vertical, in degrees, beyond which the display counts as flat (face up or down)
  /// and the orientation is held.
  public var flatEnter: Double = 75

  /// Tilt below which a flat display counts as lifted again (must be below `flatEnter`).
  public var flatLeave: Double = 65

  /// Largest tilt, in degrees, still reported as `vertical`; beyond it the tilt is
  /// `tilted-up`/`tilted-down` (3 degrees of hysteresis keep it from flickering at the limit).
  public var verticalLimit: Double = 25

  /// Samples whose magnitude differs from `gravity` by more than this fraction are rejected
  /// outright (free fall, hard impacts): they do not enter the filter.
  public var magnitudeTolerance: Double = 0.5

  /// Samples whose magnitude differs from `gravity` by more than this fraction count as motion
  /// (walking, braking): until the motion has stopped for `motionHold`, only decisive evidence
  /// is gathered (see `impactThreshold`).
  public var motionThreshold: Double = 0.15

  /// Samples whose magnitude differs from `gravity` by more than this fraction are impacts
  /// (shaking, a hard jolt): no evidence at all is gathered until they have stopped for
  /// `motionHold`. Between `motionThreshold` and this (footsteps, a car braking) only decisive
  /// evidence counts: a deliberate turn (`turnAngle`) or an angle `decisiveAngle` deep into
  /// the new sector, so a device turned while walking still turns quickly while one held near
  /// a diagonal does not flicker.
  public var impactThreshold: Double = 0.4

  /// How long, in seconds, a decisive new orientation must hold while the device is moving
  /// (within `motionHold` of a sample beyond `motionThreshold`): footsteps and braking tilt the
  /// reading for a moment; a turn made while walking holds.
  public var motionSettleTime: Double = 0.15

  /// How long, in seconds, after the last motion (or impact) sample before all evidence for a
  /// change is gathered again.
  public var motionHold: Double = 0.15

  /// A gap between samples longer than this, in seconds (the sensor was paused, or the stream
  /// stalled), resets the filter to the next sample and lets it decide at once.
  public var gapReset: Double = 1.0

  /// The magnitude of gravity the sensor reports at rest, in m/s^2.
  public var gravity: Double = standardGravity

  /// Creates the default parameters.
  public init() {}

  /// One configuration key: its name, unit, range, summary and field (one row of `table`).
  public struct Key: Sendable, Hashable {
    /// The kebab-case key.
    public let rawValue: String
    /// The unit, for documentation and messages.
    public let unit: String
    /// The accepted range of values (inclusive).
    public let range: ClosedRange<Double>
    /// One line on what it does.
    public let summary: String
    let path: WritableKeyPath<DetectorParameters, Double> & Sendable

    init(
      _ rawValue: String, _ unit: String, _ range: ClosedRange<Double>, _ summary: String,
      _ path: WritableKeyPath<DetectorParameters, Double> & Sendable
    ) {
      self.rawValue = rawValue
      self.unit = unit
      self.range = range
      self.summary = summary
      self.path = path
    }

    /// The key called `rawValue`, if there is one.
    public init?(rawValue: String) {
      guard let key = Key.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
      self = key
    }

    /// Keys are their names.
    public static func == (lhs: Key, rhs: Key) -> Bool { lhs.rawValue == rhs.rawValue }
    /// Hashes the name.
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    /// Every key, in the order they are documented.
    public static let allCases: [Key] = [
      Key(
        "filter-time-constant", "s", 0...2, "low-pass filter time constant (0 = off)",
        \.filterTimeConstant),
      Key(
        "hysteresis", "degrees", 0...40, "degrees past 45 before a neighbour is considered",
        \.hysteresis),
      Key(
        "decisive-angle", "degrees", 0...45, "depth into the new sector for a decisive change",
        \.decisiveAngle),
      Key("settle-time-fast", "s", 0...5, "hold time for a decisive change", \.settleTimeFast),
      Key("settle-time-slow", "s", 0...10, "hold time for a marginal change", \.settleTimeSlow),
      Key(
        "steady-rate", "degrees/s", 1...10000, "fastest turn still counted as steady",
        \.steadyRate),
      Key(
        "settled-angle", "degrees", 0...10,
        "consecutive samples this close count as steady (0 = off)", \.settledAngle),
      Key(
        "turn-angle", "degrees", 1...90, "recent turn that makes a change decisive (90 = off)",
        \.turnAngle),
      Key(
        "turn-time-constant", "s", 0...5, "reference filter for turn-angle",
        \.turnTimeConstant),
      Key(
        "flat-enter", "degrees", 10...89, "tilt from vertical at which the display is flat",
        \.flatEnter),
      Key(
        "flat-leave", "degrees", 5...88, "tilt below which a flat display is lifted again",
        \.flatLeave),
      Key(
        "vertical-limit", "degrees", 0...85, "largest tilt reported as vertical",
        \.verticalLimit),
      Key(
        "magnitude-tolerance", "fraction of g", 0.05...0.95,
        "reject samples whose |a| is off g by more", \.magnitudeTolerance),
      Key(
        "motion-threshold", "fraction of g", 0.01...0.95,
        "samples whose |a| is off g by more count as motion", \.motionThreshold),
      Key(
        "impact-threshold", "fraction of g", 0.01...0.95,
        "samples whose |a| is off g by more are impacts", \.impactThreshold),
      Key(
        "motion-settle-time", "s", 0...5, "hold time for a decisive change while moving",
        \.motionSettleTime),
      Key(
        "motion-hold", "s", 0...5, "quiet time after motion before changes settle",
        \.motionHold),
      Key("gap-reset", "s", 0.01...3600, "sample gap that resets the filter", \.gapReset),
      Key("gravity", "m/s^2", 0.1...1000, "gravity as the sensor reports it at rest", \.gravity),
    ]
  }

  /// The value of one parameter.
  public subscript(key: Key) -> Double {
    get { self[keyPath: key.path] }
    set { self[keyPath: key.path] = newValue }
  }

  /// The `[detector]` section: one row per `Key`, and the relations between them.
  public static let table = ConfigTable<DetectorParameters>(
    section: "detector",
    keys: Key.allCases.map { .number($0.rawValue, $0.unit, $0.range, $0.summary, $0.path) },
    check: { (parameters: DetectorParameters) throws(ConfigValueError) in
      try parameters.checkRelations()
    })

  /// `validate(source:)` for the table, which adds the place.
  private func checkRelations() throws(ConfigValueError) {
    do {
      try validate(source: "")
    } catch {
      throw ConfigValueError(error.reason)
    }
  }

  /// Sets one parameter from its text form, checking the key and the range.
  ///
  /// Relations between parameters (such as `flat-leave` < `flat-enter`) are checked by
  /// `validate(source:)` once every value is set, so values can be given in any order.
  ///
  /// - Parameters:
  ///   - key: the kebab-case key, e.g. `filter-time-constant`.
  ///   - value: a decimal number, e.g. `0.05`.
  ///   - source: where it came from (a config file path or `--set`), for the error.
  ///   - line: the line in `source`, 0 when there is none.
  /// - Throws: `ConfigError` for an unknown key (listing the valid ones), a value that is not a
  ///   decimal number, or one outside the key's range.
  public mutating func set(key: String, value: String, source: String, line: Int)
    throws(ConfigError)
  {
    try DetectorParameters.table.set(key, value, in: &self, source: source, line: line)
  }

  /// Checks the relations between parameters.
  ///
  /// - Throws: `ConfigError` (line 0) naming the conflicting keys: `flat-leave` must be below
  ///   `flat-enter`, `vertical-limit` below `flat-leave`, `decisive-angle` above `hysteresis`,
  ///   `settle-time-slow` at least `settle-time-fast`, `motion-threshold` at most `impact-threshold`,
  ///   `impact-threshold` at most
  ///   `magnitude-tolerance`.
  public func validate(source: String) throws(ConfigError) {
    func fail(_ reason: String) -> ConfigError {
      ConfigError(source: source, line: 0, reason: reason)
    }
    if flatLeave >= flatEnter {
      throw fail(
        "flat-leave (\(shortDecimal(flatLeave))) must be below flat-enter (\(shortDecimal(flatEnter)))"
      )
    }
    if verticalLimit + 3 >= flatLeave {
      throw fail(
        "vertical-limit (\(shortDecimal(verticalLimit))) must be more than 3 degrees below"
          + " flat-leave (\(shortDecimal(flatLeave)))")
    }
    if decisiveAngle <= hysteresis {
      throw fail(
        "decisive-angle (\(shortDecimal(decisiveAngle))) must be above hysteresis"
          + " (\(shortDecimal(hysteresis)))")
    }
    if turnTimeConstant < filterTimeConstant {
      throw fail(
        "turn-time-constant (\(shortDecimal(turnTimeConstant))) must not be below"
          + " filter-time-constant (\(shortDecimal(filterTimeConstant)))")
    }
    if settleTimeSlow < settleTimeFast {
      throw fail(
        "settle-time-slow (\(shortDecimal(settleTimeSlow))) must be at least settle-time-fast"
          + " (\(shortDecimal(settleTimeFast)))")
    }
    if motionThreshold > impactThreshold {
      throw fail(
        "motion-threshold (\(shortDecimal(motionThreshold))) must not exceed impact-threshold"
          + " (\(shortDecimal(impactThreshold)))")
    }
    if impactThreshold > magnitudeTolerance {
      throw fail(
        "impact-threshold (\(shortDecimal(impactThreshold))) must not exceed magnitude-tolerance"
          + " (\(shortDecimal(magnitudeTolerance)))")
    }
  }

  /// Reads a `[detector]` section on top of the defaults.
  ///
  /// - Throws: `ConfigError` at the entry's line for an unknown key or bad value, or (line of
  ///   the section header) for conflicting values.
  public init(section: ConfigFile.Section, source: String) throws(ConfigError) {
    self.init()
    try apply(section: section, source: source)
  }

  /// Reads every `[detector]` section of a configuration file, in order, on top of the
  /// defaults; other sections are left to their consumers.
  ///
  /// - Throws: `ConfigError` naming the file and line.
  public init(config: ConfigFile) throws(ConfigError) {
    self.init()
    try DetectorParameters.table.read(config, into: &self)
  }

  /// Applies a `[detector]` section's entries on top of the current values, then validates.
  public mutating func apply(section: ConfigFile.Section, source: String) throws(ConfigError) {
    try DetectorParameters.table.apply(section, to: &self, source: source)
  }
}

extension DetectorParameters {
  /// The squared magnitude limits (reject, motion, impact: low/high) for a gravity.
  func magnitudeLimits(gravity g: Double) -> (Double, Double, Double, Double, Double, Double) {
    (
      square(g * (1 - magnitudeTolerance)), square(g * (1 + magnitudeTolerance)),
      square(g * (1 - motionThreshold)), square(g * (1 + motionThreshold)),
      square(g * (1 - impactThreshold)), square(g * (1 + impactThreshold))
    )
  }
}
