import DBusKit
import Glibc
import JSON
import OrientCore
import OrientWire
import SystemKit
import TestSupport
import TestThreads
import Testing

/// org.orientd.Motion1 end to end (issue 26): orientd on a private bus with the project's
/// policy, an emulated BMI160 (Tests/Fixtures/umockdev/bmi160.umockdev: accelerometer and
/// gyroscope on one IIO device, `in_mount_matrix`) read by the real drivers, and real clients:
/// `orientd --watch --motion`, busctl, and stream clients on their own connections.
@Suite(
  .ownThreads, .serialized, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct MotionDaemonTests {
  static let path = Wire.motionPath.rawValue
  static let interface = Wire.motionInterface

  static func bmi160() throws -> [UMockdevDevice] {
    try UMockdevDevice.parse(
      record: readFile("\(Built.packageRoot)/Tests/Fixtures/umockdev/bmi160.umockdev"))
  }

  /// The fixture's rate in the display frame: raw (12, -7, 94) x 0.001065 rad/s, turned by
  /// the matrix (0 -1 0; 1 0 0; 0 0 1).
  static let expected = [7 * 0.001065, 12 * 0.001065, 94 * 0.001065]

  /// Waits until `fixture`'s Motion1 property `name` reads `value` (busctl's form).
  static func propertyBecomes(_ fixture: DaemonFixture, _ name: String, _ value: String) -> Bool {
    waitFor(timeout: 15) {
      (try? fixture.property(name, path: path, interface: interface)) == value
    }
  }

  static func close(_ a: [Double]?, _ b: [Double], within tolerance: Double = 0.002) -> Bool {
    guard let a, a.count == b.count else { return false }
    return zip(a, b).allSatisfy { abs($0 - $1) <= tolerance }
  }

  @Test func watchMotionPrintsTheGyroscopesAngularVelocity() throws {
    let devices = try Self.bmi160()
    let imu = try #require(devices.first { $0.node != nil })
    let fixture = try DaemonFixture(devices: devices)
    let gyroOpen = {
      fixture.testbed.openFiles().contains { $0.hasSuffix("/in_anglvel_z_raw") }
    }
    #expect(Self.propertyBecomes(fixture, "HasGyroscope", "b true"), "\(fixture.log)")
    #expect(
      try fixture.property("RotationSource", path: Self.path, interface: Self.interface)
        == "s \"fusion-6\"")
    #expect(!gyroOpen(), "nothing read before a claim")

    let watch = try fixture.start([
      try Built.executable("orientd"), "--watch", "--motion", "--json",
    ])
    defer {
      watch.signal(SIGTERM)
      _ = watch.wait(timeout: 10)
    }
    func rate(_ line: JSONValue) -> [Double]? {
      line["angular_velocity"]?.arrayValue?.compactMap(\.numberValue)
    }
    #expect(
      waitFor(timeout: 20) {
        watch.standardOutput.jsonLines.contains {
          $0["has_gyroscope"]?.boolValue == true && Self.close(rate($0), Self.expected)
        }
      }, "\(watch.standardOutput)\n\(fixture.log)")
    let line = try #require(watch.standardOutput.jsonLines.last)
    #expect(line["rotation"]?.arrayValue?.count == 4)
    #expect(line["rotation_source"]?.stringValue == "fusion-6")
    #expect(gyroOpen())
    // Turned the other way about z: the rate follows.
    try fixture.testbed.perform { $0.set(imu, "in_anglvel_z_raw", "-940\n") }
    #expect(
      waitFor(timeout: 20) {
        watch.standardOutput.jsonLines.last.flatMap(rate).map {
          abs($0[2] + 940 * 0.001065) < 0.01
        } ?? false
      }, "\(watch.standardOutput.suffix(600))\n\(fixture.log)")
    // A non-claimer reads zero and identity, whatever the claimers see.
    #expect(
      try fixture.property("AngularVelocity", path: Self.path, interface: Self.interface)
        == "(ddd) 0 0 0")
    #expect(
      try fixture.property("Rotation", path: Self.path, interface: Self.interface)
        == "(dddd) 1 0 0 0")
    watch.signal(SIGTERM)
    #expect(watch.wait(timeout: 10) == 0)
    #expect(waitFor(timeout: 15) { !gyroOpen() }, "released: the gyroscope is closed")
  }

  /// A stream client on its own connection: claims, opens a stream, keeps the socket.
  final class StreamClient {
    let connection: DBusConnection
    let socket: FileDescriptor
    let granted: [String: DBusValue]

    init(_ bus: PrivateBus, loop: EventLoop, options: [String: DBusValue]) throws {
      connection = try DBusConnection(bus: .address(bus.address), loop: loop)
      _ = try connection.callBlocking(
        destination: Wire.orientdName, path: Wire.motionPath, interface: Wire.motionInterface,
        member: "Claim", timeoutMilliseconds: 10_000)
      let reply = try connection.callBlocking(
        destination: Wire.orientdName, path: Wire.motionPath, interface: Wire.motionInterface,
        member: Wire.openStreamMethod, arguments: [.stringVariantDictionary(options)])
      let fd = try #require(reply.first?.fileDescriptorValue)
      socket = try fd.duplicated()
      granted = reply.dropFirst().first?.stringKeyedDictionary ?? [:]
    }

    /// The records of every batch waiting or arriving within `timeout` seconds, up to `limit`.
    func receive(limit: Int, timeout: Double) -> [MotionRecord] {
      var records: [MotionRecord] = []
      var buffer = [UInt8](repeating: 0, count: 65536)
      let deadline = Clock.monotonic() + .milliseconds(Int64(timeout * 1000))
      while records.count < limit && Clock.monotonic() < deadline {
        var p = pollfd(fd: socket.rawValue, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, 100) > 0 else { continue }
        let n = recv(socket.rawValue, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        guard n > 0 else { break }
        if let batch = try? MotionBatchDecoder.decode(Array(buffer.prefix(n))) {
          records += batch.records
        }
      }
      return records
    }
  }

  @Test func streamsReachEveryClientAndASlowOrVanishedOneHoldsNobodyUp() throws {
    let fixture = try DaemonFixture(devices: try Self.bmi160())
    fixture.bus.openToEveryUser()
    #expect(Self.propertyBecomes(fixture, "HasGyroscope", "b true"), "\(fixture.log)")
    let loop = try EventLoop()
    let options: [String: DBusValue] = ["batch": .uint32(5)]
    let reader = try StreamClient(fixture.bus, loop: loop, options: options)
    let slow = try StreamClient(fixture.bus, loop: loop, options: options)
    var vanishing: StreamClient? = try StreamClient(fixture.bus, loop: loop, options: options)
    #expect(reader.granted["batch"]?.uint32Value == 5, "\(reader.granted)")
    #expect(reader.granted["record-size"]?.uint32Value == 48)
    #expect(reader.granted["clock"]?.stringValue == "monotonic")
    #expect(!reader.receive(limit: 20, timeout: 10).isEmpty, "\(fixture.log)")
    // The vanishing client leaves the bus (its socket and connection closed).
    vanishing?.connection.close()
    vanishing = nil
    // The slow one never reads; the reader gets 200 records in order, rate as set.
    let records = reader.receive(limit: 200, timeout: 30)
    #expect(records.count >= 200, "\(records.count)\n\(fixture.log)")
    let sequences = records.map(\.sequence)
    #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $1 == $0 &+ 1 }, "no gaps")
    #expect(records.allSatisfy { $0.flags.contains(.angularVelocity) })
    let last = try #require(records.last)
    #expect(
      Self.close(
        [Double(last.angularVelocity.x), Double(last.angularVelocity.y)],
        Array(Self.expected.prefix(2)), within: 0.01))
    #expect(
      waitFor(timeout: 10) { fixture.log.contains("closed") }, "the vanished stream: \(fixture.log)"
    )
    // The slow client's queue lost its oldest batches; what it has left still decodes.
    let late = slow.receive(limit: 1000, timeout: 1)
    #expect(!late.isEmpty)
    // Release closes the client's streams: the socket reads end of file.
    _ = try reader.connection.callBlocking(
      destination: Wire.orientdName, path: Wire.motionPath, interface: Wire.motionInterface,
      member: "Release")
    #expect(
      waitFor(timeout: 10) {
        var byte: UInt8 = 0
        return recv(reader.socket.rawValue, &byte, 1, Int32(MSG_DONTWAIT)) == 0
      })
    slow.connection.close()
    reader.connection.close()
  }
}

/// The recordings of the real HID drivers (Tests/Fixtures/umockdev/hid-gyro.umockdev and
/// hid-rotation.umockdev, from VM test motion-driver), polled (`[sampling] mode = polled`: the
/// recorded nodes deliver no scans): the rotation sensor's quaternion is the rotation.
@Suite(
  .ownThreads, .serialized, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct MotionHIDTests {
  @Test func theHubsGyroscopeAndRotationReachWatchMotion() throws {
    let gyro = try UMockdevDevice.recording("hid-gyro.umockdev")
    let rotation = try UMockdevDevice.recording("hid-rotation.umockdev")
    let sensor = try #require(rotation.first)
    let bus = try PrivateBus()
    let config = bus.directory.file("polled.conf")
    try writeFile(config, "[sampling]\nmode = polled\n")
    let fixture = try DaemonFixture(["--config", config], devices: gyro + rotation, bus: bus)
    #expect(
      MotionDaemonTests.propertyBecomes(fixture, "RotationSource", "s \"sensor\""), "\(fixture.log)"
    )
    let watch = try fixture.start([
      try Built.executable("orientd"), "--watch", "--motion", "--json",
    ])
    defer {
      watch.signal(SIGTERM)
      _ = watch.wait(timeout: 10)
    }
    func last(_ key: String) -> [Double]? {
      watch.standardOutput.jsonLines.last?[key]?.arrayValue?.compactMap(\.numberValue)
    }
    // As recorded: -8594 counts of 0.000174532 rad/s about z; the identity quaternion.
    #expect(
      waitFor(timeout: 20) {
        MotionDaemonTests.close(last("angular_velocity"), [0, 0, -8594 * 0.000174532])
          && MotionDaemonTests.close(last("rotation"), [1, 0, 0, 0])
      }, "\(watch.standardOutput)\n\(fixture.log)")
    #expect(watch.standardOutput.jsonLines.last?["rotation_source"]?.stringValue == "sensor")
    // A quarter turn about x, as the driver writes it: "x y z w ".
    try fixture.testbed.perform { $0.set(sensor, "in_rot_quaternion_raw", "7071 0 0 7071 \n") }
    #expect(
      waitFor(timeout: 20) {
        MotionDaemonTests.close(last("rotation"), [0.7071, 0.7071, 0, 0])
      }, "\(watch.standardOutput.suffix(600))\n\(fixture.log)")
  }
}

/// Without a gyroscope or rotation sensor, `--watch --motion` says so and exits 69.
@Suite(
  .ownThreads, .serialized, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct MotionNoSensorTests {
  @Test func watchMotionWithoutAGyroscopeExits69() throws {
    let fixture = try DaemonFixture()
    #expect(waitFor(timeout: 15) { (try? fixture.property("HasAccelerometer")) == "b true" })
    let watch = try fixture.client([
      try Built.executable("orientd"), "--watch", "--motion", "--json",
    ])
    #expect(watch.status == 69, "\(watch)")
    #expect(watch.stderr.contains("no gyroscope or rotation sensor"), "\(watch.stderr)")
  }
}
