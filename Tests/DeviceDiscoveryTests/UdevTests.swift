import JSON
import TestSupport
import TestThreads
import Testing

/// DeviceDiscovery against umockdev testbeds, through the `accel-probe` helper's udev modes
/// (libudev must run in the process that has the umockdev preload).
@Suite(
  .ownThreads, .serialized, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct UdevTests {
  let parent = UMockdevDevice(
    devpath: "/devices/platform/i2c-0/i2c-BOSC0200:00",
    properties: [("SUBSYSTEM", "i2c"), ("MODALIAS", "acpi:BOSC0200:")])
  var accel: UMockdevDevice {
    UMockdevDevice(
      devpath: parent.devpath + "/iio:device0",
      properties: [
        ("SUBSYSTEM", "iio"), ("DEVNAME", "/dev/iio:device0"),
        ("ACCEL_MOUNT_MATRIX", "0, 1, 0; -1, 0, 0; 0, 0, 1"),
      ],
      attributes: [("name", "bmc150_accel\n"), ("in_accel_x_raw", "5\n"), ("dev", "241:0\n")],
      node: "iio:device0")
  }
  var trigger: UMockdevDevice {
    UMockdevDevice(
      devpath: parent.devpath + "/trigger0", properties: [("SUBSYSTEM", "iio")],
      attributes: [("name", "bmc150_accel-dev0\n")])
  }
  let other = UMockdevDevice(
    devpath: "/devices/platform/serial0/tty/ttyS0", properties: [("SUBSYSTEM", "tty")],
    attributes: [("name", "serial\n")])

  func devices(_ lines: [String], prefix: String) throws -> [JSONValue] {
    try lines.filter { $0.hasPrefix(prefix) }.map {
      try JSONValue(parsing: String($0.dropFirst(prefix.count)))
    }
  }

  @Test func enumeratesOneSubsystemWithPropertiesAttributesAndParents() throws {
    var scenario = UMockdevScenario(devices: [parent, accel, trigger, other])
    scenario.spawn([try Built.executable("accel-probe"), "--udev-list", "iio"])
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.exitCodes == [0], "\(transcript.summary)")
    let found = try devices(transcript.lines, prefix: "device ")
    // Only iio devices, sorted by path: the accelerometer, then the trigger.
    #expect(found.map { $0["sysname"]?.stringValue } == ["iio:device0", "trigger0"])
    let device = found[0]
    #expect(device["syspath"]?.stringValue == "/sys" + accel.devpath)
    #expect(device["sysnum"]?.numberValue == 0)
    #expect(device["devnode"]?.stringValue == "/dev/iio:device0")
    #expect(device["subsystem"]?.stringValue == "iio")
    #expect(
      device["properties"]?["ACCEL_MOUNT_MATRIX"]?.stringValue == "0, 1, 0; -1, 0, 0; 0, 0, 1")
    #expect(device["name"]?.stringValue == "bmc150_accel")
    let attributes = device["attributes"]?.arrayValue?.compactMap(\.stringValue) ?? []
    #expect(attributes.contains("in_accel_x_raw"))
    #expect(attributes.contains("name"))
    // The parent is the i2c client, and MODALIAS is inherited from it.
    #expect(device["parent"]?.stringValue == "/sys" + parent.devpath)
    #expect(device["modalias"]?.stringValue == "acpi:BOSC0200:")
    #expect(found[1]["parent"]?.stringValue == "/sys" + parent.devpath)
    #expect(transcript.lines.contains("missing nil"))
  }

  @Test func monitorReportsAddChangeAndRemove() throws {
    var scenario = UMockdevScenario(devices: [other])
    scenario.spawn([try Built.executable("accel-probe"), "--udev-watch", "iio"])
    scenario.expect("^ready$")
    scenario.hotplug([parent, accel])
    scenario.expect("^event add iio:device0 ")
    scenario.property(accel, "ACCEL_LOCATION", "display")
    scenario.uevent(accel, "change")
    scenario.expect("^event change iio:device0 ")
    // Events of other subsystems are filtered out.
    scenario.uevent(other, "change")
    scenario.unplug(accel)
    scenario.expect("^event remove iio:device0 ")
    scenario.closeInput()
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    let events = transcript.lines.filter { $0.hasPrefix("event ") }
    #expect(
      events.map { $0.split(separator: " ").prefix(3).joined(separator: " ") } == [
        "event add iio:device0", "event change iio:device0", "event remove iio:device0",
      ])
    let change = try devices([events[1]], prefix: "event change iio:device0 ")
    #expect(change.first?["properties"]?["ACCEL_LOCATION"]?.stringValue == "display")
    #expect(change.first?["action"]?.stringValue == "change")
  }
}
