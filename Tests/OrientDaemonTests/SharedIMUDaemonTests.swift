import DBusKit
import Glibc
import JSON
import OrientCore
import OrientWire
import SystemKit
import TestSupport
import TestThreads
import Testing

/// A BMI160 read buffered (Tests/Fixtures/umockdev/bmi160-buffered.umockdev: accelerometer and
/// gyroscope on one IIO device, its own trigger, one `/dev/iio:device0`) by the real daemon on
/// a private bus, with `orientd --watch` and `orientd --watch --motion --json` as clients. The
/// node behaves as a triggered buffer (iio_driver.py `feed`): each scan carries the channels
/// enabled at that moment, so a reader that enabled other channels than it decodes reads
/// nonsense. Both kinds come from the one buffer (`iio-buffer-imu`), in either claim order,
/// and releasing one keeps the other flowing.
@Suite(
  .ownThreads, .serialized, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct SharedIMUDaemonTests {
  static let path = MotionDaemonTests.path
  static let interface = MotionDaemonTests.interface

  final class Rig {
    let fixture: DaemonFixture
    let imu: UMockdevDevice
    let sysfs: String

    init(_ file: String = "bmi160-buffered.umockdev", bus: PrivateBus? = nil) throws {
      let devices = try UMockdevDevice.parse(
        record: readFile("\(Built.packageRoot)/Tests/Fixtures/umockdev/\(file)"))
      imu = try #require(devices.first { $0.node != nil })
      fixture = try DaemonFixture(devices: devices, bus: bus)
      sysfs = fixture.testbed.root + imu.syspath
      let imu = imu
      try fixture.testbed.perform {
        $0.feed(imu, devnode: "/dev/iio:device0", intervalMilliseconds: 10)
      }
    }

    /// The channels enabled in the emulated device.
    var enabled: Set<String> {
      Set(
        ["in_accel_x", "in_anglvel_x", "in_timestamp"].filter {
          readFile("\(sysfs)/scan_elements/\($0)_en").hasPrefix("1")
        })
    }
    var bufferEnabled: Bool { readFile("\(sysfs)/buffer/enable").hasPrefix("1") }

    /// Turns the device: the display-frame reading of `orientation` (1 g), in the sensor's
    /// frame (the fixture's matrix maps sensor (x, y) to display (-y, x)).
    func turn(_ orientation: Orientation) throws {
      let (dx, dy, _) = Accel.raw(orientation)
      let scale = 8.19  // 1000 display counts -> 8190 counts of 0.001197 m/s^2: 1 g
      let sx = Int((Double(dy) * scale).rounded())
      let sy = Int((Double(-dx) * scale).rounded())
      let imu = imu
      try fixture.testbed.perform {
        $0.set(imu, "in_accel_x_raw", "\(sx)\n")
        $0.set(imu, "in_accel_y_raw", "\(sy)\n")
      }
    }

    func orientation() throws -> ChildProcess {
      try fixture.start([try Built.executable("orientd"), "--watch"])
    }
    func motion() throws -> ChildProcess {
      try fixture.start([try Built.executable("orientd"), "--watch", "--motion", "--json"])
    }
  }

  /// `orientd --watch` and `orientd --watch --motion --json`, both getting values.
  static func claimBoth(_ rig: Rig) throws -> (orientation: ChildProcess, motion: ChildProcess) {
    let orientation = try rig.orientation()
    let motion = try rig.motion()
    #expect(try follows(motion, z: 94, rig), "\(motion.standardOutput)\n\(rig.fixture.log)")
    #expect(waitFor(timeout: 15) { orientation.standardOutput.contains("normal (rotation 0") })
    return (orientation, motion)
  }

  static func rate(_ watch: ChildProcess) -> [Double]? {
    watch.standardOutput.jsonLines.last?["angular_velocity"]?.arrayValue?.compactMap(\.numberValue)
  }

  /// The gyroscope's z rate reaches `--watch --motion` (through the mount matrix: the
  /// fixture's (12, -7, z) counts read (7, 12, z) x 0.001065 rad/s).
  static func follows(_ watch: ChildProcess, z: Int, _ rig: Rig) throws -> Bool {
    let imu = rig.imu
    try rig.fixture.testbed.perform { $0.set(imu, "in_anglvel_z_raw", "\(z)\n") }
    return waitFor(timeout: 20) {
      MotionDaemonTests.close(
        rate(watch), [7 * 0.001065, 12 * 0.001065, Double(z) * 0.001065], within: 0.003)
    }
  }

  @Test func orientationThenMotionThenOrientationAlone() throws {
    let rig = try Rig()
    let log = { rig.fixture.log }
    #expect(!rig.bufferEnabled)
    let orientation = try rig.orientation()
    defer { orientation.signal(SIGKILL) }
    #expect(
      waitFor(timeout: 15) { orientation.standardOutput.contains("normal (rotation 0") }, "\(log())"
    )
    // Orientation only: the gyroscope's channels stay off.
    #expect(rig.bufferEnabled)
    #expect(rig.enabled == ["in_accel_x", "in_timestamp"], "\(rig.enabled)")

    let motion = try rig.motion()
    defer { motion.signal(SIGKILL) }
    #expect(try Self.follows(motion, z: 94, rig), "\(motion.standardOutput)\n\(log())")
    #expect(rig.enabled == ["in_accel_x", "in_anglvel_x", "in_timestamp"], "\(rig.enabled)")
    #expect(log().contains("buffered with its gyroscope"), "\(log())")
    #expect(!rig.fixture.testbed.openFiles().contains { $0.hasSuffix("_raw") }, "nothing polled")
    // Both from the one buffer: the accelerometer's turns and the gyroscope's rate.
    try rig.turn(.leftUp)
    #expect(waitFor(timeout: 15) { orientation.standardOutput.contains("left-up") }, "\(log())")
    #expect(try Self.follows(motion, z: -500, rig), "\(motion.standardOutput.suffix(600))")
    #expect(!orientation.standardOutput.contains("right-up"), "no bogus reading")

    // Motion released: orientation keeps flowing, the gyroscope's channels go off.
    motion.signal(SIGTERM)
    #expect(motion.wait(timeout: 10) == 0)
    #expect(waitFor(timeout: 15) { rig.enabled == ["in_accel_x", "in_timestamp"] }, "\(log())")
    try rig.turn(.normal)
    #expect(
      waitFor(timeout: 15) {
        orientation.standardOutput.hasSuffix("normal (rotation 0)\n")
          || orientation.standardOutput.components(separatedBy: "left-up").last?.contains("normal")
            == true
      }, "\(orientation.standardOutput)\n\(log())")
    orientation.signal(SIGTERM)
    #expect(orientation.wait(timeout: 10) == 0)
    #expect(waitFor(timeout: 15) { !rig.bufferEnabled && rig.enabled.isEmpty }, "sysfs put back")
    #expect(readFile("\(rig.sysfs)/in_anglvel_sampling_frequency").hasPrefix("100"))
  }

  @Test func motionThenOrientationThenMotionAlone() throws {
    let rig = try Rig()
    let log = { rig.fixture.log }
    let motion = try rig.motion()
    defer { motion.signal(SIGKILL) }
    #expect(try Self.follows(motion, z: 94, rig), "\(motion.standardOutput)\n\(log())")
    #expect(rig.enabled == ["in_accel_x", "in_anglvel_x", "in_timestamp"], "\(rig.enabled)")

    let orientation = try rig.orientation()
    defer { orientation.signal(SIGKILL) }
    #expect(
      waitFor(timeout: 15) { orientation.standardOutput.contains("normal (rotation 0") }, "\(log())"
    )
    try rig.turn(.leftUp)
    #expect(waitFor(timeout: 15) { orientation.standardOutput.contains("left-up") }, "\(log())")

    // Orientation released: the motion client still gets the gyroscope's rate.
    orientation.signal(SIGTERM)
    #expect(orientation.wait(timeout: 10) == 0)
    #expect(try Self.follows(motion, z: 300, rig), "\(motion.standardOutput.suffix(600))")
    motion.signal(SIGTERM)
    #expect(motion.wait(timeout: 10) == 0)
    #expect(waitFor(timeout: 15) { !rig.bufferEnabled && rig.enabled.isEmpty }, "sysfs put back")
  }
}

extension SharedIMUDaemonTests {
  @Test func unpluggedWhileBothAreReadBothStopCleanly() throws {
    let rig = try Rig()
    let log = { rig.fixture.log }
    let (orientation, motion) = try Self.claimBoth(rig)
    defer {
      orientation.signal(SIGKILL)
      motion.signal(SIGKILL)
    }
    // Its files vanish under the reader, then udev says so.
    let imu = rig.imu
    try rig.fixture.testbed.perform { $0.unplug(imu, filesFirst: true) }
    #expect(
      waitFor(timeout: 15) {
        (try? rig.fixture.property("HasGyroscope", path: Self.path, interface: Self.interface))
          == "b false"
      }, "\(log())")
    #expect(
      waitFor(timeout: 15) {
        (try? rig.fixture.property("HasAccelerometer"))
          == "b false"
      }, "\(log())")
    #expect(rig.fixture.testbed.programIsRunning)
    #expect(!rig.fixture.testbed.openFiles().contains { $0.contains("iio:device0") }, "\(log())")
    #expect(!log().contains("cannot read it again"), "no reopen of a removed device: \(log())")
  }
}

extension SharedIMUDaemonTests {
  /// An InvenSense MPU-6050 (Tests/Fixtures/umockdev/mpu6050-buffered.umockdev, hand-made from
  /// inv_mpu6050's sources): one `sampling_frequency` for both kinds, big-endian scan elements,
  /// a temperature channel between them, a matrix per kind (`in_accel_mount_matrix`,
  /// `in_anglvel_mount_matrix`).
  @Test func oneSamplingFrequencyServesBothKinds() throws {
    let rig = try Rig("mpu6050-buffered.umockdev")
    let log = { rig.fixture.log }
    let frequency = { readFile("\(rig.sysfs)/sampling_frequency").trimmingCharacters() }
    let orientation = try rig.orientation()
    defer { orientation.signal(SIGKILL) }
    #expect(
      waitFor(timeout: 15) { orientation.standardOutput.contains("normal (rotation 0") },
      "\(log())")
    #expect(frequency() == "50", "orientation alone: the lowest meeting buffered-rate")
    let motion = try rig.motion()
    defer { motion.signal(SIGKILL) }
    // (20, -30, 400) counts x 0.001064724 rad/s through (-1 0 0; 0 1 0; 0 0 -1).
    #expect(
      waitFor(timeout: 20) {
        MotionDaemonTests.close(
          Self.rate(motion), [-20 * 0.001064724, -30 * 0.001064724, -400 * 0.001064724])
      }, "\(motion.standardOutput)\n\(log())")
    #expect(frequency() == "50", "the fused rotation asks for 25 Hz: 50 is offered")
    #expect(rig.enabled == ["in_accel_x", "in_anglvel_x", "in_timestamp"], "\(rig.enabled)")
    #expect(readFile("\(rig.sysfs)/scan_elements/in_temp_en").hasPrefix("0"))
    // A stream at 200 Hz: the one frequency serves both kinds at 200.
    rig.fixture.bus.openToEveryUser()
    let loop = try EventLoop()
    let stream = try MotionDaemonTests.StreamClient(
      rig.fixture.bus, loop: loop, options: ["rate": .double(200)])
    #expect(frequency() == "200", "\(log())")
    #expect(stream.granted["rate"]?.doubleValue == 200, "\(stream.granted)")
    #expect(!stream.receive(limit: 20, timeout: 10).isEmpty)
    stream.connection.close()
    #expect(waitFor(timeout: 10) { frequency() == "50" }, "\(log())")
    motion.signal(SIGTERM)
    #expect(motion.wait(timeout: 10) == 0)
    #expect(waitFor(timeout: 15) { frequency() == "50" }, "\(log())")
    orientation.signal(SIGTERM)
    #expect(orientation.wait(timeout: 10) == 0)
    #expect(waitFor(timeout: 15) { frequency() == "20" && !rig.bufferEnabled }, "put back")
  }
}

extension SharedIMUDaemonTests {
  /// A suspend closes the device once (both kinds), a resume opens it again with both kinds'
  /// channels, and both flow again (logind played by python3-dbusmock, as in SleepBusTests).
  @Test(.enabled(if: DBusMock.isAvailable, "python3-dbusmock is not installed"))
  func bothKindsComeBackAfterAResume() throws {
    let rig = try Rig(bus: try PrivateBus(standIns: [Logind.name]))
    let log = { rig.fixture.log }
    let sleep = SleepBusTests()
    let (orientation, motion) = try Self.claimBoth(rig)
    defer {
      orientation.signal(SIGKILL)
      motion.signal(SIGKILL)
    }
    let mock = try DBusMock("logind", bus: rig.fixture.bus)
    defer { withExtendedLifetime(mock) {} }
    #expect(
      try waitFor(timeout: 15) { try sleep.inhibitors(rig.fixture).contains(#""delay""#) },
      "\(log())")

    try sleep.prepareForSleep(rig.fixture, true)
    #expect(
      waitFor(timeout: 10) {
        !rig.bufferEnabled && rig.enabled.isEmpty
          && !rig.fixture.testbed.openFiles().contains { $0.hasSuffix("iio:device0") }
      }, "suspended: the device closed once, its settings put back\n\(log())")
    #expect(!log().contains("cannot read it again"), "\(log())")
    try rig.turn(.leftUp)
    try sleep.prepareForSleep(rig.fixture, false)
    #expect(waitFor(timeout: 15) { orientation.standardOutput.contains("left-up") }, "\(log())")
    #expect(try Self.follows(motion, z: -200, rig), "\(motion.standardOutput.suffix(600))")
    #expect(rig.enabled == ["in_accel_x", "in_anglvel_x", "in_timestamp"], "\(rig.enabled)")
    #expect(orientation.isRunning && motion.isRunning, "the claims never ended")
  }
}

extension SharedIMUDaemonTests {
  /// The gyroscope's frequency follows what its clients ask for (`MotionRate`), retuned in
  /// place on the one buffer; the accelerometer keeps at least its own rate and at least the
  /// gyroscope's (every scan carries both).
  @Test func theGyroscopesRateFollowsItsClientsOnTheSharedBuffer() throws {
    let rig = try Rig()
    rig.fixture.bus.openToEveryUser()
    let log = { rig.fixture.log }
    func attribute(_ name: String) -> String {
      readFile("\(rig.sysfs)/\(name)").trimmingCharacters()
    }
    let motion = try rig.motion()
    defer { motion.signal(SIGKILL) }
    #expect(try Self.follows(motion, z: 94, rig), "\(motion.standardOutput)\n\(log())")
    // Properties only, the rotation fused: 25 Hz asked and offered; the accelerometer at 50.
    #expect(
      waitFor(timeout: 10) { attribute("in_anglvel_sampling_frequency") == "25" }, "\(log())")
    #expect(attribute("in_accel_sampling_frequency") == "50")
    let loop = try EventLoop()
    let stream = try MotionDaemonTests.StreamClient(
      rig.fixture.bus, loop: loop, options: ["rate": .double(200)])
    #expect(stream.granted["rate"]?.doubleValue == 200, "\(stream.granted)")
    #expect(attribute("in_anglvel_sampling_frequency") == "200", "\(log())")
    #expect(attribute("in_accel_sampling_frequency") == "200")
    #expect(
      log().contains("sampling iio:device0 at 200 Hz (the gyroscope retuned)"),
      "the accelerometer's new rate announced: \(log())")
    let records = stream.receive(limit: 20, timeout: 10)
    let steps = zip(records, records.dropFirst()).map { $1.sequence &- $0.sequence }
    #expect(records.count >= 20 && steps.allSatisfy { $0 == 1 }, "\(steps)\n\(log())")
    #expect(rig.enabled == ["in_accel_x", "in_anglvel_x", "in_timestamp"], "not reopened")
    stream.connection.close()
    #expect(
      waitFor(timeout: 10) {
        attribute("in_anglvel_sampling_frequency") == "25"
          && attribute("in_accel_sampling_frequency") == "50"
      }, "\(log())")
    #expect(try Self.follows(motion, z: -300, rig), "\(motion.standardOutput.suffix(600))")
    motion.signal(SIGTERM)
    #expect(motion.wait(timeout: 10) == 0)
    #expect(
      waitFor(timeout: 15) {
        attribute("in_anglvel_sampling_frequency") == "100.000000"
          && attribute("in_accel_sampling_frequency") == "100.000000" && !rig.bufferEnabled
      }, "put back: \(log())")
  }
}
