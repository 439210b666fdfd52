import Glibc
import OrientWire
import TestSupport
import Testing

/// The polkit gate's ordering (ClaimGate): each client's calls are answered in the order they
/// came, and a client whose check polkit is slow to answer holds up no other client. A stand-in
/// for polkitd (Tests/Fixtures/dbus/slow_polkit.py, Gio) authorizes everyone but holds the
/// first check it gets; real polkitd's verdicts are PolkitTests' part.
@Suite(.enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct ClaimGateTests {
  @Test func aSlowPolkitCheckHoldsUpOnlyItsOwnClient() throws {
    let policies = try TemporaryDirectory("policy")
    try writeFile(
      policies.file("orientd.conf"), readFile("\(Built.packageRoot)/dbus/orientd.conf"))
    try writeFile(
      policies.file("polkit-stand-in.conf"),
      """
      <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
       "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
      <busconfig>
        <policy user="root"><allow own="org.freedesktop.PolicyKit1"/></policy>
        <policy context="default">
          <allow send_destination="org.freedesktop.PolicyKit1"/>
        </policy>
      </busconfig>

      """)
    let bus = try PrivateBus(policyDirectory: policies.path)
    let polkit = try ChildProcess(
      [
        "/usr/bin/python3", "\(Built.packageRoot)/Tests/Fixtures/dbus/slow_polkit.py",
        bus.address, "10",
      ], outputDirectory: bus.directory.path)
    defer { polkit.killNow() }
    #expect(
      waitFor(timeout: 15) { polkit.standardOutput.contains("ready") },
      "\(polkit.standardError)")
    let fixture = try DaemonFixture(
      devices: [Accel.parent, Accel.polled] + EmulatedAmbient.light, bus: bus)
    func call(_ method: String) -> [String] {
      [
        "gdbus", "call", "--address", bus.address, "--dest", Wire.sensorProxyName,
        "--object-path", Wire.sensorProxyPath.rawValue, "--method",
        "\(Wire.sensorProxyName).\(method)",
      ]
    }
    // The first client's check is held by the stand-in for 10 s.
    let slow = try fixture.start(call("ClaimLight"))
    defer { slow.killNow() }
    #expect(
      waitFor(timeout: 10) { polkit.standardOutput.contains("call 1 ") },
      "\(polkit.standardOutput)\(fixture.log)")
    // Another client claims meanwhile and is answered while the first still waits.
    let quick = try fixture.client(call("ClaimAccelerometer"), timeout: 30)
    #expect(quick.status == 0, "\(quick.stderr)")
    #expect(
      slow.isRunning && !polkit.standardOutput.contains("answer 1"),
      "the second client waited for the first one's check: \(polkit.standardOutput)")
    // The first client gets its answer when polkit gives it.
    #expect(slow.wait(timeout: 30) == 0, "\(slow.standardError)")
    #expect(polkit.standardOutput.contains("answer 1"))
  }
}
