import Foundation
import Glibc
import JSON
import TestSupport
import Testing

/// Light, proximity and compass on `net.hadess.SensorProxy`, emulated with umockdev
/// (Tests/Fixtures/umockdev/ambient.umockdev) and seen by Debian's `monitor-sensor`, busctl and
/// gdbus on a private bus with the project's policy.
@Suite(.enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct AmbientTests {
  private static let proxy = ["net.hadess.SensorProxy", "/net/hadess/SensorProxy"]

  private func get(_ fixture: DaemonFixture, _ name: String) throws -> String {
    try fixture.property(name, service: "net.hadess.SensorProxy", path: "/net/hadess/SensorProxy")
  }

  private func reads(_ fixture: DaemonFixture, _ attribute: String) -> Bool {
    fixture.testbed.openFiles().contains { $0.hasSuffix(attribute) }
  }

  @Test func lightAndProximityAsMonitorSensorSeesThem() throws {
    let light = EmulatedAmbient.light[1]
    let prox = EmulatedAmbient.proximity[1]
    let fixture = try DaemonFixture(
      devices: [Accel.parent, Accel.polled] + EmulatedAmbient.light + EmulatedAmbient.proximity)
    // Present, not read, and the contract's values before a claim.
    #expect(try get(fixture, "HasAmbientLight") == "b true")
    #expect(try get(fixture, "HasProximity") == "b true")
    #expect(try get(fixture, "LightLevel") == "d 0")
    #expect(try get(fixture, "LightLevelUnit") == "s \"lux\"")
    #expect(try get(fixture, "ProximityNear") == "b false")
    #expect(!reads(fixture, "in_illuminance_raw") && !reads(fixture, "in_proximity_raw"))

    let monitor = try fixture.start(["stdbuf", "-oL", "monitor-sensor"])
    // (100 + 10) * 0.5 = 55 lux, after the claim: either the first line or a change.
    #expect(
      waitFor(timeout: 15) {
        monitor.standardOutput.contains("Light changed: 55.000000 (lux)")
          || monitor.standardOutput.contains("=== Has ambient light sensor (value: 55.000000")
      }, "monitor-sensor: \(monitor.standardOutput)\n\(fixture.log)")
    #expect(reads(fixture, "in_illuminance_raw") && reads(fixture, "in_proximity_raw"))

    try fixture.testbed.perform { $0.set(light, "in_illuminance_raw", "290\n") }
    #expect(
      waitFor(timeout: 10) { monitor.standardOutput.contains("Light changed: 150.000000 (lux)") },
      "monitor-sensor: \(monitor.standardOutput)")
    try fixture.testbed.perform { $0.set(prox, "in_proximity_raw", "256\n") }
    #expect(
      waitFor(timeout: 10) {
        monitor.standardOutput.lines.last?.hasSuffix("Proximity value changed: 1") == true
      }, "monitor-sensor: \(monitor.standardOutput)")
    // 127 is within the margin: still near; 0 is far.
    try fixture.testbed.perform { $0.set(prox, "in_proximity_raw", "127\n") }
    #expect(fixture.waitForPolls(3))
    #expect(try get(fixture, "ProximityNear") == "b true")
    try fixture.testbed.perform { $0.set(prox, "in_proximity_raw", "0\n") }
    #expect(
      waitFor(timeout: 10) {
        monitor.standardOutput.lines.last?.hasSuffix("Proximity value changed: 0") == true
      }, "monitor-sensor: \(monitor.standardOutput)")

    // A client that vanishes is released: nothing is read any more.
    monitor.killNow()
    #expect(
      waitFor(timeout: 10) {
        !reads(fixture, "in_illuminance_raw") && !reads(fixture, "in_proximity_raw")
      }, "\(fixture.log)")
  }

  /// PropertiesChanged goes to the light's claimers only; a claim is answered after a fresh
  /// reading; releasing stops the reads.
  @Test func claimsArePerClientAndChangesGoToClaimersOnly() throws {
    let light = EmulatedAmbient.light[1]
    let fixture = try DaemonFixture(devices: [Accel.parent, Accel.polled] + EmulatedAmbient.light)
    let address = fixture.bus.address
    // An accelerometer claimer hears no light change.
    let accel = try fixture.start([
      "gdbus", "monitor", "--address", address, "--dest", "net.hadess.SensorProxy",
    ])
    let script = """
      import gi, os, sys, time
      from gi.repository import Gio, GLib
      bus = Gio.DBusConnection.new_for_address_sync(sys.argv[1],
          Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
      def call(method):
          bus.call_sync('net.hadess.SensorProxy', '/net/hadess/SensorProxy', 'net.hadess.SensorProxy',
                        method, None, None, 0, 10000, None)
      def get(name):
          return bus.call_sync('net.hadess.SensorProxy', '/net/hadess/SensorProxy',
              'org.freedesktop.DBus.Properties', 'Get',
              GLib.Variant('(ss)', ('net.hadess.SensorProxy', name)), None, 0, 10000, None)[0]
      def wait(path):
          while not os.path.exists(path): time.sleep(0.05)
      call(sys.argv[2])
      print('claimed', get('LightLevel'), flush=True)
      wait(sys.argv[4])
      call(sys.argv[3])
      print('released', flush=True)
      wait(sys.argv[5])
      """
    try writeFile(fixture.bus.directory.file("claim.py"), script)
    let claimer = try fixture.start([
      "/usr/bin/python3", fixture.bus.directory.file("claim.py"), address, "ClaimLight",
      "ReleaseLight",
      fixture.bus.directory.file("go1"), fixture.bus.directory.file("go2"),
    ])
    // The claim's reply waited for the first reading: the level is already there.
    #expect(
      waitFor(timeout: 15) { claimer.standardOutput.contains("claimed 55.0") },
      "claimer: \(claimer.standardOutput) \(claimer.standardError)\n\(fixture.log)")
    #expect(reads(fixture, "in_illuminance_raw"))
    try fixture.testbed.perform { $0.set(light, "in_illuminance_raw", "190\n") }
    #expect(waitFor(timeout: 10) { (try? get(fixture, "LightLevel")) == "d 100" })
    try writeFile(fixture.bus.directory.file("go1"), "")
    #expect(waitFor(timeout: 10) { claimer.standardOutput.contains("released") })
    #expect(waitFor(timeout: 10) { !reads(fixture, "in_illuminance_raw") }, "\(fixture.log)")
    // The LightLevel change was unicast to the claimer: gdbus monitor (no claim) saw none.
    #expect(!accel.standardOutput.contains("LightLevel"), "\(accel.standardOutput)")
    try writeFile(fixture.bus.directory.file("go2"), "")
    _ = claimer.wait(timeout: 10)
  }

  @Test func sensorsAppearAndGo() throws {
    let fixture = try DaemonFixture()
    #expect(try get(fixture, "HasAmbientLight") == "b false")
    let monitor = try fixture.start(["stdbuf", "-oL", "monitor-sensor"])
    #expect(waitFor(timeout: 15) { monitor.standardOutput.contains("=== No ambient light sensor") })
    try fixture.testbed.perform { $0.hotplug(EmulatedAmbient.light + EmulatedAmbient.proximity) }
    #expect(
      waitFor(timeout: 15) {
        monitor.standardOutput.contains("+++ Light sensor appeared")
          && monitor.standardOutput.contains("+++ Proximity sensor appeared")
      }, "monitor-sensor: \(monitor.standardOutput)\n\(fixture.log)")
    #expect(try get(fixture, "HasAmbientLight") == "b true")
    try fixture.testbed.perform { $0.uevent(EmulatedAmbient.light[1], "remove") }
    #expect(
      waitFor(timeout: 15) { monitor.standardOutput.contains("--- Light sensor disappeared") },
      "monitor-sensor: \(monitor.standardOutput)\n\(fixture.log)")
    #expect(try get(fixture, "HasAmbientLight") == "b false")
    #expect(try get(fixture, "HasProximity") == "b true")
  }

  @Test func applesmcLightIsAPercentageInVendorUnits() throws {
    let fixture = try DaemonFixture(devices: [Accel.parent, Accel.polled, EmulatedAmbient.applesmc])
    #expect(try get(fixture, "LightLevelUnit") == "s \"vendor\"")
    let monitor = try fixture.start(["stdbuf", "-oL", "monitor-sensor"])
    #expect(
      waitFor(timeout: 15) { monitor.standardOutput.contains("50.196078") },
      "monitor-sensor: \(monitor.standardOutput)\n\(fixture.log)")
    try fixture.testbed.perform { $0.set(EmulatedAmbient.applesmc, "light", "(255,255)\n") }
    #expect(
      waitFor(timeout: 10) {
        monitor.standardOutput.contains("Light changed: 100.000000 (vendor)")
      },
      "monitor-sensor: \(monitor.standardOutput)")
  }

  /// The compass is geoclue's alone (dbus/orientd.conf, as iio-sensor-proxy's policy); with
  /// the same policy granted to the test's user (root) instead, monitor-sensor reads it.
  @Test func compassOnlyForItsUser() throws {
    let devices = [Accel.parent, Accel.polled, EmulatedAmbient.compass]
    let fixture = try DaemonFixture(devices: devices)
    let denied = try fixture.client([
      "busctl", "--address=\(fixture.bus.address)", "call", "net.hadess.SensorProxy",
      "/net/hadess/SensorProxy/Compass", "net.hadess.SensorProxy.Compass", "ClaimCompass",
    ])
    #expect(denied.status != 0 && denied.stderr.contains("denied"), "\(denied)")

    let (bus, policy) = try PrivateBus.compassGrantedToRoot()
    let granted = try DaemonFixture(devices: devices, bus: bus)
    defer { withExtendedLifetime(policy) {} }
    // Debian's monitor-sensor (3.0) looks at the compass only when run as geoclue: busctl.
    func claimAndRead() throws -> String {
      let base = ["busctl", "--address=\(granted.bus.address)"]
      let path = ["net.hadess.SensorProxy", "/net/hadess/SensorProxy/Compass"]
      let claim = try granted.client(
        base + ["call"] + path + ["net.hadess.SensorProxy.Compass", "ClaimCompass"])
      #expect(claim.status == 0, "\(claim)\n\(granted.log)")
      return try granted.client(
        base + ["get-property"] + path + ["net.hadess.SensorProxy.Compass", "CompassHeading"]
      ).stdout.trimmingCharacters()
    }
    // The claim's reply waits for the first reading, so the heading is there when it returns.
    #expect(try claimAndRead() == "d 90", "\(granted.log)")
    try granted.testbed.perform {
      $0.set(EmulatedAmbient.compass, "in_rot_from_north_magnetic_tilt_comp_raw", "1800\n")
    }
    #expect(try claimAndRead() == "d 180", "\(granted.log)")
  }

  /// `orientd --watch --json --light --proximity` started before the daemon: it waits, claims
  /// both, prints their first values on its first line and every change after; killed, it
  /// leaves nothing read.
  @Test func watchFollowsLightAndProximity() throws {
    let light = EmulatedAmbient.light[1]
    let prox = EmulatedAmbient.proximity[1]
    let bus = try PrivateBus()
    let orientd = try Built.executable("orientd")
    let watch = try ChildProcess(
      [orientd, "--watch", "--json", "--light", "--proximity"], environment: bus.environment,
      outputDirectory: bus.directory.path)
    defer {
      watch.signal(SIGTERM)
      _ = watch.wait(timeout: 10)
    }
    #expect(waitFor(timeout: 15) { watch.standardError.contains("waiting for") })
    let fixture = try DaemonFixture(
      devices: [Accel.parent, Accel.polled] + EmulatedAmbient.light + EmulatedAmbient.proximity,
      bus: bus)
    func last() -> JSONValue? { watch.standardOutput.jsonLines.last }
    #expect(
      waitFor(timeout: 20) { last() != nil }, "\(watch.standardError)\n\(fixture.log)")
    // The first line already has the light level: it waited for the claims' fresh values.
    let first = try #require(watch.standardOutput.jsonLines.first)
    #expect(first["orientation"]?.stringValue == "normal", "\(first)")
    #expect(first["has_ambient_light"] == .bool(true) && first["light_level"] == .number(55))
    #expect(first["light_level_unit"]?.stringValue == "lux")
    #expect(first["has_proximity"] == .bool(true) && first["proximity_near"] == .bool(false))
    #expect(first["compass_heading"] == nil, "not asked for")

    try fixture.testbed.perform { $0.set(light, "in_illuminance_raw", "290\n") }
    #expect(
      waitFor(timeout: 10) { last()?["light_level"] == .number(150) }, "\(watch.standardOutput)")
    try fixture.testbed.perform { $0.set(prox, "in_proximity_raw", "256\n") }
    #expect(
      waitFor(timeout: 10) {
        last()?["proximity_near"] == .bool(true) && last()?["light_level"] == .number(150)
      }, "\(watch.standardOutput)")
    try fixture.turn(.leftUp)
    #expect(
      waitFor(timeout: 15) {
        last()?["orientation"]?.stringValue == "left-up" && last()?["proximity_near"] == .bool(true)
      }, "\(watch.standardOutput)")

    watch.signal(SIGTERM)
    #expect(watch.wait(timeout: 10) == 0)
    #expect(
      waitFor(timeout: 10) {
        !reads(fixture, "in_illuminance_raw") && !reads(fixture, "in_proximity_raw")
          && !fixture.isReadingSensor
      }, "\(fixture.log)")
  }

  /// The text form, and a light sensor missing: the line says so rather than a level.
  @Test func watchTextSaysWhatIsMissing() throws {
    let fixture = try DaemonFixture(devices: [Accel.parent, Accel.polled] + EmulatedAmbient.light)
    let watch = try fixture.start([
      try Built.executable("orientd"), "--watch", "--light", "--proximity",
    ])
    defer {
      watch.signal(SIGTERM)
      _ = watch.wait(timeout: 10)
    }
    #expect(
      waitFor(timeout: 20) {
        watch.standardOutput.contains(
          "normal (rotation 0, tilt vertical), light 55 lux, no proximity sensor")
      }, "\(watch.standardOutput)\n\(watch.standardError)\n\(fixture.log)")
  }

  /// The compass is geoclue's: `--watch --compass` as root on the shipped policy says so and
  /// exits 77 (EX_NOPERM) instead of watching without it.
  @Test func watchCompassRefusedByThePolicy() throws {
    let fixture = try DaemonFixture(devices: [Accel.parent, Accel.polled, EmulatedAmbient.compass])
    let result = try fixture.client(
      [try Built.executable("orientd"), "--watch", "--compass"], timeout: 30)
    #expect(result.status == 77, "\(result)")
    #expect(result.stderr.contains("geoclue"), "\(result)")
    #expect(result.stdout.isEmpty, "no line without the compass's value: \(result)")
  }

  /// With the policy granted to root, the heading is on the line.
  @Test func watchCompassWhenGranted() throws {
    let (bus, policy) = try PrivateBus.compassGrantedToRoot()
    defer { withExtendedLifetime(policy) {} }
    let fixture = try DaemonFixture(
      devices: [Accel.parent, Accel.polled, EmulatedAmbient.compass], bus: bus)
    let watch = try fixture.start([
      try Built.executable("orientd"), "--watch", "--json", "--compass",
    ])
    defer {
      watch.signal(SIGTERM)
      _ = watch.wait(timeout: 10)
    }
    #expect(
      waitFor(timeout: 20) {
        watch.standardOutput.jsonLines.last.map {
          $0["has_compass"] == .bool(true) && $0["compass_heading"] == .number(90)
        } ?? false
      }, "\(watch.standardOutput)\n\(watch.standardError)\n\(fixture.log)")
  }

  /// `orientd --list-sensors` in a umockdev testbed of `records` (files), with `--json` or not.
  private func listSensors(_ records: [String], json: Bool) throws -> (
    status: Int32, stdout: String, stderr: String
  ) {
    let directory = try TemporaryDirectory("list")
    return try ChildProcess.run(
      ["umockdev-run"] + records.flatMap { ["-d", $0] } + [
        "--", try Built.executable("orientd"), "--list-sensors",
      ] + (json ? ["--json"] : []), outputDirectory: directory.path)
  }

  /// Every kind at once: the accelerometer, IIO light and applesmc, IIO proximity and an input
  /// `SW_FRONT_PROXIMITY` switch, the compass, in text and JSON.
  @Test func listSensorsShowsEveryKind() throws {
    let directory = try TemporaryDirectory("records")
    try writeFile(directory.file("switch.umockdev"), ProximitySwitch.record)
    let records = [
      EmulatedAccelerometer.path, EmulatedAmbient.path, directory.file("switch.umockdev"),
    ]
    let result = try listSensors(records, json: true)
    #expect(result.status == 0, "\(result)")
    let document = try JSONValue(parsing: result.stdout)
    #expect(document["chosen"]?.stringValue == "iio:device0", "\(result.stdout)")
    guard case .array(let ambient)? = document["ambient"] else {
      Issue.record("no ambient list: \(result)")
      return
    }
    #expect(
      ambient.compactMap { $0["kind"]?.stringValue }
        == ["light", "light", "proximity", "proximity", "compass"], "\(result.stdout)")
    #expect(ambient.contains { $0["near_level"] == .number(128) })
    #expect(
      ambient.contains {
        $0["kind"]?.stringValue == "proximity"
          && $0["read"]?.stringValue == "input-switch \(ProximitySwitch.node)"
      }, "\(result.stdout)")
    #expect(ambient.contains { $0["unit"]?.stringValue == "vendor" }, "applesmc")

    let text = try listSensors(records, json: false)
    #expect(text.status == 0, "\(text)")
    for line in [
      "Would use iio:device0 for orientation.", "light: ", "compass: ",
      "proximity: event5 (gpio_keys) read input-switch /dev/input/event5",
    ] {
      #expect(text.stdout.contains(line), "\(line): \(text.stdout)")
    }
  }

  /// A laptop with a light sensor and no accelerometer still has something to serve: exit 0,
  /// not 69 (which is kept for no sensor of any kind).
  @Test func listSensorsWithOnlyAmbientSensorsSucceeds() throws {
    let ambientOnly = try listSensors([EmulatedAmbient.path], json: false)
    #expect(ambientOnly.status == 0, "\(ambientOnly)")
    #expect(ambientOnly.stdout.contains("No accelerometer found"), "\(ambientOnly.stdout)")
    #expect(ambientOnly.stdout.contains("light: iio:device"), "\(ambientOnly.stdout)")
    let json = try listSensors([EmulatedAmbient.path], json: true)
    #expect(json.status == 0, "\(json)")
    let document = try JSONValue(parsing: json.stdout)
    #expect(document["sensors"] == .array([]) && document["chosen"] == .null, "\(json.stdout)")

    let nothing = try listSensors([], json: false)
    #expect(nothing.status == 69, "\(nothing)")
    #expect(nothing.stdout.contains("No ambient light, proximity or compass sensor found"))
  }
}
