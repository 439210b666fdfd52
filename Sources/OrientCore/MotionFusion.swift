#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Gyroscope, accelerometer and (optionally) magnetometer fused into the device's rotation.
///
/// A complementary filter in the VQF class (Laidig and Seel, "VQF: Highly accurate IMU
/// orientation estimation with bias estimation and magnetic disturbance rejection", 2023), as
/// a small value type with no allocation per sample (docs/motion.md, "Fusion"):
///
/// 1. The gyroscope, less its estimated bias, is integrated (exact rotation per step).
/// 2. The accelerometer corrects only the **inclination**: the rotation that would bring the
///    measured specific force to vertical is applied in part, by a time constant
///    (`inclinationTimeConstant`), so 12.5 Hz and 400 Hz sensors behave alike. A reading whose
///    magnitude is off g by more than `accelerationTolerance` (walking, a jolt) counts less,
///    and not at all at twice that.
/// 3. The magnetometer corrects only the **heading** (a rotation about vertical), by its own
///    time constant, so a magnet next to the device can turn the heading but never tilt the
///    inclination. A field whose strength or dip departs from the learnt one (a speaker, a
///    laptop's lid magnet) is not used; one that stays different for `magneticAdoptTime`
///    becomes the new reference (the device was moved somewhere else).
/// 4. The gyroscope's bias (consumer parts: a few degrees per second at power-on, drifting
///    with temperature) is learnt two ways: while the device rests (the gyroscope's and
///    accelerometer's deviations from their low-passed values stay small for `restTime`) the
///    low-passed rate is the bias; while it moves, the inclination corrections are integrated
///    (the integral term of a PI controller, `biasTimeConstant`), which removes the steady
///    inclination error a bias would otherwise leave.
///
/// Frames: the rotation turns display-frame vectors (x right, y up, z out of the screen;
/// angular velocity right-handed about them) into the earth frame: z up, and with a
/// magnetometer y magnetic north and x east (`isHeadingAbsolute`); without one the heading
/// starts wherever the device pointed (as Android's game rotation vector). Accelerations are
/// in orientd's convention (the reading points along gravity: upright reads (0, -g, 0)).
public struct MotionFusion: Sendable {
  /// The filter's settings. Times in seconds, angles in radians.
  public struct Parameters: Sendable, Equatable {
    /// Time constant of the accelerometer's inclination correction while the device turns
    /// (at `steadyRate` and faster: walking, a vehicle's corners, a game).
    public var inclinationTimeConstant = 3.0
    /// The inclination correction's time constant while the device is steady (held, lying, or
    /// after a turn): shorter, so errors the gyroscope's scale and bias left go quickly.
    public var steadyInclinationTimeConstant = 0.7
    /// Below this low-passed turn rate (rad/s) the device counts as steady; between it and 0
    /// the time constant goes from one to the other.
    public var steadyRate = 20 * Double.pi / 180
    /// Time constant of the magnetometer's heading correction.
    public var headingTimeConstant = 4.0
    /// Time constant of the in-motion bias correction once settled (0 turns it off); it
    /// starts at `initialBiasTimeConstant` and lengthens as the filter has learnt for longer.
    public var biasTimeConstant = 20.0
    /// The in-motion bias correction's time constant at first.
    public var initialBiasTimeConstant = 3.0
    /// Above this rate (rad/s) the inclination error comes from the gyroscope's scale and
    /// alignment more than from its bias: the in-motion bias correction pauses.
    public var biasLearningRate = 0.5
    /// Accelerometer readings off g by more than this fraction count less (none at twice it).
    public var accelerationTolerance = 0.2
    /// Rest: the gyroscope's deviation from its low-passed rate stays below this (rad/s).
    public var restGyroThreshold = 2 * Double.pi / 180
    /// Rest: the accelerometer's deviation from its low-passed reading stays below this (m/s^2).
    public var restAccelerationThreshold = 0.5
    /// Rest: for at least this long.
    public var restTime = 1.5
    /// Time constant of the low-pass filters the rest test and the rest bias use.
    public var restFilterTimeConstant = 0.5
    /// The largest bias believed (rad/s); a faster steady rate is motion, not bias.
    public var maximumBias = 0.1
    /// A magnetic field whose strength is off the reference by more than this fraction, ...
    public var magneticNormTolerance = 0.15
    /// ... or whose dip is off by more than this (rad), is a disturbance and is not used.
    public var magneticDipTolerance = 10 * Double.pi / 180
    /// A disturbance that stays this long becomes the new reference.
    public var magneticAdoptTime = 20.0
    /// After the start (and after a gap) the corrections run fast for this long, ...
    public var startupTime = 1.0
    /// ... with this inclination time constant ...
    public var startupInclinationTimeConstant = 0.15
    /// ... and this heading time constant.
    public var startupHeadingTimeConstant = 0.3
    /// A longer gap between samples of one sensor is not integrated over.
    public var gapReset = 1.0
    /// Gravity in the accelerometer's units.
    public var gravity = standardGravity

    /// The defaults (docs/motion.md).
    public init() {}
  }

  /// Samples not used, by reason.
  public struct Rejections: Sendable, Equatable {
    /// A component or the time was NaN or infinite, or an accelerometer reading was zero.
    public var invalid = 0
    /// The time went backwards for that sensor.
    public var timeBackwards = 0
    /// Magnetometer readings taken for a disturbance.
    public var magneticDisturbance = 0

    /// No rejections.
    public init() {}
  }

  /// The settings.
  public let parameters: Parameters
  /// The rotation from the display frame to the earth frame (identity until initialised).
  public private(set) var rotation = Quaternion.identity
  /// Whether an accelerometer reading has set the inclination.
  public private(set) var isInitialized = false
  /// Whether the heading follows magnetic north (a magnetometer reading was used in the last
  /// `magneticAdoptTime`).
  public var isHeadingAbsolute: Bool {
    guard let last = lastMagneticUse, let now = latestTime else { return false }
    return now - last <= parameters.magneticAdoptTime
  }
  /// The estimated gyroscope bias (rad/s, display frame).
  public private(set) var bias = Vector3.zero
  /// The last angular velocity, bias removed (rad/s, display frame).
  public private(set) var angularVelocity = Vector3.zero
  /// The low-passed turn rate (rad/s, bias removed; time constant
  /// `restFilterTimeConstant`): hand tremor averages out, a deliberate turn shows.
  public var turnRate: Double { (gyroLowPass - bias).magnitude }
  /// Whether the device counts as resting (the bias is being learnt from the gyroscope).
  public private(set) var isResting = false
  /// Samples not used, by reason.
  public private(set) var rejections = Rejections()

  private var lastGyroTime: Double?
  private var lastAccelerationTime: Double?
  private var lastMagneticTime: Double?
  private var lastMagneticUse: Double?
  private var latestTime: Double?
  private var startTime = 0.0
  private var gyroLowPass = Vector3.zero
  private var accelerationLowPass = Vector3.zero
  private var gyroSteady = false
  private var accelerationSteady = false
  private var steadySince: Double?
  private var magneticReference: (norm: Double, dip: Double)?
  private var disturbedSince: Double?
  private var headingSet = false
  private var biasLearningTime = 0.0

  /// A filter that has seen nothing yet.
  public init(parameters: Parameters = Parameters()) {
    self.parameters = parameters
  }

  /// Gravity as the accelerometer would read it without linear acceleration (m/s^2 in
  /// `parameters.gravity` units, display frame, orientd's sign convention); zero before the
  /// first accelerometer reading.
  public var gravity: Vector3 {
    guard isInitialized else { return .zero }
    return rotation.conjugate.rotate(Vector3(0, 0, -parameters.gravity))
  }

  // MARK: - Gyroscope

  /// Integrates one gyroscope reading (rad/s, display frame) taken at `time` (seconds).
  ///
  /// The rate is taken as the mean over the interval since the previous reading (what a
  /// sensor's decimation filter delivers). A gap longer than `gapReset` is not integrated.
  public mutating func integrate(gyro omega: Vector3, time: Double) {
    guard omega.isFinite, time.isFinite else {
      rejections.invalid += 1
      return
    }
    guard let last = lastGyroTime else {
      lastGyroTime = time
      gyroLowPass = omega
      note(time)
      return
    }
    let dt = time - last
    guard dt >= 0 else {
      rejections.timeBackwards += 1
      return
    }
    lastGyroTime = time
    note(time)
    guard dt > 0, dt <= parameters.gapReset else {
      if dt > parameters.gapReset { gyroLowPass = omega }
      return
    }
    angularVelocity = omega - bias
    if isInitialized {
      rotation = (rotation * Quaternion(rotationVector: angularVelocity * dt)).normalized
    }
    // Rest detection and the rest bias.
    let k = 1 - exp(-dt / parameters.restFilterTimeConstant)
    gyroLowPass = gyroLowPass + (omega - gyroLowPass) * k
    gyroSteady =
      (omega - gyroLowPass).magnitude < parameters.restGyroThreshold
      && gyroLowPass.magnitude < parameters.maximumBias
    updateRest(time)
    if isResting {
      bias = bias + (gyroLowPass - bias) * k
    }
  }

  // MARK: - Accelerometer

  /// Corrects the inclination with one accelerometer reading (display frame, orientd's sign
  /// convention) taken at `time`. The first reading sets the inclination outright.
  public mutating func correct(acceleration a: Vector3, time: Double) {
    guard a.isFinite, time.isFinite, a != .zero else {
      rejections.invalid += 1
      return
    }
    let force = a * -1  // specific force: points up at rest
    guard isInitialized, let last = lastAccelerationTime else {
      if !isInitialized {
        rotation = Quaternion(from: force, to: Vector3(0, 0, 1))
        isInitialized = true
        startTime = time
      }
      lastAccelerationTime = time
      accelerationLowPass = a
      note(time)
      return
    }
    let dt = time - last
    guard dt >= 0 else {
      rejections.timeBackwards += 1
      return
    }
    lastAccelerationTime = time
    note(time)
    guard dt > 0 else { return }
    if dt > parameters.gapReset {
      startTime = time  // converge fast again after a gap
      accelerationLowPass = a
      return
    }
    let kRest = 1 - exp(-dt / parameters.restFilterTimeConstant)
    accelerationLowPass = accelerationLowPass + (a - accelerationLowPass) * kRest
    accelerationSteady = (a - accelerationLowPass).magnitude < parameters.restAccelerationThreshold
    updateRest(time)

    // Weight by how plausible the magnitude is as gravity alone.
    let off = abs(force.magnitude / parameters.gravity - 1)
    let tolerance = parameters.accelerationTolerance
    let weight = off <= tolerance ? 1 : max(0, 2 - off / tolerance)
    guard weight > 0 else { return }
    let starting = time - startTime < parameters.startupTime
    let turning = min(1, (gyroLowPass - bias).magnitude / parameters.steadyRate)
    let tau =
      starting
      ? parameters.startupInclinationTimeConstant
      : parameters.steadyInclinationTimeConstant
        + (parameters.inclinationTimeConstant - parameters.steadyInclinationTimeConstant)
        * turning
    let gain = (1 - exp(-dt / tau)) * weight

    // The earth-frame rotation that would make the measured force vertical.
    let up = rotation.rotate(force).normalized
    let axis = Vector3(up.y, -up.x, 0)  // up x (0, 0, 1)
    let sine = axis.magnitude
    guard sine > 1e-12 else { return }
    let error = atan2(sine, up.z)
    rotation = (Quaternion(axis: axis, angle: error * gain) * rotation).normalized

    // In motion, integrate the remaining error into the bias (PI controller); the error in
    // the display frame is the rotation the gyroscope failed to measure, reversed.
    // The time constant lengthens from initialBiasTimeConstant as learning goes on (as a
    // Kalman filter's gain falls with its variance), and learning pauses while turning fast.
    let spin = angularVelocity.magnitude / parameters.biasLearningRate
    if !starting, parameters.biasTimeConstant > 0, !isResting, spin < 1 {
      let w = weight * (1 - spin)
      biasLearningTime += dt * w
      let settled = min(1, biasLearningTime / parameters.biasTimeConstant)
      let tauBias =
        parameters.initialBiasTimeConstant
        + (parameters.biasTimeConstant - parameters.initialBiasTimeConstant) * settled
      let bodyError = rotation.conjugate.rotate(axis * (error * w / sine))
      bias = clamped(bias - bodyError * (dt / (tau * tauBias)))
    }
  }

  // MARK: - Magnetometer

  /// Corrects the heading with one magnetometer reading (any unit, display frame) taken at
  /// `time`. Needs the inclination first; readings taken for a disturbance are counted in
  /// `rejections.magneticDisturbance`.
  public mutating func correct(magneticField m: Vector3, time: Double) {
    guard m.isFinite, time.isFinite, m != .zero else {
      rejections.invalid += 1
      return
    }
    guard isInitialized else { return }
    let dt = lastMagneticTime.map { time - $0 } ?? 0
    guard dt >= 0 else {
      rejections.timeBackwards += 1
      return
    }
    lastMagneticTime = time
    note(time)
    let earth = rotation.rotate(m)
    let norm = m.magnitude
    let dip = asin(max(-1, min(1, earth.z / norm)))
    guard let reference = magneticReference else {
      magneticReference = (norm, dip)
      apply(heading: earth, gain: 1, time: time)
      return
    }
    let disturbed =
      abs(norm / reference.norm - 1) > parameters.magneticNormTolerance
      || abs(dip - reference.dip) > parameters.magneticDipTolerance
    if disturbed {
      rejections.magneticDisturbance += 1
      let since = disturbedSince ?? time
      disturbedSince = since
      if time - since >= parameters.magneticAdoptTime {
        magneticReference = (norm, dip)
        disturbedSince = nil
        apply(heading: earth, gain: 1, time: time)
      }
      return
    }
    disturbedSince = nil
    // Follow slow changes of the reference (temperature, a new place within tolerance).
    let kRef = dt > 0 ? 1 - exp(-dt / 30) : 0
    magneticReference = (
      reference.norm + (norm - reference.norm) * kRef, reference.dip + (dip - reference.dip) * kRef
    )
    let starting = time - startTime < parameters.startupTime
    let tau = starting ? parameters.startupHeadingTimeConstant : parameters.headingTimeConstant
    let steady = headingSet && dt > 0 && dt <= parameters.gapReset
    let gain = steady ? 1 - exp(-dt / tau) : 1
    let delta = apply(heading: earth, gain: gain, time: time)
    // The rate about vertical the gyroscope misses (its bias's vertical part, which the
    // accelerometer cannot see) leaves a steady heading error: integrate it into the bias, as
    // the inclination's error is (the same schedule and pause while turning fast).
    let spin = angularVelocity.magnitude / parameters.biasLearningRate
    if steady, !starting, parameters.biasTimeConstant > 0, !isResting, spin < 1 {
      let settled = min(1, biasLearningTime / parameters.biasTimeConstant)
      let tauBias =
        parameters.initialBiasTimeConstant
        + (parameters.biasTimeConstant - parameters.initialBiasTimeConstant) * settled
      let bodyError = rotation.conjugate.rotate(Vector3(0, 0, delta * (1 - spin)))
      bias = clamped(bias - bodyError * (dt / (tau * tauBias)))
    }
  }

  /// Turns the earth frame about vertical so the field's horizontal part points north (+y);
  /// returns the heading error it found (radians; 0 for a field with no horizontal part).
  @discardableResult
  private mutating func apply(heading earth: Vector3, gain: Double, time: Double) -> Double {
    let horizontal = (earth.x * earth.x + earth.y * earth.y).squareRoot()
    guard horizontal > 1e-6 * max(1, abs(earth.z)) else { return 0 }
    let delta = atan2(earth.x, earth.y)
    rotation = (Quaternion(axis: Vector3(0, 0, 1), angle: delta * gain) * rotation).normalized
    headingSet = true
    lastMagneticUse = time
    return delta
  }

  // MARK: - Both

  /// One sample of a combined IMU: integrates the gyroscope, then corrects with the
  /// accelerometer (and the magnetometer when given).
  public mutating func update(
    time: Double, gyro: Vector3, acceleration: Vector3, magneticField: Vector3? = nil
  ) {
    integrate(gyro: gyro, time: time)
    correct(acceleration: acceleration, time: time)
    if let magneticField { correct(magneticField: magneticField, time: time) }
  }

  /// Forgets everything (as when the sensors restart).
  public mutating func reset() {
    self = MotionFusion(parameters: parameters)
  }

  private mutating func note(_ time: Double) {
    if latestTime.map({ time > $0 }) ?? true { latestTime = time }
  }

  private mutating func updateRest(_ time: Double) {
    if gyroSteady && accelerationSteady {
      let since = steadySince ?? time
      steadySince = since
      isResting = time - since >= parameters.restTime
    } else {
      steadySince = nil
      isResting = false
    }
  }

  private func clamped(_ b: Vector3) -> Vector3 {
    let m = b.magnitude
    return m > parameters.maximumBias ? b * (parameters.maximumBias / m) : b
  }
}
