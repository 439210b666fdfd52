import DBusKit
import Glibc
import JSON
import OrientCore
import OrientWire
import SystemKit
import TestSupport
import TestThreads
import Testing

/// A buffered gyroscope end to end (issue 26): orientd on a private bus with an emulated
/// st_lsm6dsx (Tests/Fixtures/umockdev/lsm6dso-gyro-buffered.umockdev: `lsm6dso_gyro` with
/// its own buffer, `sampling_frequency_available` 12.5-833 Hz, `mount_matrix`), scans
/// delivered through its node by a umockdev script, real clients (`orientd --watch --motion`,
/// stream clients on their own connections). The sensor's sampling frequency follows the
/// clients and is put back after them; a node that stops delivering is noticed by the stall
/// watchdog and the gyroscope is polled instead.
@Suite(
  .ownThreads, .serialized, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct MotionBufferedTests {
  /// The scans' counts (100, -200, 3000) x 0.000153 rad/s through the matrix
  /// (-1 0 0; 0 1 0; 0 0 -1).
  static let scanned = [-100 * 0.000153, -200 * 0.000153, -3000 * 0.000153]
  /// The `_raw` attributes' counts (-35, 18, 1702), as a polled read sees them.
  static let polled = [35 * 0.000153, 18 * 0.000153, -1702 * 0.000153]

  /// `count` scans of 16 bytes: x, y, z `le:s16`, 2 bytes of padding, the timestamp at 8.
  static func scans(_ count: Int) -> [[UInt8]] {
    func le(_ v: Int16) -> [UInt8] {
      [UInt8(UInt16(bitPattern: v) & 0xFF), UInt8(UInt16(bitPattern: v) >> 8)]
    }
    let scan = le(100) + le(-200) + le(3000) + [0, 0] + [UInt8](repeating: 0, count: 8)
    return [[UInt8]](repeating: scan, count: count)
  }

  @Test func theRateFollowsTheClientsAndAStalledNodeIsPolledInstead() throws {
    let devices = try UMockdevDevice.parse(
      record: readFile(
        "\(Built.packageRoot)/Tests/Fixtures/umockdev/lsm6dso-gyro-buffered.umockdev"))
    let gyro = try #require(devices.first { $0.node == "iio:device1" })
    let fixture = try DaemonFixture(devices: devices)
    fixture.bus.openToEveryUser()
    let sysfs = fixture.testbed.root + gyro.syspath
    func attribute(_ name: String) -> String {
      readFile("\(sysfs)/\(name)").split(separator: "\n").first.map(String.init) ?? ""
    }
    #expect(MotionDaemonTests.propertyBecomes(fixture, "HasGyroscope", "b true"), "\(fixture.log)")
    #expect(attribute("sampling_frequency") == "104.000000")

    // A properties-only client, the rotation fused: 25 Hz is asked, 26 is what it offers.
    let watch = try fixture.start([
      try Built.executable("orientd"), "--watch", "--motion", "--json",
    ])
    defer {
      watch.signal(SIGTERM)
      _ = watch.wait(timeout: 10)
    }
    #expect(
      waitFor(timeout: 15) {
        fixture.log.contains("reading its gyroscope buffered from /dev/iio:device1 at 26 Hz")
      }, "\(fixture.log)")
    #expect(attribute("sampling_frequency") == "26.000")
    #expect(attribute("buffer/enable") == "1")
    // 6 s of scans 10 ms apart, then silence.
    try fixture.testbed.perform {
      $0.script(
        gyro, devnode: "/dev/iio:device1", records: Self.scans(600), intervalMilliseconds: 10,
        timestampOffset: 8)
    }
    func last(_ key: String) -> [Double]? {
      watch.standardOutput.jsonLines.last?[key]?.arrayValue?.compactMap(\.numberValue)
    }
    #expect(
      waitFor(timeout: 15) {
        MotionDaemonTests.close(last("angular_velocity"), Self.scanned, within: 0.001)
      }, "\(watch.standardOutput.suffix(600))\n\(fixture.log)")

    // A stream at 100 Hz: 104 Hz, every sample; one at 25 Hz: every 4th of them.
    let loop = try EventLoop()
    let fast = try MotionDaemonTests.StreamClient(
      fixture.bus, loop: loop, options: ["rate": .double(100), "batch": .uint32(5)])
    #expect(attribute("sampling_frequency") == "104.000")
    #expect(fast.granted["rate"]?.doubleValue == 104, "\(fast.granted)")
    let slow = try MotionDaemonTests.StreamClient(
      fixture.bus, loop: loop, options: ["rate": .double(25)])
    #expect(slow.granted["rate"]?.doubleValue == 26, "\(slow.granted)")
    #expect(attribute("sampling_frequency") == "104.000")
    let fastRecords = fast.receive(limit: 40, timeout: 10)
    let slowRecords = slow.receive(limit: 10, timeout: 10)
    #expect(fastRecords.count >= 40 && slowRecords.count >= 10, "\(fixture.log)")
    let fastSteps = zip(fastRecords, fastRecords.dropFirst()).map { $1.sequence &- $0.sequence }
    let slowSteps = zip(slowRecords, slowRecords.dropFirst()).map { $1.sequence &- $0.sequence }
    #expect(fastSteps.allSatisfy { $0 == 1 }, "\(fastSteps)")
    #expect(slowSteps.allSatisfy { $0 == 4 }, "\(slowSteps)")
    let record = try #require(slowRecords.last)
    #expect(
      MotionDaemonTests.close(
        [record.angularVelocity.x, record.angularVelocity.y, record.angularVelocity.z].map(
          Double.init), Self.scanned, within: 0.001))
    // The fast client leaves: 26 Hz again, for the slow one; then the slow one.
    fast.connection.close()
    #expect(
      waitFor(timeout: 10) { attribute("sampling_frequency") == "26.000" }, "\(fixture.log)")
    let after = slow.receive(limit: 4, timeout: 10)
    let steps = zip(after, after.dropFirst()).map { $1.sequence &- $0.sequence }
    #expect(after.count >= 4 && steps.allSatisfy { $0 == 1 }, "every sample now: \(steps)")
    slow.connection.close()

    // The script ends: the watchdog re-arms the buffer, then hands over to polling.
    #expect(
      waitFor(timeout: 30) {
        fixture.log.contains("iio:device1: no scan for ")
          && fixture.log.contains("reading it through iio-poll-gyro instead")
      }, "\(fixture.log)")
    #expect(fixture.log.contains("iio:device1: no scan from /dev/iio:device1 for "))
    #expect(
      waitFor(timeout: 15) {
        MotionDaemonTests.close(last("angular_velocity"), Self.polled, within: 0.001)
      }, "\(watch.standardOutput.suffix(600))\n\(fixture.log)")
    #expect(attribute("buffer/enable") == "0", "the buffer is off once polled")
    #expect(attribute("sampling_frequency") == "104.000000", "put back with the buffer")

    watch.signal(SIGTERM)
    #expect(watch.wait(timeout: 10) == 0)
    #expect(
      waitFor(timeout: 15) {
        !fixture.testbed.openFiles().contains { $0.hasSuffix("/in_anglvel_z_raw") }
      }, "released: the gyroscope is closed")
    #expect(attribute("sampling_frequency") == "104.000000")
  }
}
