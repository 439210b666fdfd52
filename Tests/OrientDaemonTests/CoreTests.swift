import DBusKit
import OrientCore
import OrientDaemon
import OrientWire
import Sensors
import SystemKit
import TestThreads
import Testing

/// The daemon's logic without a bus or devices (DaemonCore on the fakes of CoreFakes.swift,
/// time from a ManualScheduler): claims, the first-reading hold and its bound, polkit gating
/// and its per-client order, publishing to claimers only, hotplug, shutdown. Each runs in
/// milliseconds; ClaimTests, PolkitTests, AmbientTests and the VM prove the same wiring with a
/// real bus, polkitd, umockdev and real clients.
@Suite(.ownThreads) struct CoreTests {
  @Test func aFirstClaimIsAnsweredAfterTheFirstReadingWithASnapshotFirst() {
    let rig = CoreRig()
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    #expect(rig.core.published.hasAccelerometer)
    #expect(!rig.sensors.isReading(.accelerometer), "nothing is read while nobody claims")
    let call = rig.claim(":1.5", .orientd)
    #expect(rig.sensors.isReading(.accelerometer))
    #expect(!call.answered, "held until the first reading")
    #expect(rig.tracker.tracked == [":1.5"])
    rig.sensors.deliver(.accelerometer, FakeSensor.gravity(.leftUp))
    #expect(call.answered)
    #expect(rig.core.published.orientation == .leftUp)
    // The reading is published to the claimer, then the claimer gets its snapshot.
    let sent = rig.bus.sent.suffix(4)
    #expect(
      Array(sent) == [
        .publish(.orientation, to: [":1.5"]), .publish(.sensorProxy, to: []),
        .publish(.posture, to: []), .snapshot(.orientd, to: ":1.5"),
      ])
    // A later claim is answered at once, after its own snapshot.
    let later = rig.claim(":1.6", .sensorProxy)
    #expect(later.answered)
    #expect(rig.bus.snapshots.last == .snapshot(.sensorProxy, to: ":1.6"))
  }

  /// A BMI160's scans taken to a gyroscope stream's rate change the accelerometer's rate
  /// alone: the detector goes on (a reset would commit the next reading at once, so one
  /// jolt at that moment would turn the screen).
  @Test func anAccelerometerRetunedKeepsItsDetectorAndOneReadingDoesNotTurn() {
    let rig = CoreRig()
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    rig.claim(":1.5", .orientd)
    rig.sensors.deliver(.accelerometer, FakeSensor.gravity(.normal), at: 1000)
    #expect(rig.core.published.orientation == .normal)
    rig.sensors.request(rate: 200, for: .accelerometer)
    #expect(rig.sensors.status(of: .accelerometer)?.rate == 208)
    rig.sensors.deliver(.accelerometer, FakeSensor.gravity(.leftUp), at: 1000.02)
    #expect(rig.core.published.orientation == .normal, "one reading after a retune")
    // The sensor read afresh (released, claimed again) decides from its first reading.
    rig.release(":1.5", .orientd)
    rig.claim(":1.5", .orientd)
    rig.sensors.deliver(.accelerometer, FakeSensor.gravity(.leftUp), at: 1001)
    #expect(rig.core.published.orientation == .leftUp)
  }

  @Test func theHoldLastsAtMostTheBoundAndClaimsMadeMeanwhileWaitToo() {
    let rig = CoreRig()
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    let first = rig.claim(":1.5", .orientd)
    rig.scheduler.advance(by: .milliseconds(1000))
    let second = rig.claim(":1.6", .posture)
    #expect(!first.answered && !second.answered)
    rig.scheduler.advance(by: .milliseconds(499))
    #expect(!first.answered)
    rig.scheduler.advance(by: .milliseconds(1))
    #expect(first.answered && second.answered)
    #expect(rig.log.text.contains("no usable reading within 1.5 s; answering 2 claim(s)"))
    #expect(rig.scheduler.armedTimers == 0)
    // Once the hold gave up, a claim is answered at once.
    #expect(rig.claim(":1.7", .orientd).answered)
  }

  @Test func withoutASensorAClaimIsAnsweredAtOnceAndASensorThatAppearsIsRead() {
    let rig = CoreRig()
    let call = rig.claim(":1.5", .orientd)
    #expect(call.answered)
    #expect(!rig.core.published.hasAccelerometer)
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    #expect(rig.sensors.isReading(.accelerometer), "claimed, so read as soon as it appears")
    // Everyone hears that it appeared (the bus broadcasts HasAccelerometer's change).
    #expect(rig.bus.states[.orientation]?.hasAccelerometer == true)
    // Claims made while it starts wait for its first reading.
    let meanwhile = rig.claim(":1.6", .orientd)
    #expect(!meanwhile.answered)
    rig.sensors.deliver(.accelerometer, FakeSensor.gravity(.normal))
    #expect(meanwhile.answered)
  }

  @Test func aSensorThatGoesAwayAnswersHeldClaimsAndClearsTheState() {
    let rig = CoreRig()
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    rig.claim(":1.4", .orientd)
    rig.sensors.deliver(.accelerometer, FakeSensor.gravity(.rightUp))
    #expect(rig.core.published.orientation == .rightUp)
    rig.sensors.disappear(.accelerometer)
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer("iio:device3"))
    let held = rig.claim(":1.5", .orientd)
    #expect(!held.answered)
    rig.sensors.disappear(.accelerometer)
    #expect(held.answered)
    #expect(!rig.core.published.hasAccelerometer)
    #expect(rig.core.published.orientation == .undefined)
    #expect(throws: DBusError.self) { try rig.core.reading() }
  }

  @Test func releasesAndVanishedClientsStopReadingAndTheTracker() {
    let rig = CoreRig()
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    rig.claim(":1.5", .orientd)
    rig.claim(":1.5", .sensorProxy)
    rig.claim(":1.6", .orientd)
    rig.sensors.deliver(.accelerometer, FakeSensor.gravity(.normal))
    #expect(rig.core.claims.clientCount == 2)
    let release = rig.release(":1.5", .orientd)
    #expect(release.answered)
    #expect(rig.tracker.tracked == [":1.5", ":1.6"], "still holds the compatibility claim")
    rig.release(":1.5", .sensorProxy)
    #expect(rig.tracker.tracked == [":1.6"])
    #expect(rig.sensors.isReading(.accelerometer))
    rig.core.vanished(":1.6")
    #expect(rig.log.text.contains(":1.6 left the bus"))
    #expect(!rig.sensors.isReading(.accelerometer), "nobody claims: nothing is read")
    #expect(rig.core.claims.isEmpty)
    // Releasing without a claim succeeds.
    #expect(rig.release(":1.9", .orientd).answered)
  }

  @Test func polkitGatesTheCompatibilityClaimsAndEachClientWaitsOnlyForItself() {
    let rig = CoreRig()
    rig.sensors.appear(.light, FakeSensor.ambient(.light))
    // orientd's own API is not checked.
    #expect(rig.claimWithoutPolkit(":1.3", .orientd).answered)
    #expect(rig.authority.pending.isEmpty)
    // The first client's check is slow; another client claims meanwhile and is answered.
    let slow = FakeCall(":1.5", "ClaimLight")
    rig.core.claim(slow, .light)
    let slowNext = FakeCall(":1.5", "ClaimProximity")
    rig.core.claim(slowNext, .proximity)
    let slowRelease = FakeCall(":1.5", "ReleaseLight")
    rig.core.release(slowRelease, .light)
    #expect(
      rig.authority.pending.map(\.action) == [Wire.claimSensorAction, Wire.claimSensorAction],
      "claims are checked, a release is not")
    let quick = FakeCall(":1.6", "ClaimAccelerometer")
    rig.core.claim(quick, .sensorProxy)
    rig.authority.answer(":1.6", .allowed)
    #expect(quick.answered, "the second client did not wait for the first one's check")
    #expect(!slow.answered && !slowNext.answered && !slowRelease.answered)
    // polkit answers the first client's second claim before its first: applied in call order,
    // and the release after both.
    rig.authority.answerLast(":1.5", .allowed)
    #expect(!slowNext.answered, "the second claim waits for its client's first")
    #expect(!slowRelease.answered, "the release waits for its client's earlier claims")
    rig.authority.answer(":1.5", .allowed)
    #expect(slow.error == nil && slowNext.error == nil && slowRelease.answered)
    #expect(rig.core.claims.claimers(.light).isEmpty, "claimed, then released, in that order")
    #expect(rig.core.claims.claimers(.proximity) == [":1.5"])
    // Refused: AccessDenied, nothing claimed, nothing read.
    let refused = FakeCall(":1.7", "ClaimLight")
    rig.core.claim(refused, .light)
    rig.authority.answer(":1.7", .denied(nil))
    #expect(refused.error == .accessDenied)
    #expect(!rig.core.claims.holds(":1.7"))
    // A release needs no authorization: a client polkit no longer lets claim (its session
    // went inactive) may still give up what it holds.
    let release = FakeCall(":1.5", "ReleaseProximity")
    rig.core.release(release, .proximity)
    #expect(release.answered && release.error == nil && rig.authority.pending.isEmpty)
    #expect(rig.core.claims.claimers(.proximity).isEmpty)
    // No polkit daemon: allowed, as iio-sensor-proxy 3.0.
    let absent = FakeCall(":1.8", "ClaimLight")
    rig.core.claim(absent, .light)
    rig.authority.answer(":1.8", .unavailable("ServiceUnknown"))
    #expect(rig.core.claims.claimers(.light) == [":1.8"])
  }

  @Test func ambientClaimsHoldUntilTheirOwnReadingAndChangesGoToTheirClaimersOnly() {
    let rig = CoreRig()
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    rig.sensors.appear(.light, FakeSensor.ambient(.light))
    rig.sensors.appear(.proximity, FakeSensor.ambient(.proximity, "iio:device2"))
    #expect(rig.core.published.ambient.hasLight && rig.core.published.ambient.hasProximity)
    let light = rig.claim(":1.5", .light)
    #expect(!light.answered)
    #expect(rig.sensors.wanted == [.light], "a light claim reads light only")
    rig.sensors.deliver(.light, .light(55, .lux))
    #expect(light.answered)
    #expect(rig.bus.snapshots.last == .snapshot(.light, to: ":1.5"))
    #expect(rig.bus.sent.contains(.publish(.sensorProxy, to: [":1.5"])))
    let proximity = rig.claim(":1.6", .proximity)
    rig.sensors.deliver(.proximity, .proximity(near: true))
    #expect(proximity.answered && rig.core.published.ambient.proximityNear)
    #expect(rig.bus.sent.last == .snapshot(.proximity, to: ":1.6"))
    let before = rig.bus.sent.count
    rig.sensors.deliver(.light, .light(150, .lux))
    #expect(
      Array(rig.bus.sent.dropFirst(before)) == [.publish(.sensorProxy, to: [":1.5"])],
      "a light change goes to the light claimer only")
    // An unchanged reading publishes nothing.
    rig.sensors.deliver(.light, .light(150, .lux))
    #expect(rig.bus.sent.count == before + 1)
    rig.sensors.disappear(.light)
    #expect(!rig.core.published.ambient.hasLight && rig.core.published.ambient.lightLevel == 0)
  }

  @Test func shutdownAnswersHeldClaimsFailsWaitingChecksAndGrantsNothingMore() {
    let rig = CoreRig()
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    let held = rig.claim(":1.5", .orientd)
    let waiting = FakeCall(":1.6", "ClaimAccelerometer")
    rig.core.claim(waiting, .sensorProxy)
    rig.core.shutdown()
    #expect(held.answered)
    #expect(waiting.error == .failed)
    #expect(rig.sensors.stoppedAll && !rig.sensors.isReading(.accelerometer))
    let late = FakeCall(":1.7")
    rig.core.claim(late, .orientd)
    #expect(late.error == .failed)
    #expect(rig.sensors.wanted.isEmpty)
  }

  @Test func aReloadChangesTheDetectorAndHandsTheSensorsTheirPart() throws {
    let rig = CoreRig()
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    let new = try DaemonConfiguration(
      parsing: "[detector]\nhysteresis = 10\n[sampling]\nlight-interval = 1\n", source: "t.conf")
    rig.core.reload(new)
    #expect(rig.log.text.contains("new detector parameters"))
    #expect(rig.sensors.updates.last?.ambient.lightInterval == .seconds(1))
    #expect(rig.sensors.updates.last?.accelerometer == AccelerometerConfiguration())
  }

  @Test func thePostureClaimReadsTheBaseOnlyOnAConvertible() {
    var configuration = DaemonConfiguration()
    configuration.posture.tabletModeSwitch = .off
    let rig = CoreRig(configuration: configuration)
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    rig.claim(":1.5", .posture)
    #expect(rig.sensors.wanted == [.accelerometer], "no base: no hinge, the base is not read")
    rig.sensors.appear(.baseAccelerometer, FakeSensor.accelerometer("iio:device1", base: true))
    #expect(rig.core.postureState.hasHinge)
    #expect(rig.sensors.wanted == [.accelerometer, .baseAccelerometer])
    rig.release(":1.5", .posture)
    #expect(rig.sensors.wanted.isEmpty)
  }
}

extension CoreRig {
  /// Claims `target`, which has no polkit action.
  func claimWithoutPolkit(_ sender: String, _ target: ClaimTarget) -> FakeCall {
    let call = FakeCall(sender, target.claimMethod)
    core.claim(call, target)
    return call
  }
}

extension FakeAuthority {
  /// Answers the last pending check of `sender`.
  func answerLast(_ sender: String, _ verdict: AuthorityVerdict) {
    guard let index = pending.lastIndex(where: { $0.sender == sender }) else { return }
    answerAt(index, verdict)
  }
}
