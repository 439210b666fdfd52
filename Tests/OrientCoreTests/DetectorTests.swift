import Glibc
import Testing

@testable import OrientCore

/// The reading of an ideal sensor with the display turned `angle` degrees clockwise and leaning
/// back `tilt` degrees (Linux IIO convention: upright reads (0, -g, 0)).
func gravity(angle: Double, tilt: Double = 0) -> Vector3 {
  let a = angle * Double.pi / 180
  let b = tilt * Double.pi / 180
  let g = standardGravity
  return Vector3(g * sin(a) * cos(b), -g * cos(a) * cos(b), -g * sin(b))
}

/// A timeline of samples at `rate` Hz, built piece by piece.
struct Timeline {
  var rate: Double
  var samples: [Sample] = []
  var time = 0.0

  init(rate: Double) { self.rate = rate }

  /// Holds a pose for `seconds`.
  mutating func hold(_ seconds: Double, angle: Double, tilt: Double = 0) {
    move(seconds, from: (angle, tilt), to: (angle, tilt))
  }

  /// Moves smoothly (minimum jerk) from one pose to another over `seconds`.
  mutating func move(
    _ seconds: Double, from: (angle: Double, tilt: Double), to: (angle: Double, tilt: Double)
  ) {
    let end = time + seconds
    let start = time
    while time + 1 / rate <= end + 1e-9 {
      time += 1 / rate
      let tau = min(1, (time - start) / seconds)
      let s = tau * tau * tau * (10 - 15 * tau + 6 * tau * tau)
      samples.append(
        Sample(
          time: time,
          acceleration: gravity(
            angle: from.angle + (to.angle - from.angle) * s,
            tilt: from.tilt + (to.tilt - from.tilt) * s)))
    }
  }
}

/// Runs a detector over samples and returns the orientation changes.
func changes(
  _ samples: [Sample], parameters: DetectorParameters = DetectorParameters()
) -> [DetectorUpdate] {
  var detector = OrientationDetector(parameters: parameters)
  return samples.compactMap { detector.process($0) }.filter(\.orientationChanged)
}

@Suite struct DetectorTests {
  @Test(arguments: [
    (Vector3(0, -9.81, 0), Orientation.normal, Tilt.vertical),
    (Vector3(-9.81, 0, 0), Orientation.rightUp, Tilt.vertical),
    (Vector3(9.81, 0, 0), Orientation.leftUp, Tilt.vertical),
    (Vector3(0, 9.81, 0), Orientation.bottomUp, Tilt.vertical),
    (Vector3(0, 0, -9.81), Orientation.undefined, Tilt.faceUp),
    (Vector3(0, 0, 9.81), Orientation.undefined, Tilt.faceDown),
  ])
  func linuxConventionOrientationsFromTheFirstSample(
    reading: Vector3, expected: Orientation, tilt: Tilt
  ) throws {
    var detector = OrientationDetector()
    let processed = detector.process(Sample(time: 10, acceleration: reading))
    let update = try #require(processed)
    #expect(update.orientation == expected)
    #expect(update.orientationChanged == (expected != .undefined))
    #expect(update.tilt == tilt)
    #expect(update.time == 10)
    // More of the same changes nothing.
    for i in 1...50 {
      #expect(detector.process(Sample(time: 10 + Double(i) * 0.02, acceleration: reading)) == nil)
    }
    #expect(detector.orientation == expected)
    #expect(detector.hasReading)
    #expect(detector.gravity == reading)
  }

  @Test func rotationsThroughAllFourOrientations() {
    var line = Timeline(rate: 50)
    line.hold(1, angle: 0)
    line.move(0.6, from: (0, 10), to: (90, 10))
    line.hold(1.5, angle: 90, tilt: 10)
    line.move(0.8, from: (90, 10), to: (270, 10))
    line.hold(1.5, angle: 270, tilt: 10)
    line.move(0.6, from: (270, 10), to: (180, 10))
    line.hold(1.5, angle: 180, tilt: 10)
    let orientations = changes(line.samples).map(\.orientation)
    // The 180 degree flip from left-up to right-up may pass through bottom-up.
    let direct: [Orientation] = [.normal, .leftUp, .rightUp, .bottomUp]
    let viaBottom: [Orientation] = [.normal, .leftUp, .bottomUp, .rightUp, .bottomUp]
    #expect(orientations == direct || orientations == viaBottom, "\(orientations)")
  }

  @Test(arguments: [12.5, 25.0, 50.0, 100.0])
  func anAbruptCompleteTurnCommitsWithoutWaitingForTheFilter(rate: Double) throws {
    // A polled sensor whose reading jumps between two polls: once two samples agree, the
    // reading has settled and the change is decisive, without waiting for the filter.
    var detector = OrientationDetector()
    var time = 0.0
    for _ in 0..<Int(rate) {
      time += 1 / rate
      _ = detector.process(Sample(time: time, acceleration: gravity(angle: 0)))
    }
    let stepTime = time + 1 / rate
    var committed: Double?
    for _ in 0..<Int(rate) where committed == nil {
      time += 1 / rate
      if let update = detector.process(Sample(time: time, acceleration: gravity(angle: 90))),
        update.orientationChanged
      {
        #expect(update.orientation == .leftUp)
        committed = update.time
      }
    }
    let at = try #require(committed)
    // Two agreeing samples, and at least settle-time-fast (40 ms) of evidence.
    let bound = max(2.5 / rate, DetectorParameters().settleTimeFast + 2.5 / rate)
    #expect(at - stepTime <= bound, "committed \(at - stepTime) s after the step")
  }

  @Test(arguments: [25.0, 100.0])
  func aQuickHalfTurnDoesNotStopAtTheSidewaysOrientationItPasses(rate: Double) {
    var line = Timeline(rate: rate)
    line.hold(1, angle: 90, tilt: 10)
    line.move(0.35, from: (90, 10), to: (270, 10))
    line.hold(1.5, angle: 270, tilt: 10)
    #expect(changes(line.samples).map(\.orientation) == [.leftUp, .rightUp])
  }

  /// A hand wandering slowly across the boundary (no deliberate turn) keeps the band.
  @Test func hysteresisHoldsJustPastTheBoundaryAndSwitchesBeyondTheBand() {
    let band = DetectorParameters().hysteresis
    for (offset, switches) in [(3.0, false), (band - 2, false), (band + 3, true)] {
      var line = Timeline(rate: 100)
      line.hold(1, angle: 0)
      line.move(4, from: (0, 0), to: (45 + offset, 0))
      line.hold(5, angle: 45 + offset)
      // Coming back 3 degrees across the boundary must not switch back.
      line.move(0.5, from: (45 + offset, 0), to: (42, 0))
      line.hold(5, angle: 42)
      let orientations = changes(line.samples).map(\.orientation)
      #expect(
        orientations == (switches ? [.normal, .leftUp] : [.normal]),
        "held at 45 + \(offset) then 42")
    }
  }

  /// A deliberate turn that stops inside the band, past the boundary (a hand that turns in two
  /// strokes or hesitates), is where the device was turned to: committed once the hand has
  /// stopped there, and coming back a few degrees does not undo it.
  @Test(arguments: [12.5, 25.0, 100.0])
  func aDeliberateTurnThatStopsInsideTheBandCommits(rate: Double) throws {
    var line = Timeline(rate: rate)
    line.hold(1, angle: 0, tilt: 20)
    line.move(0.4, from: (0, 20), to: (52, 20))
    let stopped = line.time
    line.hold(2, angle: 52, tilt: 20)
    line.move(0.5, from: (52, 20), to: (42, 20))
    line.hold(3, angle: 42, tilt: 20)
    let found = changes(line.samples)
    #expect(found.map(\.orientation) == [.normal, .leftUp])
    let commit = try #require(found.last)
    #expect(commit.time - stopped < 0.5, "committed \(commit.time - stopped) s after stopping")
  }

  /// The opposite orientation has no band (as in Android's listener): a half turn that stops
  /// 5 degrees past the 135 degree boundary commits, and wandering back 10 degrees does not
  /// switch to the sideways orientation, whose band is still there.
  @Test(arguments: [25.0, 100.0])
  func aHalfTurnHasNoBand(rate: Double) {
    var line = Timeline(rate: rate)
    line.hold(1, angle: 0, tilt: 15)
    line.move(0.5, from: (0, 15), to: (140, 15))
    line.hold(2, angle: 140, tilt: 15)
    line.move(2, from: (140, 15), to: (130, 15))
    line.hold(3, angle: 130, tilt: 15)
    #expect(changes(line.samples).map(\.orientation) == [.normal, .bottomUp])
  }

  /// A phone in a trouser pocket while walking: the thigh swings it up to 50 degrees either
  /// way at every stride (1 Hz; the strides lengthen over the first two), past the band and
  /// back, with a 0.3 g bounce at every step. Each swing is as fast as a deliberate turn, but
  /// it swings back and forth: no change.
  @Test(arguments: [25.0, 100.0])
  func aPocketSwingingOnAWalkingLegDoesNotFlip(rate: Double) {
    var samples: [Sample] = []
    var t = 0.0
    while t < 20 {
      t += 1 / rate
      let walking = t > 2
      let stride = min(1, max(0, (t - 2) / 2))
      let swing = 50 * stride * sin(2 * Double.pi * 1 * t)
      let bounce = walking ? 0.3 * sin(2 * Double.pi * 2 * t) : 0
      samples.append(
        Sample(time: t, acceleration: gravity(angle: 20 + swing, tilt: 10) * (1 + bounce)))
    }
    #expect(changes(samples).map(\.orientation) == [.normal])
  }

  @Test func lyingFlatKeepsTheOrientationAndReportsTheTilt() {
    var line = Timeline(rate: 50)
    line.hold(1, angle: 90, tilt: 20)
    line.move(1, from: (90, 20), to: (90, 90))
    // Turned on the table: the in-plane angle means nothing while flat.
    line.move(1, from: (90, 90), to: (0, 89))
    line.hold(2, angle: 0, tilt: 89)
    line.move(1, from: (0, 89), to: (0, 20))
    line.hold(1.5, angle: 0, tilt: 20)
    var detector = OrientationDetector()
    var updates: [DetectorUpdate] = []
    for s in line.samples {
      if let u = detector.process(s) { updates.append(u) }
    }
    let orientations = updates.filter(\.orientationChanged).map(\.orientation)
    #expect(orientations == [.leftUp, .normal])
    let tilts = updates.filter(\.tiltChanged).map(\.tilt)
    #expect(tilts.contains(.faceUp))
    let flatIndex = updates.firstIndex { $0.tilt == .faceUp }
    let changeIndex = updates.lastIndex { $0.orientationChanged }
    #expect((flatIndex ?? 0) < (changeIndex ?? 0), "normal is committed only after lifting")
    // While flat, the orientation stayed left-up.
    for u in updates where u.tilt == .faceUp { #expect(u.orientation == .leftUp) }
  }

  @Test func startingFlatStaysUndefinedUntilLifted() throws {
    var line = Timeline(rate: 25)
    line.hold(2, angle: 30, tilt: -88)
    var detector = OrientationDetector()
    for s in line.samples { _ = detector.process(s) }
    #expect(detector.orientation == .undefined)
    #expect(detector.tilt == .faceDown)
    // Lifted to 60 degrees of tilt (below flat-leave), right-up: decided at the first sample.
    let lifted = Sample(time: line.time + 0.04, acceleration: gravity(angle: 265, tilt: -40))
    for i in 0..<3 {
      _ = detector.process(
        Sample(time: line.time + 0.04 * Double(i + 1), acceleration: lifted.acceleration))
      if detector.orientation != .undefined { break }
    }
    #expect(detector.orientation == .rightUp)
    #expect(detector.tilt == .tiltedDown)
  }

  @Test func shakingDoesNotFlip() {
    // Held 30 degrees towards left-up while shaken at 5 Hz with 1 g in the display plane.
    var detector = OrientationDetector()
    var orientations: [Orientation] = []
    for i in 0..<(100 * 8) {
      let t = Double(i) / 100
      let shake = t > 1 ? standardGravity * sin(2 * Double.pi * 5 * t) : 0
      let g = gravity(angle: 30, tilt: 20)
      let s = Sample(time: t, acceleration: Vector3(g.x + shake, g.y + 0.3 * shake, g.z))
      if let u = detector.process(s), u.orientationChanged { orientations.append(u.orientation) }
    }
    #expect(orientations == [.normal])
    #expect(detector.rejections.magnitude > 0, "the hardest jolts are rejected and counted")
  }

  @Test func invalidSamplesAreCountedNotFatal() throws {
    var detector = OrientationDetector()
    let g = standardGravity
    let bad: [Sample] = [
      Sample(time: 1, .nan, -g, 0),
      Sample(time: 1, 0, .infinity, 0),
      Sample(time: .nan, 0, -g, 0),
      Sample(time: 1, 0, 0, 0),
      Sample(time: 1.1, 0, -0.1 * g, 0),
      Sample(time: 1.2, 0, -3 * g, 0),
    ]
    for s in bad { #expect(detector.process(s) == nil) }
    #expect(detector.orientation == .undefined)
    #expect(!detector.hasReading)
    let processed = detector.process(Sample(time: 2, 0, -g, 0))
    let first = try #require(processed)
    #expect(first.orientation == .normal)
    #expect(detector.process(Sample(time: 1.5, g, 0, 0)) == nil, "time went backwards")
    let counts = detector.rejections
    #expect(counts.notFinite == 3)
    #expect(counts.zeroVector == 1)
    #expect(counts.magnitude == 2)
    #expect(counts.timeBackwards == 1)
    #expect(counts.total == 7)
  }

  @Test func rateIndependentCommits() {
    func script(rate: Double) -> [Sample] {
      var line = Timeline(rate: rate)
      line.hold(1, angle: 5, tilt: 15)
      line.move(0.7, from: (5, 15), to: (95, 15))
      line.hold(2, angle: 95, tilt: 15)
      line.move(0.7, from: (95, 15), to: (185, 30))
      line.hold(2, angle: 185, tilt: 30)
      line.move(1.2, from: (185, 30), to: (270, 40))
      line.hold(2, angle: 270, tilt: 40)
      line.move(1, from: (270, 40), to: (270, 88))
      line.hold(2, angle: 200, tilt: 88)
      line.move(0.7, from: (270, 88), to: (355, 20))
      line.hold(2, angle: 355, tilt: 20)
      return line.samples
    }
    let slow = changes(script(rate: 12.5))
    let fast = changes(script(rate: 200))
    let expected: [Orientation] = [.normal, .leftUp, .bottomUp, .rightUp, .normal]
    #expect(slow.map(\.orientation) == expected)
    #expect(fast.map(\.orientation) == expected)
    // Same decisions, within about two 12.5 Hz sample periods of each other.
    for (a, b) in zip(slow.dropFirst(), fast.dropFirst()) {
      #expect(abs(a.time - b.time) < 0.2, "\(a.orientation): \(a.time) vs \(b.time)")
    }
  }

  @Test func aGapRestartsTheFilterAndDecidesAtOnce() throws {
    var detector = OrientationDetector()
    var t = 0.0
    for _ in 0..<50 {
      t += 0.02
      _ = detector.process(Sample(time: t, acceleration: gravity(angle: 0, tilt: 10)))
    }
    #expect(detector.orientation == .normal)
    #expect(detector.filterResets == 1)
    // The sensor was paused for 30 s; it resumes with the device turned to left-up.
    t += 30
    let resumed = gravity(angle: 88, tilt: 10)
    let processed = detector.process(Sample(time: t, acceleration: resumed))
    let update = try #require(processed)
    #expect(update.orientation == .leftUp)
    #expect(update.time == t)
    #expect(detector.gravity == resumed)
    #expect(detector.filterResets == 2)

    // Without a gap, the same jump takes more than one sample (the evidence rule).
    var steady = OrientationDetector()
    for i in 1...50 {
      _ = steady.process(Sample(time: Double(i) * 0.02, acceleration: gravity(angle: 0, tilt: 10)))
    }
    #expect(steady.process(Sample(time: 1.02, acceleration: resumed)) == nil)
    #expect(steady.orientation == .normal)
  }

  @Test func aGapKeepsTheHysteresis() {
    var detector = OrientationDetector()
    for i in 1...50 {
      _ = detector.process(Sample(time: Double(i) * 0.02, acceleration: gravity(angle: 10)))
    }
    // Resumed at 50 degrees, inside the band: still normal.
    _ = detector.process(Sample(time: 40, acceleration: gravity(angle: 50)))
    #expect(detector.orientation == .normal)
  }

  @Test func deterministic() {
    var line = Timeline(rate: 33)
    line.hold(1, angle: 3)
    line.move(0.5, from: (3, 0), to: (100, 30))
    line.hold(1, angle: 100, tilt: 30)
    line.move(0.5, from: (100, 30), to: (170, 80))
    line.hold(1, angle: 170, tilt: 80)
    let a = changes(line.samples)
    let b = changes(line.samples)
    #expect(a == b)
    #expect(!a.isEmpty)
  }

  @Test func tiltStatesUseTheIioSensorProxyNames() {
    var detector = OrientationDetector()
    var seen: [Tilt] = []
    var t = 0.0
    for tilt in [0.0, 45, 85, 45, 0, -45, -85] {
      for _ in 0..<30 {
        t += 0.02
        if let u = detector.process(Sample(time: t, acceleration: gravity(angle: 0, tilt: tilt))),
          u.tiltChanged
        {
          seen.append(u.tilt)
        }
      }
    }
    #expect(seen == [.vertical, .tiltedUp, .faceUp, .tiltedUp, .vertical, .tiltedDown, .faceDown])
    #expect(Tilt.allCases.map(\.rawValue).contains("tilted-up"))
  }
}

/// Issue 25: what follows a still period, and the gait.
@Suite struct DetectorSwingTests {
  /// A hand that wiggles the device back and forth (the lead reverses twice: the swing rule),
  /// then turns it to landscape and holds it still: once the reference filter has caught up
  /// the swing is over, and the turn commits within 0.9 s of the hand stopping instead of
  /// waiting `settle-time-slow` for the reference (1.15 s before the swing could end).
  @Test(arguments: [50.0, 100.0])
  func aSwingThatStopsIsOver(rate: Double) {
    var line = Timeline(rate: rate)
    line.hold(1, angle: 0, tilt: 20)
    line.move(0.2, from: (0, 20), to: (-40, 20))
    line.move(0.3, from: (-40, 20), to: (30, 20))
    line.move(0.25, from: (30, 20), to: (-20, 20))
    line.move(0.35, from: (-20, 20), to: (95, 20))
    let stop = line.time
    line.hold(3, angle: 95, tilt: 20)
    let result = changes(line.samples)
    #expect(result.map(\.orientation) == [.normal, .leftUp])
    let committed = result.last.map { $0.time - stop } ?? 99
    #expect(committed <= 0.9, "left-up \(committed) s after the hand stopped")
  }

  /// Turned to landscape while running (a 2 Hz bounce of 0.5 g along gravity: the filtered
  /// magnitude is beyond `impact-threshold` most of the time): the deliberate turn counts
  /// through the impacts once the reference filter, which averages the gait out, has crossed
  /// into the new sector, so left-up commits within 0.4 s of the 45 degree crossing (it
  /// waited for the reference to be decisive: 0.42-0.47 s at 50 and 100 Hz).
  @Test(arguments: [25.0, 50.0, 100.0])
  func aTurnWhileRunningCountsThroughTheImpacts(rate: Double) {
    var samples: [Sample] = []
    var crossed = 0.0
    var t = 0.0
    while t < 6 {
      t += 1 / rate
      let x = min(1, max(0, (t - 3) / 0.5))
      let angle = 90 * x * x * x * (10 - 15 * x + 6 * x * x)
      if angle >= 45 && crossed == 0 { crossed = t }
      let bounce = 0.5 * sin(2 * Double.pi * 2 * t)
      samples.append(Sample(time: t, acceleration: gravity(angle: angle, tilt: 20) * (1 + bounce)))
    }
    let result = changes(samples)
    #expect(result.map(\.orientation) == [.normal, .leftUp])
    let latency = result.last.map { $0.time - crossed } ?? 99
    #expect(latency <= 0.4, "left-up \(latency) s after the 45 degree crossing")
  }
}

@Suite struct DetectorAfterStillTests {
  /// A sampler that slowed down while the device was still reads the turned device once: that
  /// clean, decisive sample commits at once, as iio-sensor-proxy's poll would (a sample the
  /// filter has forgotten the past for is judged alone, like the first after a gap).
  @Test(arguments: [0.2, 0.7])
  func aCleanDecisiveSampleAfterAStillPauseCommitsAlone(interval: Double) {
    var detector = OrientationDetector()
    var t = 0.0
    for _ in 0..<60 {
      t += 1.0 / 30
      _ = detector.process(Sample(time: t, acceleration: gravity(angle: 0, tilt: 20)))
    }
    #expect(detector.orientation == .normal)
    t += interval
    let update = detector.process(Sample(time: t, acceleration: gravity(angle: 90, tilt: 20)))
    #expect(update?.orientationChanged == true)
    #expect(detector.orientation == .leftUp)
  }

  /// At the full rate a single wild sample still never commits.
  @Test func oneSampleAtTheFullRateDoesNotCommit() {
    var detector = OrientationDetector()
    var t = 0.0
    for _ in 0..<60 {
      t += 1.0 / 30
      _ = detector.process(Sample(time: t, acceleration: gravity(angle: 0, tilt: 20)))
    }
    t += 1.0 / 30
    _ = detector.process(Sample(time: t, acceleration: gravity(angle: 90, tilt: 20)))
    #expect(detector.orientation == .normal)
  }

  /// Carried upside down while running (a 3 Hz bounce of 0.6 g along gravity: the fast
  /// filter's magnitude is beyond `impact-threshold` nearly all the time, with no lull of
  /// `motion-hold`): the slower reference filter averages the gait out and the detector
  /// settles on bottom-up within two seconds (it used to wait for the running to stop).
  @Test func walkingUpsideDownSettles() {
    var detector = OrientationDetector()
    var t = 0.0
    for _ in 0..<100 {
      t += 0.01
      _ = detector.process(Sample(time: t, acceleration: gravity(angle: 0, tilt: 25)))
    }
    #expect(detector.orientation == .normal)
    // Turned upside down at once, running: 3 Hz bounce of 0.6 g and 0.1 g of sway.
    let start = t
    var settled: Double?
    while t < start + 6 {
      t += 0.01
      let bounce = 0.6 * sin(2 * Double.pi * 3 * (t - start))
      let sway = 0.1 * sin(2 * Double.pi * 1.5 * (t - start))
      let down = gravity(angle: 180, tilt: 25)
      let a = down * (1 + bounce) + Vector3(sway * standardGravity, 0, 0)
      if detector.process(Sample(time: t, acceleration: a))?.orientationChanged == true,
        detector.orientation == .bottomUp, settled == nil
      {
        settled = t - start
      }
    }
    let seconds = try? #require(settled)
    #expect((seconds ?? 99) <= 2, "settled after \(seconds ?? -1) s")
    #expect(detector.orientation == .bottomUp)
  }
}
