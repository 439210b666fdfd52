import Sensors
import TestSupport
import TestThreads
import Testing

/// Which IIO devices measure a hinge angle and what their values mean, from the two fixtures:
/// Intel's custom hinge sensor as the real driver presents it (recorded in the VM) and
/// ChromeOS's lid angle (written from the kernel's sources: Tests/Fixtures/umockdev/README.md).
@Suite(.ownThreads)
struct HingeAngleDescriptionTests {
  /// The first device of a fixture and a reader of its attributes (trimmed, as sysfs reads
  /// are).
  static func fixture(_ name: String) throws -> (UMockdevDevice, (String) -> String?) {
    let recording = readFile("\(Built.packageRoot)/Tests/Fixtures/umockdev/\(name)")
    let kept = recording.split(separator: "\n", omittingEmptySubsequences: false).filter {
      !$0.hasPrefix("H: ") && !$0.hasPrefix("L: ")
    }
    let device = try #require(try UMockdevDevice.parse(record: kept.joined(separator: "\n")).first)
    let read = { (attribute: String) -> String? in
      device.attributes.first { $0.0 == attribute }.map {
        String($0.1.filter { $0 != "\n" })
      }
    }
    return (device, read)
  }

  @Test func intelsHingeSensorIsTheFirstAngleInDegrees() throws {
    let (device, read) = try Self.fixture("hid-hinge.umockdev")
    let d = try #require(
      HingeAngleDescription.describe(syspath: device.syspath, sysname: "iio:device0", read: read))
    #expect(d.attribute == "in_angl0_raw")
    #expect(d.source == "Intel HID custom hinge sensor")
    // 2755 counts of 0.001745329 rad: 275.5 degrees (to the recording's 7 digits of scale).
    let degrees = try #require(d.degrees(raw: 2755))
    #expect(abs(degrees - 275.5) < 0.001)
    #expect(d.degrees(raw: 3601) == nil, "beyond folded back: no angle")
    #expect(d.degrees(raw: -10) == nil)
  }

  @Test func chromeOSLidAngleIsInDegreesAnd500IsUnknown() throws {
    let (device, read) = try Self.fixture("cros-ec-lid-angle.umockdev")
    let d = try #require(
      HingeAngleDescription.describe(syspath: device.syspath, sysname: "iio:device0", read: read))
    #expect(d.attribute == "in_angl_raw")
    #expect(d.degrees(raw: 110) == 110)
    #expect(d.degrees(raw: 360) == 360)
    #expect(d.degrees(raw: 500) == nil, "LID_ANGLE_UNRELIABLE")
  }

  @Test func otherAnglesAreNoHinge() {
    // An inclinometer's angle (hid-sensor-incl-3d names it in_incli_*; a generic IIO angle
    // without the hinge label or name is not taken either).
    let attributes = ["name": "some-angle", "in_angl_raw": "90", "in_angl_scale": "0.0174"]
    #expect(
      HingeAngleDescription.describe(syspath: "/sys/x", sysname: "iio:device3") {
        attributes[$0]
      } == nil)
  }
}
