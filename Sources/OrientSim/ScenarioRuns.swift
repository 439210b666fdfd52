import OrientCore

#if canImport(Glibc)
  import Glibc
#endif

extension Scenario {
  // MARK: - Runs

  static func rotationRun(
    label: String, turn: Double, duration: Double, tilt: Double, turns: Int,
    variety v: Variety, random: inout SimRandom
  ) -> Run {
    var centre = Double(Int(random.next() % 4) * 90)
    // The back-tilt varies from turn to turn but stays at or below the nominal value (plus the
    // hand's wobble of a few degrees), so "tilt 55" means up to about 55.
    var b = Builder(angle: centre + random.uniform(-6, 6), tilt: tilt - random.uniform(0, 3))
    b.hold(1.5)
    var windows: [Window] = []
    var pendingHoldStart: Double?
    var pendingTarget = nearestOrientation(toAngle: centre)
    for _ in 0..<turns {
      let direction = random.sign()
      let newCentre = centre + direction * turn
      let start = b.time
      if let holdStart = pendingHoldStart, holdStart < start {
        windows.append(
          Window(
            start: holdStart, end: start,
            expectation: .hold(acceptable: OrientationSet(pendingTarget))))
      }
      let a0 = b.angle
      let a1 = newCentre + random.uniform(-6, 6)
      let length = duration * random.uniform(v.duration)
      b.move(
        angle: a1, tilt: max(0, tilt - random.uniform(0, 7)), duration: length,
        shape: random.pick(v.shapes), random: &random)
      let boundary = newCentre - direction * 45
      let cross = b.crossing(from: start, to: b.time, boundary: boundary, rising: a1 > a0)
      let target = nearestOrientation(toAngle: newCentre)
      let middle =
        turn > 90
        ? OrientationSet(nearestOrientation(toAngle: centre + direction * 90)) : OrientationSet()
      windows.append(
        Window(
          start: start, end: b.time + 1.5,
          expectation: .rotation(
            target: target, intermediates: middle, crossTime: cross, tilt: tilt)))
      pendingHoldStart = b.time + 1.5
      pendingTarget = target
      b.hold(2.2 + random.uniform(0, 0.7))
      centre = newCentre
    }
    if let holdStart = pendingHoldStart, holdStart < b.time {
      windows.append(
        Window(
          start: holdStart, end: b.time,
          expectation: .hold(acceptable: OrientationSet(pendingTarget))))
    }
    var script = MotionScript(keyframes: b.keyframes, duration: b.time)
    addHand(to: &script, variety: v, random: &random)
    return Run(label: label, script: script, windows: windows)
  }

  static func sweepRun(label: String, variety v: Variety, random: inout SimRandom) -> Run {
    let centre = Double(Int(random.next() % 4) * 90)
    let direction = random.sign()
    let tilt = random.uniform(15, 35)
    let speed = 3.0
    var b = Builder(angle: centre + direction * 15, tilt: tilt)
    b.hold(2)
    var windows: [Window] = []
    let neighbour = nearestOrientation(toAngle: centre + direction * 90)
    let home = nearestOrientation(toAngle: centre)
    // Out: 15 -> 80 degrees from the centre.
    let outStart = b.time
    b.move(angle: centre + direction * 80, tilt: tilt, duration: 65 / speed, easing: .linear)
    windows.append(
      Window(
        start: outStart, end: b.time + 1.5,
        expectation: .sweep(target: neighbour, fromCentre: centre)))
    b.hold(3)
    windows.append(
      Window(
        start: windows[0].end, end: b.time,
        expectation: .hold(acceptable: OrientationSet(neighbour))
      ))
    // Back: 80 -> 10 degrees.
    let backStart = b.time
    b.move(angle: centre + direction * 10, tilt: tilt, duration: 70 / speed, easing: .linear)
    windows.append(
      Window(
        start: backStart, end: b.time + 1.5,
        expectation: .sweep(target: home, fromCentre: centre + direction * 90)))
    b.hold(3)
    windows.append(
      Window(
        start: windows[2].end, end: b.time, expectation: .hold(acceptable: OrientationSet(home))))
    var script = MotionScript(keyframes: b.keyframes, duration: b.time)
    addHand(to: &script, variety: v, random: &random)
    return Run(label: label, script: script, windows: windows)
  }

  enum HoldKind { case still, walking, shaking, car }

  /// Hold `offset` degrees from an orientation (approached from it) while still, walking,
  /// shaking or riding in a car.
  static func holdRun(
    label: String, offset: Double, kind: HoldKind, variety v: Variety, random: inout SimRandom
  ) -> Run {
    let centre = Double(Int(random.next() % 4) * 90)
    let direction = random.sign()
    let tilt: Double
    switch kind {
    case .still: tilt = random.uniform(15, 40)
    case .walking: tilt = random.uniform(20, 40)
    case .shaking: tilt = random.uniform(10, 40)
    case .car: tilt = random.uniform(10, 30)
    }
    let target = centre + direction * offset
    let home = nearestOrientation(toAngle: centre)
    let nearDiagonal = abs(offset - 45) <= 15
    let acceptable =
      nearDiagonal
      ? OrientationSet([home, nearestOrientation(toAngle: centre + direction * 90)])
      : OrientationSet(nearestOrientation(toAngle: target))
    var b = Builder(angle: centre + random.uniform(-4, 4), tilt: tilt)
    b.hold(1.5)
    var windows: [Window] = []
    let moveStart = b.time
    if offset != 0 {
      b.move(
        angle: target, tilt: tilt, duration: random.uniform(0.7, 1.2) * random.uniform(v.duration),
        shape: random.pick(v.shapes), random: &random)
    }
    let settled = b.time + 1.5
    windows.append(
      Window(
        start: moveStart, end: settled,
        expectation: .transition(allowed: acceptable.union(OrientationSet(home)))))
    let length: Double
    switch kind {
    case .still: length = 20
    case .walking: length = 30
    case .shaking: length = 12
    case .car: length = 60
    }
    b.hold(length)
    windows.append(Window(start: settled, end: b.time, expectation: .hold(acceptable: acceptable)))
    var script = MotionScript(keyframes: b.keyframes, duration: b.time)
    addHand(to: &script, variety: v, random: &random)
    let from = settled - 1.0
    let to = b.time
    switch kind {
    case .still: break
    case .walking: addWalking(to: &script, from: from, to: to, variety: v, random: &random)
    case .shaking: addShaking(to: &script, from: settled + 2, to: to - 3, random: &random)
    case .car: addCar(to: &script, from: from, to: to, random: &random)
    }
    return Run(label: label, script: script, windows: windows)
  }

  /// Walking: vertical bounce at the step frequency with a harmonic and a heel strike per
  /// step, lateral sway at half of it, fore-aft surge, and the arm swinging the device.
  static func addWalking(
    to script: inout MotionScript, from start: Double, to end: Double, variety v: Variety,
    random: inout SimRandom, steps: ClosedRange<Double>? = nil,
    impacts: ClosedRange<Double> = 0.15...0.3
  ) {
    let step = random.uniform(steps ?? v.gait)
    let strength = random.uniform(v.steps)
    let ramp = 0.8
    func wave(_ amplitude: Double, _ frequency: Double) -> Oscillation {
      Oscillation(
        amplitude: amplitude, frequency: frequency, phase: random.uniform(0, 2 * .pi),
        start: start, end: end, ramp: ramp)
    }
    script.vibration.y.append(wave(random.uniform(0.2, 0.3) * strength, step))
    script.vibration.y.append(wave(random.uniform(0.06, 0.12) * strength, 2 * step))
    script.vibration.x.append(wave(random.uniform(0.07, 0.12), step / 2))
    script.vibration.z.append(wave(random.uniform(0.1, 0.15), step))
    script.angleWobble.append(wave(random.uniform(2, 4), step / 2))
    script.tiltWobble.append(wave(random.uniform(2, 4), step))
    var pulses: [Pulse] = []
    var t = start + ramp + random.uniform(0, 1 / step)
    while t < end - ramp {
      pulses.append(
        Pulse(
          start: t, rise: 0.02, hold: 0.01,
          peak: Vector3(
            random.uniform(-0.05, 0.05), random.uniform(impacts) * strength,
            random.uniform(-0.08, 0.08))))
      t += (1 / step) * random.uniform(0.95, 1.05)
    }
    script.addPulses(pulses)
  }

  /// Shaking: about 1 g at about 5 Hz along a random direction, with the wrist turning.
  static func addShaking(
    to script: inout MotionScript, from start: Double, to end: Double, random: inout SimRandom
  ) {
    let frequency = random.uniform(4.5, 5.5)
    let amplitude = random.uniform(0.8, 1.2)
    let direction = SimulatedSensor.randomUnit(&random)
    let phase = random.uniform(0, 2 * .pi)
    func along(_ component: Double) -> Oscillation {
      Oscillation(
        amplitude: amplitude * component, frequency: frequency, phase: phase, start: start,
        end: end, ramp: 0.3)
    }
    script.vibration.x.append(along(direction.x))
    script.vibration.y.append(along(direction.y))
    script.vibration.z.append(along(direction.z))
    script.angleWobble.append(
      Oscillation(
        amplitude: random.uniform(4, 8), frequency: frequency, phase: phase + 1, start: start,
        end: end, ramp: 0.3))
    script.tiltWobble.append(
      Oscillation(
        amplitude: random.uniform(3, 6), frequency: frequency, phase: phase + 2, start: start,
        end: end, ramp: 0.3))
  }

  /// A car: engine vibration, road noise, 0.3 g corners, braking and speeding up, bumps.
  static func addCar(
    to script: inout MotionScript, from start: Double, to end: Double, random: inout SimRandom
  ) {
    func noise(_ amplitude: Double, _ low: Double, _ high: Double) -> Oscillation {
      Oscillation(
        amplitude: amplitude, frequency: random.uniform(low, high),
        phase: random.uniform(0, 2 * .pi), start: start, end: end, ramp: 1)
    }
    let engine = SimulatedSensor.randomUnit(&random)
    let engineFrequency = random.uniform(25, 35)
    let engineAmplitude = random.uniform(0.03, 0.06)
    let phase = random.uniform(0, 2 * .pi)
    script.vibration.x.append(
      Oscillation(
        amplitude: engineAmplitude * engine.x, frequency: engineFrequency, phase: phase,
        start: start, end: end, ramp: 1))
    script.vibration.y.append(
      Oscillation(
        amplitude: engineAmplitude * engine.y, frequency: engineFrequency, phase: phase,
        start: start, end: end, ramp: 1))
    script.vibration.z.append(
      Oscillation(
        amplitude: engineAmplitude * engine.z, frequency: engineFrequency, phase: phase,
        start: start, end: end, ramp: 1))
    for _ in 0..<3 {
      script.vibration.x.append(noise(random.uniform(0.01, 0.03), 1, 15))
      script.vibration.y.append(noise(random.uniform(0.02, 0.05), 1, 15))
      script.vibration.z.append(noise(random.uniform(0.01, 0.03), 1, 15))
    }
    script.angleWobble.append(noise(random.uniform(0.3, 0.8), 8, 15))
    script.tiltWobble.append(noise(random.uniform(0.3, 0.8), 8, 15))
    var pulses: [Pulse] = []
    var t = start + random.uniform(2, 5)
    while t < end - 6 {
      switch random.next() % 3 {
      case 0, 1:
        // A corner: 0.3 g sideways (centripetal), 2-4 s.
        pulses.append(
          Pulse(
            start: t, rise: random.uniform(0.6, 1.2), hold: random.uniform(2, 4),
            peak: Vector3(random.sign() * random.uniform(0.25, 0.32), 0, 0)))
      default:
        // Braking or speeding up along the car's axis (towards/away from the driver).
        pulses.append(
          Pulse(
            start: t, rise: random.uniform(0.5, 1), hold: random.uniform(1, 3),
            peak: Vector3(0, 0, random.sign() * random.uniform(0.15, 0.3))))
      }
      if random.next() % 2 == 0 {
        pulses.append(
          Pulse(
            start: t + random.uniform(0, 4), rise: 0.04, hold: 0.02,
            peak: Vector3(0, random.sign() * random.uniform(0.3, 0.5), 0)))
      }
      t += random.uniform(6, 12)
    }
    script.addPulses(pulses)
  }

  /// `count` turns by 90 degrees (either way) of `duration`, each followed by a hold of
  /// `holdRange` seconds; appends the rotation windows and the holds between them.
  static func addTurns(
    _ b: inout Builder, centre: inout Double, count: Int, duration: ClosedRange<Double>,
    tilt: Double, holds: ClosedRange<Double>, windows: inout [Window], variety v: Variety,
    random: inout SimRandom
  ) {
    var holdStart: Double?
    var holdTarget = nearestOrientation(toAngle: centre)
    for _ in 0..<count {
      let direction = random.sign()
      let newCentre = centre + direction * 90
      let start = b.time
      if let from = holdStart, from < start {
        windows.append(
          Window(
            start: from, end: start, expectation: .hold(acceptable: OrientationSet(holdTarget))))
      }
      let a0 = b.angle
      let a1 = newCentre + random.uniform(-6, 6)
      b.move(
        angle: a1, tilt: max(0, tilt - random.uniform(0, 5)),
        duration: random.uniform(duration) * random.uniform(v.duration),
        shape: random.pick(v.shapes), random: &random)
      let cross = b.crossing(
        from: start, to: b.time, boundary: newCentre - direction * 45, rising: a1 > a0)
      let target = nearestOrientation(toAngle: newCentre)
      windows.append(
        Window(
          start: start, end: b.time + 1.5,
          expectation: .rotation(
            target: target, intermediates: OrientationSet(), crossTime: cross, tilt: tilt)))
      holdStart = b.time + 1.5
      holdTarget = target
      b.hold(random.uniform(holds.lowerBound, holds.upperBound))
      centre = newCentre
    }
    if let from = holdStart, from < b.time {
      windows.append(
        Window(start: from, end: b.time, expectation: .hold(acceptable: OrientationSet(holdTarget)))
      )
    }
  }

  /// Turning by 90 degrees (0.5-0.9 s) four times while walking (1.8-2.0 Hz, heel strikes
  /// of 0.25-0.35 g) or riding in a car (`addCar`). The walker stands still for 2 s before
  /// setting off; the car is moving from 0.5 s. Scoring starts at 4 s.
  static func turnWhileMovingRun(
    label: String, car: Bool, variety v: Variety, random: inout SimRandom
  ) -> Run {
    var centre = Double(Int(random.next() % 4) * 90)
    let tilt = car ? random.uniform(10, 35) : random.uniform(20, 40)
    var b = Builder(angle: centre + random.uniform(-5, 5), tilt: tilt)
    b.hold(4.5)
    var windows: [Window] = []
    windows.append(
      Window(
        start: 4, end: 4.5,
        expectation: .hold(acceptable: OrientationSet(nearestOrientation(toAngle: centre)))))
    addTurns(
      &b, centre: &centre, count: 4, duration: 0.5...0.9, tilt: tilt, holds: 3...4.5,
      windows: &windows, variety: v, random: &random)
    var script = MotionScript(keyframes: b.keyframes, duration: b.time)
    addHand(to: &script, variety: v, random: &random)
    if car {
      addCar(to: &script, from: 0.5, to: b.time + 1, random: &random)
    } else {
      addWalking(
        to: &script, from: 2, to: b.time + 1, variety: v, random: &random,
        steps: v.gait.lowerBound == Variety.tune.gait.lowerBound ? 1.8...2.0 : nil,
        impacts: 0.25...0.35)
    }
    return Run(label: label, script: script, windows: windows)
  }

  /// Lying in bed on one side: picked up (25-35 degrees back), lowered to 60-80 degrees in
  /// 1 s, then turned back and forth by 90 degrees (0.6-1.0 s) four times. Beyond 55 degrees a
  /// rotation is not required (a miss is counted apart), but a change to anything other than
  /// the target, or during the holds, is spurious; either of the two orientations is right
  /// while it is held.
  static func bedRun(label: String, variety v: Variety, random: inout SimRandom) -> Run {
    let centre = Double(Int(random.next() % 4) * 90)
    let direction = random.sign()
    let first = nearestOrientation(toAngle: centre)
    let second = nearestOrientation(toAngle: centre + direction * 90)
    let both = OrientationSet([first, second])
    let tilt = random.uniform(60, 80)
    var b = Builder(angle: centre + random.uniform(-5, 5), tilt: random.uniform(25, 35))
    b.hold(2)
    var windows: [Window] = []
    let lowerStart = b.time
    b.move(angle: centre + random.uniform(-5, 5), tilt: tilt, duration: 1)
    windows.append(
      Window(
        start: lowerStart, end: b.time + 1, expectation: .transition(allowed: OrientationSet(first))
      ))
    b.hold(2)
    var here = centre
    for turn in 0..<4 {
      let newCentre = turn % 2 == 0 ? centre + direction * 90 : centre
      let start = b.time
      let a0 = b.angle
      let a1 = newCentre + random.uniform(-6, 6)
      b.move(
        angle: a1, tilt: tilt + random.uniform(-3, 3),
        duration: random.uniform(0.6, 1.0) * random.uniform(v.duration),
        shape: random.pick(v.shapes), random: &random)
      let cross = b.crossing(
        from: start, to: b.time, boundary: (here + newCentre) / 2, rising: a1 > a0)
      windows.append(
        Window(
          start: start, end: b.time + 1.5,
          expectation: .rotation(
            target: nearestOrientation(toAngle: newCentre), intermediates: OrientationSet(),
            crossTime: cross, tilt: tilt)))
      let holdStart = b.time + 1.5
      b.hold(random.uniform(3, 4.5))
      windows.append(Window(start: holdStart, end: b.time, expectation: .hold(acceptable: both)))
      here = newCentre
    }
    var script = MotionScript(keyframes: b.keyframes, duration: b.time)
    addHand(to: &script, variety: v, random: &random)
    return Run(label: label, script: script, windows: windows)
  }

  /// Handing the device to someone: pushed 0.4-0.6 m forward in 0.8-1.2 s while presented
  /// (tilted back to 45-65 degrees, the grip turning it 10-25 degrees), a 0.3-0.5 g jolt as
  /// the other hand takes it, drawn 0.3-0.5 m further in 0.8-1.2 s and held by the receiver at
  /// 20-40 degrees, in the same orientation (turning the device about the vertical to face
  /// the receiver leaves gravity in the display frame unchanged). Any change is spurious.
  static func handOverRun(label: String, variety v: Variety, random: inout SimRandom) -> Run {
    let centre = Double(Int(random.next() % 4) * 90)
    let home = OrientationSet(nearestOrientation(toAngle: centre))
    var b = Builder(angle: centre + random.uniform(-6, 6), tilt: random.uniform(20, 35))
    b.hold(2.5)
    let giveStart = b.time
    let giveDuration = random.uniform(0.8, 1.2)
    b.move(
      angle: centre + random.sign() * random.uniform(10, 25), tilt: random.uniform(45, 65),
      duration: giveDuration)
    let handOver = b.time
    b.hold(random.uniform(0.2, 0.5))
    let takeStart = b.time
    let takeDuration = random.uniform(0.8, 1.2)
    b.move(
      angle: centre + random.uniform(-10, 10), tilt: random.uniform(20, 40),
      duration: takeDuration)
    let settled = b.time + 1
    b.hold(3)
    var script = MotionScript(keyframes: b.keyframes, duration: b.time)
    addHand(to: &script, variety: v, random: &random)
    let jolt = SimulatedSensor.randomUnit(&random) * random.uniform(0.3, 0.5)
    script.translations = [
      Translation(
        start: giveStart, duration: giveDuration,
        displacement: Vector3(random.uniform(-0.1, 0.1), 0.1, -random.uniform(0.4, 0.6))),
      Translation(
        start: takeStart, duration: takeDuration,
        displacement: Vector3(random.uniform(-0.1, 0.1), -0.05, -random.uniform(0.3, 0.5))),
    ]
    script.addPulses([Pulse(start: handOver, rise: 0.03, hold: 0.02, peak: jolt)])
    let windows = [
      Window(start: 1.5, end: giveStart, expectation: .hold(acceptable: home)),
      Window(start: giveStart, end: settled, expectation: .transition(allowed: home)),
      Window(start: settled, end: b.time, expectation: .hold(acceptable: home)),
    ]
    return Run(label: label, script: script, windows: windows)
  }

  /// Put down flat (1 s, twisting up to 10 degrees), turned on the table by `turn` degrees
  /// (1-1.5 s), picked up again (0.8-1.2 s) to 20-35 degrees in the new orientation. The
  /// latency is measured from the moment the true back-tilt falls below 60 degrees on the way
  /// up (the display is readable again; the angle is in the new sector all along).
  static func pickUpRotatedRun(
    label: String, turn: Double, variety v: Variety, random: inout SimRandom
  ) -> Run {
    let centre = Double(Int(random.next() % 4) * 90)
    let home = OrientationSet(nearestOrientation(toAngle: centre))
    let direction = random.sign()
    let newCentre = centre + direction * turn
    var b = Builder(angle: centre + random.uniform(-6, 6), tilt: random.uniform(20, 35))
    b.hold(2.5)
    let downStart = b.time
    let downDuration = random.uniform(0.8, 1.2)
    let flatTilt = random.uniform(87, 90)
    b.move(angle: centre + random.uniform(-10, 10), tilt: flatTilt, duration: downDuration)
    b.hold(random.uniform(1, 2))
    b.move(
      angle: newCentre + random.uniform(-8, 8), tilt: flatTilt, duration: random.uniform(1, 1.5))
    b.hold(random.uniform(1, 2))
    let upStart = b.time
    let upTilt = random.uniform(20, 35)
    b.move(
      angle: b.angle + random.uniform(-5, 5), tilt: upTilt,
      duration: random.uniform(0.8, 1.2) * random.uniform(v.duration),
      shape: random.pick(v.shapes), random: &random)
    let upDuration = b.time - upStart
    let cross = b.tiltCrossing(from: upStart, to: b.time, below: 60)
    let target = nearestOrientation(toAngle: newCentre)
    let rotationEnd = b.time + 1.5
    b.hold(4)
    var script = MotionScript(keyframes: b.keyframes, duration: b.time)
    addHand(to: &script, variety: v, random: &random)
    addTable(
      to: &script, downStart: downStart, downDuration: downDuration, upStart: upStart,
      upDuration: upDuration, random: &random)
    let windows = [
      Window(start: 1.5, end: downStart, expectation: .hold(acceptable: home)),
      Window(start: downStart, end: upStart, expectation: .transition(allowed: home)),
      Window(
        start: upStart, end: rotationEnd,
        expectation: .rotation(
          target: target, intermediates: OrientationSet(), crossTime: cross, tilt: upTilt)),
      Window(
        start: rotationEnd, end: b.time, expectation: .hold(acceptable: OrientationSet(target))),
    ]
    return Run(label: label, script: script, windows: windows)
  }

  /// The demo: normal, left-up, a 180 degree flip to right-up, bottom-up, normal, then put
  /// down flat and picked up.
  static func demoRun(random: inout SimRandom) -> Run {
    let v = Variety.tune
    var b = Builder(angle: 0, tilt: 20)
    b.hold(1.5)
    var windows: [Window] = []
    func turn(to angle: Double, duration: Double) {
      let start = b.time
      let a0 = b.angle
      b.move(angle: angle, tilt: 20, duration: duration)
      let direction: Double = angle > a0 ? 1 : -1
      let cross = crossing(
        from: start, to: b.time, angle: a0, angle, boundary: angle - direction * 45)
      let middle =
        abs(angle - a0) > 90
        ? OrientationSet(nearestOrientation(toAngle: a0 + direction * 90)) : OrientationSet()
      windows.append(
        Window(
          start: start, end: b.time + 1.5,
          expectation: .rotation(
            target: nearestOrientation(toAngle: angle), intermediates: middle, crossTime: cross,
            tilt: 20)))
      b.hold(2)
    }
    turn(to: 90, duration: 0.6)
    turn(to: 270, duration: 0.8)
    turn(to: 180, duration: 0.6)
    turn(to: 360, duration: 0.8)
    let downStart = b.time
    b.move(angle: 365, tilt: 89, duration: 1.0)
    b.hold(3)
    b.move(angle: 365, tilt: 20, duration: 1.0)
    b.hold(2)
    windows.append(
      Window(
        start: downStart, end: b.time,
        expectation: .hold(acceptable: OrientationSet(.normal))))
    var script = MotionScript(keyframes: b.keyframes, duration: b.time)
    addHand(to: &script, variety: v, random: &random)
    return Run(label: "demo", script: script, windows: windows)
  }
}
