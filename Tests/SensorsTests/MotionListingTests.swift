import JSON
import OrientCore
import TestSupport
import TestThreads
import Testing

/// `orientd --list-sensors --json` on the motion fixtures (issue 26): gyroscopes are listed
/// with `"kind": "gyroscope"`, HID device rotation with `"kind": "rotation"`, each with how
/// it would be read and the mount matrix that applies; accelerometers say `"accelerometer"`.
@Suite(
  .ownThreads, .serialized, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct MotionListingTests {
  static func motion(_ fixtures: [String]) throws -> (JSONValue, [JSONValue]) {
    let devices = try fixtures.flatMap(UMockdevDevice.recording)
    var scenario = UMockdevScenario(devices: devices)
    scenario.spawn([try Built.executable("orientd"), "--list-sensors", "--json"])
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.exitCodes == [0], "\(transcript.summary)")
    let document = try JSONValue(parsing: try #require(transcript.lines.first))
    return (document, document["motion"]?.arrayValue ?? [])
  }

  @Test func aBMI160sGyroscopeSharesItsAccelerometersMountMatrix() throws {
    let (document, motion) = try Self.motion(["bmi160.umockdev"])
    #expect(document["sensors"]?.arrayValue?.first?["kind"]?.stringValue == "accelerometer")
    let gyro = try #require(motion.first, "\(document)")
    #expect(motion.count == 1)
    #expect(gyro["kind"]?.stringValue == "gyroscope")
    #expect(gyro["name"]?.stringValue == "bmi160")
    #expect(gyro["mount_matrix"]?.stringValue == "0, -1, 0; 1, 0, 0; 0, 0, 1")
    #expect(gyro["mount_matrix_source"]?.stringValue == "in_mount_matrix")
    #expect(gyro["scale"]?.numberValue == 0.001065)
    // The one buffer serves both kinds (`iio-buffer-imu`), polling is the fallback.
    #expect(gyro["read"]?.arrayValue == [.string("iio-buffer-imu"), .string("iio-poll-gyro")])
    #expect(gyro["chosen"]?.boolValue == true)
  }

  @Test func anLSM6DSOsGyroscopeIsItsOwnDevice() throws {
    let (_, motion) = try Self.motion(["lsm6dso-gyro-buffered.umockdev"])
    let gyro = try #require(motion.first)
    #expect(gyro["kind"]?.stringValue == "gyroscope")
    #expect(gyro["name"]?.stringValue == "lsm6dso_gyro")
    #expect(gyro["mount_matrix_source"]?.stringValue == "mount_matrix")
    #expect(gyro["read"]?.arrayValue?.first == .string("iio-buffer-gyro"))
  }

  @Test func theHIDHubsGyroscopeAndRotationAreListed() throws {
    let (document, motion) = try Self.motion(["hid-gyro.umockdev", "hid-rotation.umockdev"])
    #expect(document["sensors"]?.arrayValue?.isEmpty == true, "no accelerometer")
    #expect(motion.map { $0["kind"]?.stringValue } == ["gyroscope", "rotation"], "\(motion)")
    #expect(motion.first?["name"]?.stringValue == "gyro_3d")
    #expect(motion.first?["scale"]?.numberValue == 0.000174532)
    let rotation = try #require(motion.last)
    #expect(rotation["name"]?.stringValue == "dev_rotation")
    #expect(rotation["heading"]?.stringValue == "absolute")
    #expect(rotation["scale"]?.numberValue == 0.0001)
    #expect(
      rotation["read"]?.arrayValue == [
        .string("iio-buffer-rotation"), .string("iio-poll-rotation"),
      ]
    )
  }

  @Test func theHubsMagnetometerIsListedForTheFusion() throws {
    let (_, motion) = try Self.motion(["hid-magn.umockdev"])
    let magn = try #require(motion.first)
    #expect(magn["kind"]?.stringValue == "magnetometer")
    #expect(magn["name"]?.stringValue == "magn_3d")
    #expect(magn["unit"]?.stringValue == "gauss")
    #expect(magn["scale"]?.numberValue == 0.001)
    #expect(magn["read"]?.arrayValue == [.string("iio-poll-magn")])
  }

  /// `orientd record --motion`: a motion trace of the BMI160's accelerometer and gyroscope,
  /// both read from its one buffer (bmi160-buffered.umockdev, the node fed as a triggered
  /// buffer), that the trace parser (`orientd replay`'s) reads back.
  @Test func recordMotionWritesATraceTheParserReads() throws {
    let devices = try UMockdevDevice.recording("bmi160-buffered.umockdev")
    var scenario = UMockdevScenario(devices: devices)
    let imu = try #require(devices.first { $0.node != nil })
    scenario.feed(imu, devnode: "/dev/iio:device0", intervalMilliseconds: 10)
    scenario.spawn([
      try Built.executable("orientd"), "record", "--motion", "--duration", "1",
    ])
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.exitCodes == [0], "\(transcript.summary)")
    #expect(transcript.lines.first == "# orientd motion trace")
    var parser = MotionTraceParser(source: "record")
    var gyro: [Vector3] = []
    var accelerations = 0
    for line in transcript.lines {
      switch try parser.parse(line: Array(line.utf8)) {
      case .gyro(_, let w)?: gyro.append(w)
      case .acceleration?: accelerations += 1
      default: break
      }
    }
    #expect(gyro.count > 10, "\(transcript.summary)")
    #expect(accelerations > 10, "\(transcript.summary)")
    let w = try #require(gyro.last)
    // (12, -7, 94) counts x 0.001065 rad/s through the matrix (0 -1 0; 1 0 0; 0 0 1).
    #expect(abs(w.x - 0.007455) < 1e-4 && abs(w.y - 0.01278) < 1e-4 && abs(w.z - 0.10011) < 1e-4)
  }

  /// The BMI160's accelerometer at 200 Hz (`buffered-rate = 200`) and its gyroscope at the
  /// 100 Hz it runs at when nobody asks: the scans come at the accelerometer's rate, so the
  /// gyroscope's readings are made from every 2nd scan, at the 100 Hz announced for it (a
  /// stream's every-n-th counts on it), not from every scan.
  @Test func aGyroscopeSlowerThanTheScansIsReadAtItsOwnRate() throws {
    let directory = try TemporaryDirectory("imu-rates")
    let config = directory.file("orientd.conf")
    try writeFile(config, "[sampling]\nbuffered-rate = 200\n")
    let devices = try UMockdevDevice.recording("bmi160-buffered.umockdev")
    var scenario = UMockdevScenario(devices: devices)
    let imu = try #require(devices.first { $0.node != nil })
    scenario.feed(imu, devnode: "/dev/iio:device0", intervalMilliseconds: 10)
    scenario.spawn([
      try Built.executable("orientd"), "record", "--motion", "--duration", "1", "--config",
      config,
    ])
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.exitCodes == [0], "\(transcript.summary)")
    var parser = MotionTraceParser(source: "record")
    var (gyro, accelerations) = (0, 0)
    for line in transcript.lines {
      switch try parser.parse(line: Array(line.utf8)) {
      case .gyro?: gyro += 1
      case .acceleration?: accelerations += 1
      default: break
      }
    }
    #expect(accelerations > 20, "\(transcript.summary)")
    // One gyroscope reading per two scans (the first scans may come before it joins).
    #expect(
      gyro > accelerations / 3 && gyro <= accelerations * 6 / 10,
      "\(gyro) gyroscope, \(accelerations) accelerometer readings\n\(transcript.summary)")
  }
}
