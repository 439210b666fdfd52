import OrientCore
import OrientDaemon
import Sensors
import SystemKit
import Testing

/// System suspend and resume in the daemon's logic (DaemonCore's SleepGuard on the fakes of
/// CoreFakes.swift: logind's PrepareForSleep and its delay inhibitor from `FakeSleep`, time
/// from a ManualScheduler). The VM test orientd-resume proves the same with real suspends, the
/// real HID drivers and hubs that come back dead; the systemd stage's resume-logind with logind.
@Suite struct SleepTests {
  /// A rig whose buffered display accelerometer is claimed by ":1.5" and has delivered.
  private func claimedRig() -> CoreRig {
    let rig = CoreRig()
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    rig.sensors.setMode(.accelerometer, .buffered)
    let call = rig.claim(":1.5", .orientd)
    rig.sensors.deliver(.accelerometer, FakeSensor.gravity(.leftUp))
    #expect(call.answered)
    return rig
  }

  @Test func aClaimHoldsTheLockWhichGoesOnlyAfterTheReadersStopped() {
    let rig = CoreRig()
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    #expect(rig.sleep.lockLog.isEmpty, "nothing read, nothing to quiesce: no inhibitor")
    rig.sleep.witness = { [sensors = rig.sensors] in sensors.readerLog.last ?? "" }
    rig.claim(":1.5", .orientd)
    #expect(rig.sleep.holdsLock)
    rig.sensors.deliver(.accelerometer, FakeSensor.gravity(.leftUp))
    rig.sleep.prepareForSleep(true)
    #expect(rig.sleep.lockLog == ["take", "release"])
    #expect(
      rig.sleep.witnessed.last == "stop accelerometer",
      "the lock is let go once the reader has stopped")
    #expect(rig.core.isAsleep)
    #expect(!rig.sensors.isReading(.accelerometer))
    #expect(rig.core.claims.claimers(.orientd) == [":1.5"], "the claim survives")
    #expect(rig.core.published.orientation == .leftUp, "what clients were told stays")
    rig.sleep.prepareForSleep(false)
    #expect(Array(rig.sensors.readerLog.suffix(2)) == ["resume", "open accelerometer"])
    #expect(rig.sleep.lockLog == ["take", "release", "take"])
    #expect(rig.sensors.isReading(.accelerometer))
    rig.sensors.deliver(.accelerometer, FakeSensor.gravity(.rightUp))
    #expect(rig.core.published.orientation == .rightUp, "orientations arrive after the resume")
    #expect(rig.log.text.contains("readings flow again after the resume"))
    // Released, the lock goes.
    rig.release(":1.5", .orientd)
    #expect(!rig.sleep.holdsLock)
  }

  @Test func readingsThatDoNotComeBackAreReadAfreshThenFromTheNextDriver() {
    let rig = claimedRig()
    rig.sleep.prepareForSleep(true)
    rig.sleep.prepareForSleep(false)
    rig.scheduler.advance(by: .milliseconds(2999))
    #expect(!rig.sensors.readerLog.contains("restart accelerometer"))
    rig.scheduler.advance(by: .milliseconds(1))
    #expect(rig.sensors.readerLog.last == "open accelerometer")
    #expect(rig.sensors.readerLog.contains("restart accelerometer"))
    #expect(rig.log.text.contains("no reading from accelerometer within 3 s of the resume"))
    rig.scheduler.advance(by: .seconds(3))
    #expect(rig.sensors.readerLog.contains("fall back accelerometer"))
    #expect(rig.sensors.status(of: .accelerometer)?.mode == .polled)
    #expect(rig.log.text.contains("still no reading from accelerometer 6 s after the resume"))
    // The check is over: nothing more is restarted.
    let count = rig.sensors.readerLog.count
    rig.scheduler.advance(by: .seconds(30))
    #expect(rig.sensors.readerLog.count == count)
    rig.sensors.deliver(.accelerometer, FakeSensor.gravity(.bottomUp))
    #expect(rig.core.published.orientation == .bottomUp)
  }

  @Test func aReadingAfterTheFirstRestartEndsTheCheck() {
    let rig = claimedRig()
    rig.sleep.prepareForSleep(true)
    rig.sleep.prepareForSleep(false)
    rig.scheduler.advance(by: .seconds(3))
    rig.sensors.deliver(.accelerometer, FakeSensor.gravity(.normal))
    rig.scheduler.advance(by: .seconds(30))
    #expect(!rig.sensors.readerLog.contains("fall back accelerometer"))
    #expect(rig.sensors.status(of: .accelerometer)?.mode == .buffered)
  }

  @Test func aResumeWithoutASuspendReadsTheClaimedKindsAfresh() {
    let rig = claimedRig()
    rig.sleep.prepareForSleep(false)
    #expect(
      Array(rig.sensors.readerLog.suffix(3)) == [
        "resume", "stop accelerometer", "open accelerometer",
      ]
    )
    #expect(rig.log.text.contains("resumed without saying it would sleep"))
    #expect(rig.sleep.holdsLock)
    rig.sensors.deliver(.accelerometer, FakeSensor.gravity(.normal))
    #expect(rig.core.published.orientation == .normal)
  }

  @Test func repeatedSuspendsEachStopAndReopenOnce() {
    let rig = claimedRig()
    let before = rig.sensors.readerLog.count
    let orientations: [Orientation] = [.normal, .rightUp, .bottomUp]
    for orientation in orientations {
      rig.sleep.prepareForSleep(true)
      rig.sleep.prepareForSleep(true)  // said twice: one suspend
      #expect(!rig.sleep.holdsLock)
      rig.sleep.prepareForSleep(false)
      #expect(rig.sleep.holdsLock)
      rig.sensors.deliver(.accelerometer, FakeSensor.gravity(orientation))
      #expect(rig.core.published.orientation == orientation)
    }
    #expect(
      Array(rig.sensors.readerLog[before...])
        == Array(
          repeating: ["suspend", "stop accelerometer", "resume", "open accelerometer"], count: 3
        )
        .flatMap { $0 })
    #expect(rig.sleep.lockLog.count == 7)
    #expect(rig.core.claims.claimers(.orientd) == [":1.5"])
    rig.scheduler.advance(by: .seconds(10))
    #expect(!rig.log.text.contains("no reading from"))
  }

  @Test func withoutAClaimNothingIsOpenedAndAClaimDuringTheSuspendWaitsForTheResume() {
    let rig = CoreRig()
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    rig.sleep.prepareForSleep(true)
    rig.sleep.prepareForSleep(false)
    #expect(rig.sensors.readerLog == ["suspend", "resume"], "nothing opened or stopped")
    #expect(rig.sleep.lockLog.isEmpty)
    rig.scheduler.advance(by: .seconds(10))
    #expect(rig.scheduler.armedTimers == 0, "idle: no timer")
    // A claim between PrepareForSleep(true) and the freeze opens nothing until the resume.
    rig.sleep.prepareForSleep(true)
    let call = rig.claim(":1.7", .orientd)
    #expect(!rig.sensors.isReading(.accelerometer))
    #expect(!rig.sleep.holdsLock, "no lock taken while the system goes to sleep")
    rig.sleep.prepareForSleep(false)
    #expect(rig.sensors.readerLog.last == "open accelerometer")
    #expect(rig.sleep.holdsLock)
    rig.sensors.deliver(.accelerometer, FakeSensor.gravity(.leftUp))
    #expect(call.answered)
  }

  @Test func anEventSensorIsNotExpectedToSpeakAfterTheResume() {
    let rig = claimedRig()
    rig.sensors.setMode(.accelerometer, .events)
    rig.sleep.prepareForSleep(true)
    rig.sleep.prepareForSleep(false)
    rig.scheduler.advance(by: .seconds(10))
    #expect(!rig.sensors.readerLog.contains("restart accelerometer"))
  }

  @Test func shutdownLetsTheLockGo() {
    let rig = claimedRig()
    #expect(rig.sleep.holdsLock)
    rig.core.shutdown()
    #expect(!rig.sleep.holdsLock)
    #expect(rig.sleep.closed)
  }
}
