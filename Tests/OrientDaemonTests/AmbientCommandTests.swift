import Glibc
import JSON
import OrientWire
import TestSupport
import TestThreads
import Testing

/// orientd's command line on light, proximity and the compass (issue 17): `--watch --light
/// --proximity --compass` through a private bus, and `--list-sensors` with every sensor kind,
/// on the emulated sensors of Tests/Fixtures/umockdev/ambient.umockdev.
@Suite(.ownThreads, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct AmbientCommandTests {
  private func reads(_ fixture: DaemonFixture, _ attribute: String) -> Bool {
    fixture.testbed.openFiles().contains { $0.hasSuffix(attribute) }
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

  /// The same client against Debian's iio-sensor-proxy (3.0) itself, which serves the same
  /// contract: `--watch --light --proximity` follows it too. (3.0 leaves the light's
  /// `in_illuminance_offset` out: 100 counts read 50 lux there, 55 with orientd.)
  @Test(.enabled(if: access("/usr/sbin/iio-sensor-proxy", X_OK) == 0, "no iio-sensor-proxy"))
  func watchFollowsIIOSensorProxyToo() throws {
    let light = EmulatedAmbient.light[1]
    let prox = EmulatedAmbient.proximity[1]
    // Its own bus policy (net.hadess.SensorProxy.conf, from its Debian package).
    let bus = try PrivateBus(policyDirectory: "/etc/dbus-1/system.d")
    let testbed = try LiveTestbed(
      devices: [Accel.parent, Accel.polled] + EmulatedAmbient.light + EmulatedAmbient.proximity,
      program: ["/usr/sbin/iio-sensor-proxy"], environment: bus.environment)
    let watch = try ChildProcess(
      [try Built.executable("orientd"), "--watch", "--json", "--light", "--proximity"],
      environment: bus.environment, outputDirectory: bus.directory.path)
    defer {
      watch.signal(SIGTERM)
      _ = watch.wait(timeout: 10)
    }
    func last() -> JSONValue? { watch.standardOutput.jsonLines.last }
    #expect(
      waitFor(timeout: 20) {
        last()?["light_level"] == .number(50) && last()?["proximity_near"] == .bool(false)
      }, "\(watch.standardOutput)\n\(watch.standardError)\n\(testbed.programStderr)")
    #expect(watch.standardError.contains("watching \(Wire.sensorProxyName)"))
    try testbed.perform { $0.set(light, "in_illuminance_raw", "290\n") }
    #expect(
      waitFor(timeout: 10) { last()?["light_level"] == .number(145) }, "\(watch.standardOutput)")
    try testbed.perform { $0.set(prox, "in_proximity_raw", "256\n") }
    #expect(
      waitFor(timeout: 10) { last()?["proximity_near"] == .bool(true) }, "\(watch.standardOutput)")
    watch.signal(SIGTERM)
    #expect(watch.wait(timeout: 10) == 0)
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

  /// The compass is for any user (iio-sensor-proxy 3.6+): `--watch --compass` as `nobody`,
  /// neither root nor geoclue, on the project's policy shows the heading on its line.
  @Test func watchCompassAsAnyUser() throws {
    let fixture = try DaemonFixture(devices: [Accel.parent, Accel.polled, EmulatedAmbient.compass])
    fixture.bus.openToEveryUser()
    let watch = try fixture.start(
      PrivateBus.nobody + [try Built.executable("orientd"), "--watch", "--json", "--compass"])
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
  @Test func listSensorsShowsEveryKindInTextAndJSON() throws {
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
