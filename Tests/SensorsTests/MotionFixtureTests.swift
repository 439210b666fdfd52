import JSON
import Sensors
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

/// The sampling frequency a motion sensor is run at for a rate asked (issue 26): the slowest
/// it offers at or above, the fastest when none is, 100 Hz when nobody asks; without a list,
/// the rate itself up to 100 Hz. A polled one is read up to its device's frequency.
@Suite(.ownThreads) struct MotionFrequencyChoiceTests {
  static func gyroscope(available: String?, frequency: String? = "104.000000")
    -> MotionDescription?
  {
    var attributes = [
      "in_anglvel_x_raw": "1", "in_anglvel_y_raw": "2", "in_anglvel_z_raw": "3",
    ]
    attributes["sampling_frequency"] = frequency
    attributes["sampling_frequency_available"] = available
    return MotionDescription.gyroscope(
      syspath: "/sys/devices/fake/iio:device1", sysname: "iio:device1", devnode: nil,
      read: { attributes[$0] }, property: { _ in nil })
  }

  @Test func theSlowestOfferedAtOrAboveTheRateAsked() throws {
    let lsm = try #require(
      Self.gyroscope(available: "12.500 26.000 52.000 104.000 208.000 416.000"))
    #expect(lsm.bufferedFrequency(for: 5) == ("12.500", 12.5))
    #expect(lsm.bufferedFrequency(for: 25) == ("26.000", 26))
    #expect(lsm.bufferedFrequency(for: 100) == ("104.000", 104))
    #expect(lsm.bufferedFrequency(for: 200) == ("208.000", 208), "above 100 Hz where offered")
    #expect(lsm.bufferedFrequency(for: 5000) == ("416.000", 416), "the fastest it offers")
    #expect(lsm.bufferedFrequency(for: 0) == ("104.000", 104), "nobody asks: 100 Hz or above")
    let range = try #require(Self.gyroscope(available: "[10 10 200]"))
    #expect(range.bufferedFrequency(for: 25).value == 30)
    let hub = try #require(Self.gyroscope(available: nil, frequency: "10.000000"))
    #expect(hub.bufferedFrequency(for: 5) == ("5", 5))
    #expect(hub.bufferedFrequency(for: 250) == ("100", 100), "no list: at most 100 Hz")
    #expect(hub.pollRate(for: 25) == 10, "polled: up to the device's frequency")
    #expect(lsm.pollRate(for: 25) == 25)
    #expect(lsm.pollRate(for: 0) == 100)
  }

  /// A frequency that is no finite number ("nan", "inf": no kernel writes them, a broken
  /// driver might) is taken as none: a NaN made the polled reader's interval trap.
  @Test(arguments: ["nan", "inf", "-inf"])
  func aFrequencyThatIsNotFiniteIsNone(text: String) throws {
    let gyroscope = try #require(Self.gyroscope(available: nil, frequency: text))
    #expect(gyroscope.samplingFrequency == nil)
    #expect(gyroscope.pollRate == 50, "the rate without a frequency")
  }
}
