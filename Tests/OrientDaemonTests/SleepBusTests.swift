import Glibc
import OrientCore
import OrientWire
import TestSupport
import TestThreads
import Testing

/// Suspend and resume on a real bus: orientd in a live umockdev testbed on a private system
/// bus, a real client (`orientd --watch`) claiming, and logind played by python3-dbusmock's
/// `logind` template (its Inhibit hands out a real pipe and forgets the inhibitor when orientd
/// closes its end; its Mock interface sends PrepareForSleep). SleepTests cover the logic's
/// branches; the VM's orientd-resume and the systemd stage's resume-logind real suspends.
@Suite(
  .ownThreads,
  .serialized,
  .enabled(
    if: UMockdevScenario.isAvailable && DBusMock.isAvailable,
    "umockdev or python3-dbusmock is not installed"))
struct SleepBusTests {
  /// busctl on the stand-in.
  func logind(_ fixture: DaemonFixture, _ arguments: [String]) throws -> (
    status: Int32, stdout: String, stderr: String
  ) {
    try busctl(fixture.bus, ["call", Logind.name, Logind.path.rawValue] + arguments)
  }

  func inhibitors(_ fixture: DaemonFixture) throws -> String {
    try logind(fixture, [Logind.managerInterface, "ListInhibitors"]).stdout
  }

  func prepareForSleep(_ fixture: DaemonFixture, _ sleeping: Bool) throws {
    let sent = try logind(
      fixture,
      [
        "org.freedesktop.DBus.Mock", "EmitSignal", "sssav", Logind.managerInterface,
        Logind.prepareForSleepSignal, "b", "1", "b", sleeping ? "true" : "false",
      ])
    #expect(sent.status == 0, "\(sent.stderr)")
  }

  @Test func theClaimSurvivesASuspendAndOrientationsArriveAfterTheResume() throws {
    let fixture = try DaemonFixture(bus: try PrivateBus(standIns: [Logind.name]))
    let holds = { (fixture: DaemonFixture) throws -> Bool in
      try inhibitors(fixture).contains(#""sleep" "orientd" ""#)
        && inhibitors(fixture).contains(#""delay""#)
    }
    let watch = try fixture.start([try Built.executable("orientd"), "--watch"])
    #expect(waitFor(timeout: 10) { watch.standardOutput.contains("normal (rotation 0") })
    #expect(fixture.log.contains("no \(Logind.name) on "), "said once at info")
    // logind appears after orientd: it is followed, and the lock taken.
    let mock = try DBusMock("logind", bus: fixture.bus)
    defer { withExtendedLifetime(mock) {} }
    #expect(
      try waitFor(timeout: 15) { try holds(fixture) },
      "\(fixture.log)\n\(mock.process.standardError)")
    #expect(fixture.log.contains("following system sleep through \(Logind.name)"))

    try prepareForSleep(fixture, true)
    #expect(waitFor(timeout: 10) { !fixture.isReadingSensor }, "the sensor's files are closed")
    #expect(try waitFor(timeout: 10) { try !holds(fixture) }, "the inhibitor goes after that")
    #expect(fixture.log.contains("the system is going to sleep: stopped reading accelerometer"))
    try fixture.turn(.leftUp)
    try prepareForSleep(fixture, false)
    #expect(waitFor(timeout: 10) { watch.standardOutput.contains("left-up (rotation 90") })
    #expect(fixture.isReadingSensor)
    #expect(try waitFor(timeout: 10) { try holds(fixture) }, "the inhibitor is taken again")
    #expect(waitFor(timeout: 10) { fixture.log.contains("readings flow again after the resume") })

    // A resume nobody announced (the signal before it lost): read afresh all the same.
    try prepareForSleep(fixture, false)
    #expect(waitFor(timeout: 10) { fixture.log.contains("resumed without saying it would sleep") })
    try fixture.turn(.rightUp)
    #expect(waitFor(timeout: 10) { watch.standardOutput.contains("right-up (rotation 270") })
    #expect(watch.isRunning, "the client's claim never ended")

    watch.signal(SIGTERM)
    #expect(waitFor(timeout: 10) { !fixture.isReadingSensor })
    #expect(try waitFor(timeout: 10) { try !holds(fixture) }, "no claim, no inhibitor")
  }
}
