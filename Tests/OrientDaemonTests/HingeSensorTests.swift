import Glibc
import JSON
import OrientCore
import OrientDaemon
import OrientWire
import Sensors
import TestSupport
import TestThreads
import Testing

/// The kernel's own hinge angle (issue 29): Intel's HID custom hinge sensor as the real
/// hid-sensor-custom-intel-hinge driver presents it (recorded in the VM:
/// Tests/Fixtures/umockdev/hid-hinge.umockdev), beside an upright display accelerometer and no
/// base accelerometer. The posture follows the kernel's angle, read only while claimed.
@Suite(.ownThreads, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct HingeSensorTests {
  /// The recording's devices: the IIO device `hinge` (`iio:device0`), its platform device and
  /// HID parent (the uhid misc device left out, as for the other HID recordings).
  static func hingeDevices() throws -> [UMockdevDevice] {
    try UMockdevDevice.recording("hid-hinge.umockdev")
  }

  @Test func postureFollowsTheKernelsHingeAngle() throws {
    let hinge = try Self.hingeDevices()
    let sensor = try #require(hinge.first)
    // A display sensor of its own (iio:device1), upright.
    let display = PostureTests.devices(.udev).display
    let bus = try PrivateBus()
    let config = bus.directory.file("posture.conf")
    // No uinput on the test host; off makes the claim the only reason to read the angle.
    try writeFile(config, "[posture]\ntablet-mode-switch = off\n")
    let fixture = try DaemonFixture(
      ["--config", config], devices: [Accel.parent, display] + hinge, bus: bus)
    let angleOpen = {
      fixture.testbed.openFiles().contains { $0.hasSuffix("iio:device0/in_angl0_raw") }
    }
    #expect(
      waitFor(timeout: 15) {
        (try? fixture.property(
          "HasHinge", path: PostureTests.path, interface: PostureTests.interface)) == "b true"
      }, "\(fixture.log)")
    #expect(fixture.log.contains("hinge angle sensor iio:device0 (Intel HID custom hinge sensor)"))
    #expect(!angleOpen())

    let watch = try fixture.start([try Built.executable("orientd"), "--watch", "--json"])
    defer {
      watch.signal(SIGTERM)
      _ = watch.wait(timeout: 10)
    }
    func reaches(_ posture: Posture, angle: Double) -> Bool {
      waitFor(timeout: 20) {
        watch.standardOutput.jsonLines.last.map {
          $0["posture"]?.stringValue == posture.rawValue
            && $0["tablet_mode"]?.boolValue == posture.isTabletMode
            && $0["hinge_reliable"]?.boolValue == true && $0["hinge_angle"] == .number(angle)
        } ?? false
      }
    }
    // As recorded: 275.5 degrees with the display upright (y = -g) is a stand.
    #expect(reaches(.stand, angle: 275.5), "\(watch.standardOutput)\n\(fixture.log)")
    #expect(angleOpen())
    // Laptop, then folded all the way to a tablet (tenths of a degree, as the hub counts).
    for (raw, posture, angle) in [
      ("1100", Posture.laptop, 110.0), ("1800", .flat, 180), ("3550", .tablet, 355),
    ] {
      try fixture.testbed.perform { $0.set(sensor, "in_angl0_raw", "\(raw)\n") }
      #expect(
        reaches(posture, angle: angle), "\(posture): \(watch.standardOutput)\n\(fixture.log)")
    }
    #expect(
      try fixture.property(
        "TabletModeSource", path: PostureTests.path, interface: PostureTests.interface)
        == "s \"hinge\"")

    // The watcher gone, the angle is closed again.
    watch.signal(SIGTERM)
    #expect(watch.wait(timeout: 10) == 0)
    #expect(waitFor(timeout: 15) { !angleOpen() }, "\(fixture.testbed.openFiles())")
  }
}

/// The same through the daemon's logic alone, on scripted sensors (milliseconds).
@Suite(.ownThreads) struct HingeSensorCoreTests {
  static func hingeSensor(_ name: String = "iio:device2") -> Sensor {
    let d = HingeAngleDescription(
      syspath: "/sys/devices/fake/\(name)", sysname: name, attribute: "in_angl0_raw",
      degreesPerCount: 0.1, offset: 0, source: "Intel HID custom hinge sensor")
    return Sensor(
      kinds: [.hinge], syspath: d.syspath, sysname: name, drivers: [IIOPollHinge.name],
      detail: .hingeAngle(d))
  }

  static func rig() -> CoreRig {
    var configuration = DaemonConfiguration()
    configuration.posture.tabletModeSwitch = .off
    return CoreRig(configuration: configuration)
  }

  @Test func theKernelsAngleWinsAndTheAccelerometersAreTheFallback() {
    let rig = Self.rig()
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    rig.sensors.appear(.baseAccelerometer, FakeSensor.accelerometer("iio:device1", base: true))
    rig.sensors.appear(.hinge, Self.hingeSensor())
    rig.claim(":1.5", .posture)
    #expect(rig.sensors.wanted == [.accelerometer, .hinge], "the base is not read")
    rig.sensors.deliver(.accelerometer, FakeSensor.gravity(.normal), at: 10)
    rig.sensors.deliver(.hinge, .angle(110), at: 10)
    #expect(rig.core.postureState.hinge.posture == .laptop)
    #expect(rig.core.postureState.hinge.angle == 110)
    // A fold into a tablet commits after the settle time, not at the first reading.
    rig.sensors.deliver(.hinge, .angle(355), at: 10.1)
    #expect(rig.core.postureState.hinge.posture == .laptop)
    rig.sensors.deliver(.hinge, .angle(355), at: 10.5)
    #expect(rig.core.postureState.hinge.posture == .tablet)
    #expect(rig.core.postureState.tabletMode)
    // Base readings are ignored meanwhile (none is read; one stray changes nothing).
    rig.sensors.deliver(.baseAccelerometer, FakeSensor.gravity(.normal), at: 10.6)
    #expect(rig.core.postureState.hinge.posture == .tablet)

    // The hinge sensor gone: both accelerometers again.
    rig.sensors.disappear(.hinge)
    #expect(rig.core.postureState.hasHinge)
    #expect(rig.sensors.wanted == [.accelerometer, .baseAccelerometer])
    rig.release(":1.5", .posture)
    #expect(rig.sensors.wanted.isEmpty)
  }

  @Test func aHingeSensorWithoutABaseAccelerometerIsAHinge() {
    let rig = Self.rig()
    rig.sensors.appear(.accelerometer, FakeSensor.accelerometer())
    #expect(!rig.core.postureState.hasHinge)
    rig.sensors.appear(.hinge, Self.hingeSensor())
    #expect(rig.core.postureState.hasHinge)
    rig.claim(":1.5", .posture)
    #expect(rig.sensors.wanted == [.accelerometer, .hinge])
    rig.sensors.deliver(.hinge, .angle(3), at: 5)
    #expect(rig.core.postureState.hinge.posture == .closed)
  }
}
