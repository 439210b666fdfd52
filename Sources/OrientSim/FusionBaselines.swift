import OrientCore

#if canImport(Glibc)
  import Glibc
#endif

/// Anything that turns IMU samples into a rotation: orientd's fusion and the two baselines.
public protocol FusionFilter {
  /// The column name in the benchmark table.
  static var name: String { get }
  /// A filter that has seen nothing.
  init()
  /// Feeds one sample; the magnetometer reading is used only when `magnetometer` is true.
  mutating func update(_ sample: MotionSample, magnetometer: Bool)
  /// The current rotation from the display frame to the earth frame (x east, y magnetic
  /// north, z up).
  var estimate: Quaternion { get }
}

/// The orientation one accelerometer reading (and a magnetometer reading) gives, in orientd's
/// earth frame (x east, y north, z up): where the baselines start, so that the benchmark
/// compares them settled rather than converging from the identity as their reference code does.
public func startingOrientation(acceleration a: Vector3, field: Vector3?) -> Quaternion {
  let up = (a * -1).normalized
  guard let field, field != .zero else { return Quaternion(from: up, to: Vector3(0, 0, 1)) }
  let east = field.cross(up).normalized
  let north = up.cross(east)
  // The rows of the sensor-to-earth matrix are east, north and up in the sensor frame.
  let m = [east.x, east.y, east.z, north.x, north.y, north.z, up.x, up.y, up.z]
  // Orthonormal by construction: a rotation.
  return Quaternion(rotationMatrix: m) ?? Quaternion(from: up, to: Vector3(0, 0, 1))
}

/// A quarter turn about vertical: orientd's earth frame (north along y) from the baselines'
/// (north along x).
let northAlongY = Quaternion(axis: Vector3(0, 0, 1), angle: Double.pi / 2)

/// orientd's `MotionFusion` as a benchmark filter.
public struct OrientdFusionFilter: FusionFilter {
  /// `orientd`.
  public static let name = "orientd"
  /// The filter.
  public var fusion: MotionFusion

  /// A filter with the default parameters.
  public init() { fusion = MotionFusion() }

  /// A filter with the given parameters.
  public init(parameters: MotionFusion.Parameters) { fusion = MotionFusion(parameters: parameters) }

  /// Integrates, corrects with the accelerometer, then with the magnetometer.
  public mutating func update(_ sample: MotionSample, magnetometer: Bool) {
    fusion.integrate(gyro: sample.gyro, time: sample.time)
    fusion.correct(acceleration: sample.acceleration, time: sample.time)
    if magnetometer, let m = sample.magneticField {
      fusion.correct(magneticField: m, time: sample.time)
    }
  }

  /// The fusion's rotation.
  public var estimate: Quaternion { fusion.rotation }
}

/// Madgwick's gradient-descent filter (S. Madgwick, "An efficient orientation filter for
/// inertial and inertial/magnetic sensor arrays", 2010), re-implemented from the paper's
/// equations with the reference implementation's default gain (beta 0.1), IMU and MARG forms.
///
/// Its earth frame has x towards magnetic north and z up; `estimate` turns it to orientd's
/// (x east, y north) by a quarter turn about vertical. Without a magnetometer reading the IMU
/// form runs. Unlike the reference code (which starts from the identity and converges with
/// beta), it starts from the first sample's orientation (`startingOrientation`).
public struct MadgwickFilter: FusionFilter {
  /// `madgwick`.
  public static let name = "madgwick"
  /// The algorithm gain.
  public var beta = 0.1
  private var q = Quaternion.identity
  private var lastTime: Double?

  /// A filter at the identity.
  public init() {}

  /// One step of the filter.
  public mutating func update(_ sample: MotionSample, magnetometer: Bool) {
    guard let last = lastTime else {
      let field = magnetometer ? sample.magneticField : nil
      if magnetometer && field == nil { return }  // wait for the first field reading
      lastTime = sample.time
      q =
        northAlongY.conjugate
        * startingOrientation(acceleration: sample.acceleration, field: field)
      return
    }
    let dt = sample.time - last
    lastTime = sample.time
    guard dt > 0, dt < 1 else { return }
    let g = sample.gyro
    // Rate of change from the gyroscope: 0.5 q x (0, g).
    var qDot = q * Quaternion(w: 0, x: g.x, y: g.y, z: g.z)
    qDot = Quaternion(w: qDot.w / 2, x: qDot.x / 2, y: qDot.y / 2, z: qDot.z / 2)
    let a = (sample.acceleration * -1).normalized  // specific force: +z at rest flat
    if a != .zero {
      let (q0, q1, q2, q3) = (q.w, q.x, q.y, q.z)
      // Objective function and Jacobian for gravity (paper eq. 25-26).
      var f = [
        2 * (q1 * q3 - q0 * q2) - a.x,
        2 * (q0 * q1 + q2 * q3) - a.y,
        2 * (0.5 - q1 * q1 - q2 * q2) - a.z,
      ]
      var rows: [[Double]] = [
        [-2 * q2, 2 * q3, -2 * q0, 2 * q1],
        [2 * q1, 2 * q0, 2 * q3, 2 * q2],
        [0, -4 * q1, -4 * q2, 0],
      ]
      if magnetometer, let mRaw = sample.magneticField, mRaw != .zero {
        let m = mRaw.normalized
        // Reference field in the earth frame from the current estimate (eq. 45-46).
        let h = q.rotate(m)
        let bx = (h.x * h.x + h.y * h.y).squareRoot()
        let bz = h.z
        f += [
          2 * bx * (0.5 - q2 * q2 - q3 * q3) + 2 * bz * (q1 * q3 - q0 * q2) - m.x,
          2 * bx * (q1 * q2 - q0 * q3) + 2 * bz * (q0 * q1 + q2 * q3) - m.y,
          2 * bx * (q0 * q2 + q1 * q3) + 2 * bz * (0.5 - q1 * q1 - q2 * q2) - m.z,
        ]
        rows += [
          [-2 * bz * q2, 2 * bz * q3, -4 * bx * q2 - 2 * bz * q0, -4 * bx * q3 + 2 * bz * q1],
          [
            -2 * bx * q3 + 2 * bz * q1, 2 * bx * q2 + 2 * bz * q0, 2 * bx * q1 + 2 * bz * q3,
            -2 * bx * q0 + 2 * bz * q2,
          ],
          [2 * bx * q2, 2 * bx * q3 - 4 * bz * q1, 2 * bx * q0 - 4 * bz * q2, 2 * bx * q1],
        ]
      }
      // Gradient J^T f, normalised.
      var grad = (0.0, 0.0, 0.0, 0.0)
      for (row, value) in zip(rows, f) {
        grad.0 += row[0] * value
        grad.1 += row[1] * value
        grad.2 += row[2] * value
        grad.3 += row[3] * value
      }
      let step = Quaternion(w: grad.0, x: grad.1, y: grad.2, z: grad.3).normalized
      if (grad.0 * grad.0 + grad.1 * grad.1 + grad.2 * grad.2 + grad.3 * grad.3) > 0 {
        qDot = Quaternion(
          w: qDot.w - beta * step.w, x: qDot.x - beta * step.x, y: qDot.y - beta * step.y,
          z: qDot.z - beta * step.z)
      }
    }
    q =
      Quaternion(
        w: q.w + qDot.w * dt, x: q.x + qDot.x * dt, y: q.y + qDot.y * dt, z: q.z + qDot.z * dt
      ).normalized
  }

  /// The rotation in orientd's earth frame (north along y).
  public var estimate: Quaternion {
    northAlongY * q
  }
}

/// Mahony's explicit complementary filter (R. Mahony, T. Hamel, J.-M. Pflimlin, "Nonlinear
/// complementary filters on the special orthogonal group", 2008), re-implemented with the
/// gains of the widely used reference code (Kp 0.5, Ki 0: no bias estimation), IMU and MARG
/// forms; earth frame x north, z up, turned to orientd's and started like `MadgwickFilter`.
public struct MahonyFilter: FusionFilter {
  /// `mahony`.
  public static let name = "mahony"
  /// Proportional gain.
  public var kp = 0.5
  /// Integral gain.
  public var ki = 0.0
  private var q = Quaternion.identity
  private var integral = Vector3.zero
  private var lastTime: Double?

  /// A filter at the identity.
  public init() {}

  /// One step of the filter.
  public mutating func update(_ sample: MotionSample, magnetometer: Bool) {
    guard let last = lastTime else {
      let field = magnetometer ? sample.magneticField : nil
      if magnetometer && field == nil { return }  // wait for the first field reading
      lastTime = sample.time
      q =
        northAlongY.conjugate
        * startingOrientation(acceleration: sample.acceleration, field: field)
      return
    }
    let dt = sample.time - last
    lastTime = sample.time
    guard dt > 0, dt < 1 else { return }
    var g = sample.gyro
    let a = (sample.acceleration * -1).normalized
    if a != .zero {
      // Estimated directions of gravity (and the field) in the sensor frame.
      let up = q.conjugate.rotate(Vector3(0, 0, 1))
      var error = a.cross(up)
      if magnetometer, let mRaw = sample.magneticField, mRaw != .zero {
        let m = mRaw.normalized
        let h = q.rotate(m)
        let b = Vector3((h.x * h.x + h.y * h.y).squareRoot(), 0, h.z)
        let expected = q.conjugate.rotate(b)
        error = error + m.cross(expected)
      }
      if ki > 0 {
        integral = integral + error * (ki * dt)
        g = g + integral
      }
      g = g + error * kp
    }
    q = (q * Quaternion(rotationVector: g * dt)).normalized
  }

  /// The rotation in orientd's earth frame (north along y).
  public var estimate: Quaternion {
    northAlongY * q
  }
}
