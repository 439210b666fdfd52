import Glibc
import JSON
import OrientCore
import OrientWire
import TestSupport
import TestThreads
import Testing

/// orientd on a private bus with the project's own policy and an emulated accelerometer, seen
/// by real clients: busctl, gdbus, `orientd --watch`, `orientd --get` and Debian's
/// `monitor-sensor` through the compatibility API.
@Suite(.ownThreads, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct EndToEndTests {
  @Test func fourOrientationsAsEveryClientSeesThem() throws {
    let fixture = try DaemonFixture()
    let orientd = try Built.executable("orientd")
    let watch = try fixture.start([orientd, "--watch", "--json"])
    let monitor = try fixture.start(["stdbuf", "-oL", "monitor-sensor"])
    // Closed pipe: the watcher must release and exit once its reader is gone.
    let piped = try fixture.start([
      "sh", "-c",
      "'\(orientd)' --watch --json | head -n 1 > '\(fixture.bus.directory.file("head.out"))'",
    ])
    #expect(
      waitFor(timeout: 10) {
        watch.standardOutput.jsonLines.contains { $0["orientation"]?.stringValue == "normal" }
          // monitor-sensor prints the properties it had before its claim, then the change.
          && (monitor.standardOutput.contains("=== Has accelerometer (orientation: normal)")
            || monitor.standardOutput.contains("Accelerometer orientation changed: normal"))
          && readFile(fixture.bus.directory.file("head.out")).contains("normal")
      }, "watch: \(watch.standardOutput)\nmonitor-sensor: \(monitor.standardOutput)")
    #expect(fixture.isReadingSensor)

    for (orientation, rotation) in [
      (Orientation.leftUp, 90), (.bottomUp, 180), (.rightUp, 270), (.normal, 0),
    ] {
      try fixture.turn(orientation)
      let changed = "Accelerometer orientation changed: \(orientation.rawValue)"
      #expect(
        waitFor(timeout: 10) {
          watch.standardOutput.jsonLines.last.map {
            $0["orientation"]?.stringValue == orientation.rawValue
              && $0["rotation"]?.numberValue == Double(rotation)
          } == true
            && monitor.standardOutput.lines.last?.hasSuffix(changed) == true
        }, "\(orientation): watch \(watch.standardOutput)\nmonitor \(monitor.standardOutput)")
      // A separate client reads the properties of both APIs.
      #expect(try fixture.property("Orientation") == "s \"\(orientation.rawValue)\"")
      #expect(try fixture.property("Rotation") == "u \(rotation)")
      let compat = try fixture.client([
        "gdbus", "call", "--address", fixture.bus.address, "--dest", Wire.sensorProxyName,
        "--object-path", Wire.sensorProxyPath.rawValue, "--method",
        "org.freedesktop.DBus.Properties.Get", Wire.sensorProxyName,
        "AccelerometerOrientation",
      ])
      #expect(compat.stdout.trimmingCharacters() == "(<'\(orientation.rawValue)'>,)")
    }
    // Every line orientd --watch --json printed is what orientcam --orientation-from reads.
    let lines = watch.standardOutput.lines
    #expect(lines.count == 5)
    for line in lines {
      let value = try JSONValue(parsing: line)
      #expect(value["time"]?.numberValue.map { $0 > 1_000_000_000 } == true)
      #expect(value["tilt"]?.stringValue == "vertical")
      #expect(value["has_accelerometer"] == .bool(true))
    }
    #expect(piped.wait(timeout: 10) == 0, "the watcher did not stop on a closed pipe")

    // SIGTERM: the watcher releases and exits 0; killing monitor-sensor drops its claim too;
    // then nobody holds a claim and the sensor is no longer read.
    watch.signal(SIGTERM)
    #expect(watch.wait(timeout: 10) == 0)
    monitor.killNow()
    #expect(waitFor(timeout: 10) { !fixture.isReadingSensor }, "\(fixture.log)")
    #expect(fixture.log.contains("left the bus"))
    #expect(fixture.log.contains("released through orientd"))
  }
}
