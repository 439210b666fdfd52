import Glibc
import TestSupport
import TestThreads
import Testing

/// udev/80-orientd.rules as systemd-udevd would apply them: `udevadm test` on umockdev devices,
/// with only the project's rules (bound over /etc/udev/rules.d and /usr/lib/udev/rules.d in a
/// private mount namespace, with a private /run for udevadm's database), so that
/// `SYSTEMD_WANTS=orientd.service` comes from our rules alone, not iio-sensor-proxy's. orientd
/// must be started for every sensor kind it serves, or masking iio-sensor-proxy would lose the
/// ones that do not come with an accelerometer.
@Suite(
  .ownThreads,
  .enabled(
    if: UMockdevScenario.isAvailable && getuid() == 0 && access("/usr/bin/unshare", X_OK) == 0,
    "needs umockdev, root and unshare (a private mount namespace)"))
struct UdevRulesTests {
  /// One device: its umockdev record (the device first) and whether orientd is started.
  struct Case: Sendable, CustomTestStringConvertible {
    let name: String
    let record: String
    let starts: Bool
    var testDescription: String { "\(name): \(starts ? "starts" : "does not start") orientd" }

    /// The device's sysfs path: the first record's.
    var syspath: String {
      let first = record.split(separator: "\n").first ?? ""
      return "/sys" + first.dropFirst("P: ".count)
    }
  }

  /// An IIO device (no udev property: recognised by its attributes alone) on an I2C parent.
  private static func iio(_ attributes: [String], properties: [String] = []) -> String {
    """
    P: /devices/platform/i2c-1/i2c-DEV:00/iio:device1
    E: SUBSYSTEM=iio
    \(properties.map { "E: \($0)\n" }.joined())\(attributes.map { "A: \($0)=1\\n\n" }.joined())
    P: /devices/platform/i2c-1/i2c-DEV:00
    E: SUBSYSTEM=i2c

    """
  }

  /// An evdev node under its input device (`capabilities/sw` as given).
  private static func input(_ properties: [String], switches: String = "0") -> String {
    """
    P: /devices/platform/dev/input/input5/event5
    N: input/event5
    E: DEVNAME=/dev/input/event5
    E: SUBSYSTEM=input
    \(properties.map { "E: \($0)\n" }.joined())A: dev=13:69
    L: device=../../input5

    P: /devices/platform/dev/input/input5
    E: SUBSYSTEM=input
    A: capabilities/sw=\(switches)\\n
    A: name=dev

    P: /devices/platform/dev
    E: SUBSYSTEM=platform

    """
  }

  static let cases: [Case] = [
    Case(
      name: "polled IIO accelerometer",
      record: iio(["in_accel_x_raw", "in_accel_y_raw", "in_accel_z_raw"]), starts: true),
    Case(name: "light, in_illuminance_raw", record: iio(["in_illuminance_raw"]), starts: true),
    Case(name: "light, in_illuminance_input", record: iio(["in_illuminance_input"]), starts: true),
    Case(
      name: "light, in_intensity_both_raw only", record: iio(["in_intensity_both_raw"]),
      starts: true),
    Case(name: "proximity, in_proximity_raw", record: iio(["in_proximity_raw"]), starts: true),
    Case(
      name: "compass", record: iio(["in_rot_from_north_magnetic_tilt_comp_raw"]), starts: true),
    Case(
      name: "tagged by iio-sensor-proxy's rules (buffer-only light)",
      record: iio(["buffer/enable"], properties: ["IIO_SENSOR_PROXY_TYPE=iio-buffer-als"]),
      starts: true),
    Case(name: "an ADC (in_voltage0_raw)", record: iio(["in_voltage0_raw"]), starts: false),
    Case(
      name: "applesmc light",
      record: """
        P: /devices/platform/applesmc.768
        E: SUBSYSTEM=platform
        E: DRIVER=applesmc
        A: light=(128,128)\\n
        L: driver=../../../bus/platform/drivers/applesmc

        """, starts: true),
    Case(
      name: "input accelerometer (lis3lv02d)", record: input(["ID_INPUT_ACCELEROMETER=1"]),
      starts: true),
    Case(
      name: "a USB game controller's motion sensor",
      record: input(["ID_INPUT_ACCELEROMETER=1", "ID_BUS=usb"]), starts: false),
    Case(
      name: "SW_FRONT_PROXIMITY switch", record: input(["ID_INPUT_SWITCH=1"], switches: "800"),
      starts: true),
    Case(
      name: "SW_FRONT_PROXIMITY among other switches",
      record: input(["ID_INPUT_SWITCH=1"], switches: "4 803"), starts: true),
    Case(
      name: "a lid switch (SW_LID only)", record: input(["ID_INPUT_SWITCH=1"], switches: "1"),
      starts: false),
    Case(
      name: "bit 11 of a higher word, not SW_FRONT_PROXIMITY",
      record: input(["ID_INPUT_SWITCH=1"], switches: "800 1"), starts: false),
  ]

  @Test(arguments: cases) func startsOrientdForEverySensorKind(_ item: Case) throws {
    let directory = try TemporaryDirectory("udev-rules")
    let rules = directory.file("rules")
    let empty = directory.file("empty")
    for path in [rules, empty] { #expect(mkdir(path, 0o755) == 0) }
    try writeFile(
      "\(rules)/80-orientd.rules", readFile("\(Built.packageRoot)/udev/80-orientd.rules"))
    try writeFile(directory.file("device.umockdev"), item.record)
    let script = [
      "mount -t tmpfs tmpfs /run", "mount --bind \(rules) /etc/udev/rules.d",
      "mount --bind \(empty) /usr/lib/udev/rules.d",
      "exec umockdev-run -d \(directory.file("device.umockdev")) -- udevadm test --action=add "
        + "'\(item.syspath)'",
    ].joined(separator: " && ")
    let result = try ChildProcess.run(
      ["unshare", "-m", "sh", "-c", script], outputDirectory: directory.path, timeout: 30)
    #expect(result.status == 0, "\(result)")
    #expect(result.stdout.contains("DEVPATH="), "udevadm test printed no properties: \(result)")
    #expect(
      result.stdout.contains("SYSTEMD_WANTS=orientd.service") == item.starts,
      "\(result.stdout)\n\(result.stderr)")
  }
}
