import Glibc
import OrientWire
import TestSupport
import TestThreads
import Testing

/// Debian's polkitd on a private system bus, reading only the project's action file
/// (polkit/org.orientd.SensorProxy.policy, as installed) and the test's rules: in a mount
/// namespace of its own, a directory of the test's is bound over each directory polkitd reads,
/// so nothing on the machine changes.
final class PrivatePolkit {
  /// The bus: the project's policy and polkitd's own, reachable by polkitd's user and `nobody`.
  let bus: PrivateBus
  let daemon: ChildProcess
  /// Where the test puts `.rules` files (bound over /etc/polkit-1/rules.d).
  let rules: TemporaryDirectory
  private let policies: TemporaryDirectory
  private let actions: TemporaryDirectory
  private let vendorRules: TemporaryDirectory
  private let passwd: TemporaryDirectory
  /// The uid polkitd knows as `geoclue`.
  static let geoclue: UInt32 = 1

  static let binary = "/usr/lib/polkit-1/polkitd"
  /// The action files polkit/ ships, installed as they are.
  static let actionFiles = ["org.orientd.SensorProxy.policy", "org.orientd.Motion1.policy"]
  static var isAvailable: Bool { access(binary, X_OK) == 0 && getuid() == 0 }

  /// Starts a bus and polkitd on it, and waits until polkitd owns org.freedesktop.PolicyKit1.
  init() throws {
    // The bus watches its policy directory: it must outlive the bus.
    policies = try TemporaryDirectory("policy")
    for file in [
      "\(Built.packageRoot)/dbus/orientd.conf",
      "/usr/share/dbus-1/system.d/org.freedesktop.PolicyKit1.conf",
    ] {
      try writeFile(policies.file(String(file.split(separator: "/").last ?? "")), readFile(file))
    }
    bus = try PrivateBus(policyDirectory: policies.path)
    // polkitd runs as its own user; gdbus as nobody.
    chmod(bus.directory.path, 0o755)
    chmod(bus.directory.file("bus.sock"), 0o777)
    rules = try TemporaryDirectory("rules")
    actions = try TemporaryDirectory("actions")
    vendorRules = try TemporaryDirectory("vendor-rules")
    // The shipped actions: the claims' and motion's (org.orientd.motion.read).
    for policy in PrivatePolkit.actionFiles {
      try writeFile(actions.file(policy), readFile("\(Built.packageRoot)/polkit/\(policy)"))
    }
    // The shipped rules, as installed.
    try writeFile(
      vendorRules.file("50-orientd-geoclue.rules"),
      readFile("\(Built.packageRoot)/polkit/50-orientd-geoclue.rules"))
    // polkitd names the subject's user from the password database: in polkitd's namespace
    // only, a copy where uid PrivatePolkit.geoclue is called geoclue. The uid must exist on
    // the machine (the bus refuses a client whose groups it cannot look up), so it is
    // Debian's `daemon`, a system user in no session, as geoclue is.
    passwd = try TemporaryDirectory("passwd")
    let renamed = readFile("/etc/passwd").split(separator: "\n").map { line in
      line.hasPrefix("daemon:x:\(PrivatePolkit.geoclue):") ? "geoclue" + line.dropFirst(6) : line
    }
    try writeFile(passwd.file("passwd"), renamed.joined(separator: "\n") + "\n")
    // polkitd drops to its own user and must read these.
    for dir in [rules, actions, vendorRules, passwd] { chmod(dir.path, 0o755) }
    for file in PrivatePolkit.actionFiles.map(actions.file) + [
      vendorRules.file("50-orientd-geoclue.rules"), passwd.file("passwd"),
    ] { chmod(file, 0o644) }
    let binds = [
      (actions.path, "/usr/share/polkit-1/actions"),
      (vendorRules.path, "/usr/share/polkit-1/rules.d"),
      (rules.path, "/etc/polkit-1/rules.d"),
      (passwd.file("passwd"), "/etc/passwd"),
    ].map { "mount --bind \($0.0) \($0.1)" }.joined(separator: " && ")
    daemon = try ChildProcess(
      [
        "unshare", "--mount", "--propagation", "private", "sh", "-c",
        "\(binds) && exec \(PrivatePolkit.binary) --no-debug",
      ], environment: bus.environment, outputDirectory: bus.directory.path)
    let bus = bus
    let daemon = daemon
    let owned = waitFor(timeout: 15) {
      let owner = try? busctl(
        bus,
        [
          "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
          "GetNameOwner", "s", "org.freedesktop.PolicyKit1",
        ])
      return owner?.status == 0 || !daemon.isRunning
    }
    guard owned, daemon.isRunning else {
      throw TestFailure(
        "polkitd did not start: \(daemon.standardError)\(daemon.standardOutput)")
    }
  }

  deinit { daemon.killNow() }

  /// Writes a rules file; polkitd notices it by itself (inotify).
  func addRule(_ name: String, _ javascript: String) throws {
    try writeFile(rules.file(name), javascript)
    chmod(rules.file(name), 0o644)
  }
}

/// The verdicts of a real polkitd on iio-sensor-proxy's claims (action
/// net.hadess.SensorProxy.claim-sensor, defaults from the shipped policy file): refused with
/// iio-sensor-proxy's error, allowed by a rule and then read. Without polkitd (every other
/// daemon test) claims go through.
@Suite(
  .ownThreads,
  .serialized,
  .enabled(
    if: (PrivatePolkit.isAvailable && UMockdevScenario.isAvailable) || runsInCI,
    "needs root, Debian's polkitd and umockdev"))
struct PolkitTests {
  private static let refusal =
    "org.freedesktop.DBus.Error.AccessDenied: Not Authorized: Sensor claim not allowed"

  private func call(
    _ fixture: DaemonFixture, _ method: String, as user: [String] = [],
    path: String = Wire.sensorProxyPath.rawValue, interface: String = Wire.sensorProxyName
  ) throws -> String {
    let result = try fixture.client(
      user + [
        "gdbus", "call", "--address", fixture.bus.address, "--dest", Wire.sensorProxyName,
        "--object-path", path, "--method", "\(interface).\(method)",
      ])
    return result.stdout + result.stderr
  }

  @Test func theShippedDefaultsRefuseAClientOutsideAnActiveSessionAndARuleAllowsIt() throws {
    let polkit = try PrivatePolkit()
    let fixture = try DaemonFixture(
      devices: [Accel.parent, Accel.polled] + EmulatedAmbient.light, bus: polkit.bus)
    let nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    let compass = Wire.compassPath.rawValue
    let compassInterface = Wire.compassInterface

    // nobody is in no login session and allow_any is "no": every claim is refused, with
    // iio-sensor-proxy's error, and no sensor is read. A release is never refused: it grants
    // nothing (iio-sensor-proxy 3.9 checks it too, and so keeps a sensor running for a client
    // whose session went inactive).
    for method in ["ClaimAccelerometer", "ClaimLight", "ClaimProximity"] {
      let said = try call(fixture, method, as: nobody)
      #expect(said.contains(PolkitTests.refusal), "\(method): \(said)\n\(fixture.log)")
    }
    for method in ["ReleaseAccelerometer", "ReleaseLight", "ReleaseProximity"] {
      #expect(try call(fixture, method, as: nobody) == "()\n", "\(method)\n\(fixture.log)")
    }
    // The compass too: the bus policy lets everyone reach it (as iio-sensor-proxy 3.6+), and
    // polkit decides, as for every other sensor.
    let compassSaid = try call(
      fixture, "ClaimCompass", as: nobody, path: compass, interface: compassInterface)
    #expect(compassSaid.contains(PolkitTests.refusal), "\(compassSaid)\n\(fixture.log)")
    #expect(
      try call(fixture, "ReleaseCompass", as: nobody, path: compass, interface: compassInterface)
        == "()\n")
    #expect(!fixture.isReadingSensor)
    #expect(!fixture.testbed.openFiles().contains { $0.hasSuffix("in_illuminance_raw") })
    #expect(fixture.log.contains("polkit refused ClaimLight from"), "\(fixture.log)")
    // polkit always authorizes root (the tests' user, and system services running as root).
    #expect(try call(fixture, "ReleaseLight") == "()\n")

    // A rule, as users write them for a program (wluma, telegraf) that needs the sensors.
    try polkit.addRule(
      "50-orientd-test.rules",
      """
      polkit.addRule(function(action, subject) {
        if (action.id == "\(Wire.claimSensorAction)" && subject.user == "nobody")
          return polkit.Result.YES;
      });
      """)
    #expect(
      try waitFor(timeout: 15) { try call(fixture, "ClaimLight", as: nobody) == "()\n" },
      "polkitd did not take the rule: \(polkit.daemon.standardError)")
    let compassClaim = try call(
      fixture, "ClaimCompass", as: nobody, path: compass, interface: compassInterface)
    #expect(compassClaim == "()\n", "\(compassClaim)\n\(fixture.log)")
    let monitor = try fixture.start(nobody + ["stdbuf", "-oL", "monitor-sensor"])
    // (100 + 10) * 0.5 = 55 lux, the emulated sensor's reading; the accelerometer is read too.
    #expect(
      waitFor(timeout: 15) {
        monitor.standardOutput.contains("Light changed: 55.000000 (lux)")
          || monitor.standardOutput.contains("=== Has ambient light sensor (value: 55.000000")
      }, "monitor-sensor: \(monitor.standardOutput)\(monitor.standardError)\n\(fixture.log)")
    #expect(waitFor(timeout: 10) { fixture.isReadingSensor }, "\(fixture.log)")
    #expect(!(monitor.standardOutput + monitor.standardError).contains("Not Authorized"))
    monitor.killNow()
  }

  @Test func geoclueMayClaimThroughTheShippedRule() throws {
    // geoclue runs as a system service in no session; the shipped 50-orientd-geoclue.rules
    // lets it claim (it puts the compass's heading into locations), while another user is
    // still refused.
    let polkit = try PrivatePolkit()
    let fixture = try DaemonFixture(
      devices: [Accel.parent, Accel.polled] + EmulatedAmbient.light, bus: polkit.bus)
    let id = String(PrivatePolkit.geoclue)
    let geoclue = ["setpriv", "--reuid=\(id)", "--regid=\(id)", "--clear-groups"]
    let said = try call(fixture, "ClaimLight", as: geoclue)
    #expect(said == "()\n", "\(said)\n\(polkit.daemon.standardError)\n\(fixture.log)")
    #expect(!fixture.log.contains("polkit refused ClaimLight"), "\(fixture.log)")
    let nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    #expect(try call(fixture, "ClaimLight", as: nobody).contains(PolkitTests.refusal))
  }
}
