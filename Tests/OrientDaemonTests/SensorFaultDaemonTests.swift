import Glibc
import OrientCore
import TestSupport
import TestThreads
import Testing

/// A buffered accelerometer for the daemon (1 g = 1000 counts): `le:s16/16>>0` x, y, z and a
/// kernel timestamp at byte 8 of 16-byte scans, its own data-ready trigger beside it.
enum BufferedAccel {
  /// `iio:deviceN` with its node `/dev/iio:deviceN`. (umockdev cannot add a node again under
  /// a name it had: a device that comes back gets a new number, as it often does on hardware.)
  static func device(_ number: Int = 0) -> UMockdevDevice {
    UMockdevDevice(
      devpath: "\(Accel.parent.devpath)/iio:device\(number)",
      properties: [("SUBSYSTEM", "iio"), ("DEVNAME", "/dev/iio:device\(number)")],
      attributes: [
        ("name", "bmc150_accel\n"), ("dev", "241:\(number)\n"), ("in_accel_x_raw", "0\n"),
        ("in_accel_y_raw", "-1000\n"), ("in_accel_z_raw", "0\n"),
        ("in_accel_scale", "0.00980665\n"), ("sampling_frequency", "15.620000\n"),
        ("sampling_frequency_available", "15.620000 31.260000 62.500000 125\n"),
        ("current_timestamp_clock", "realtime\n"), ("buffer/enable", "0\n"),
        ("buffer/length", "2\n"), ("trigger/current_trigger", "\n"),
        ("scan_elements/in_accel_x_en", "0\n"), ("scan_elements/in_accel_x_index", "0\n"),
        ("scan_elements/in_accel_x_type", "le:s16/16>>0\n"),
        ("scan_elements/in_accel_y_en", "0\n"), ("scan_elements/in_accel_y_index", "1\n"),
        ("scan_elements/in_accel_y_type", "le:s16/16>>0\n"),
        ("scan_elements/in_accel_z_en", "0\n"), ("scan_elements/in_accel_z_index", "2\n"),
        ("scan_elements/in_accel_z_type", "le:s16/16>>0\n"),
        ("scan_elements/in_timestamp_en", "0\n"), ("scan_elements/in_timestamp_index", "3\n"),
        ("scan_elements/in_timestamp_type", "le:s64/64>>0\n"),
      ], node: "iio:device\(number)")
  }
  static let trigger = UMockdevDevice(
    devpath: "\(Accel.parent.devpath)/trigger1", properties: [("SUBSYSTEM", "iio")],
    attributes: [("name", "bmc150_accel-dev0\n")])

  /// `count` upright scans (the driver fills in the timestamps).
  static func uprightScans(_ count: Int) -> [[UInt8]] {
    // x 0, y -1000 (0xfc18), z 0, 2 bytes of padding, 8 bytes of timestamp.
    let scan: [UInt8] = [0, 0, 0x18, 0xFC, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 8)
    return [[UInt8]](repeating: scan, count: count)
  }
}

/// Issue 8 at the daemon: what clients see when the sensor misbehaves, through
/// `orientd --watch --json` and the bus properties.
@Suite(
  .ownThreads, .serialized, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct SensorFaultDaemonTests {
  /// The sensor's files (and for a buffered one its device node) vanish while it is read,
  /// before udev says so: clients see no accelerometer and an undefined orientation, nothing
  /// of it stays open, and it is used again when it comes back.
  @Test(arguments: ["polled", "buffered"])
  func sensorVanishingMidReadAndBack(mode: String) throws {
    let buffered = mode == "buffered"
    let device = buffered ? BufferedAccel.device(0) : Accel.polled
    let returning = buffered ? BufferedAccel.device(1) : Accel.polled
    let fixture = try DaemonFixture(
      devices: [Accel.parent, device] + (buffered ? [BufferedAccel.trigger] : []))
    func feed(_ device: UMockdevDevice) throws {
      guard let node = device.node else { return }
      try fixture.testbed.perform {
        $0.script(
          device, devnode: "/dev/\(node)", records: BufferedAccel.uprightScans(400),
          intervalMilliseconds: 30, timestampOffset: 8)
      }
    }
    let watch = try fixture.start([try Built.executable("orientd"), "--watch", "--json"])
    #expect(waitFor(timeout: 10) { fixture.log.contains("sampling iio:device0 \(mode)") })
    try feed(device)
    #expect(
      waitFor(timeout: 10) {
        watch.standardOutput.jsonLines.contains { $0["orientation"]?.stringValue == "normal" }
      })
    var start = monotonicSeconds()
    try fixture.testbed.perform { $0.unplug(device, filesFirst: true) }
    #expect(
      waitFor(timeout: 10) {
        watch.standardOutput.jsonLines.last.map(isUndefinedWithoutSensor) == true
      }, "\(watch.standardOutput)\n\(fixture.log)")
    let goneMilliseconds = (monotonicSeconds() - start) * 1000
    #expect(try fixture.property("HasAccelerometer") == "b false")
    #expect(try fixture.property("Sensor") == "a{sv} 0")
    #expect(!fixture.testbed.openFiles().contains { $0.contains("iio:device0") })
    start = monotonicSeconds()
    try fixture.testbed.perform { $0.hotplug([returning]) }
    try feed(returning)
    #expect(
      waitFor(timeout: 10) {
        watch.standardOutput.jsonLines.last.map { isSensed($0, .normal) } == true
      }, "\(watch.standardOutput)\n\(fixture.log)")
    let backMilliseconds = (monotonicSeconds() - start) * 1000
    #expect(try fixture.property("Sensor").contains("\"mode\" s \"\(mode)\""))
    // Never a wrong orientation on the way.
    let orientations = Set(
      watch.standardOutput.jsonLines.compactMap { $0["orientation"]?.stringValue })
    #expect(orientations == ["normal", "undefined"], "\(orientations)")
    watch.signal(SIGINT)
    #expect(watch.wait(timeout: 10) == 0)
    print(
      "fault vanishMidRead \(mode): undefined \(Int(goneMilliseconds)) ms after the files "
        + "went (uevent 200 ms later); normal again \(Int(backMilliseconds)) ms after the "
        + "device came back")
  }

  /// Garbage, empty and failing reads while a client watches: the orientation stays what it
  /// was, each kind of problem is logged once.
  @Test func badReadingsNeverChangeTheOrientation() throws {
    let fixture = try DaemonFixture()
    let watch = try fixture.start([try Built.executable("orientd"), "--watch", "--json"])
    #expect(
      waitFor(timeout: 10) {
        watch.standardOutput.jsonLines.contains { $0["orientation"]?.stringValue == "normal" }
      })
    for value in ["abc\n", "", "99999999999999999999\n", "1e3\n", "-0x10\n"] {
      try fixture.testbed.perform { $0.set(fixture.device, "in_accel_y_raw", value) }
      #expect(fixture.waitForPolls(), "the daemon stopped polling after \(value.debugDescription)")
    }
    try fixture.testbed.perform { $0.set(fixture.device, "in_accel_x_raw", "5000000\n") }
    #expect(fixture.waitForPolls())
    try fixture.set((0, -1000, 0))
    try fixture.testbed.perform { $0.set(fixture.device, "in_accel_x_raw", "0\n") }
    try fixture.turn(.leftUp)
    #expect(
      waitFor(timeout: 10) {
        watch.standardOutput.jsonLines.contains { $0["orientation"]?.stringValue == "left-up" }
      })
    let orientations = watch.standardOutput.jsonLines.map { $0["orientation"]?.stringValue }
    #expect(orientations == ["normal", "left-up"], "\(watch.standardOutput)")
    let warnings = fixture.log.split(separator: "\n").filter { $0.contains("skipping reading") }
    // garbage, empty, overflow (the three kinds on y); "1e3" and "-0x10" are garbage again.
    #expect(warnings.count >= 3 && warnings.count <= 4, "\(warnings)")
    watch.signal(SIGINT)
    #expect(watch.wait(timeout: 10) == 0)
  }

  /// A storm of unplug/replug pairs under a claim: the daemon ends sampling the device with the
  /// same descriptors open as before and publishes it, with a bounded log.
  @Test func hotplugStormUnderAClaim() throws {
    let fixture = try DaemonFixture()
    let watch = try fixture.start([try Built.executable("orientd"), "--watch", "--json"])
    #expect(
      waitFor(timeout: 10) {
        watch.standardOutput.jsonLines.contains { $0["orientation"]?.stringValue == "normal" }
      })
    let before = fixture.testbed.openFiles()
    let logBefore = fixture.log.split(separator: "\n").filter { !$0.contains(": debug: ") }.count
    let start = monotonicSeconds()
    try fixture.testbed.perform(timeout: 60) { scenario in
      scenario.repeating(100) {
        $0.unplug(fixture.device)
        $0.hotplug([fixture.device])
      }
    }
    let stormSeconds = monotonicSeconds() - start
    // One calm replug after the storm: umockdev drops uevents silently when the daemon's
    // socket holds 10 (net.unix.max_dgram_qlen), where the kernel would report ENOBUFS.
    usleep(500_000)
    try fixture.testbed.perform {
      $0.unplug(fixture.device)
      $0.hotplug([fixture.device])
    }
    // Sampling the device as it is now, not the files of a removed one.
    #expect(
      waitFor(timeout: 10) {
        let open = fixture.testbed.openFiles()
        return open.filter { $0.hasSuffix("_raw") }.count == 3
          && !open.contains { $0.hasSuffix("(deleted)") }
      }, "\(fixture.testbed.openFiles())")
    try fixture.turn(.rightUp)
    #expect(
      waitFor(timeout: 10) {
        watch.standardOutput.jsonLines.last.map { isSensed($0, .rightUp) } == true
      }, "\(watch.standardOutput)\n\(fixture.log)")
    let after = fixture.testbed.openFiles()
    #expect(before.count == after.count, "before \(before)\nafter \(after)")
    #expect(try fixture.property("HasAccelerometer") == "b true")
    // What orientd logs without -v.
    let stormLog =
      fixture.log.split(separator: "\n").filter { !$0.contains(": debug: ") }.count - logBefore
    #expect(stormLog <= 80, "\(fixture.log)")
    #expect(fixture.testbed.programIsRunning)
    watch.signal(SIGINT)
    #expect(watch.wait(timeout: 10) == 0)
    print(
      "fault daemonHotplugStorm: 200 uevents in \(Int(stormSeconds * 1000)) ms; orientd fds "
        + "\(before.count) before, \(after.count) after; \(stormLog) log lines above debug level for the storm"
    )
  }
}
