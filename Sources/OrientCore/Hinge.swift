import Glibc
import TextFormats

/// The tunable parameters of `HingeTracker`, with their defaults and units.
///
/// Angles in degrees, times in seconds, accelerations as a fraction of `gravity`. They are
/// read from the `[posture]` section of `/etc/orientd.conf` (see `PostureSettings` in the
/// daemon) and from `orientd replay --set`; the defaults are the values with which
/// `orient-bench`'s hinge section meets its targets.
public struct HingeParameters: Sendable, Equatable {
  /// The hinge axis, the same unit vector in the lid's and the base's frame (after their mount
  /// matrices). The usual convertible hinges about x: both frames coincide when the machine
  /// is opened flat, and the lid turns about +x as it closes. `-x` reverses the direction.
  public var hingeAxis = Vector3(1, 0, 0)

  /// Time constant of the low-pass filter on each part's vector.
  public var filterTimeConstant: Double = 0.02

  /// The hinge counts as vertical (the angle cannot be seen) when gravity is within this many
  /// degrees of the hinge axis, and as usable again beyond `verticalHingeAngle + 5`.
  public var verticalHingeAngle: Double = 20

  /// A part whose magnitude differs from `gravity` by more than this fraction, or two parts whose
  /// components along the hinge axis differ by more than it, are accelerating.
  public var accelerationTolerance: Double = 0.1

  /// How long, in seconds, every reading must have been usable before the angle counts as
  /// reliable again after acceleration or a vertical hinge.
  public var reliableHold: Double = 0.25

  /// The most, in seconds, one part's last reading may lag the other's before the pair is stale.
  public var maximumSkew: Double = 0.3

  /// How long, in seconds, a new posture must hold (with a reliable angle) before it is
  /// committed.
  public var settleTime: Double = 0.25

  /// How far, in degrees, the angle must go past a posture's edge before the neighbouring
  /// posture is considered.
  public var hysteresis: Double = 8

  /// Upper edge of `closed`.
  public var closedBelow: Double = 25
  /// Lower edge of `flat` (upper edge of `laptop`).
  public var flatFrom: Double = 165
  /// Upper edge of `flat` (lower edge of `tent`/`stand`).
  public var flatTo: Double = 195
  /// Lower edge of `tablet` (upper edge of `tent`/`stand`).
  public var tabletFrom: Double = 330

  /// The display's y component, as a fraction of `gravity`, beyond which a tent (bottom-up,
  /// positive) or a stand (upright, negative) replaces the other.
  public var tentStandMargin: Double = 0.2

  /// The reported `HingeAngle` changes only when the angle has moved this many degrees.
  public var reportStep: Double = 1

  /// 1 g in the sensor's units (m/s^2).
  public var gravity: Double = standardGravity

  /// The defaults.
  public init() {}

  /// The `[posture]` keys of the hinge tracker (also `orientd replay --set`), one row each.
  public static let table = ConfigTable<HingeParameters>(
    section: "posture",
    keys: [
      .parsed(
        "hinge-axis", accepts: "x | -x | y | -y | z | -z | three numbers",
        summary:
          "the hinge axis in both parts' frames (default: udev's ORIENTD_HINGE_AXIS, else x)",
        \.hingeAxis, show: axisText, parse: parseAxis),
      .number(
        "hinge-filter-time-constant", "s", 0...2, "low-pass filter on each part",
        \.filterTimeConstant),
      .number(
        "vertical-hinge-angle", "degrees", 0...80, "gravity this close to the axis hides the angle",
        \.verticalHingeAngle),
      .number(
        "acceleration-tolerance", "fraction of g", 0.01...2, "beyond it a part is accelerating",
        \.accelerationTolerance),
      .number(
        "reliable-hold", "s", 0...10, "usable readings before the angle is reliable again",
        \.reliableHold),
      .number("maximum-skew", "s", 0.01...10, "most one part may lag the other", \.maximumSkew),
      .number("posture-settle-time", "s", 0...10, "hold time for a new posture", \.settleTime),
      .number(
        "posture-hysteresis", "degrees", 0...30, "past a posture's edge before the next",
        \.hysteresis),
      .number("closed-below", "degrees", 1...90, "upper edge of closed", \.closedBelow),
      .number("flat-from", "degrees", 90...180, "lower edge of flat", \.flatFrom),
      .number("flat-to", "degrees", 180...270, "upper edge of flat", \.flatTo),
      .number("tablet-from", "degrees", 270...359, "lower edge of tablet", \.tabletFrom),
      .number(
        "tent-stand-margin", "fraction of g", 0...1, "display y that tells tent from stand",
        \.tentStandMargin),
      .number(
        "report-step", "degrees", 0...90, "HingeAngle changes in steps this large", \.reportStep),
    ])

  /// The kebab-case keys of `replay --set` and `[posture]`, in declaration order.
  public static var keys: [String] { table.names }

  /// Sets one parameter from its key and text value.
  ///
  /// - Throws: `HingeParameterError` for an unknown key, a value that is not a number (or an
  ///   axis), or one out of range.
  public mutating func set(_ key: String, _ text: String) throws(HingeParameterError) {
    guard let row = HingeParameters.table.key(key) else {
      throw HingeParameterError(
        key: key,
        reason: "unknown key '\(key)' (known: \(HingeParameters.keys.joined(separator: ", ")))")
    }
    do {
      try row.set(text, in: &self)
    } catch {
      throw HingeParameterError(key: key, reason: error.reason)
    }
  }

  /// `key`'s value as `set` reads it, with its allowed range for the numeric keys
  /// (`0.02 (0...2)`; `x` for the axis), for `orientd --help`; nil for an unknown key.
  public func describe(_ key: String) -> String? {
    guard let row = HingeParameters.table.key(key) else { return nil }
    guard let range = row.range else { return row.value(in: self) }
    return "\(row.value(in: self)) (\(shortDecimal(range.lowerBound))..."
      + "\(shortDecimal(range.upperBound)))"
  }

  private static func parseAxis(_ text: String) throws(ConfigValueError) -> Vector3 {
    guard let axis = axis(text) else {
      throw ConfigValueError(
        "hinge-axis '\(text)' is not an axis: expected x, -x, y, -y, z, -z or three numbers")
    }
    return axis
  }

  /// An axis as `hinge-axis` spells it: `x`, `-y`, ... or three numbers.
  @Sendable static func axisText(_ axis: Vector3) -> String {
    let named: [(String, Vector3)] = [
      ("x", Vector3(1, 0, 0)), ("-x", Vector3(-1, 0, 0)), ("y", Vector3(0, 1, 0)),
      ("-y", Vector3(0, -1, 0)), ("z", Vector3(0, 0, 1)), ("-z", Vector3(0, 0, -1)),
    ]
    return named.first { $0.1 == axis }?.0
      ?? [axis.x, axis.y, axis.z].map(shortDecimal).joined(separator: ",")
  }

  /// Parses a hinge axis: `x`, `-y`, ... or three numbers (normalised).
  public static func axis(_ text: String) -> Vector3? {
    let trimmed = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," })
    if trimmed.count == 1 {
      let word = trimmed[0]
      let negative = word.hasPrefix("-")
      let sign: Double = negative ? -1 : 1
      switch negative ? word.dropFirst() : word[...] {
      case "x": return Vector3(sign, 0, 0)
      case "y": return Vector3(0, sign, 0)
      case "z": return Vector3(0, 0, sign)
      default: return nil
      }
    }
    let numbers = trimmed.compactMap { try? DecimalText.parseDouble($0) }
    guard numbers.count == 3, trimmed.count == 3 else { return nil }
    let v = Vector3(numbers[0], numbers[1], numbers[2])
    let length = v.magnitude
    guard length.isFinite, length > 1e-6 else { return nil }
    return v * (1 / length)
  }
}

/// A bad hinge parameter: which key and why.
public struct HingeParameterError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The key.
  public var key: String
  /// What is wrong with its value.
  public var reason: String

  /// Creates an error.
  public init(key: String, reason: String) {
    self.key = key
    self.reason = reason
  }

  /// The reason (it names the key).
  public var description: String { reason }
}

/// One of the two accelerometers of a convertible.
public enum HingePart: String, Sendable, Equatable {
  /// The display (lid) accelerometer.
  case lid
  /// The base (keyboard) accelerometer.
  case base
}

/// What `HingeTracker` publishes.
public struct HingeState: Sendable, Equatable {
  /// The hinge angle in degrees (0 closed, 180 flat, 360 folded into a tablet), rounded to
  /// `reportStep`; NaN while unreliable.
  public var angle: Double = .nan
  /// Whether `angle` can be trusted now.
  public var isReliable = false
  /// The committed posture; held while the angle is unreliable.
  public var posture: Posture = .undefined

  /// Nothing known.
  public init() {}

  /// Equal when the same posture and reliability and the same angle (NaN equal to NaN).
  public static func == (a: HingeState, b: HingeState) -> Bool {
    a.posture == b.posture && a.isReliable == b.isReliable
      && (a.angle == b.angle || (a.angle.isNaN && b.angle.isNaN))
  }
}

/// The hinge angle and posture of a convertible from its lid and base accelerometers. Pure:
/// feed it readings with their times; no allocation per sample.
///
/// **The angle.** Both parts see the same gravity; the lid's frame is the base's turned by
/// 180 degrees minus the hinge angle about the hinge axis `h`. Projected onto the plane
/// normal to `h`, the two gravity vectors are that rotation apart, so the angle is
/// `180 - atan2(h . (l x b), l . b)` of the projections `l` and `b`.
///
/// **Reliability.** When gravity is nearly along the hinge (the machine on its side) the
/// projections are tiny and their directions meaningless; when a part accelerates, its vector
/// is not gravity. Both are detected per reading (the parts' magnitudes, and their components
/// along the hinge, which must agree since the hinge is common to both), and the angle is
/// reliable only once every reading has been usable for `reliableHold`.
///
/// **Closed and tablet** read the same (both halves parallel); they are told apart by
/// continuity: the angle never jumps across the 0/360 seam, and a jump to the seam lands on the
/// side nearer the last angle. With no history (the first reading, or after the hinge was
/// vertical, when it can turn unseen), or from near flat, a reading at the seam is a tablet
/// if the display faces up and closed if it faces down.
///
/// **Posture** follows the reliable angle with hysteresis and a settle time, and is held while
/// the angle is unreliable.
public struct HingeTracker: Sendable {
  /// The parameters.
  public private(set) var parameters: HingeParameters
  /// What is published.
  public private(set) var state = HingeState()
  /// The unrounded angle of the last usable pair (degrees, 0...360), NaN before one and once
  /// the hinge was vertical.
  public private(set) var angle: Double = .nan
  /// Why the angle is unreliable (nil while reliable, or before the first reading).
  public private(set) var unreliability: HingeUnreliability?

  private var lid: PartReading?
  private var base: PartReading?
  private var usableSince: Double?
  private var hingeVertical = false
  private var candidate: (posture: Posture, since: Double)?

  /// A tracker with nothing known.
  public init(parameters: HingeParameters = HingeParameters()) {
    self.parameters = parameters
  }

  /// Forgets everything (a new claim, a sensor gone): the next reliable reading decides afresh.
  public mutating func reset() {
    self = HingeTracker(parameters: parameters)
  }

  /// Feeds one reading of `part` at `time` (seconds).
  ///
  /// - Returns: whether `state` changed.
  @discardableResult
  public mutating func process(_ part: HingePart, time: Double, _ vector: Vector3) -> Bool {
    guard vector.isFinite else { return false }
    switch part {
    case .lid: lid = filtered(lid, time: time, vector)
    case .base: base = filtered(base, time: time, vector)
    }
    let before = state
    evaluate(time: time)
    return state != before
  }

  /// Feeds a hinge angle the hardware measured itself (degrees, 0...360: Intel's HID custom
  /// hinge sensor, ChromeOS's lid angle) at `time` (seconds). There is no pair to match and no
  /// seam to guess: the angle is reliable as it comes. The display's readings
  /// (`process(.lid, ...)`) still tell tent from stand; without a base reading they never make
  /// an angle of their own, so the two sources do not mix.
  ///
  /// - Returns: whether `state` changed.
  @discardableResult
  public mutating func process(measuredAngle degrees: Double, time: Double) -> Bool {
    guard degrees.isFinite else { return false }
    let before = state
    angle = min(max(degrees, 0), 360)
    unreliability = nil
    state.isReliable = true
    let p = parameters
    if !(abs(angle - state.angle) < p.reportStep) || p.reportStep == 0 {
      state.angle = p.reportStep > 0 ? (angle * 10).rounded() / 10 : angle
    }
    // Without a display reading yet, as a laptop's display stands (upright: y = -g).
    decidePosture(time: time, lidGravity: lid?.filtered ?? Vector3(0, -p.gravity, 0))
    return state != before
  }

  /// One part's latest reading, filtered, and how fast the filtered vector moves.
  private struct PartReading {
    var raw: Vector3
    var filtered: Vector3
    var time: Double
    /// Change of `filtered` per second over the last interval.
    var velocity = Vector3.zero

    /// `filtered` carried forward to `time` along `velocity`, plus the filter's own lag
    /// (`lag`, its time constant: a ramp lags by exactly that): the two parts are sampled at
    /// different instants, and while the hinge moves the older reading lags by up to one
    /// interval (80 ms at 12.5 Hz is 10 degrees at 130 degrees per second).
    func at(_ time: Double, lag: Double, limit: Double) -> Vector3 {
      let ahead = max(0, min(limit, time - self.time))
      return filtered + velocity * (ahead + lag)
    }
  }

  private func filtered(_ previous: PartReading?, time: Double, _ v: Vector3) -> PartReading {
    guard let previous, time > previous.time, time - previous.time < parameters.maximumSkew
    else { return PartReading(raw: v, filtered: v, time: time) }
    let dt = time - previous.time
    let alpha = dt / (parameters.filterTimeConstant + dt)
    let next = previous.filtered + (v - previous.filtered) * alpha
    return PartReading(
      raw: v, filtered: next, time: time, velocity: (next - previous.filtered) * (1 / dt))
  }

  private mutating func evaluate(time: Double) {
    guard let lid, let base else { return }
    let p = parameters
    if abs(lid.time - base.time) > p.maximumSkew {
      markUnusable(.stale)
      return
    }
    // Acceleration: each magnitude must be 1 g, and both parts must read the same along the
    // hinge, which they share.
    let g = p.gravity
    let h = p.hingeAxis
    let along = abs(lid.raw.dot(h) - base.raw.dot(h)) / g
    let lidOff = abs(lid.raw.magnitude / g - 1)
    let baseOff = abs(base.raw.magnitude / g - 1)
    if along > p.accelerationTolerance || lidOff > p.accelerationTolerance
      || baseOff > p.accelerationTolerance
    {
      markUnusable(.accelerating)
      return
    }
    // Hinge vertical: gravity within `verticalHingeAngle` of the axis (5 degrees of hysteresis).
    let now = max(lid.time, base.time)
    let lidNow = lid.at(now, lag: p.filterTimeConstant, limit: p.maximumSkew)
    let baseNow = base.at(now, lag: p.filterTimeConstant, limit: p.maximumSkew)
    let l = lidNow - h * lidNow.dot(h)
    let b = baseNow - h * baseNow.dot(h)
    // The two projections are equally long (same gravity, same hinge): their mean is the
    // sine of gravity's angle from the hinge.
    let sinFromAxis =
      (l.magnitude + b.magnitude) / max(lidNow.magnitude + baseNow.magnitude, 1e-9)
    let limit = p.verticalHingeAngle + (hingeVertical ? 5 : 0)
    hingeVertical = sinFromAxis < sin(limit * Double.pi / 180)
    if hingeVertical {
      // The hinge can turn unseen meanwhile (on its side, folded to a tablet): the last
      // angle is no history for the seam, the display's facing decides afterwards.
      angle = .nan
      markUnusable(.hingeVertical)
      return
    }
    let cross = l.cross(b).dot(h)
    let rotation = atan2(cross, l.dot(b)) * 180 / Double.pi
    var raw = 180 - rotation
    if raw < 0 { raw += 360 }
    if raw >= 360 { raw -= 360 }
    angle = unwrapped(raw, lidGravity: lid.filtered)
    if usableSince == nil { usableSince = time }
    guard let since = usableSince, time - since >= p.reliableHold else {
      if unreliability == nil { unreliability = .accelerating }
      return
    }
    unreliability = nil
    state.isReliable = true
    if !(abs(angle - state.angle) < p.reportStep) || p.reportStep == 0 {
      state.angle = p.reportStep > 0 ? (angle * 10).rounded() / 10 : angle
    }
    decidePosture(time: time, lidGravity: lid.filtered)
  }

  /// Places `raw` (0..<360) on the continuous 0...360 scale: near the seam it takes the side
  /// the shorter way from the last angle (a fold from stand at 270 to 350 ends a tablet, not
  /// closed: a sensor read at a few hertz while still, or a quick hand, can move the lid by
  /// tens of degrees between two readings); with no history, or from near flat where both
  /// ways are about as long, the display's facing decides.
  private func unwrapped(_ raw: Double, lidGravity: Vector3) -> Double {
    let seam = 30.0
    guard raw < seam || raw > 360 - seam else { return raw }
    let nearTablet: Bool
    if angle.isFinite, abs(angle - 180) > seam {
      nearTablet = angle > 180
    } else {
      // The display faces up when gravity points into its back: z (out of the screen) negative.
      nearTablet = lidGravity.z < 0
    }
    if nearTablet { return raw < seam ? 360 : raw }
    return raw > 360 - seam ? 0 : raw
  }

  private mutating func markUnusable(_ reason: HingeUnreliability) {
    usableSince = nil
    unreliability = reason
    candidate = nil
    state.isReliable = false
    state.angle = .nan
  }

  /// The posture whose range holds `angle`, tent or stand by the display's y.
  private func posture(at angle: Double, lidGravity: Vector3) -> Posture {
    let p = parameters
    if angle < p.closedBelow { return .closed }
    if angle < p.flatFrom { return .laptop }
    if angle <= p.flatTo { return .flat }
    if angle < p.tabletFrom {
      let y = lidGravity.y / p.gravity
      switch state.posture {
      case .tent where y > -p.tentStandMargin: return .tent
      case .stand where y < p.tentStandMargin: return .stand
      default: return y > 0 ? .tent : .stand
      }
    }
    return .tablet
  }

  /// The range of angles over which `posture` is kept once committed (its own range widened by
  /// the hysteresis).
  private func keeps(_ posture: Posture, at angle: Double) -> Bool {
    let p = parameters
    let h = p.hysteresis
    switch posture {
    case .undefined: return false
    case .closed: return angle < p.closedBelow + h
    case .laptop: return angle >= p.closedBelow - h && angle < p.flatFrom + h
    case .flat: return angle >= p.flatFrom - h && angle <= p.flatTo + h
    case .tent, .stand: return angle > p.flatTo - h && angle < p.tabletFrom + h
    case .tablet: return angle >= p.tabletFrom - h
    }
  }

  private mutating func decidePosture(time: Double, lidGravity: Vector3) {
    var next = posture(at: angle, lidGravity: lidGravity)
    let current = state.posture
    if next != current, keeps(current, at: angle) {
      // Within the band: only tent and stand may swap (the display turned over).
      let pair: Set<Posture> = [.tent, .stand]
      if !(pair.contains(next) && pair.contains(current)) { next = current }
    }
    guard next != current else {
      candidate = nil
      return
    }
    // Nothing committed yet: the first reliable reading decides at once.
    if current == .undefined {
      state.posture = next
      candidate = nil
      return
    }
    if candidate?.posture != next { candidate = (next, time) }
    if let since = candidate?.since, time - since >= parameters.settleTime {
      state.posture = next
      candidate = nil
    }
  }
}

extension Vector3 {
  /// The cross product.
  @inlinable
  public func cross(_ o: Vector3) -> Vector3 {
    Vector3(y * o.z - z * o.y, z * o.x - x * o.z, x * o.y - y * o.x)
  }
}

/// The convention `HingeTracker` assumes, as exact geometry: what an ideal lid and base
/// accelerometer read for a hinge angle and a pose of the base. Used by the tests, the
/// simulator and the emulated convertibles of the integration tests.
public enum HingeGeometry {
  /// The readings (gravity only, hinge about +x) of a convertible opened `angle` degrees whose
  /// base is pitched `pitch` degrees about its x axis (hinge end up for positive pitch) and then
  /// rolled `roll` degrees about its y axis. Pitch and roll 0: base flat, keyboard up.
  ///
  /// Frames (IIO, after the mount matrix): base x right along the hinge, y from the user
  /// towards the hinge, z up out of the keyboard; the lid's frame is the base's at 180 degrees
  /// (opened flat) and is turned by `180 - angle` about x otherwise, so that at 90 degrees with
  /// the base flat the display reads upright (`normal`, y = -g).
  public static func readings(
    angle: Double, pitch: Double = 0, roll: Double = 0, gravity: Double = standardGravity
  ) -> (lid: Vector3, base: Vector3) {
    readings(world: Vector3(0, 0, -gravity), angle: angle, pitch: pitch, roll: roll)
  }

  /// The readings of a specific force `world` given in the world frame (z up; at rest
  /// `(0, 0, -g)`, carried `(0, 0, -g) - a`), in the pose of `readings(angle:pitch:roll:)`.
  public static func readings(world: Vector3, angle: Double, pitch: Double, roll: Double)
    -> (lid: Vector3, base: Vector3)
  {
    let base = rotatedX(rotatedY(world, by: -roll), by: -pitch)
    return (lidReading(base: base, angle: angle), base)
  }

  /// The lid's reading of a vector the base reads as `base`, at hinge angle `angle`.
  public static func lidReading(base: Vector3, angle: Double) -> Vector3 {
    rotatedX(base, by: -(180 - angle))
  }

  /// `v` in a frame turned by `-degrees` about x (that is, `v` turned by `degrees`).
  static func rotatedX(_ v: Vector3, by degrees: Double) -> Vector3 {
    let r = degrees * Double.pi / 180
    return Vector3(v.x, v.y * cos(r) - v.z * sin(r), v.y * sin(r) + v.z * cos(r))
  }

  /// `v` turned by `degrees` about y.
  static func rotatedY(_ v: Vector3, by degrees: Double) -> Vector3 {
    let r = degrees * Double.pi / 180
    return Vector3(v.x * cos(r) + v.z * sin(r), v.y, -v.x * sin(r) + v.z * cos(r))
  }
}
