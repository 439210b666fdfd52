#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Turns timestamped accelerometer samples into orientation and tilt changes.
///
/// Per sample (see docs/detector.md for the reasoning):
/// 1. Invalid samples (NaN/infinite, zero vector, time going backwards, magnitude far from g)
///    are counted in `rejections` and otherwise ignored. "g" is `parameters.gravity`, or the
///    sensor's own 1 g when its still readings say its scale is off (`gravityEstimator`).
/// 2. A first-order low-pass filter with time constant `filterTimeConstant` (alpha =
///    1 - exp(-dt/tau), so it is rate independent) estimates gravity. A gap longer than
///    `gapReset` restarts the filter at the new sample.
/// 3. Tilt (the angle between the display and vertical) decides flatness with hysteresis
///    (`flatEnter`/`flatLeave`). While flat the orientation is held and only the tilt changes.
/// 4. The in-plane angle theta = atan2(x, -y) (clockwise device rotation) is bucketed into the
///    nearest orientation. A different orientation becomes a candidate only when theta is more
///    than `hysteresis` degrees past the 45 degree boundary.
/// 5. Evidence for the candidate accumulates at 1/T per second. While the device is steady (its
///    gravity direction turns slower than `steadyRate`, or two consecutive samples agree within
///    `settledAngle`), T falls from `settleTimeSlow` just past the band to `settleTimeFast` at
///    `decisiveAngle` into the new sector, as 1 - x^2 of the normalised depth x; a deliberate turn
///    (the angle leads a slower reference filter by `turnAngle`, away from the current orientation)
///    is decisive at once. While it turns faster, T is `settleTimeSlow`. The candidate is committed
///    when the evidence reaches 1; one sample adds at most 0.5, so a single wild sample never
///    commits. Evidence is cleared when the candidate changes or falls back into the band. It does
///    not grow at all within `motionHold` of an impact (the magnitude off g by more than
///    `impactThreshold`: shaking, a hard jolt), and grows only from decisive evidence (the turn
///    rule, or `decisiveAngle` deep), held for at least `motionSettleTime`, within `motionHold` of
///    motion (off by more than `motionThreshold`: footsteps, braking); through either, the turn
///    rule once the slower reference filter (which averages a gait out) is in the candidate's
///    sector, and that filter deep in it, count too. No evidence while the display swings towards
///    flat (its tilt leads the reference's by `turnAngle`), while it lies flat, or within
///    `motionHold` after either, and none (cleared) while the angle heads back towards the current
///    orientation by `turnAngle`; a deliberate turn that brought the angle past the band stays
///    decisive through a pause. The opposite orientation has no band (Android's listener has none
///    either). A deliberate turn that crossed the 45 degree boundary and stopped inside the band
///    (the hand slower than half a deliberate turn, clean, no motion) commits after
///    `motionSettleTime`. When the device swings back and forth (the lead reverses twice within two
///    `settleTimeSlow`: a pocket on a walking leg; until the lead stays under half of `turnAngle`
///    for `turnTimeConstant`) there is no deliberate turn, and only the reference filter, decisive
///    for `settleTimeSlow`, commits. Evidence counts the time seen: not the span of rejected
///    samples before a sample.
/// 6. From `undefined` (and right after a gap reset) the first usable non-flat sample decides
///    at once, so a new client gets an answer within one sample; so does a clean (magnitude
///    within `motionThreshold`), decisive sample that the filter has forgotten the previous
///    one for (more than four time constants later: a sampler that slowed down while still).
///
/// The detector is a value type with no allocation, no I/O and no clock of its own: the same
/// samples always give the same output.
public struct OrientationDetector: Sendable {
  /// The parameters it was created with.
  public let parameters: DetectorParameters

  /// The committed orientation (`undefined` until the first usable non-flat sample).
  public private(set) var orientation: Orientation = .undefined
  /// The current tilt (`undefined` until the first usable sample).
  public private(set) var tilt: Tilt = .undefined
  /// The filtered gravity estimate in m/s^2 (display frame), valid once `hasReading`.
  public private(set) var gravity = Vector3.zero
  /// The time of the sample `gravity` was last updated with.
  public private(set) var gravityTime = 0.0
  /// Whether any usable sample has arrived since creation.
  public private(set) var hasReading = false
  /// Samples ignored, by reason.
  public private(set) var rejections = RejectionCounts()
  /// How many times a gap restarted the filter (the first sample included).
  public private(set) var filterResets = 0
  /// The sensor's own 1 g, found from still readings (see `GravityEstimator`): the magnitude
  /// tests use its `gravity`, which is `parameters.gravity` unless the sensor's scale is off.
  public private(set) var gravityEstimator: GravityEstimator

  // Precomputed constants.
  private let tau: Double
  private let turnTau: Double
  private let turnRadians: Double
  private var rejectLow2: Double
  private var rejectHigh2: Double
  private var motionLow2: Double
  private var motionHigh2: Double
  private var impactLow2: Double
  private var impactHigh2: Double
  private let sinFlatEnter2: Double
  private let sinFlatLeave2: Double
  private let sinVerticalUp2: Double
  private let sinVerticalDown2: Double
  /// tan(45 - hysteresis): a candidate's minor/major component ratio must be below this.
  private let candidateTan: Double
  private let bandEdge: Double
  private let settleScale: Double
  private let settleTimeFast: Double
  private let steadyRadiansPerSecond: Double
  private let sinSettled2: Double
  /// sin^2(turnAngle), for the swing's lead without trigonometry.
  private let sinTurn2: Double

  // State.
  private var lastTime = -Double.infinity
  private var filterLive = false
  private var decideNow = true
  private var flat = false
  private var lastMotionTime = -Double.infinity
  private var lastImpactTime = -Double.infinity
  /// The last sample at which the display swung towards flat (being put down or away).
  private var lastSwingTime = -Double.infinity
  /// Whether a deliberate turn away from the current orientation brought the angle past the
  /// band for the current candidate: it stays decisive if the hand pauses there.
  private var turnLatched = false
  /// The sign of the last lead of at least turnAngle (+1, -1; 0 before any) and when the
  /// last two reversals of it happened (each within two marginal hold times of the lead
  /// before): a swing one way, back, and that way again.
  private var leadSign = 0
  private var reversal1 = -Double.infinity
  private var reversal2 = -Double.infinity
  /// The last sample with a lead of at least turnAngle.
  private var leadTime = -Double.infinity
  /// Since when the lead has stayed under half of turnAngle (the reference caught up).
  private var calmSince = Double.infinity
  /// Whether the sample is within half a deliberate turn's speed (turnAngle per
  /// turnTimeConstant, halved) of the previous filtered vector: the hand has stopped.
  private var stopped = false
  private var cachedSinStopped2 = 1.0
  /// The orientation gathering evidence to replace `orientation` (`undefined` when none).
  public private(set) var candidate: Orientation = .undefined
  /// The evidence for `candidate`, from 0 to 1 (committed at 1).
  public private(set) var evidence = 0.0
  private var cachedDt = -1.0
  private var cachedAlpha = 1.0
  private var cachedTurnAlpha = 1.0
  private var cachedSinSteady2 = 1.0
  /// The slower reference filter for the turn rule.
  private var reference = Vector3.zero
  private var previousRaw = Vector3.zero
  /// The squared magnitude through the same low-pass filter (not the filtered vector's: a
  /// turn shortens that, a turn is not motion).
  private var filteredM2 = 0.0
  /// The squared magnitude through the slower reference filter: a gait or a shake averages
  /// out of it, a sustained push does not.
  private var referenceM2 = 0.0
  /// Whether the filter has forgotten the previous sample: it came more than
  /// `freshGapFactor` time constants (and hold times of a decisive change) ago.
  private var fresh = false
  private let freshGap: Double

  /// Creates a detector in the `undefined` state.
  ///
  /// The parameters are used as given; validate user input first with
  /// `DetectorParameters.validate(source:)`.
  public init(parameters: DetectorParameters = DetectorParameters()) {
    self.parameters = parameters
    let p = parameters
    let degrees = Double.pi / 180
    tau = p.filterTimeConstant
    turnTau = p.turnTimeConstant
    turnRadians = p.turnAngle * degrees
    gravityEstimator = GravityEstimator(nominal: p.gravity)
    (rejectLow2, rejectHigh2, motionLow2, motionHigh2, impactLow2, impactHigh2) =
      p.magnitudeLimits(gravity: p.gravity)
    sinFlatEnter2 = square(sin(p.flatEnter * degrees))
    sinFlatLeave2 = square(sin(p.flatLeave * degrees))
    sinVerticalUp2 = square(sin(min(p.verticalLimit + 1.5, 89) * degrees))
    sinVerticalDown2 = square(sin(max(p.verticalLimit - 1.5, 0) * degrees))
    candidateTan = tan((45 - p.hysteresis) * degrees)
    bandEdge = p.hysteresis
    let span = p.decisiveAngle - p.hysteresis
    settleScale = span > 0 ? 1 / span : 1
    settleTimeFast = p.settleTimeFast
    steadyRadiansPerSecond = p.steadyRate * degrees
    sinSettled2 = square(sin(p.settledAngle * degrees))
    sinTurn2 = square(sin(min(p.turnAngle, 90) * degrees))
    freshGap =
      OrientationDetector.freshGapFactor * max(p.filterTimeConstant, p.settleTimeFast, 0.001)
  }

  /// After this many filter time constants (e^-4: 2% of the past left) a sample is judged on
  /// its own, like the first one after a gap.
  static let freshGapFactor = 4.0

  /// Forgets everything but the parameters, the counters and the gravity estimate (a property
  /// of the sensor, not of the motion): back to `undefined`.
  public mutating func reset() {
    let counts = rejections
    let resets = filterResets
    let estimator = gravityEstimator
    self = OrientationDetector(parameters: parameters)
    rejections = counts
    filterResets = resets
    gravityEstimator = estimator
    useGravity(estimator.gravity)
  }

  /// Forgets the gravity estimate too (another sensor): back to `parameters.gravity`.
  public mutating func resetGravityEstimate() {
    gravityEstimator = GravityEstimator(nominal: parameters.gravity)
    useGravity(parameters.gravity)
  }

  private mutating func useGravity(_ g: Double) {
    (rejectLow2, rejectHigh2, motionLow2, motionHigh2, impactLow2, impactHigh2) =
      parameters.magnitudeLimits(gravity: g)
  }

  /// Feeds one sample.
  ///
  /// - Returns: the new state when the orientation or the tilt changed at this sample, else
  ///   `nil`.
  @inlinable
  public mutating func process(_ sample: Sample) -> DetectorUpdate? {
    process(time: sample.time, sample.acceleration.x, sample.acceleration.y, sample.acceleration.z)
  }

  /// Feeds one sample given as its components (the allocation-free hot path).
  ///
  /// - Returns: the new state when the orientation or the tilt changed at this sample, else
  ///   `nil`.
  public mutating func process(time t: Double, _ x: Double, _ y: Double, _ z: Double)
    -> DetectorUpdate?
  {
    guard t.isFinite, x.isFinite, y.isFinite, z.isFinite else {
      rejections.notFinite += 1
      return nil
    }
    guard t >= lastTime else {
      rejections.timeBackwards += 1
      return nil
    }
    let previousTime = lastTime
    let m2 = x * x + y * y + z * z
    guard m2 > 0 else {
      rejections.zeroVector += 1
      lastTime = t
      return nil
    }
    lastTime = t
    let scaleWasOff = gravityEstimator.isScaleOff
    if gravityEstimator.add(time: t, x, y, z, m2: m2) {
      useGravity(gravityEstimator.gravity)
      // The samples rejected before were off by the scale, not moving: no motion hold.
      if gravityEstimator.isScaleOff && !scaleWasOff {
        lastMotionTime = -Double.infinity
        lastImpactTime = -Double.infinity
      }
    }
    guard m2 >= rejectLow2, m2 <= rejectHigh2 else {
      rejections.magnitude += 1
      lastMotionTime = t
      lastImpactTime = t
      return nil
    }

    // Low-pass filter, restarted after a gap.
    var dt = t - gravityTime
    var steady = true
    if !filterLive || dt > parameters.gapReset {
      gravity = Vector3(x, y, z)
      reference = gravity
      filteredM2 = m2
      referenceM2 = m2
      filterLive = true
      hasReading = true
      decideNow = true
      candidate = .undefined
      evidence = 0
      filterResets += 1
      dt = 0
    } else if dt > 0 {
      fresh = dt >= freshGap
      if dt != cachedDt {
        // Regular sampling repeats dt exactly, so the exponentials are computed rarely.
        cachedDt = dt
        cachedAlpha = tau > 0 ? 1 - exp(-dt / tau) : 1
        cachedTurnAlpha = turnTau > 0 ? 1 - exp(-dt / turnTau) : 1
        cachedSinSteady2 = square(sin(min(steadyRadiansPerSecond * (tau + dt), Double.pi / 2)))
        // Stopped: slower than half a deliberate turn (turnAngle within turnTimeConstant).
        let stoppedRate = turnTau > 0 ? turnRadians / turnTau / 2 : steadyRadiansPerSecond
        cachedSinStopped2 = square(sin(min(stoppedRate * (tau + dt), Double.pi / 2)))
      }
      // Steady when the sample is within steadyRate x (tau + dt) of the previous filtered
      // vector: |a x f|^2 <= sin^2 x |a|^2 |f|^2.
      let p = gravity
      let cx = y * p.z - z * p.y
      let cy = z * p.x - x * p.z
      let cz = x * p.y - y * p.x
      let cross2 = cx * cx + cy * cy + cz * cz
      let norms = m2 * (p.x * p.x + p.y * p.y + p.z * p.z)
      steady = cross2 <= cachedSinSteady2 * norms
      stopped = cross2 <= cachedSinStopped2 * norms
      if !steady {
        // ... or settled: within settledAngle of the previous raw sample.
        let q = previousRaw
        let sx = y * q.z - z * q.y
        let sy = z * q.x - x * q.z
        let sz = x * q.y - y * q.x
        steady =
          sx * sx + sy * sy + sz * sz < sinSettled2 * m2 * (q.x * q.x + q.y * q.y + q.z * q.z)
      }
      let alpha = cachedAlpha
      gravity.x += (x - gravity.x) * alpha
      gravity.y += (y - gravity.y) * alpha
      gravity.z += (z - gravity.z) * alpha
      filteredM2 += (m2 - filteredM2) * alpha
      let beta = cachedTurnAlpha
      reference.x += (x - reference.x) * beta
      reference.y += (y - reference.y) * beta
      reference.z += (z - reference.z) * beta
      referenceM2 += (m2 - referenceM2) * beta
    }
    gravityTime = t
    previousRaw = Vector3(x, y, z)

    // Tilt and flatness from the filtered vector (squared sines: no sqrt or asin needed).
    let f = gravity
    let f2 = f.x * f.x + f.y * f.y + f.z * f.z
    guard f2 > 0 else { return nil }
    // Motion and impacts from the filtered magnitude: the same at every sampling rate, and
    // blind to the hand's tremor and the heel strikes a fast sensor sees sample by sample.
    let fm2 = filteredM2
    if fm2 < motionLow2 || fm2 > motionHigh2 {
      lastMotionTime = t
      if fm2 < impactLow2 || fm2 > impactHigh2 { lastImpactTime = t }
    }
    let z2 = f.z * f.z
    if flat {
      if z2 < sinFlatLeave2 * f2 { flat = false }
    } else if z2 > sinFlatEnter2 * f2 {
      flat = true
    }
    let newTilt: Tilt
    if flat {
      newTilt = f.z < 0 ? .faceUp : .faceDown
    } else {
      let wasVertical = tilt == .vertical || tilt == .undefined || tilt.isFlat
      let limit2 = wasVertical ? sinVerticalUp2 : sinVerticalDown2
      newTilt = z2 <= limit2 * f2 ? .vertical : (f.z < 0 ? .tiltedUp : .tiltedDown)
    }
    let tiltChanged = newTilt != tilt
    tilt = newTilt

    let clean = m2 >= motionLow2 && m2 <= motionHigh2
    // Evidence counts the time seen: after a span of rejected samples (a hard jolt) the sample
    // counts only since the last one received, though the filters take the whole span.
    let seen = min(dt, t - previousTime)
    let orientationChanged =
      flat ? holdWhileFlat(time: t) : decide(f: f, dt: seen, time: t, steady: steady, clean: clean)
    fresh = false
    guard orientationChanged || tiltChanged else { return nil }
    return DetectorUpdate(
      time: t, orientation: orientation, tilt: tilt, orientationChanged: orientationChanged,
      tiltChanged: tiltChanged)
  }

  private mutating func holdWhileFlat(time t: Double) -> Bool {
    // Like a swing towards flat: leaving flat is a moment of doubt (Android waits 500 ms);
    // no evidence until motionHold after.
    lastSwingTime = t
    candidate = .undefined
    evidence = 0
    return false
  }

  /// Steps 4-6 for a non-flat filtered vector; returns whether the orientation changed.
  private mutating func decide(
    f: Vector3, dt: Double, time t: Double, steady: Bool, clean: Bool
  ) -> Bool {
    // In-plane components with theta = atan2(u, v): normal is +v, left-up +u.
    let u = f.x
    let v = -f.y
    let au = abs(u)
    let av = abs(v)
    let nearest: Orientation
    let major: Double
    let minor: Double
    if av >= au {
      nearest = v >= 0 ? .normal : .bottomUp
      major = av
      minor = au
    } else {
      nearest = u > 0 ? .leftUp : .rightUp
      major = au
      minor = av
    }
    if orientation == .undefined {
      return commit(nearest)
    }
    // The signed lead of the filtered angle over the reference's: a deliberate turn leads by
    // turnAngle one way; a leg or an arm swinging the device leads both ways within a stride.
    // No trigonometry per sample: the sign of the 2D cross product is the lead's direction,
    // a positive dot product keeps it within 90 degrees, and the cross product against
    // sin(turnAngle) x both lengths compares its size.
    let ru = reference.x
    let rv = -reference.y
    let cross = rv * u - ru * v
    let dot = u * ru + v * rv
    let big = cross * cross >= sinTurn2 * (u * u + v * v) * (ru * ru + rv * rv)
    let hold = parameters.motionHold
    let moving = t - lastMotionTime < hold
    let impact = t - lastImpactTime < hold
    // A lead beyond 90 degrees is no swing: the reference half way through a quick 180 degree
    // turn averages opposite directions, and its angle means nothing.
    let sign = dot <= 0 || !big ? 0 : (cross > 0 ? 1 : -1)
    let calm = dot > 0 && 4 * cross * cross < sinTurn2 * (u * u + v * v) * (ru * ru + rv * rv)
    calmSince = calm ? min(calmSince, t) : .infinity
    let swingWindow = 2 * parameters.settleTimeSlow
    if sign != 0 {
      if sign != leadSign {
        if leadSign != 0 && t - leadTime < swingWindow {
          reversal2 = reversal1
          reversal1 = t
        } else {
          // The last lead is long past: this one starts afresh, it reverses nothing.
          reversal1 = -Double.infinity
          reversal2 = -Double.infinity
        }
        leadSign = sign
      }
      leadTime = t
    }
    // Two reversals within two marginal hold times: one way, back and that way again (a leg
    // or an arm swinging the device at a stride's pace); a turn, even one whose overshoot
    // settles back, reverses once at most. A lengthening stride swings past the band early.
    // The swing is over once calm for turnTimeConstant: a leg swings past the reference at
    // every stride, a hand that stopped after a hesitating half turn lets it catch up.
    let repetitive = t - reversal2 < swingWindow && t - calmSince < turnTau
    if nearest == orientation {
      candidate = .undefined
      evidence = 0
      decideNow = false
      return false
    }
    // Past the band? The angle from the candidate's centre is atan(minor/major); it must be
    // below 45 - hysteresis. The opposite orientation has no band (as in Android's listener):
    // the band keeps neighbours apart near their diagonal, and the sideways orientation
    // between two opposite ones still has its band on either side.
    let opposite = areOpposite(orientation, nearest)
    let pastBand = opposite || minor < candidateTan * major
    guard pastBand || !decideNow else {
      candidate = .undefined
      evidence = 0
      decideNow = false
      return false
    }
    if decideNow { return commit(nearest) }
    if nearest != candidate {
      candidate = nearest
      evidence = 0
      turnLatched = false
    }
    // Being put down or away (Android's "swinging"): the tilt heads for flat. No evidence
    // until it has stopped for motionHold.
    if swinging(f: f) {
      lastSwingTime = t
      // Being put down is not a turn: what the angle drifts through on the way is no
      // destination, even if the hand stops on the way.
      turnLatched = false
    }
    guard t - lastSwingTime >= hold else { return false }
    let motion = turnMotion(u: u, v: v)
    // Heading back towards the current orientation (a put-down's drift undone while picking
    // the device up, an overshoot): what the angle passes on the way is not a destination.
    if motion == .back {
      evidence = 0
      turnLatched = false
      return false
    }
    // A swing back and forth is no deliberate turn, however fast.
    if motion == .away && !repetitive { turnLatched = true }
    if repetitive { turnLatched = false }
    if !pastBand {
      // Inside the band, after a deliberate turn crossed the boundary: when the hand has
      // stopped there (slower than half a deliberate turn, its magnitude clean, no motion)
      // for motionSettleTime, that is where it was turned to. A hand wandering across the
      // boundary, or held near the diagonal, has made no deliberate turn and keeps the band.
      // Not near flat (the in-plane angle is weak there), nor while the reference still
      // remembers a swing towards flat (a put-down that stops on the way).
      let upright =
        f.z * f.z <= sinFlatLeave2 * (f.x * f.x + f.y * f.y + f.z * f.z)
        && t - lastSwingTime >= turnTau + hold
      guard turnLatched, stopped, clean, !moving, !impact, motion == .none, upright else {
        evidence = 0
        return false
      }
      evidence += min(0.5, dt / max(settleTimeFast, parameters.motionSettleTime))
      if evidence >= 1 { return commit(nearest) }
      return false
    }
    // A sample the filter has forgotten the past for (the sampler slowed down while the
    // device was still): judged alone, as after a gap, when it is clean and decisive.
    if fresh && clean && !moving && depth(minor: minor, major: major) >= 1 {
      return commit(nearest)
    }
    var wait = parameters.settleTimeSlow
    if repetitive {
      // Swinging back and forth (a pocket on a walking leg): only the reference filter,
      // deep in the candidate's sector and held as long as a marginal change must.
      guard referenceDecisive(for: nearest) else { return false }
    } else if impact || moving {
      // Walking, running, braking: footsteps tilt single readings, so steadiness says little.
      // Decisive evidence counts: a deliberate turn (through impacts only once the reference,
      // which averages a gait out, is in the candidate's sector: one jolt looks like a turn),
      // or that reference deep there, its magnitude clear of an impact, for motionSettleTime.
      let deliberate = turnLatched && (!impact || referenceNearest() == nearest)
      guard deliberate || referenceDecisive(for: nearest) else { return false }
      wait = max(settleTimeFast, parameters.motionSettleTime)
    } else if steady && turnLatched {
      wait = settleTimeFast
    } else if steady {
      // x: 0 at the band's edge, 1 at decisiveAngle. The wait falls as 1 - x^2: it stays
      // long through the marginal zone and shortens sharply near the decisive depth.
      let x = depth(minor: minor, major: major, edge: opposite ? 0 : nil)
      wait = settleTimeFast + (wait - settleTimeFast) * (1 - x * x)
    }
    // At most half the evidence from one sample: a change always needs two samples that agree.
    evidence += min(0.5, wait > 0 ? dt / wait : 1)
    if evidence >= 1 { return commit(nearest) }
    return false
  }

  /// How deep the angle is into the candidate's sector: 0 at the band's edge, 1 at (or beyond)
  /// `decisiveAngle`.
  private func depth(minor: Double, major: Double, edge: Double? = nil) -> Double {
    let degrees = 45 - atan2(minor, major) * (180 / Double.pi)
    return max(0, min(1, (degrees - (edge ?? bandEdge)) * settleScale))
  }

  /// How the in-plane angle is moving, by the lead of the filtered angle over the reference
  /// filter's.
  private enum TurnMotion {
    /// Less than `turnAngle` of lead: no deliberate turn.
    case none
    /// At least `turnAngle`, away from the current orientation (towards the candidate): a
    /// deliberate turn in progress or just finished.
    case away
    /// At least `turnAngle`, back towards the current orientation, away from the candidate.
    case back
  }

  private func turnMotion(u: Double, v: Double) -> TurnMotion {
    guard let centre = orientation.clockwiseRotation,
      let target = candidate.clockwiseRotation
    else { return .none }
    let theta = atan2(u, v)
    let lead = wrapRadians(theta - atan2(reference.x, -reference.y))
    guard abs(lead) >= turnRadians else { return .none }
    let radians = Double.pi / 180
    let away = wrapRadians(theta - Double(centre) * radians)
    if (lead > 0) == (away > 0) {
      // Past the candidate's centre of a 180 degree turn the angle may seem to head back;
      // it is still moving on, away from where it started.
      return .away
    }
    // Back towards the current orientation: away from the candidate's centre, on the side of
    // the current orientation.
    let fromTarget = wrapRadians(theta - Double(target) * radians)
    return (lead > 0) == (fromTarget > 0) ? .back : .away
  }

  /// Whether the display is swinging towards flat: its tilt from vertical leads the
  /// reference filter's by at least `turnAngle` (the same "deliberate within about
  /// turn-time-constant" measure as a turn).
  private func swinging(f: Vector3) -> Bool {
    let r = reference
    let f2 = f.x * f.x + f.y * f.y + f.z * f.z
    let r2 = r.x * r.x + r.y * r.y + r.z * r.z
    guard f2 > 0, r2 > 0 else { return false }
    let tilt = asin(min(1, abs(f.z) / f2.squareRoot()))
    let referenceTilt = asin(min(1, abs(r.z) / r2.squareRoot()))
    return tilt - referenceTilt >= turnRadians
  }

  /// The orientation the reference filter (which averages a gait or a shake out) points to,
  /// or `undefined` while its magnitude is off by an impact.
  private func referenceNearest() -> Orientation {
    guard referenceM2 >= impactLow2, referenceM2 <= impactHigh2 else { return .undefined }
    let u = reference.x
    let v = -reference.y
    if abs(v) >= abs(u) { return v >= 0 ? .normal : .bottomUp }
    return u > 0 ? .leftUp : .rightUp
  }

  /// Whether the reference filter is `decisiveAngle` deep in `target`'s sector, and its
  /// magnitude clear of an impact.
  private func referenceDecisive(for target: Orientation) -> Bool {
    guard referenceNearest() == target else { return false }
    let (au, av) = (abs(reference.x), abs(reference.y))
    return depth(minor: min(au, av), major: max(au, av)) >= 1
  }

  private mutating func commit(_ new: Orientation) -> Bool {
    candidate = .undefined
    evidence = 0
    turnLatched = false
    decideNow = false
    guard new != orientation else { return false }
    orientation = new
    return true
  }
}
