import OrientCore
import OrientLog
import SystemKit
import Testing

@testable import Sensors

/// The leases of one IMU's buffer (`SharedIMUBuffer`) with fake readers in place of the real
/// ones: which reader runs for which kinds, when it is reopened, what a failure, a stall or the
/// device vanishing does to each kind. SharedIMUDaemonTests and the VM's orientd-imu check the
/// real readers.
@Suite struct SharedIMUBufferTests {
  typealias Role = SharedIMUBuffer.Role

  final class FakeReader: SensorReader {
    let mode = SamplingMode.buffered
    let rate: Double
    let roles: Set<Role>
    let sink: (Role) -> (SensorEvent) -> Void
    private(set) var stopped = false
    private(set) var rearmed = 0

    init(roles: Set<Role>, sink: @escaping (Role) -> (SensorEvent) -> Void) {
      self.roles = roles
      self.sink = sink
      rate = roles.contains(.gyroscope) ? 100 : 50
    }
    func stop() { stopped = true }
    func rearm() { rearmed += 1 }
  }

  /// The readers opened, in order; an open for roles that `failing` holds for fails.
  final class Opener {
    var opened: [FakeReader] = []
    var failing: (Set<Role>) -> Bool = { _ in false }
    var running: [FakeReader] { opened.filter { !$0.stopped } }

    func open(
      _ accelerometer: Sensor?, _ gyroscope: Sensor?, _ context: OpenContext,
      _ sink: @escaping (Role) -> (SensorEvent) -> Void
    ) throws(SensorError) -> any SensorReader {
      var roles = Set<Role>()
      if accelerometer != nil { roles.insert(.accelerometer) }
      if gyroscope != nil { roles.insert(.gyroscope) }
      if failing(roles) { throw SensorError(.unavailable, "iio:device0: cannot open (test)") }
      let reader = FakeReader(roles: roles, sink: sink)
      opened.append(reader)
      return reader
    }
  }

  static let syspath = "/sys/devices/i2c-0/0-0068/iio:device0"
  static let accelerometer = Sensor(
    kinds: [.accelerometer], syspath: syspath, sysname: "iio:device0",
    drivers: [IIOBufferIMU.name],
    detail: .accelerometer(
      AccelerometerDescription(
        facts: DeviceFacts(syspath: syspath, sysname: "iio:device0"), configuration: .init())))
  static let gyroscope = Sensor(
    kinds: [.gyroscope], syspath: syspath, sysname: "iio:device0", drivers: [IIOBufferIMU.name],
    detail: .motion(
      MotionDescription(
        kind: .gyroscope, syspath: syspath, sysname: "iio:device0", name: "bmi160",
        devnode: "/dev/iio:device0", scale: 0.001065, offset: 0, mountMatrix: .identity,
        mountMatrixSource: "identity", hasRaw: true,
        scanElements: ["in_anglvel_x", "in_anglvel_y", "in_anglvel_z"], samplingFrequency: 100,
        maximumRate: 3200, headingIsAbsolute: false)))

  /// What each kind's consumer got.
  final class Consumer {
    var events: [SensorEvent] = []
    var readings: Int { events.filter { if case .reading = $0 { true } else { false } }.count }
    var retunes: Int { events.filter { if case .retuned = $0 { true } else { false } }.count }
    var ended: String? {
      for event in events {
        switch event {
        case .gone(let why): return "gone: \(why)"
        case .stalled(let why): return "stalled: \(why)"
        case .reading, .retuned: continue
        }
      }
      return nil
    }
  }

  let loop: EventLoop
  let opener = Opener()
  let registry: SharedBuffers
  let context: OpenContext

  init() throws {
    loop = try EventLoop()
    let opener = opener
    registry = SharedBuffers { a, g, c, s throws(SensorError) in try opener.open(a, g, c, s) }
    context = OpenContext(
      loop: loop, logger: Logger(label: "test", level: .error), configuration: .init(),
      sharedBuffers: registry)
  }

  func lease(_ role: Role, _ consumer: Consumer) throws(SensorError) -> IMULease {
    try IMULease(
      role, role == .gyroscope ? Self.gyroscope : Self.accelerometer, context
    ) { consumer.events.append($0) }
  }

  static let reading = SensorEvent.reading(
    Reading(time: MonotonicTime(nanoseconds: 1), value: .angularVelocity(Vector3(0, 0, 1))))

  @Test func oneReaderWithTheChannelsOfTheKindsLeased() throws {
    let accelerometer = Consumer()
    let gyroscope = Consumer()
    let a = try lease(.accelerometer, accelerometer)
    #expect(opener.running.map(\.roles) == [[.accelerometer]], "orientation alone")
    #expect(a.rate == 50)
    let g = try lease(.gyroscope, gyroscope)
    #expect(opener.opened.count == 2 && opener.opened[0].stopped, "reopened with both")
    #expect(opener.running.map(\.roles) == [[.accelerometer, .gyroscope]])
    #expect(g.rate == 100 && a.rate == 100)
    #expect(accelerometer.retunes == 1, "its slot hears of the new rate")
    // Each role's readings reach its own consumer only.
    let reader = try #require(opener.running.first)
    reader.sink(.gyroscope)(Self.reading)
    reader.sink(.accelerometer)(Self.reading)
    reader.sink(.gyroscope)(Self.reading)
    #expect(gyroscope.readings == 2 && accelerometer.readings == 1)
    // An old reader's late events reach nobody.
    opener.opened[0].sink(.accelerometer)(Self.reading)
    #expect(accelerometer.readings == 1)
    a.rearm()
    #expect(reader.rearmed == 1)

    // Releasing one keeps the other; released twice is once.
    a.stop()
    a.stop()
    #expect(opener.running.map(\.roles) == [[.gyroscope]], "the gyroscope alone")
    #expect(opener.opened.count == 3)
    #expect(gyroscope.retunes == 0, "its rate did not change")
    g.stop()
    #expect(opener.running.isEmpty)
    #expect(opener.opened.count == 3, "nothing reopened for nobody")
    #expect(accelerometer.ended == nil && gyroscope.ended == nil)
  }

  @Test func aStallOrAVanishedDeviceEndsBothLeases() throws {
    for ending in [SensorEvent.stalled("no scan for 3 s"), .gone("/dev/iio:device0: gone")] {
      let accelerometer = Consumer()
      let gyroscope = Consumer()
      let a = try lease(.accelerometer, accelerometer)
      let g = try lease(.gyroscope, gyroscope)
      let reader = try #require(opener.running.first)
      reader.sink(.accelerometer)(ending)
      #expect(accelerometer.ended != nil && gyroscope.ended != nil)
      #expect(opener.running.isEmpty, "stopped, nothing reopened")
      let count = opener.opened.count
      a.stop()
      g.stop()
      #expect(opener.opened.count == count, "the leases' stops reopen nothing")
      // The kinds start afresh on a new reader.
      let again = try lease(.gyroscope, Consumer())
      #expect(opener.running.map(\.roles) == [[.gyroscope]])
      again.stop()
    }
  }

  @Test func aKindThatCannotJoinIsRefusedAndTheOtherReadAsBefore() throws {
    let accelerometer = Consumer()
    let a = try lease(.accelerometer, accelerometer)
    opener.failing = { $0.contains(.gyroscope) }
    #expect(throws: SensorError.self) { try lease(.gyroscope, Consumer()) }
    #expect(opener.running.map(\.roles) == [[.accelerometer]], "reopened as it was")
    #expect(accelerometer.ended == nil)
    // When the device cannot be opened at all, the kind that was read is told it stalled (its
    // slot then reads it another way).
    opener.failing = { _ in true }
    #expect(throws: SensorError.self) { try lease(.gyroscope, Consumer()) }
    #expect(accelerometer.ended?.hasPrefix("stalled") == true, "\(accelerometer.events)")
    #expect(opener.running.isEmpty)
    a.stop()
  }

  @Test func aSecondLeaseOfOneRoleReplacesTheFirst() throws {
    // A slot may open its new reader before it stops the old one.
    let first = Consumer()
    let b = try lease(.accelerometer, first)
    let replacing = Consumer()
    let c = try lease(.accelerometer, replacing)
    b.stop()
    #expect(opener.running.map(\.roles) == [[.accelerometer]], "the newer lease holds on")
    try #require(opener.running.first).sink(.accelerometer)(Self.reading)
    #expect(replacing.readings == 1 && first.readings == 0)
    c.stop()
    #expect(opener.running.isEmpty)
  }

  @Test func closingAllStopsOnceAndTheLeasesReopenNothing() throws {
    let a = try lease(.accelerometer, Consumer())
    let g = try lease(.gyroscope, Consumer())
    registry.closeAll()
    #expect(opener.running.isEmpty)
    let count = opener.opened.count
    a.stop()
    g.stop()
    #expect(opener.opened.count == count, "a suspend closes the device once")
  }
}
