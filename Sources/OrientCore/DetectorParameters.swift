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

  /// The configuration keys, in the order they are documented.
  public enum Key: String, CaseIterable, Sendable {
    /// `filterTimeConstant`.
    case filterTimeConstant = "filter-time-constant"
    /// `hysteresis`.
    case hysteresis
    /// `decisiveAngle`.
    case decisiveAngle = "decisive-angle"
    /// `settleTimeFast`.
    case settleTimeFast = "settle-time-fast"
    /// `settleTimeSlow`.
    case settleTimeSlow = "settle-time-slow"
    /// `steadyRate`.
    case steadyRate = "steady-rate"
    /// `settledAngle`.
    case settledAngle = "settled-angle"
    /// `turnAngle`.
    case turnAngle = "turn-angle"
    /// `turnTimeConstant`.
    case turnTimeConstant = "turn-time-constant"
    /// `flatEnter`.
    case flatEnter = "flat-enter"
    /// `flatLeave`.
    case flatLeave = "flat-leave"
    /// `verticalLimit`.
    case verticalLimit = "vertical-limit"
    /// `magnitudeTolerance`.
    case magnitudeTolerance = "magnitude-tolerance"
    /// `motionThreshold`.
    case motionThreshold = "motion-threshold"
    /// `impactThreshold`.
    case impactThreshold = "impact-threshold"
    /// `motionSettleTime`.
    case motionSettleTime = "motion-settle-time"
    /// `motionHold`.
    case motionHold = "motion-hold"
    /// `gapReset`.
    case gapReset = "gap-reset"
    /// `gravity`.
    case gravity

    /// The unit, for documentation and messages.
    public var unit: String {
      switch self {
      case .filterTimeConstant, .settleTimeFast, .settleTimeSlow, .motionHold, .gapReset,
        .turnTimeConstant, .motionSettleTime:
        return "s"
      case .hysteresis, .decisiveAngle, .turnAngle, .flatEnter, .flatLeave, .verticalLimit,
        .settledAngle:
        return "degrees"
      case .magnitudeTolerance, .motionThreshold, .impactThreshold: return "fraction of g"
      case .steadyRate: return "degrees/s"
      case .gravity: return "m/s^2"
      }
    }

    /// The accepted range of values (inclusive).
    public var range: ClosedRange<Double> {
      switch self {
      case .filterTimeConstant: return 0...2
      case .hysteresis: return 0...40
      case .decisiveAngle: return 0...45
      case .settleTimeFast: return 0...5
      case .settleTimeSlow: return 0...10
      case .steadyRate: return 1...10000
      case .settledAngle: return 0...10
      case .turnAngle: return 1...90
      case .turnTimeConstant: return 0...5
      case .flatEnter: return 10...89
      case .flatLeave: return 5...88
      case .verticalLimit: return 0...85
      case .magnitudeTolerance: return 0.05...0.95
      case .motionThreshold: return 0.01...0.95
      case .impactThreshold: return 0.01...0.95
      case .motionSettleTime: return 0...5
      case .motionHold: return 0...5
      case .gapReset: return 0.01...3600
      case .gravity: return 0.1...1000
      }
    }

    /// One line on what it does.
    public var summary: String {
      switch self {
      case .filterTimeConstant: return "low-pass filter time constant (0 = off)"
      case .hysteresis: return "degrees past 45 before a neighbour is considered"
      case .decisiveAngle: return "depth into the new sector for a decisive change"
      case .settleTimeFast: return "hold time for a decisive change"
      case .settleTimeSlow: return "hold time for a marginal change"
      case .steadyRate: return "fastest turn still counted as steady"
      case .settledAngle: return "consecutive samples this close count as steady (0 = off)"
      case .turnAngle: return "recent turn that makes a change decisive (90 = off)"
      case .turnTimeConstant: return "reference filter for turn-angle"
      case .flatEnter: return "tilt from vertical at which the display is flat"
      case .flatLeave: return "tilt below which a flat display is lifted again"
      case .verticalLimit: return "largest tilt reported as vertical"
      case .magnitudeTolerance: return "reject samples whose |a| is off g by more"
      case .motionThreshold: return "samples whose |a| is off g by more count as motion"
      case .impactThreshold: return "samples whose |a| is off g by more are impacts"
      case .motionSettleTime: return "hold time for a decisive change while moving"
      case .motionHold: return "quiet time after motion before changes settle"
      case .gapReset: return "sample gap that resets the filter"
      case .gravity: return "gravity as the sensor reports it at rest"
      }
    }
  }

  /// The value of one parameter.
  public subscript(key: Key) -> Double {
    get {
      switch key {
      case .filterTimeConstant: return filterTimeConstant
      case .hysteresis: return hysteresis
      case .decisiveAngle: return decisiveAngle
      case .settleTimeFast: return settleTimeFast
      case .settleTimeSlow: return settleTimeSlow
      case .steadyRate: return steadyRate
      case .settledAngle: return settledAngle
      case .turnAngle: return turnAngle
      case .turnTimeConstant: return turnTimeConstant
      case .flatEnter: return flatEnter
      case .flatLeave: return flatLeave
      case .verticalLimit: return verticalLimit
      case .magnitudeTolerance: return magnitudeTolerance
      case .motionThreshold: return motionThreshold
      case .impactThreshold: return impactThreshold
      case .motionSettleTime: return motionSettleTime
      case .motionHold: return motionHold
      case .gapReset: return gapReset
      case .gravity: return gravity
      }
    }
    set {
      switch key {
      case .filterTimeConstant: filterTimeConstant = newValue
      case .hysteresis: hysteresis = newValue
      case .decisiveAngle: decisiveAngle = newValue
      case .settleTimeFast: settleTimeFast = newValue
      case .settleTimeSlow: settleTimeSlow = newValue
      case .steadyRate: steadyRate = newValue
      case .settledAngle: settledAngle = newValue
      case .turnAngle: turnAngle = newValue
      case .turnTimeConstant: turnTimeConstant = newValue
      case .flatEnter: flatEnter = newValue
      case .flatLeave: flatLeave = newValue
      case .verticalLimit: verticalLimit = newValue
      case .magnitudeTolerance: magnitudeTolerance = newValue
      case .motionThreshold: motionThreshold = newValue
      case .impactThreshold: impactThreshold = newValue
      case .motionSettleTime: motionSettleTime = newValue
      case .motionHold: motionHold = newValue
      case .gapReset: gapReset = newValue
      case .gravity: gravity = newValue
      }
    }
  }

  /// The valid keys, comma-separated, for messages.
  public static var validKeys: String { Key.allCases.map(\.rawValue).joined(separator: ", ") }

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
    guard let parsed = Key(rawValue: key) else {
      throw ConfigError(
        source: source, line: line,
        reason: "unknown detector parameter '\(key)'; valid: \(DetectorParameters.validKeys)")
    }
    let number: Double
    do {
      number = try DecimalText.parseDouble(value)
    } catch {
      throw ConfigError(
        source: source, line: line, reason: "\(key) = '\(value)': \(error), expected a number")
    }
    let range = parsed.range
    guard range.contains(number) else {
      throw ConfigError(
        source: source, line: line,
        reason:
          "\(key) = \(value) is out of range: must be \(shortDecimal(range.lowerBound))"
          + " to \(shortDecimal(range.upperBound)) \(parsed.unit)")
    }
    self[parsed] = number
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
  /// - Parameters:
  ///   - section: the section; its entries are applied in order.
  ///   - source: the file it came from, for errors.
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
    for section in config.sections(named: "detector") {
      try apply(section: section, source: config.source)
    }
  }

  /// Applies a `[detector]` section's entries on top of the current values, then validates.
  public mutating func apply(section: ConfigFile.Section, source: String) throws(ConfigError) {
    for entry in section.entries {
      try set(key: entry.key, value: entry.value, source: source, line: entry.line)
    }
    do {
      try validate(source: source)
    } catch {
      throw ConfigError(source: source, line: section.line, reason: error.reason)
    }
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
