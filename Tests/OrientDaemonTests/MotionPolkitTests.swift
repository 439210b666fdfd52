import Glibc
import TestSupport
import TestThreads
import Testing

/// The motion action as shipped (polkit/org.orientd.Motion1.policy, docs/motion.md "Who may
/// read motion"), judged by Debian's real polkitd before any daemon uses it: a process in no
/// session is refused, root and a local rule are allowed, and the action is not
/// iio-sensor-proxy's (a rule for that one does not grant motion).
@Suite(
  .ownThreads,
  .serialized,
  .enabled(if: PrivatePolkit.isAvailable || runsInCI, "needs root and Debian's polkitd"))
struct MotionPolkitTests {
  static let action = "org.orientd.motion.read"

  /// `pkcheck` of `action` for the process `pid` (0 authorized, 1 not), on the private bus.
  func check(
    _ polkit: PrivatePolkit, pid: pid_t, action: String = MotionPolkitTests.action
  ) throws -> Int32 {
    try ChildProcess.run(
      ["pkcheck", "--action-id", action, "--process", "\(pid)"],
      environment: polkit.bus.environment, outputDirectory: polkit.bus.directory.path
    ).status
  }

  @Test func onlyTheActiveSessionRootOrALocalRuleMayReadMotion() throws {
    let polkit = try PrivatePolkit()
    let described = try ChildProcess.run(
      ["pkaction", "--action-id", Self.action, "--verbose"],
      environment: polkit.bus.environment, outputDirectory: polkit.bus.directory.path)
    #expect(described.status == 0, "\(described.stderr)")
    #expect(described.stdout.contains("implicit any:      no"), "\(described.stdout)")
    #expect(described.stdout.contains("implicit inactive: no"))
    #expect(described.stdout.contains("implicit active:   yes"))

    // A process of nobody's in no session (a service, an SSH login without a seat).
    let nobody = try ChildProcess(
      ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "30"],
      outputDirectory: polkit.bus.directory.path)
    defer { nobody.killNow() }
    #expect(try check(polkit, pid: nobody.pid) == 1, "refused outside the active session")
    // root is always authorized by polkit.
    #expect(try check(polkit, pid: getpid()) == 0)
    // A rule for iio-sensor-proxy's action does not grant motion; one for motion does.
    try polkit.addRule(
      "40-sensors.rules",
      """
      polkit.addRule(function(action, subject) {
        if (action.id == "net.hadess.SensorProxy.claim-sensor" && subject.user == "nobody")
          return polkit.Result.YES;
      });
      """)
    // polkitd reloads rules by inotify: once the rule grants the claim it is loaded, and
    // motion is still refused. (Waiting for the claim, not out a fixed time for motion.)
    let claim = "net.hadess.SensorProxy.claim-sensor"
    #expect(
      waitFor(timeout: 10) { (try? check(polkit, pid: nobody.pid, action: claim)) == 0 },
      "the claim rule is loaded")
    #expect(try check(polkit, pid: nobody.pid) == 1, "the claim rule grants no motion")
    try polkit.addRule(
      "41-motion.rules",
      """
      polkit.addRule(function(action, subject) {
        if (action.id == "\(Self.action)" && subject.user == "nobody")
          return polkit.Result.YES;
      });
      """)
    #expect(
      waitFor(timeout: 10) { (try? check(polkit, pid: nobody.pid)) == 0 }, "granted by a rule")
  }
}
