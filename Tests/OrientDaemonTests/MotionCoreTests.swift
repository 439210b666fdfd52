import DBusKit
import Glibc
import OrientCore
import OrientDaemon
import OrientWire
import Sensors
import SystemKit
import TestThreads
import Testing

/// org.orientd.Motion1 through the daemon's logic alone, on scripted sensors (milliseconds):
/// the claim path with its own polkit action, what is read, fusion against a rotation sensor,
/// the property rate, and what non-claimers see.
@Suite(.ownThreads) struct MotionCoreTests {
  static func motionSensor(_ kind: SensorKind, _ name: String) -> Sensor {
    let d = MotionDescription(
      kind: kind, syspath: "/sys/devices/fake/\(name)", sysname: name, name: nil,
      devnode: nil, scale: 1, offset: 0, mountMatrix: .identity, mountMatrixSource: "identity",
      hasRaw: true, scanElements: [], samplingFrequency: 100, maximumRate: nil,
      headingIsAbsolute: true)
    return Sensor(
      kinds: [kind], syspath: d.syspath, sysname: name,
      drivers: [kind == .rotation ? IIOPollRotation.name : IIOPollGyroscope.name],
      detail: .motion(d))
  }

  @Test func aClaimIsCheckedWithTheMotionActionAndReadsGyroscopeAndAccelerometer() {
    let rig = CoreRig()
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    rig.sensors.appear(.gyroscope, Self.motionSensor(.gyroscope, "iio:device3"))
    #expect(rig.core.published.motion.hasGyroscope)
    #expect(rig.core.published.motion.rotationSource == "fusion-6")
    #expect(rig.sensors.wanted.isEmpty, "idle: nothing read")
    let call = FakeCall(":1.7", "Claim")
    rig.core.claim(call, .motion)
    #expect(rig.authority.pending.map(\.action) == [Wire.motionReadAction])
    #expect(rig.sensors.wanted.isEmpty, "nothing read before polkit answers")
    rig.authority.answer(":1.7", .allowed)
    #expect(rig.sensors.wanted.isSuperset(of: [.accelerometer, .gyroscope]))
    #expect(!call.answered, "held for the first gyroscope sample")
    rig.sensors.deliver(.gyroscope, .angularVelocity(Vector3(0, 0, 1)), at: 10)
    #expect(call.answered)
    #expect(rig.core.published.motion.angularVelocity == Vector3(0, 0, 1))
    // Non-claimers read zero; the claimer the value.
    #expect(
      rig.core.motionValue(.angularVelocity, for: ":1.9")
        == .structure([.double(0), .double(0), .double(0)]))
    #expect(
      rig.core.motionValue(.angularVelocity, for: ":1.7")
        == .structure([.double(0), .double(0), .double(1)]))
    rig.release(":1.7", .motion)
    #expect(rig.sensors.wanted.isEmpty)
  }

  @Test func withoutAGyroscopeOrRotationSensorAClaimIsNoSensor() {
    let rig = CoreRig()
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    let call = FakeCall(":1.7", "Claim")
    rig.core.claim(call, .motion)
    #expect(call.error == Wire.noMotionSensorError)
    #expect(rig.authority.pending.isEmpty && rig.sensors.wanted.isEmpty)
  }

  @Test func aRefusedClaimReadsNothing() {
    let rig = CoreRig()
    rig.sensors.appear(.gyroscope, Self.motionSensor(.gyroscope, "iio:device3"))
    let call = FakeCall(":1.7", "Claim")
    rig.core.claim(call, .motion)
    rig.authority.answer(":1.7", .denied(nil))
    #expect(call.error == .accessDenied)
    #expect(rig.sensors.wanted.isEmpty)
  }

  @Test func theFusionTurnsWithTheGyroscopeAndTheSensorsQuaternionWinsWhenPresent() {
    let rig = CoreRig()
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    rig.sensors.appear(.gyroscope, Self.motionSensor(.gyroscope, "iio:device3"))
    rig.claim(":1.7", .motion)
    // Lying flat (gravity along -z in orientd's convention), turning about z at 1 rad/s.
    for i in 0..<300 {
      let t = 10 + Double(i) * 0.01
      rig.sensors.deliver(.accelerometer, .acceleration(Vector3(0, 0, -9.80665)), at: t)
      rig.sensors.deliver(.gyroscope, .angularVelocity(Vector3(0, 0, 1)), at: t)
    }
    let fused = rig.core.published.motion.rotation
    // About 3 s of turning, less the fusion's start-up: a rotation about vertical only.
    #expect(abs(fused.x) < 0.02 && abs(fused.y) < 0.02, "\(fused)")
    #expect(fused.angle > 2, "turned: \(fused.angle) rad")
    // A rotation sensor appears: its quaternion is the rotation from now on.
    rig.sensors.appear(.rotation, Self.motionSensor(.rotation, "iio:device4"))
    #expect(rig.core.published.motion.rotationSource == "sensor")
    let q = Quaternion(w: 0.7071, x: 0.7071, y: 0, z: 0).normalized
    rig.sensors.deliver(.rotation, .rotation(q), at: 20)
    rig.sensors.deliver(.gyroscope, .angularVelocity(Vector3(0, 0, 1)), at: 20)
    #expect(rig.core.published.motion.rotation == q)
  }

  @Test func aMagnetometerMakesTheHeadingAbsolute() {
    let rig = CoreRig()
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    rig.sensors.appear(.gyroscope, Self.motionSensor(.gyroscope, "iio:device3"))
    rig.sensors.appear(.magnetometer, Self.motionSensor(.magnetometer, "iio:device5"))
    #expect(rig.core.published.motion.rotationSource == "fusion-9")
    rig.claim(":1.7", .motion)
    #expect(rig.sensors.wanted.contains(.magnetometer))
    // Lying flat and still, the field's horizontal part along the device's +x (and dipping
    // down): the device's +x is magnetic north.
    for i in 0..<300 {
      let t = 10 + Double(i) * 0.01
      rig.sensors.deliver(.accelerometer, .acceleration(Vector3(0, 0, -9.80665)), at: t)
      rig.sensors.deliver(.magnetometer, .magneticField(Vector3(0.2, 0, -0.4)), at: t)
      rig.sensors.deliver(.gyroscope, .angularVelocity(.zero), at: t)
    }
    let q = rig.core.published.motion.rotation
    // The device's +x (the field's horizontal part) is north (earth +y): a quarter turn.
    let north = q.rotate(Vector3(1, 0, 0))
    #expect(abs(north.y - 1) < 0.05, "\(north)")
  }

  @Test func propertiesChangeAtMostPropertyRateTimesASecond() {
    let rig = CoreRig()
    rig.sensors.appear(.gyroscope, Self.motionSensor(.gyroscope, "iio:device3"))
    rig.claim(":1.7", .motion)
    let before = rig.bus.sent.count
    for i in 0..<100 {
      rig.sensors.deliver(
        .gyroscope, .angularVelocity(Vector3(0, 0, Double(i))), at: 10 + Double(i) * 0.01)
    }
    let published = rig.bus.sent.dropFirst(before).filter { $0 == .publish(.motion, to: [":1.7"]) }
    // One second at 100 Hz: 5 publications (the default PropertyRate).
    #expect(published.count == 5, "\(published.count)")
  }

  @Test func openStreamNeedsAClaimAndValidOptions() throws {
    let rig = CoreRig()
    rig.sensors.appear(.gyroscope, Self.motionSensor(.gyroscope, "iio:device3"))
    #expect(throws: DBusError.self) { try rig.core.openStream([:], for: ":1.7") }
    let options = try MotionStreamOptions.parse(["rate": .double(25), "batch": .uint32(10)])
    #expect(options.every(sensorRate: 100) == 4, "every 4th sample of 100 Hz")
    #expect(options.every(sensorRate: 26) == 1)
    let granted = options.granted(sensorRate: 100)
    #expect(granted["rate"] == .double(25))
    #expect(granted["latency"] == .double(0.4))
    #expect(try MotionStreamOptions.parse([:]).rate == 100, "the default rate")
    for bad: [String: DBusValue] in [
      ["rate": .double(0)], ["batch": .uint32(0)], ["batch": .uint32(256)],
      ["frobnicate": .double(1)], ["rate": .string("fast")],
    ] {
      #expect(throws: DBusError.self) { try MotionStreamOptions.parse(bad) }
    }
  }
}

/// The motion sensors' rate follows their clients (issue 26): the slowest the device offers at
/// or above what the streams ask for, the property rate for claims without a stream, at least
/// `MotionRate.fusionFloor` while the rotation is fused; each stream still gets its own rate.
@Suite(.ownThreads) struct MotionRateTests {
  /// Opens a stream for `sender` and returns its socket and grant.
  static func stream(
    _ rig: CoreRig, _ sender: String, _ options: [String: DBusValue]
  ) throws -> (FileDescriptor, [String: DBusValue]) {
    let reply = try rig.core.openStream(options, for: sender)
    let fd = try #require(reply.first?.fileDescriptorValue)
    return (try fd.duplicated(), reply.dropFirst().first?.stringKeyedDictionary ?? [:])
  }

  /// The records waiting on `socket`.
  static func records(_ socket: FileDescriptor) -> [MotionRecord] {
    var records: [MotionRecord] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let n = recv(socket.rawValue, &buffer, buffer.count, Int32(MSG_DONTWAIT))
      guard n > 0, let batch = try? MotionBatchDecoder.decode(Array(buffer.prefix(n))) else {
        return records
      }
      records += batch.records
    }
  }

  @Test func theGyroscopesRateFollowsItsClients() throws {
    let loop = try EventLoop()
    let rig = CoreRig(loop: loop)
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    rig.sensors.appear(.gyroscope, MotionCoreTests.motionSensor(.gyroscope, "iio:device3"))
    rig.claim(":1.7", .motion)
    // Properties only, fused: the fusion's floor, run at the 26 Hz the device offers.
    #expect(rig.sensors.requested[.gyroscope] == MotionRate.fusionFloor)
    #expect(rig.sensors.status(of: .gyroscope)?.rate == 26)
    #expect(rig.sensors.wantedLog.contains { $0 == (.gyroscope, true) })
    // A stream at 200 Hz: 208 Hz, every sample.
    let (fast, fastGrant) = try Self.stream(rig, ":1.7", ["rate": .double(200)])
    #expect(rig.sensors.requested[.gyroscope] == 200)
    #expect(fastGrant["rate"] == .double(208), "\(fastGrant)")
    // A second client at 50 Hz: every 4th of 208 (52 Hz); the sensor stays at 208.
    rig.claim(":1.8", .motion)
    let (slow, slowGrant) = try Self.stream(rig, ":1.8", ["rate": .double(50)])
    #expect(slowGrant["rate"] == .double(52), "\(slowGrant)")
    #expect(rig.sensors.requested[.gyroscope] == 200)
    for i in 0..<8 {
      rig.sensors.deliver(.gyroscope, .angularVelocity(Vector3(0, 0, 1)), at: 10 + Double(i) / 208)
    }
    #expect(Self.records(fast).count == 8)
    #expect(Self.records(slow).count == 2)
    // The fast client leaves: 52 Hz, and the slow stream now takes every sample.
    rig.release(":1.7", .motion)
    #expect(rig.sensors.requested[.gyroscope] == 50)
    #expect(rig.sensors.status(of: .gyroscope)?.rate == 52)
    for i in 0..<4 {
      rig.sensors.deliver(.gyroscope, .angularVelocity(Vector3(0, 0, 1)), at: 20 + Double(i) / 52)
    }
    #expect(Self.records(slow).count == 4)
    // A rotation sensor: nothing is fused, the properties alone need 5 a second (12.5 Hz).
    rig.release(":1.8", .motion)
    rig.sensors.appear(.rotation, MotionCoreTests.motionSensor(.rotation, "iio:device4"))
    rig.claim(":1.9", .motion)
    #expect(rig.sensors.requested[.gyroscope] == 5)
    #expect(rig.sensors.status(of: .gyroscope)?.rate == 12.5)
    rig.release(":1.9", .motion)
    #expect(!rig.sensors.wanted.contains(.gyroscope))
    #expect(rig.sensors.requested[.gyroscope] == 5, "not retuned just before it stops")
  }

  /// Any rate above 0 is taken (dbus/org.orientd.Motion1.xml); a tiny one must not stop the
  /// daemon: its batch period in nanoseconds overflowed Int64 (a trap), so did its every-n-th.
  @Test func aTinyStreamRateIsServedWithoutOverflow() throws {
    let loop = try EventLoop()
    let rig = CoreRig(loop: loop)
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    rig.sensors.appear(.gyroscope, MotionCoreTests.motionSensor(.gyroscope, "iio:device3"))
    rig.claim(":1.7", .motion)
    let (normal, _) = try Self.stream(rig, ":1.7", [:])
    for rate in [1e-10, 1e-300] {
      let (tiny, grant) = try Self.stream(rig, ":1.7", ["rate": .double(rate)])
      #expect(grant["latency"] == .double(60), "the longest latency: \(grant)")
      for i in 0..<4 {
        rig.sensors.deliver(.gyroscope, .angularVelocity(Vector3(0, 0, 1)), at: 10 + Double(i))
      }
      #expect(Self.records(tiny).isEmpty)
    }
    #expect(Self.records(normal).count == 8, "the other stream is served")
    let options = try MotionStreamOptions.parse(["rate": .double(1e-300)])
    #expect(options.every(sensorRate: 1e6) == Int(Int32.max))
  }

  @Test func theRatePlan() {
    #expect(MotionRate.needed(claimed: false, streams: [100], propertyRate: 5, fused: true) == 0)
    #expect(MotionRate.needed(claimed: true, streams: [], propertyRate: 5, fused: false) == 5)
    #expect(MotionRate.needed(claimed: true, streams: [], propertyRate: 5, fused: true) == 25)
    #expect(
      MotionRate.needed(claimed: true, streams: [10, 400], propertyRate: 5, fused: true) == 400)
    #expect(MotionRate.magnetometer(gyroscope: 400) == 25)
    #expect(MotionRate.magnetometer(gyroscope: 0) == 0)
  }
}

/// `[motion]` in orientd.conf: the property rate and the fusion's keys, errors at their line.
@Suite(.ownThreads) struct MotionSettingsTests {
  @Test func theSectionSetsTheRateAndTheFusion() throws {
    let c = try DaemonConfiguration(
      parsing: "[motion]\nproperty-rate = 10\ninclination-time-constant = 2\n", source: "t.conf")
    #expect(c.motion.propertyRate == 10)
    #expect(c.motion.fusion.inclinationTimeConstant == 2)
    let rig = CoreRig(configuration: c)
    #expect(rig.core.published.motion.propertyRate == 10)
  }

  @Test(arguments: [
    ("[motion]\nproperty-rate = 0\n", "t.conf:2"),
    ("[motion]\nproperty-rate = fast\n", "t.conf:2"),
    ("[motion]\n\nfrobnicate = 1\n", "t.conf:3"),
    ("[motion]\nsteady-rate = -1\n", "t.conf:2"),
  ])
  func badEntriesAreErrorsAtTheirLine(text: String, place: String) {
    #expect {
      try DaemonConfiguration(parsing: text, source: "t.conf")
    } throws: { error in
      "\(error)".contains(place)
    }
  }
}

/// `OpenStream` asks polkit as `Claim` does.
@Suite(.ownThreads) struct MotionStreamGateTests {
  @Test func openStreamIsCheckedWithTheMotionAction() {
    let rig = CoreRig()
    rig.sensors.appear(.gyroscope, MotionCoreTests.motionSensor(.gyroscope, "iio:device3"))
    rig.claim(":1.7", .motion)
    rig.sensors.deliver(.gyroscope, .angularVelocity(Vector3(0, 0, 1)), at: 10)
    var replies = 0
    let refused = FakeCall(":1.7", "OpenStream")
    rig.core.openStream(refused, options: [:]) { _ in replies += 1 }
    #expect(rig.authority.pending.last?.action == Wire.motionReadAction)
    rig.authority.answer(":1.7", .denied(nil))
    #expect(refused.error == .accessDenied)
    // Allowed, it goes on to the streams (none here: the rig has no event loop).
    let allowed = FakeCall(":1.7", "OpenStream")
    rig.core.openStream(allowed, options: [:]) { _ in replies += 1 }
    rig.authority.answer(":1.7", .allowed)
    #expect(allowed.error == .notSupported)
    #expect(replies == 0)
  }
}
