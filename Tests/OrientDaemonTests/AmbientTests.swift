import Foundation
import JSON
import OrientWire
import TestSupport
import TestThreads
import Testing

/// Light, proximity and compass on `net.hadess.SensorProxy`, emulated with umockdev
/// (Tests/Fixtures/umockdev/ambient.umockdev) and seen by Debian's `monitor-sensor`, busctl and
/// gdbus on a private bus with the project's policy.
@Suite(.ownThreads, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct AmbientTests {
  private static let proxy = [Wire.sensorProxyName, Wire.sensorProxyPath.rawValue]

  private func get(_ fixture: DaemonFixture, _ name: String) throws -> String {
    try fixture.property(name, service: Wire.sensorProxyName, path: Wire.sensorProxyPath.rawValue)
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

  /// `light-interval` and `proximity-interval` set how often the polled sensors are read.
  @Test func pollIntervalsComeFromTheConfiguration() throws {
    let bus = try PrivateBus()
    let config = bus.directory.file("intervals.conf")
    try writeFile(config, "[sampling]\nlight-interval = 1.5\nproximity-interval = 0.7\n")
    let fixture = try DaemonFixture(
      ["--config", config],
      devices: [Accel.parent, Accel.polled] + EmulatedAmbient.light + EmulatedAmbient.proximity,
      bus: bus)
    let monitor = try fixture.start(["stdbuf", "-oL", "monitor-sensor"])
    defer { monitor.killNow() }
    #expect(
      waitFor(timeout: 15) {
        fixture.log.contains("in_illuminance_raw every 1500 ms")
          && fixture.log.contains("in_proximity_raw every 700 ms")
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
      "gdbus", "monitor", "--address", address, "--dest", Wire.sensorProxyName,
    ])
    let script = """
      import gi, os, sys, time
      from gi.repository import Gio, GLib
      bus = Gio.DBusConnection.new_for_address_sync(sys.argv[1],
          Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
      def call(method):
          bus.call_sync('\(Wire.sensorProxyName)', '\(Wire.sensorProxyPath.rawValue)', '\(Wire.sensorProxyName)',
                        method, None, None, 0, 10000, None)
      def get(name):
          return bus.call_sync('\(Wire.sensorProxyName)', '\(Wire.sensorProxyPath.rawValue)',
              'org.freedesktop.DBus.Properties', 'Get',
              GLib.Variant('(ss)', ('\(Wire.sensorProxyName)', name)), None, 0, 10000, None)[0]
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

  /// The compass is for any user on the project's policy, as in iio-sensor-proxy 3.6+:
  /// `nobody` (neither root nor geoclue) claims it and reads the heading (no polkitd runs
  /// here, so the bus policy is the only gate; PolkitTests has polkit's verdicts).
  @Test func compassForAnyUser() throws {
    let fixture = try DaemonFixture(devices: [Accel.parent, Accel.polled, EmulatedAmbient.compass])
    fixture.bus.openToEveryUser()
    // Debian's monitor-sensor (3.0) looks at the compass only when run as geoclue: busctl.
    func claimAndRead() throws -> String {
      let base = PrivateBus.nobody + ["busctl", "--address=\(fixture.bus.address)"]
      let path = [Wire.sensorProxyName, Wire.compassPath.rawValue]
      let claim = try fixture.client(
        base + ["call"] + path + [Wire.compassInterface, "ClaimCompass"])
      #expect(claim.status == 0, "\(claim)\n\(fixture.log)")
      return try fixture.client(
        base + ["get-property"] + path + [Wire.compassInterface, "CompassHeading"]
      ).stdout.trimmingCharacters()
    }
    // The claim's reply waits for the first reading, so the heading is there when it returns.
    #expect(try claimAndRead() == "d 90", "\(fixture.log)")
    try fixture.testbed.perform {
      $0.set(EmulatedAmbient.compass, "in_rot_from_north_magnetic_tilt_comp_raw", "1800\n")
    }
    #expect(try claimAndRead() == "d 180", "\(fixture.log)")
  }

  @Test func listSensorsShowsEveryKind() throws {
    let directory = try TemporaryDirectory("list")
    let result = try ChildProcess.run(
      [
        "umockdev-run", "-d", EmulatedAmbient.path, "--", try Built.executable("orientd"),
        "--list-sensors", "--json",
      ], outputDirectory: directory.path)
    let document = try JSONValue(parsing: result.stdout)
    guard case .array(let ambient)? = document["ambient"] else {
      Issue.record("no ambient list: \(result)")
      return
    }
    #expect(
      ambient.compactMap { $0["kind"]?.stringValue } == ["light", "light", "proximity", "compass"])
    #expect(ambient.contains { $0["near_level"] == .number(128) })
  }

  /// A light sensor with no attribute to poll, only the scan element (the VM's HID sensor hub
  /// light sensor as recorded, its `_raw` attributes removed: Tests/Fixtures/umockdev/
  /// hid-als-buffered.umockdev): read through `/dev/iio:device0` while claimed, its scans
  /// scaled like the attribute (0.1 lux), and put back as found afterwards.
  @Test func aBufferOnlyLightSensorIsReadThroughItsNode() throws {
    let devices = try UMockdevDevice.parse(
      record: readFile("\(Built.packageRoot)/Tests/Fixtures/umockdev/hid-als-buffered.umockdev"))
    let als = try #require(devices.first)
    let fixture = try DaemonFixture(devices: devices)
    let sysfs = fixture.testbed.root + als.syspath
    func attribute(_ name: String) -> String { readFile("\(sysfs)/\(name)") }
    #expect(try get(fixture, "HasAmbientLight") == "b true")
    #expect(
      fixture.log.contains("light sensor iio:device0 (iio-buffer in_illuminance"), "\(fixture.log)")
    #expect(attribute("buffer/enable") == "0\n")
    #expect(
      !fixture.testbed.openFiles().contains { $0.hasPrefix("/dev/") && !$0.hasPrefix("/dev/null") })

    // 550 and, 2 s later, 1500 tenths of lux, as le:s32 scans of the one enabled channel (one
    // script per node: umockdev takes no second one).
    func scans(_ raw: Int32, _ count: Int) -> [[UInt8]] {
      Array(repeating: withUnsafeBytes(of: raw.littleEndian) { Array($0) }, count: count)
    }
    let monitor = try fixture.start(["stdbuf", "-oL", "monitor-sensor"])
    #expect(waitFor(timeout: 10) { attribute("buffer/enable") == "1\n" }, "\(fixture.log)")
    #expect(attribute("scan_elements/in_illuminance_en") == "1\n")
    #expect(attribute("scan_elements/in_intensity_both_en") == "0\n")
    try fixture.testbed.perform {
      $0.script(
        als, devnode: "/dev/iio:device0", records: scans(550, 5) + scans(1500, 5),
        intervalMilliseconds: 50, pauses: [5: 2000])
    }
    #expect(
      waitFor(timeout: 15) {
        monitor.standardOutput.contains("Light changed: 55.000000 (lux)")
          || monitor.standardOutput.contains("=== Has ambient light sensor (value: 55.000000")
      }, "monitor-sensor: \(monitor.standardOutput)\n\(fixture.log)")
    #expect(
      waitFor(timeout: 15) { monitor.standardOutput.contains("Light changed: 150.000000 (lux)") },
      "monitor-sensor: \(monitor.standardOutput)\n\(fixture.log)")

    // The client gone, the buffer is off and the channel disabled again; the node is closed.
    monitor.killNow()
    // The journal puts the attributes back one after another (the buffer first): wait for the
    // last, since a read between two writes can see one still being rewritten.
    #expect(
      waitFor(timeout: 10) {
        attribute("buffer/enable") == "0\n"
          && attribute("scan_elements/in_illuminance_en") == "0\n"
          && attribute("trigger/current_trigger") == "als-dev0\n"
      },
      "channel \(attribute("scan_elements/in_illuminance_en"))\n\(fixture.log)")
  }

  /// The VM's hid-sensor-magn-3d recording with its heading attribute removed: the heading is
  /// read from scans of `in_rot_from_north_magnetic_tilt_comp` alone (index 3, le:s32, scale
  /// 1).
  @Test func aBufferOnlyCompassIsReadThroughItsNode() throws {
    let recording = readFile("\(Built.packageRoot)/Tests/Fixtures/umockdev/hid-magn.umockdev")
    // UMockdevDevice.parse reads P/N/E/A lines; the heading's _raw goes, as on a hub without it.
    let kept = recording.split(separator: "\n", omittingEmptySubsequences: false).filter {
      !$0.hasPrefix("H: ") && !$0.hasPrefix("L: ")
        && !$0.hasPrefix("A: in_rot_from_north_magnetic_tilt_comp_raw=")
    }
    let devices = try UMockdevDevice.parse(record: kept.joined(separator: "\n"))
      .filter { $0.node != "uhid" }
    let magn = try #require(devices.first)
    let fixture = try DaemonFixture(devices: devices)
    let bus = fixture.bus
    #expect(
      fixture.log.contains("compass sensor iio:device2 (iio-buffer in_rot_from_north_magnetic"),
      "\(fixture.log)")
    // 90 degrees, queued on the node before the claim: the claim's reply waits for it.
    try fixture.testbed.perform {
      $0.script(
        magn, devnode: "/dev/iio:device2",
        records: Array(
          repeating: withUnsafeBytes(of: Int32(90).littleEndian) { Array($0) }, count: 3),
        intervalMilliseconds: 20)
    }
    let base = ["busctl", "--address=\(bus.address)"]
    let path = [Wire.sensorProxyName, Wire.compassPath.rawValue]
    let claim = try fixture.client(
      base + ["call"] + path + [Wire.compassInterface, "ClaimCompass"])
    #expect(claim.status == 0, "\(claim)\n\(fixture.log)")
    let heading = try fixture.client(
      base + ["get-property"] + path + [Wire.compassInterface, "CompassHeading"])
    #expect(heading.stdout.trimmingCharacters() == "d 90", "\(heading)\n\(fixture.log)")
    let sysfs = fixture.testbed.root + magn.syspath
    #expect(
      waitFor(timeout: 10) {
        readFile("\(sysfs)/buffer/enable") == "0\n"
          && readFile("\(sysfs)/scan_elements/in_rot_from_north_magnetic_tilt_comp_en") == "0\n"
      }, "\(fixture.log)")
  }
}
