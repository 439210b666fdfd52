import OrientCore

#if canImport(Glibc)
  import Glibc
#endif

/// The situations the fusion benchmark scripts (docs/motion.md, "Fusion benchmark").
///
/// Every run has the hand's (or the desk's) small motions and is drawn from the seed; the
/// first `FusionRun.warmUp` seconds are not scored (the filters converge there).
public enum FusionScenario: String, CaseIterable, Sendable {
  /// Lying on a desk for a minute (the gyroscope's bias is all there is to see).
  case desk
  /// Held to read for a minute: slow wander of a few degrees on every axis and tremor.
  case handheld
  /// Turned to a new pose every 3-4 s (heading +-180, pitch 0-100, roll +-60 degrees).
  case turns
  /// Held while walking (gait, heel strikes) and turning corners.
  case walking
  /// Swung and spun fast (a game: up to about 600 degrees per second).
  case spin
  /// In a car holder: vibration, braking, and corners with their centripetal acceleration.
  case car
  /// Held while a magnet (a speaker, a cover's clasp) comes near twice.
  case magnet

  /// How long the filters may converge before scoring starts, seconds.
  public static let warmUp = 3.0

  /// The runs of this scenario (deterministic in seed and repetitions).
  public func runs(seed: UInt64, repetitions: Int) -> [MotionPath] {
    var random = SimRandom(
      seed: seed, stream: 0xF05E + UInt64(FusionScenario.allCases.firstIndex(of: self) ?? 0))
    return (0..<max(1, repetitions)).map { _ in path(random: &random) }
  }

  private func path(random: inout SimRandom) -> MotionPath {
    var b = PathBuilder(
      yaw: random.uniform(-180, 180), pitch: random.uniform(40, 75), roll: random.uniform(-8, 8))
    var path: MotionPath
    switch self {
    case .desk:
      b.pitch = random.uniform(-2, 2)
      b.roll = random.uniform(-2, 2)
      b.hold(60)
      path = MotionPath(keys: b.keys, duration: b.time)
      // A desk transmits footsteps and typing: tiny vibration, no rotation to speak of.
      path.vibration.z.append(
        Oscillation(amplitude: 0.002, frequency: random.uniform(15, 30), phase: 0))
      return path
    case .handheld:
      b.hold(60)
      path = MotionPath(keys: b.keys, duration: b.time)
    case .turns:
      b.hold(2)
      while b.time < 58 {
        b.move(
          yaw: b.yaw + random.uniform(-180, 180), pitch: random.uniform(0, 100),
          roll: random.uniform(-60, 60), duration: random.uniform(0.5, 1.5))
        b.hold(random.uniform(2, 3))
      }
      path = MotionPath(keys: b.keys, duration: b.time)
    case .walking:
      b.hold(2)
      while b.time < 58 {
        b.hold(random.uniform(5, 9))
        b.move(
          yaw: b.yaw + random.sign() * 90, pitch: b.pitch + random.uniform(-10, 10),
          roll: random.uniform(-8, 8), duration: random.uniform(0.8, 1.4))
      }
      path = MotionPath(keys: b.keys, duration: b.time)
      let f = random.uniform(1.7, 2.1)
      path.vibration.z.append(
        Oscillation(amplitude: random.uniform(0.2, 0.3), frequency: f, phase: 0, start: 2))
      path.vibration.x.append(
        Oscillation(amplitude: 0.05, frequency: f / 2, phase: 1, start: 2))
      path.vibration.y.append(
        Oscillation(amplitude: 0.1, frequency: f, phase: 2, start: 2))
      var t = 2.0
      while t < path.duration - 0.2 {
        path.pulses.append(
          Pulse(start: t, rise: 0.02, hold: 0.01, peak: Vector3(0, 0, random.uniform(0.25, 0.35))))
        t += 1 / f
      }
      path.pitchWobble.append(Oscillation(amplitude: 3, frequency: f, phase: 0.5, start: 2))
      path.rollWobble.append(Oscillation(amplitude: 2, frequency: f / 2, phase: 0, start: 2))
    case .spin:
      b.hold(2)
      while b.time < 50 {
        // Swings of 60-180 degrees in 0.25-0.5 s on a random mix of axes, and back.
        let yaw = b.yaw
        let pitch = b.pitch
        let roll = b.roll
        let d = random.uniform(0.25, 0.5)
        b.move(
          yaw: yaw + random.uniform(-180, 180), pitch: pitch + random.uniform(-60, 60),
          roll: roll + random.uniform(-90, 90), duration: d)
        b.move(yaw: yaw, pitch: pitch, roll: roll, duration: d)
        b.hold(random.uniform(0.3, 1.5))
      }
      b.hold(8)  // held still after the game: how fast does the error go away?
      path = MotionPath(keys: b.keys, duration: b.time)
    case .car:
      b.pitch = random.uniform(70, 85)
      b.roll = 0
      b.hold(3)
      while b.time < 55 {
        b.hold(random.uniform(4, 8))
        b.move(
          yaw: b.yaw + random.sign() * 90, pitch: b.pitch, roll: b.roll,
          duration: random.uniform(4, 6))
      }
      b.hold(3)
      path = MotionPath(keys: b.keys, duration: b.time)
      path.vehicleSpeed = random.uniform(8, 12)
      path.vibration.z.append(
        Oscillation(amplitude: 0.05, frequency: random.uniform(25, 35), phase: 0, start: 1))
      path.vibration.z.append(
        Oscillation(amplitude: 0.08, frequency: random.uniform(1, 3), phase: 0, start: 1))
      var t = 5.0
      while t < path.duration - 3 {
        // Braking along the heading, and bumps.
        let yaw = path.keyPose(at: t).yaw * Double.pi / 180
        let g = random.uniform(0.2, 0.35)
        path.pulses.append(
          Pulse(
            start: t, rise: 0.4, hold: random.uniform(0.5, 1.5),
            peak: Vector3(sin(yaw) * g, -cos(yaw) * g, 0)))
        path.pulses.append(
          Pulse(start: t + 3, rise: 0.05, hold: 0.02, peak: Vector3(0, 0, random.uniform(0.3, 0.6)))
        )
        t += random.uniform(8, 14)
      }
      return path
    case .magnet:
      b.hold(60)
      path = MotionPath(keys: b.keys, duration: b.time)
      for start in [15.0, 38.0] {
        let direction = SimulatedSensor.randomUnit(&random)
        path.magnets.append(
          MotionPath.Magnet(
            start: start + random.uniform(0, 3), end: start + random.uniform(10, 14), ramp: 1,
            field: direction * random.uniform(30, 80)))
      }
    }
    addHand(to: &path, random: &random)
    return path
  }

  /// The hand's slow wander and tremor on all three axes.
  private func addHand(to path: inout MotionPath, random: inout SimRandom) {
    for list in [\MotionPath.yawWobble, \MotionPath.pitchWobble, \MotionPath.rollWobble] {
      path[keyPath: list].append(
        Oscillation(
          amplitude: random.uniform(1, 3), frequency: random.uniform(0.1, 0.5),
          phase: random.uniform(0, 2 * .pi)))
      path[keyPath: list].append(
        Oscillation(
          amplitude: 0.15, frequency: random.uniform(8, 12), phase: random.uniform(0, 2 * .pi)))
    }
  }
}

/// Keys built in time order.
struct PathBuilder {
  var keys: [MotionPath.Key] = []
  var time = 0.0
  var yaw: Double
  var pitch: Double
  var roll: Double

  init(yaw: Double, pitch: Double, roll: Double) {
    self.yaw = yaw
    self.pitch = pitch
    self.roll = roll
  }

  mutating func hold(_ seconds: Double) {
    if keys.isEmpty { keys.append(MotionPath.Key(time: 0, yaw: yaw, pitch: pitch, roll: roll)) }
    time += seconds
    keys.append(MotionPath.Key(time: time, yaw: yaw, pitch: pitch, roll: roll))
  }

  mutating func move(yaw: Double, pitch: Double, roll: Double, duration: Double) {
    if keys.isEmpty {
      keys.append(MotionPath.Key(time: 0, yaw: self.yaw, pitch: self.pitch, roll: self.roll))
    }
    time += duration
    self.yaw = yaw
    self.pitch = pitch
    self.roll = roll
    keys.append(MotionPath.Key(time: time, yaw: yaw, pitch: pitch, roll: roll))
  }
}
