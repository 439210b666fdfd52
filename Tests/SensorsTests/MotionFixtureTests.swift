import JSON
import TestSupport
import TestThreads
import Testing

/// The hand-made fixtures of IIO IMUs with a gyroscope (issue 26; docs/motion.md, "Fixtures"):
/// a polled BMI160 (accelerometer and gyroscope on one device, `in_mount_matrix`) and a
/// buffered LSM6DSO (one device per sensor, `mount_matrix`, scan elements, no trigger: the chip's
/// FIFO). Today's stack must read their accelerometer as it reads any other, with the mount
/// matrix the fixture gives: a fixture the real code misreads would mislead the motion drivers
/// of phase 2, which will read the gyroscopes from the same files.
@Suite(
  .ownThreads, .serialized, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct MotionFixtureTests {
  static func listing(_ fixture: String) throws -> JSONValue {
    let devices = try UMockdevDevice.parse(
      record: readFile("\(Built.packageRoot)/Tests/Fixtures/umockdev/\(fixture)"))
    var scenario = UMockdevScenario(devices: devices)
    scenario.spawn([try Built.executable("orientd"), "--list-sensors", "--json"])
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.exitCodes == [0], "\(transcript.summary)")
    return try JSONValue(parsing: try #require(transcript.lines.first))
  }

  @Test func aBMI160IsReadWithItsSharedMountMatrix() throws {
    let document = try Self.listing("bmi160.umockdev")
    let sensor = try #require(document["sensors"]?.arrayValue?.first)
    #expect(sensor["name"]?.stringValue == "bmi160")
    #expect(sensor["mount_matrix"]?.stringValue == "0, -1, 0; 1, 0, 0; 0, 0, 1")
    #expect(sensor["mount_matrix_source"]?.stringValue == "sysfs in_mount_matrix")
    #expect(sensor["modes"]?.arrayValue?.contains(.string("polled")) == true, "\(sensor)")
    // The raw readings and the scale give 1 g.
    let measured = try #require(document["gravity_estimate"]?["measured"]?.numberValue)
    #expect(abs(measured - 9.81) < 0.05, "\(measured)")
  }

  @Test func aBufferedLSM6DSOsAccelerometerIsChosenNotItsGyroscope() throws {
    let sensors = try #require(
      try Self.listing("lsm6dso-gyro-buffered.umockdev")["sensors"]?.arrayValue)
    #expect(sensors.count == 1, "only the accelerometer device is an accelerometer")
    let sensor = try #require(sensors.first)
    #expect(sensor["name"]?.stringValue == "lsm6dso_accel")
    #expect(sensor["mount_matrix"]?.stringValue == "-1, 0, 0; 0, 1, 0; 0, 0, -1")
    #expect(sensor["mount_matrix_source"]?.stringValue == "sysfs mount_matrix")
  }
}
