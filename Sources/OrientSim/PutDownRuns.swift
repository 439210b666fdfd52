import OrientCore

#if canImport(Glibc)
  import Glibc
#endif

// Putting the device down: the scenarios in which it goes flat and comes back.

extension Scenario {
  /// Lowered flat onto a table (twisting a little on the way), left there, picked up again.
  static func putDownRun(
    label: String, faceDown: Bool, variety v: Variety, random: inout SimRandom
  ) -> Run {
    let centre = Double(Int(random.next() % 4) * 90)
    let home = OrientationSet(nearestOrientation(toAngle: centre))
    let tilt = random.uniform(20, 35)
    var b = Builder(angle: centre + random.uniform(-8, 8), tilt: tilt)
    b.hold(2.5)
    let downStart = b.time
    let twisted = centre + random.uniform(-15, 15)
    let flatTilt = (faceDown ? -1.0 : 1.0) * random.uniform(88, 90)
    b.move(
      angle: twisted, tilt: flatTilt,
      duration: random.uniform(0.8, 1.2) * random.uniform(v.duration),
      shape: random.pick(v.shapes), random: &random)
    let downDuration = b.time - downStart
    let touchdown = b.time
    b.hold(random.uniform(3, 5))
    let upStart = b.time
    b.move(
      angle: twisted, tilt: tilt + random.uniform(-5, 5),
      duration: random.uniform(0.8, 1.2) * random.uniform(v.duration),
      shape: random.pick(v.shapes), random: &random)
    let upDuration = b.time - upStart
    b.hold(3)
    var script = MotionScript(keyframes: b.keyframes, duration: b.time)
    addHand(to: &script, variety: v, random: &random)
    let drop = random.uniform(0.2, 0.35)
    script.translations = [
      Translation(start: downStart, duration: downDuration, displacement: Vector3(0, -drop, 0)),
      Translation(start: upStart, duration: upDuration, displacement: Vector3(0, drop, 0)),
    ]
    script.addPulses([
      Pulse(
        start: touchdown - 0.02, rise: 0.015, hold: 0.005,
        peak: Vector3(
          random.uniform(-0.1, 0.1), random.uniform(0.5, 1.0), random.uniform(-0.1, 0.1)))
    ])
    let windows = [
      Window(start: 1.5, end: b.time, expectation: .hold(acceptable: home))
    ]
    return Run(label: label, script: script, windows: windows)
  }

  /// Lowering the device onto a table (0.2-0.35 m, with the touch-down jolt) during
  /// [start, start + duration] and lifting it during [upStart, upStart + upDuration].
  static func addTable(
    to script: inout MotionScript, downStart: Double, downDuration: Double, upStart: Double,
    upDuration: Double, random: inout SimRandom
  ) {
    let drop = random.uniform(0.2, 0.35)
    script.translations = [
      Translation(start: downStart, duration: downDuration, displacement: Vector3(0, -drop, 0)),
      Translation(start: upStart, duration: upDuration, displacement: Vector3(0, drop, 0)),
    ]
    script.addPulses([
      Pulse(
        start: downStart + downDuration - 0.02, rise: 0.015, hold: 0.005,
        peak: Vector3(
          random.uniform(-0.1, 0.1), random.uniform(0.5, 1.0), random.uniform(-0.1, 0.1)))
    ])
  }

  /// Put down while turning (issue 12): held 25-35 degrees back, the in-plane angle drifts
  /// 40-85 degrees (either way) while the back-tilt rises to 86-90 degrees in 0.5-0.7 s; it
  /// lies flat for 2-4 s and is picked up again (0.8-1.2 s) turning back to the orientation it
  /// started in. Any change is spurious.
  static func putDownTurningRun(label: String, variety v: Variety, random: inout SimRandom)
    -> Run
  {
    let centre = Double(Int(random.next() % 4) * 90)
    let home = OrientationSet(nearestOrientation(toAngle: centre))
    let tilt = random.uniform(25, 35)
    var b = Builder(angle: centre + random.uniform(-6, 6), tilt: tilt)
    b.hold(2.5)
    let downStart = b.time
    let drift = random.sign() * random.uniform(40, 85)
    b.move(
      angle: centre + drift, tilt: random.uniform(86, 90),
      duration: random.uniform(0.5, 0.7) * random.uniform(v.duration),
      shape: random.pick(v.shapes), random: &random)
    let downDuration = b.time - downStart
    b.hold(random.uniform(2, 4))
    let upStart = b.time
    b.move(
      angle: centre + random.uniform(-8, 8), tilt: random.uniform(20, 35),
      duration: random.uniform(0.8, 1.2) * random.uniform(v.duration),
      shape: random.pick(v.shapes), random: &random)
    let upDuration = b.time - upStart
    let settled = b.time + 1
    b.hold(3)
    var script = MotionScript(keyframes: b.keyframes, duration: b.time)
    addHand(to: &script, variety: v, random: &random)
    addTable(
      to: &script, downStart: downStart, downDuration: downDuration, upStart: upStart,
      upDuration: upDuration, random: &random)
    let windows = [
      Window(start: 1.5, end: downStart, expectation: .hold(acceptable: home)),
      Window(start: downStart, end: settled, expectation: .transition(allowed: home)),
      Window(start: settled, end: b.time, expectation: .hold(acceptable: home)),
    ]
    return Run(label: label, script: script, windows: windows)
  }

  /// Issue 25's put-down, four times a run: held in portrait 25-35 degrees back, put down
  /// while the in-plane angle drifts 40-85 degrees (either way) and the back-tilt rises to
  /// 87-89 degrees in about 0.6 s, left flat 5 s, picked up to portrait (within 8 degrees) in
  /// about 0.8 s, held 2.5-3.5 s. Any change is spurious. Held-out split only.
  static func putDownDriftRun(label: String, variety v: Variety, random: inout SimRandom) -> Run {
    let home = OrientationSet(.normal)
    var b = Builder(angle: random.uniform(-6, 6), tilt: random.uniform(25, 35))
    b.hold(2.5)
    var windows = [Window(start: 1.5, end: b.time, expectation: .hold(acceptable: home))]
    var translations: [Translation] = []
    var pulses: [Pulse] = []
    for _ in 0..<4 {
      let downStart = b.time
      b.move(
        angle: random.sign() * random.uniform(40, 85), tilt: random.uniform(87, 89),
        duration: random.uniform(0.5, 0.7) * random.uniform(v.duration),
        shape: random.pick(v.shapes), random: &random)
      let touchdown = b.time
      b.hold(5)
      let upStart = b.time
      b.move(
        angle: random.uniform(-8, 8), tilt: random.uniform(25, 35),
        duration: random.uniform(0.7, 0.9) * random.uniform(v.duration),
        shape: random.pick(v.shapes), random: &random)
      let settled = b.time + 1
      b.hold(random.uniform(2.5, 3.5))
      windows.append(
        Window(start: downStart, end: settled, expectation: .transition(allowed: home)))
      windows.append(Window(start: settled, end: b.time, expectation: .hold(acceptable: home)))
      let drop = random.uniform(0.2, 0.35)
      translations.append(
        Translation(
          start: downStart, duration: touchdown - downStart, displacement: Vector3(0, -drop, 0)))
      translations.append(
        Translation(
          start: upStart, duration: settled - 1 - upStart, displacement: Vector3(0, drop, 0)))
      pulses.append(
        Pulse(
          start: touchdown - 0.02, rise: 0.015, hold: 0.005,
          peak: Vector3(
            random.uniform(-0.1, 0.1), random.uniform(0.5, 1.0), random.uniform(-0.1, 0.1))))
    }
    var script = MotionScript(keyframes: b.keyframes, duration: b.time)
    addHand(to: &script, variety: v, random: &random)
    script.translations = translations
    script.addPulses(pulses)
    return Run(label: label, script: script, windows: windows)
  }
}
