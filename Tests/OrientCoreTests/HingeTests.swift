import Glibc
import Testing

@testable import OrientCore

/// Hinge angle and posture of a convertible (issue 15), on exact geometry: the two readings of
/// a machine opened to a known angle in a known pose (`HingeGeometry`).
@Suite struct HingeTests {
  /// Feeds both parts at 50 Hz for `seconds` from `start`, holding the pose.
  @discardableResult
  static func hold(
    _ tracker: inout HingeTracker, angle: Double, pitch: Double = 0, roll: Double = 0,
    from start: Double, seconds: Double, extra: Vector3 = .zero
  ) -> Double {
    let r = HingeGeometry.readings(angle: angle, pitch: pitch, roll: roll)
    var t = start
    while t < start + seconds {
      tracker.process(.base, time: t, r.base + extra)
      tracker.process(.lid, time: t + 0.005, r.lid + extra)
      t += 0.02
    }
    return t
  }

  @Test(arguments: [-50.0, -20, 0, 30, 60])
  func theAngleIsExactInEveryPoseWhereTheHingeIsHorizontal(pitch: Double) {
    for roll in [-40.0, 0, 35] {
      for angle in stride(from: 40.0, through: 320, by: 20) {
        var tracker = HingeTracker()
        let r = HingeGeometry.readings(angle: angle, pitch: pitch, roll: roll)
        tracker.process(.base, time: 0, r.base)
        tracker.process(.lid, time: 0, r.lid)
        #expect(abs(tracker.angle - angle) < 1e-9, "angle \(angle) pitch \(pitch) roll \(roll)")
      }
    }
  }

  @Test func theConventionReadsUprightAtNinetyDegreesAndTheSameFlat() {
    let laptop = HingeGeometry.readings(angle: 90)
    #expect(abs(laptop.lid.y + standardGravity) < 1e-9)
    #expect(abs(laptop.base.z + standardGravity) < 1e-9)
    let flat = HingeGeometry.readings(angle: 180, pitch: 20, roll: 10)
    #expect((flat.lid - flat.base).magnitude < 1e-9)
  }

  @Test func aReversedHingeAxisMirrorsTheAngle() throws {
    var parameters = HingeParameters()
    try parameters.set("hinge-axis", "-x")
    var tracker = HingeTracker(parameters: parameters)
    let r = HingeGeometry.readings(angle: 120, pitch: 10)
    tracker.process(.base, time: 0, r.base)
    tracker.process(.lid, time: 0, r.lid)
    #expect(abs(tracker.angle - 240) < 1e-9)
  }

  @Test func aHingeAlongYIsFollowedWhenConfigured() throws {
    // A base sensor turned 90 degrees in its plane (x and y swapped) with the lid's the same:
    // the hinge is the frames' -y axis.
    var parameters = HingeParameters()
    try parameters.set("hinge-axis", "0 -1 0")
    var tracker = HingeTracker(parameters: parameters)
    let r = HingeGeometry.readings(angle: 100, pitch: 15)
    let swap = { (v: Vector3) in Vector3(v.y, -v.x, v.z) }
    tracker.process(.base, time: 0, swap(r.base))
    tracker.process(.lid, time: 0, swap(r.lid))
    #expect(abs(tracker.angle - 100) < 1e-9)
  }

  @Test func eachPostureIsRecognisedFromItsAngleAndTheDisplaysWayUp() {
    // (angle, base pitch, expected)
    let cases: [(Double, Double, Posture)] = [
      (5, 0, .closed), (110, 0, .laptop), (180, 0, .flat), (300, 60, .tent), (270, 180, .stand),
      (355, 180, .tablet),
    ]
    for (angle, pitch, expected) in cases {
      var tracker = HingeTracker()
      Self.hold(&tracker, angle: angle, pitch: pitch, from: 0, seconds: 1)
      #expect(tracker.state.posture == expected, "angle \(angle) pitch \(pitch)")
      #expect(tracker.state.isReliable)
    }
  }

  @Test func closedAndTabletAreToldApartByContinuity() {
    // Folded flat display up: a tablet. Opened to laptop and closed again: closed, although the
    // readings at 2 and 358 degrees are the same.
    var tracker = HingeTracker()
    var t = Self.hold(&tracker, angle: 358, pitch: 180, from: 0, seconds: 1)
    // Turned over (display up): gravity into the display's back.
    #expect(tracker.state.posture == .tablet)
    for angle in stride(from: 350.0, through: 100, by: -10) {
      t = Self.hold(&tracker, angle: angle, from: t, seconds: 0.1)
    }
    t = Self.hold(&tracker, angle: 100, from: t, seconds: 1)
    #expect(tracker.state.posture == .laptop)
    for angle in stride(from: 90.0, through: 0, by: -10) {
      t = Self.hold(&tracker, angle: angle, from: t, seconds: 0.1)
    }
    Self.hold(&tracker, angle: 1, from: t, seconds: 1)
    #expect(tracker.state.posture == .closed)
    #expect(tracker.angle < 5)
  }

  @Test func aJumpToTheSeamLandsOnTheSideNearerTheLastAngle() {
    // A lid moved tens of degrees between two readings (a sensor read at its still rate, a
    // quick hand), display facing down both times, so only the history can tell.
    var folded = HingeTracker()
    var t = Self.hold(&folded, angle: 270, from: 0, seconds: 1)
    #expect(folded.state.posture == .stand || folded.state.posture == .tent)
    t = Self.hold(&folded, angle: 350, from: t, seconds: 1)
    #expect(folded.state.posture == .tablet)
    #expect(folded.angle > 345)
    var closing = HingeTracker()
    t = Self.hold(&closing, angle: 80, from: 0, seconds: 1)
    Self.hold(&closing, angle: 3, from: t, seconds: 1)
    #expect(closing.state.posture == .closed)
  }

  @Test func afterTheHingeWasVerticalTheDisplaysFacingDecidesAtTheSeam() {
    // Open at 110, picked up on its side (hinge vertical) and folded into a tablet unseen, then
    // laid down display up: the 110 from before is no history.
    var tracker = HingeTracker()
    var t = Self.hold(&tracker, angle: 110, from: 0, seconds: 1)
    #expect(tracker.state.posture == .laptop)
    t = Self.hold(&tracker, angle: 200, roll: 88, from: t, seconds: 1)
    #expect(!tracker.state.isReliable)
    Self.hold(&tracker, angle: 358, pitch: 180, from: t, seconds: 1)
    #expect(tracker.state.posture == .tablet)
  }

  @Test func aFirstReadingAtTheSeamIsATabletWhenTheDisplayFacesUp() {
    let lid = HingeGeometry.readings(angle: 0).lid
    #expect(lid.z > 0)  // closed on a table: the display faces down
    var closed = HingeTracker()
    Self.hold(&closed, angle: 0, from: 0, seconds: 1)
    #expect(closed.state.posture == .closed)
    var tablet = HingeTracker()
    Self.hold(&tablet, angle: 0, pitch: 180, from: 0, seconds: 1)
    #expect(tablet.state.posture == .tablet)
    #expect(tablet.state.angle == 360)
  }

  @Test func aVerticalHingeIsUnreliableAndThePostureIsHeld() {
    var tracker = HingeTracker()
    var t = Self.hold(&tracker, angle: 110, from: 0, seconds: 1)
    #expect(tracker.state.posture == .laptop)
    // On its side: rolled 90 degrees, the hinge is vertical; folded to 300 meanwhile.
    t = Self.hold(&tracker, angle: 300, roll: 88, from: t, seconds: 2)
    #expect(!tracker.state.isReliable)
    #expect(tracker.state.angle.isNaN)
    #expect(tracker.unreliability == .hingeVertical)
    #expect(tracker.state.posture == .laptop)
    // Laid down again: reliable, and the new posture is committed.
    Self.hold(&tracker, angle: 300, pitch: 60, from: t, seconds: 1)
    #expect(tracker.state.isReliable)
    #expect(tracker.state.posture == .tent)
  }

  @Test func accelerationIsUnreliableAndThePostureIsHeld() {
    var tracker = HingeTracker()
    var t = Self.hold(&tracker, angle: 0, from: 0, seconds: 1)
    #expect(tracker.state.posture == .closed)
    // Carried: 0.3 g sideways on both parts.
    t = Self.hold(
      &tracker, angle: 0, pitch: 20, from: t, seconds: 1, extra: Vector3(0, 0.3 * 9.8, 0))
    #expect(tracker.unreliability == .accelerating)
    #expect(!tracker.state.isReliable)
    #expect(tracker.state.posture == .closed)
    // Still again: reliable after `reliableHold`.
    Self.hold(&tracker, angle: 0, from: t, seconds: 0.5)
    #expect(tracker.state.isReliable)
  }

  @Test func onlyOnePartAcceleratingIsSeenAlongTheHinge() {
    // The lid pushed along the hinge: its magnitude stays near 1 g, but it no longer agrees
    // with the base along x.
    var tracker = HingeTracker()
    let r = HingeGeometry.readings(angle: 110, pitch: 5)
    var push = r.lid + Vector3(0.25 * 9.8, 0, 0)
    push = push * (standardGravity / push.magnitude)
    for i in 0..<50 {
      let t = Double(i) * 0.02
      tracker.process(.base, time: t, r.base)
      tracker.process(.lid, time: t, push)
    }
    #expect(tracker.unreliability == .accelerating)
  }

  @Test func anAngleWobblingAtABoundaryDoesNotFlip() {
    var tracker = HingeTracker()
    var t = Self.hold(&tracker, angle: 155, from: 0, seconds: 1)
    #expect(tracker.state.posture == .laptop)
    var changes = 0
    var last = tracker.state.posture
    for i in 0..<100 {
      let angle = 165 + 6 * sin(Double(i) * 0.7)
      t = Self.hold(&tracker, angle: angle, from: t, seconds: 0.1)
      if tracker.state.posture != last {
        changes += 1
        last = tracker.state.posture
      }
    }
    #expect(changes == 0)
    #expect(tracker.state.posture == .laptop)
  }

  @Test func aNewPostureWaitsForTheSettleTime() {
    var tracker = HingeTracker()
    var t = Self.hold(&tracker, angle: 110, from: 0, seconds: 1)
    // Flat for less than the settle time, then back: no change.
    t = Self.hold(&tracker, angle: 185, from: t, seconds: 0.15)
    #expect(tracker.state.posture == .laptop)
    t = Self.hold(&tracker, angle: 110, from: t, seconds: 0.5)
    #expect(tracker.state.posture == .laptop)
    let start = t
    while tracker.state.posture == .laptop, t < start + 2 {
      t = Self.hold(&tracker, angle: 185, from: t, seconds: 0.02)
    }
    #expect(tracker.state.posture == .flat)
    #expect(t - start >= tracker.parameters.settleTime)
    #expect(t - start < tracker.parameters.settleTime + 0.15)
  }

  @Test func tentAndStandSwapWhenTheDisplayTurnsOver() {
    var tracker = HingeTracker()
    var t = Self.hold(&tracker, angle: 280, pitch: 50, from: 0, seconds: 1)
    #expect(tracker.state.posture == .tent)
    t = Self.hold(&tracker, angle: 280, pitch: 180, from: t, seconds: 1)
    #expect(tracker.state.posture == .stand)
    #expect(tracker.state.posture.isTabletMode)
  }

  @Test func theReportedAngleMovesInSteps() {
    var tracker = HingeTracker()
    var t = Self.hold(&tracker, angle: 100, from: 0, seconds: 1)
    let first = tracker.state.angle
    t = Self.hold(&tracker, angle: 100.4, from: t, seconds: 0.5)
    #expect(tracker.state.angle == first)
    Self.hold(&tracker, angle: 103, from: t, seconds: 0.5)
    #expect(tracker.state.angle != first)
    #expect(abs(tracker.state.angle - 103) < tracker.parameters.reportStep)
  }

  @Test func staleReadingsOfOnePartAreUnreliable() {
    var tracker = HingeTracker()
    let r = HingeGeometry.readings(angle: 110)
    tracker.process(.base, time: 0, r.base)
    for i in 0..<50 { tracker.process(.lid, time: Double(i) * 0.02, r.lid) }
    #expect(tracker.unreliability == .stale)
    #expect(!tracker.state.isReliable)
  }

  @Test func badParametersAreRejectedWithTheirKey() {
    var p = HingeParameters()
    #expect(throws: HingeParameterError.self) { try p.set("hinge-axis", "w") }
    #expect(throws: HingeParameterError.self) { try p.set("flat-from", "10") }
    #expect(throws: HingeParameterError.self) { try p.set("nope", "1") }
    #expect(HingeParameters.axis("0 0 2") == Vector3(0, 0, 1))
    #expect(HingeParameters.axis("0 0 0") == nil)
  }

  @Test func everyKeyIsDescribedAsSetReadsIt() throws {
    var p = HingeParameters()
    for key in HingeParameters.keys {
      let text = try #require(p.describe(key), "\(key) has no description")
      // The value part (before the range) is accepted by set and changes nothing.
      let value = String(text.split(separator: " ")[0])
      try p.set(key, value)
      #expect(p == HingeParameters(), "\(key) = \(value)")
    }
    #expect(p.describe("report-step") == "1 (0...90)")
    #expect(p.describe("nope") == nil)
    try p.set("hinge-axis", "-y")
    #expect(p.describe("hinge-axis") == "-y")
  }
}
