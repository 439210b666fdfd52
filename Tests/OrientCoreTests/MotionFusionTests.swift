import Glibc
import Testing

@testable import OrientCore

/// Quaternions and the gyroscope/accelerometer/magnetometer fusion (issue 26): what a client of
/// the rotation sees, on exact synthetic motion.
@Suite struct MotionFusionTests {
  static let degree = Double.pi / 180
  static let up = Vector3(0, 0, 1)

  /// Degrees between two directions.
  static func degrees(_ a: Vector3, _ b: Vector3) -> Double { a.angle(to: b) / degree }

  @Test func quaternionsComposeLikeRotations() {
    let quarterZ = Quaternion(axis: Vector3(0, 0, 1), angle: Double.pi / 2)
    let quarterX = Quaternion(axis: Vector3(1, 0, 0), angle: Double.pi / 2)
    let x = quarterZ.rotate(Vector3(1, 0, 0))
    #expect(Self.degrees(x, Vector3(0, 1, 0)) < 1e-9)
    // (a * b) rotates by b first, then a.
    let v = (quarterZ * quarterX).rotate(Vector3(0, 1, 0))
    #expect(Self.degrees(v, quarterZ.rotate(quarterX.rotate(Vector3(0, 1, 0)))) < 1e-9)
    #expect(Self.degrees(v, Vector3(0, 0, 1)) < 1e-9)
    // The rotation vector round-trips, and q and -q are one rotation.
    let r = Vector3(0.3, -1.2, 0.8)
    let q = Quaternion(rotationVector: r)
    let back = q.rotationVector
    #expect((back - r).magnitude < 1e-12)
    let negated = Quaternion(w: -q.w, x: -q.x, y: -q.y, z: -q.z)
    #expect(q.angle(to: negated) < 1e-9)
    #expect(abs(q.angle - r.magnitude) < 1e-12)
    // from/to turns one direction into the other, also when they are opposite.
    for (a, b) in [
      (Vector3(0, -9.8, 0), Vector3(0, 0, 1)), (Vector3(0, 0, 1), Vector3(0, 0, -1)),
      (Vector3(1, 2, 3), Vector3(-3, 0.5, 2)),
    ] {
      #expect(Self.degrees(Quaternion(from: a, to: b).rotate(a), b) < 1e-6)
    }
  }

  /// A device upright in a hand: the display's y axis up, heading `yaw` degrees.
  static func upright(yaw: Double) -> Quaternion {
    Quaternion(axis: Vector3(0, 0, 1), angle: yaw * degree)
      * Quaternion(axis: Vector3(1, 0, 0), angle: Double.pi / 2)
  }

  /// The accelerometer reading (orientd's convention) of a device at rest in orientation `q`.
  static func reading(_ q: Quaternion) -> Vector3 {
    q.conjugate.rotate(Vector3(0, 0, -standardGravity))
  }

  @Test func theFirstReadingSetsTheInclinationAndGravityFollowsTheAccelerometer() {
    var fusion = MotionFusion()
    #expect(!fusion.isInitialized)
    #expect(fusion.gravity == .zero)
    let q = Self.upright(yaw: 30)
    fusion.correct(acceleration: Self.reading(q), time: 0)
    #expect(fusion.isInitialized)
    #expect(Self.degrees(fusion.gravity, Vector3(0, -1, 0)) < 1e-6)
    #expect(abs(fusion.gravity.magnitude - standardGravity) < 1e-9)
  }

  @Test(arguments: [25.0, 100.0, 400.0])
  func aTurnMeasuredByTheGyroscopeIsFollowedAtOnce(rate: Double) {
    // Upright, then turned by 90 degrees about the display's z axis in 0.5 s (left-up), the
    // accelerometer lagging behind by a whole turn would not matter: the gyroscope leads.
    var fusion = MotionFusion()
    let start = Self.upright(yaw: 0)
    let spin = Vector3(0, 0, -Double.pi / 2 / 0.5)  // clockwise seen from the front
    var t = 0.0
    let dt = 1 / rate
    var truth = start
    while t < 2 {
      let turning = t >= 1 && t < 1.5
      let omega = turning ? spin : .zero
      truth = truth * Quaternion(rotationVector: omega * dt)
      t += dt
      fusion.update(time: t, gyro: omega, acceleration: Self.reading(truth))
      if t >= 1.5 - dt / 2, t < 1.5 + dt / 2 {
        #expect(fusion.rotation.angle(to: truth) / Self.degree < 1, "at the end of the turn")
      }
    }
    // About left-up (the sampled turn is 90 degrees to within one step): gravity as the
    // device really holds it.
    #expect(Self.degrees(fusion.gravity, Self.reading(truth)) < 1)
    #expect(Self.degrees(fusion.gravity, Vector3(1, 0, 0)) < 90 * dt / 0.5 + 1)
    #expect((fusion.angularVelocity - .zero).magnitude < 1e-9)
  }

  @Test func aDeviceAtRestLearnsTheGyroscopesBiasAndStopsDrifting() {
    var fusion = MotionFusion()
    let q = Self.upright(yaw: 0)
    let bias = Vector3(0.02, -0.03, 0.025)  // about 1.5 deg/s each: a BMI160 at power-on
    var t = 0.0
    var headingAt5 = Quaternion.identity
    while t < 20 {
      t += 0.01
      fusion.update(time: t, gyro: bias, acceleration: Self.reading(q))
      if abs(t - 5) < 0.005 { headingAt5 = fusion.rotation }
    }
    #expect(fusion.isResting)
    #expect((fusion.bias - bias).magnitude < 0.001, "bias \(fusion.bias)")
    // Once learnt, the heading no longer turns (without a magnetometer only the gyroscope
    // knows it): less than a degree in the last 15 s.
    #expect(headingAt5.angle(to: fusion.rotation) / Self.degree < 1)
    #expect(Self.degrees(fusion.gravity, Vector3(0, -1, 0)) < 0.5)
  }

  @Test func theMagnetometerSetsTheHeadingAndAMagnetNeitherTurnsNorTiltsIt() {
    var fusion = MotionFusion()
    let earthField = Vector3(0, 20, -45)  // uT: north and down
    let q = Self.upright(yaw: 70)
    var t = 0.0
    while t < 5 {
      t += 0.01
      fusion.update(
        time: t, gyro: .zero, acceleration: Self.reading(q),
        magneticField: q.conjugate.rotate(earthField))
    }
    #expect(fusion.isHeadingAbsolute)
    #expect(fusion.rotation.angle(to: q) / Self.degree < 0.5, "\(fusion.rotation) vs \(q)")
    // A magnet doubles the field sideways for 5 s: taken for a disturbance, not followed.
    let magnet = Vector3(40, -30, 10)
    while t < 10 {
      t += 0.01
      fusion.update(
        time: t, gyro: .zero, acceleration: Self.reading(q),
        magneticField: q.conjugate.rotate(earthField + magnet))
    }
    #expect(fusion.rejections.magneticDisturbance > 400)
    #expect(fusion.rotation.angle(to: q) / Self.degree < 0.5)
  }

  @Test func badSamplesAreCountedAndIgnored() {
    var fusion = MotionFusion()
    let q = Self.upright(yaw: 0)
    fusion.update(time: 1, gyro: .zero, acceleration: Self.reading(q))
    fusion.integrate(gyro: Vector3(.nan, 0, 0), time: 1.01)
    fusion.correct(acceleration: .zero, time: 1.01)
    fusion.correct(acceleration: Vector3(0, .infinity, 0), time: 1.02)
    fusion.integrate(gyro: Vector3(1, 1, 1), time: 0.5)
    fusion.correct(magneticField: Vector3(.nan, 1, 1), time: 1.03)
    #expect(fusion.rejections.invalid == 4)
    #expect(fusion.rejections.timeBackwards == 1)
    #expect(fusion.rotation.isFinite)
    #expect(fusion.rotation.angle(to: q) < 1e-6)
    // A gap is not integrated over: a rate seen after 5 s of silence turns nothing.
    fusion.integrate(gyro: Vector3(0, 0, 3), time: 6)
    #expect(fusion.rotation.angle(to: q) < 1e-6)
  }

  @Test func parametersAreSetByKeyWithUnitsAndRanges() throws {
    var p = MotionFusion.Parameters()
    try p.set("inclination-time-constant", "2.5")
    #expect(p.inclinationTimeConstant == 2.5)
    try p.set("maximum-bias", "10")
    #expect(abs(p.maximumBias - 10 * Self.degree) < 1e-12)
    #expect(abs((p.value(of: "maximum-bias") ?? 0) - 10) < 1e-9)
    #expect(throws: MotionFusionKeyError.self) { try p.set("inclination-time-constant", "0") }
    #expect(throws: MotionFusionKeyError.self) { try p.set("no-such-key", "1") }
    do {
      try p.set("rest-time", "soon")
      Issue.record("accepted 'soon'")
    } catch {
      #expect(error.description.hasPrefix("rest-time 'soon': not a decimal number"), "\(error)")
    }
    for key in MotionFusion.Parameters.keys {
      #expect(MotionFusion.Parameters().value(of: key) != nil, "\(key)")
    }
  }

  @Test func theGyroAssistHandsTheDetectorTheFusedGravity() {
    // A jolt sideways moves the accelerometer but not the fused vertical.
    var assist = GyroAssist(magnitude: .gravity)
    let q = Self.upright(yaw: 0)
    var t = 0.0
    var last = Sample(time: 0, 0, 0, 0)
    while t < 2 {
      t += 0.01
      var a = Self.reading(q)
      if t > 1.5 && t < 1.6 { a = a + Vector3(6, 0, 0) }  // 0.6 g sideways for 0.1 s
      last = assist.sample(time: t, acceleration: a, gyro: .zero)
      if t > 1.55 && t < 1.56 {
        #expect(Self.degrees(last.acceleration, Vector3(0, -1, 0)) < 3, "during the jolt")
      }
    }
    #expect(abs(last.acceleration.magnitude - standardGravity) < 1e-9)
  }
}
