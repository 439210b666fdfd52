import Glibc
import OrientWire
import TestSupport
import TestThreads
import Testing

/// A proximity switch as gpio-keys exposes one on a phone (the N900's "proximity" key, a GPIO
/// with `linux,code = <SW_FRONT_PROXIMITY>`), for umockdev-run: the udev record (udev's
/// input_id marks it ID_INPUT_SWITCH; the input device's `capabilities/sw` has bit 11), the
/// evdev ioctls libevdev asks (EV_SYN and EV_SW, SW_FRONT_PROXIMITY, the switch off at first)
/// and an event script in evemu's format.
enum ProximitySwitch {
  static let node = "/dev/input/event5"

  static let record = """
    P: /devices/platform/gpio_keys/input/input5/event5
    N: input/event5
    E: DEVNAME=/dev/input/event5
    E: ID_INPUT=1
    E: ID_INPUT_SWITCH=1
    E: MAJOR=13
    E: MINOR=69
    E: SUBSYSTEM=input
    A: dev=13:69
    L: device=../../input5

    P: /devices/platform/gpio_keys/input/input5
    E: EV=21
    E: SW=800
    E: ID_INPUT=1
    E: ID_INPUT_SWITCH=1
    E: NAME="gpio_keys"
    E: SUBSYSTEM=input
    A: capabilities/ev=21
    A: capabilities/sw=800
    A: name=gpio_keys

    P: /devices/platform/gpio_keys
    E: DRIVER=gpio-keys
    E: MODALIAS=platform:gpio-keys
    E: SUBSYSTEM=platform
    A: modalias=platform:gpio-keys

    """

  /// The ioctls: a switch device with SW_FRONT_PROXIMITY (bit 11).
  static let ioctls = EmulatedSwitchDevice.ioctls(
    name: "gpio_keys", id: "1900000000000000", switchBits: "0008")

  /// Near `near` s after the node is first opened (the claim: orientd does not open it before),
  /// far again 2 s later. umockdev sends the first event as soon as the node is opened and
  /// keeps the delays between events, so a SYN_REPORT at 0 makes the switch wait.
  static func events(near: Int) -> String {
    """
    E: 0.000000 0000 0000 0
    E: \(near).000000 0005 000b 1
    E: \(near).000000 0000 0000 0
    E: \(near + 2).000000 0005 000b 0
    E: \(near + 2).000000 0000 0000 0

    """
  }
}

/// orientd on an input-subsystem proximity switch (issue 17): `HasProximity` from udev alone,
/// the node opened only while proximity is claimed, and Debian's `monitor-sensor` following
/// the switch near and far.
@Suite(
  .ownThreads, .serialized, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct ProximitySwitchTests {
  @Test func monitorSensorFollowsTheSwitchOnlyWhileClaimed() throws {
    let bus = try PrivateBus()
    let directory = try TemporaryDirectory("proximity-switch")
    try writeFile(directory.file("switch.umockdev"), ProximitySwitch.record)
    try writeFile(directory.file("switch.ioctl"), ProximitySwitch.ioctls)
    try writeFile(directory.file("switch.events"), ProximitySwitch.events(near: 4))
    let daemon = try ChildProcess(
      [
        "umockdev-run", "-d", directory.file("switch.umockdev"),
        "-i", "\(ProximitySwitch.node)=\(directory.file("switch.ioctl"))",
        "-e", "\(ProximitySwitch.node)=\(directory.file("switch.events"))", "--",
        try Built.executable("orientd"), "-v",
      ] + isolated([], in: bus), environment: bus.environment, outputDirectory: directory.path)
    defer { daemon.killNow() }
    #expect(
      waitFor(timeout: 15) { daemon.standardError.contains("notice: serving ") },
      "\(daemon.standardError)")
    #expect(
      daemon.standardError.contains("proximity sensor event5 (input-switch /dev/input/event5"),
      "\(daemon.standardError)")
    let property = [
      "busctl", "--address", bus.address, "get-property", Wire.sensorProxyName,
      Wire.sensorProxyPath.rawValue, Wire.sensorProxyName, "HasProximity",
    ]
    let has = try ChildProcess.run(
      property, environment: bus.environment, outputDirectory: directory.path, timeout: 15)
    #expect(has.stdout.hasPrefix("b true"), "\(has.stdout)\(has.stderr)")
    // Idle: umockdev stands in for the evdev node with a pty, /dev/pts/N; orientd has not
    // opened it.
    let pid = try #require(umockdevChild(of: daemon))
    #expect(!holdsEmulatedInputNode(pid), "idle:\n\(openFileTargets(pid))")

    let monitor = try ChildProcess(
      ["stdbuf", "-oL", "monitor-sensor"], environment: bus.environment,
      outputDirectory: bus.directory.path)
    defer { monitor.killNow() }
    #expect(
      waitFor(timeout: 15) {
        monitor.standardOutput.contains("=== Has proximity sensor (near: 0)")
      },
      "monitor: \(monitor.standardOutput)\n\(daemon.standardError)")
    #expect(
      waitFor(timeout: 10) { holdsEmulatedInputNode(pid) }, "claimed:\n\(openFileTargets(pid))")
    #expect(
      waitFor(timeout: 20) {
        monitor.standardOutput.lines.last?.hasSuffix("Proximity value changed: 1") == true
      }, "monitor: \(monitor.standardOutput)\n\(daemon.standardError)")
    #expect(
      waitFor(timeout: 20) {
        monitor.standardOutput.lines.last?.hasSuffix("Proximity value changed: 0") == true
      }, "monitor: \(monitor.standardOutput)\n\(daemon.standardError)")

    // The last claimer gone, the node is closed again.
    monitor.killNow()
    #expect(
      waitFor(timeout: 15) { !holdsEmulatedInputNode(pid) },
      "released:\n\(openFileTargets(pid))\n\(daemon.standardError)")
  }

  /// The switch appearing and going while orientd runs: `HasProximity` and monitor-sensor's
  /// "appeared"/"disappeared" follow udev (the node is not opened: nobody claimed).
  @Test func theSwitchAppearsAndGoes() throws {
    let platform = UMockdevDevice(
      devpath: "/devices/platform/gpio_keys", properties: [("SUBSYSTEM", "platform")])
    let input = UMockdevDevice(
      devpath: "\(platform.devpath)/input/input5",
      properties: [("SUBSYSTEM", "input"), ("ID_INPUT", "1"), ("ID_INPUT_SWITCH", "1")],
      attributes: [
        ("name", "gpio_keys\n"), ("capabilities/ev", "21\n"), ("capabilities/sw", "800\n"),
      ])
    let event = UMockdevDevice(
      devpath: "\(input.devpath)/event5",
      properties: [
        ("SUBSYSTEM", "input"), ("DEVNAME", ProximitySwitch.node), ("ID_INPUT", "1"),
        ("ID_INPUT_SWITCH", "1"),
      ],
      attributes: [("dev", "13:69\n")], node: "input/event5")
    let fixture = try DaemonFixture()
    func has() throws -> String {
      try fixture.property(
        "HasProximity", service: Wire.sensorProxyName, path: Wire.sensorProxyPath.rawValue)
    }
    #expect(try has() == "b false")
    let monitor = try fixture.start(["stdbuf", "-oL", "monitor-sensor"])
    defer { monitor.killNow() }
    #expect(waitFor(timeout: 15) { monitor.standardOutput.contains("=== No proximity sensor") })
    try fixture.testbed.perform { $0.hotplug([platform, input, event]) }
    #expect(
      waitFor(timeout: 15) { monitor.standardOutput.contains("+++ Proximity sensor appeared") },
      "monitor-sensor: \(monitor.standardOutput)\n\(fixture.log)")
    #expect(try has() == "b true", "\(fixture.log)")
    try fixture.testbed.perform { $0.uevent(event, "remove") }
    #expect(
      waitFor(timeout: 15) {
        monitor.standardOutput.contains("--- Proximity sensor disappeared")
      }, "monitor-sensor: \(monitor.standardOutput)\n\(fixture.log)")
    #expect(try has() == "b false")
  }

}
