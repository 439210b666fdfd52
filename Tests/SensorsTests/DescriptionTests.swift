import OrientCore
import TestSupport
import TestThreads
import Testing
import TextFormats

@testable import Sensors

@Suite(.ownThreads) struct DescriptionTests {
  func facts(
    _ sysname: String = "iio:device0", name: String? = "accel", label: String? = nil,
    udevLocation: String? = nil, location: String? = nil, udevMatrix: String? = nil,
    sysfsMatrices: [(String, String)] = [], scale: [(String, String)] = [("in_accel_scale", "0.01")]
  ) -> DeviceFacts {
    var f = DeviceFacts(syspath: "/sys/devices/x/\(sysname)", sysname: sysname)
    f.name = name
    f.label = label
    f.udevLocation = udevLocation
    f.locationAttribute = location
    f.udevMountMatrix = udevMatrix
    f.sysfsMountMatrices = sysfsMatrices.map { DeviceFacts.SysfsText($0.0, $0.1) }
    f.scale = scale.map { DeviceFacts.SysfsText($0.0, $0.1) }
    f.hasRawAttributes = true
    f.devnode = "/dev/\(sysname)"
    return f
  }

  func configuration(_ text: String) throws(ConfigError) -> AccelerometerConfiguration {
    try AccelerometerConfiguration(ConfigFile(parsing: text, source: "/etc/orientd.conf"))
  }

  @Test func locationPrecedence() throws {
    let plain = AccelerometerDescription(facts: facts(), configuration: .init())
    #expect(plain.location == .unknown)
    #expect(plain.isDisplaySensor)
    let label = AccelerometerDescription(facts: facts(label: "accel-base"), configuration: .init())
    #expect(label.location == .base)
    #expect(label.locationSource == "sysfs label")
    // udev (hwdb) beats the label; a bad udev value is reported and the label used.
    let udev = AccelerometerDescription(
      facts: facts(label: "accel-base", udevLocation: "display"), configuration: .init())
    #expect(udev.location == .display)
    #expect(udev.locationSource == "udev ACCEL_LOCATION")
    let bad = AccelerometerDescription(
      facts: facts(label: "accel-base", udevLocation: "lid"), configuration: .init())
    #expect(bad.location == .base)
    #expect(bad.problems.contains { $0.contains("ACCEL_LOCATION=\"lid\"") })
    let cros = AccelerometerDescription(facts: facts(location: "lid"), configuration: .init())
    #expect(cros.location == .display)
    #expect(cros.locationSource == "sysfs location")
    let crosBase = AccelerometerDescription(facts: facts(location: "base"), configuration: .init())
    #expect(crosBase.location == .base)
    // The configuration beats everything.
    let configured = AccelerometerDescription(
      facts: facts(udevLocation: "display"),
      configuration: try configuration("[device \"lid\"]\nmatch-name = acc*\nlocation = base\n"))
    #expect(configured.location == .base)
    #expect(configured.locationSource == "configuration /etc/orientd.conf:1")
  }

  @Test func mountMatrixPrecedenceAndFallbacks() throws {
    let rotate = "0, 1, 0; -1, 0, 0; 0, 0, 1"
    let sysfs = AccelerometerDescription(
      facts: facts(sysfsMatrices: [("in_accel_mount_matrix", "0, -1, 0; 1, 0, 0; 0, 0, 1")]),
      configuration: .init())
    #expect(sysfs.mountMatrixSource == .sysfs("in_accel_mount_matrix"))
    let udev = AccelerometerDescription(
      facts: facts(
        udevMatrix: rotate, sysfsMatrices: [("mount_matrix", "-1, 0, 0; 0, -1, 0; 0, 0, 1")]),
      configuration: .init())
    #expect(udev.mountMatrixSource == .udevProperty)
    #expect(udev.mountMatrix == (try MountMatrix(parsing: rotate)))
    #expect(udev.problems.isEmpty)
    // An invalid udev matrix: logged with source and reason, the sysfs one is used.
    let invalid = AccelerometerDescription(
      facts: facts(
        udevMatrix: "1, 0, 0; 0, 0, 0; 0, 0, 1", sysfsMatrices: [("mount_matrix", rotate)]),
      configuration: .init())
    #expect(invalid.mountMatrixSource == .sysfs("mount_matrix"))
    let problem = try #require(invalid.problems.first)
    #expect(problem.contains("udev ACCEL_MOUNT_MATRIX"))
    #expect(problem.contains("row 2 is all zeros"))
    #expect(problem.contains("using sysfs mount_matrix instead"))
    // A singular matrix is used with a warning: systemd's hwdb has real ones (line 259 of
    // 60-sensor.hwdb), and their in-plane rows still give the orientation.
    let singular = AccelerometerDescription(
      facts: facts(
        udevMatrix: "1, 0, 0; 0, -1, 0; 1, 0, 0", sysfsMatrices: [("mount_matrix", rotate)]),
      configuration: .init())
    #expect(singular.mountMatrixSource == .udevProperty)
    #expect(singular.mountMatrix.apply(Vector3(0, 9.8, 0)) == Vector3(0, -9.8, 0))
    #expect(singular.problems.count == 1)
    #expect(singular.problems[0].contains("singular"))
    #expect(singular.problems[0].contains("udev ACCEL_MOUNT_MATRIX"))
    // The configuration beats udev.
    let configured = AccelerometerDescription(
      facts: facts(udevMatrix: rotate),
      configuration: try configuration(
        "[device \"x\"]\nmatch-name = accel\nmount-matrix = -1, 0, 0; 0, -1, 0; 0, 0, 1\n"))
    #expect(configured.mountMatrixSource == .configuration("/etc/orientd.conf:3"))
    #expect(configured.mountMatrix.apply(Vector3(1, 2, 3)) == Vector3(-1, -2, 3))
  }

  @Test func scaleOffsetAndCalibration() throws {
    var f = facts(scale: [
      ("in_accel_x_scale", "0.01"), ("in_accel_y_scale", "0.02"), ("in_accel_z_scale", "bad"),
    ])
    f.offset = [DeviceFacts.SysfsText("in_accel_offset", "-10")]
    let d = AccelerometerDescription(facts: f, configuration: .init())
    #expect(d.scale == Vector3(0.01, 0.02, 1))
    #expect(d.offset == Vector3(-10, -10, -10))
    #expect(d.problems.contains { $0.contains("in_accel_z_scale \"bad\"") })
    let v = d.calibrate(x: 110, y: 10, z: 12)
    #expect(abs(v.x - 1.0) < 1e-12)
    #expect(abs(v.y - 0.0) < 1e-12)
    #expect(abs(v.z - 2.0) < 1e-12)
    let unscaled = AccelerometerDescription(facts: facts(scale: []), configuration: .init())
    #expect(unscaled.scale == Vector3(1, 1, 1))
    #expect(unscaled.problems.contains { $0.contains("no in_accel_scale") })
    let zero = AccelerometerDescription(
      facts: facts(scale: [("in_accel_scale", "0")]), configuration: .init())
    #expect(zero.scale == Vector3(1, 1, 1))
  }

  @Test func displayChoiceIsDeterministic() {
    let base = AccelerometerDescription(
      facts: facts("iio:device0", label: "accel-base"), configuration: .init())
    let unknown2 = AccelerometerDescription(facts: facts("iio:device2"), configuration: .init())
    let display10 = AccelerometerDescription(
      facts: facts("iio:device10", udevLocation: "display"), configuration: .init())
    let unknown1 = AccelerometerDescription(facts: facts("iio:device1"), configuration: .init())
    // Stated display location first, whatever the order given.
    for order in [[base, unknown2, display10, unknown1], [unknown1, display10, unknown2, base]] {
      let outcome = SensorChoice.choose(order, mode: .auto)
      #expect(outcome.chosen?.sysname == "iio:device10")
      #expect(outcome.notChosen.count == 3)
      #expect(outcome.notChosen.contains { $0.hasPrefix("iio:device0: base sensor") })
    }
    // Among unstated ones, the lowest number (numerically: 2 before 10).
    let numeric = SensorChoice.choose(
      [AccelerometerDescription(facts: facts("iio:device10"), configuration: .init()), unknown2],
      mode: .auto)
    #expect(numeric.chosen?.sysname == "iio:device2")
    // Base only: nothing.
    let baseOnly = SensorChoice.choose([base], mode: .auto)
    #expect(baseOnly.chosen == nil)
    // A mode the sensor cannot do excludes it.
    let pollOnly = SensorChoice.choose([unknown1], mode: .buffered)
    #expect(pollOnly.chosen == nil)
  }

  @Test func triggerOfItsOwn() {
    let triggers = [
      TriggerInfo(name: "bmc150_accel-any-motion-dev3", parentSyspath: "/sys/devices/i2c/0-0010"),
      TriggerInfo(name: "bmc150_accel-dev3", parentSyspath: "/sys/devices/i2c/0-0010"),
      TriggerInfo(name: "sysfstrig0", parentSyspath: nil),
      TriggerInfo(name: "lis3dh-trigger", parentSyspath: "/sys/devices/i2c/0-0019"),
    ]
    let named = TriggerChoice.choose(
      deviceName: "bmc150_accel", deviceNumber: 3, deviceParent: "/sys/devices/i2c/0-0010",
      triggers: triggers)
    #expect(named?.trigger.name == "bmc150_accel-dev3")
    // st_sensors-style name: found through the shared parent.
    let sibling = TriggerChoice.choose(
      deviceName: "lis3dh", deviceNumber: 1, deviceParent: "/sys/devices/i2c/0-0019",
      triggers: triggers)
    #expect(sibling?.trigger.name == "lis3dh-trigger")
    #expect(sibling?.reason == "same parent device")
    // Only a motion trigger as sibling, or someone else's triggers: none.
    let motionOnly = TriggerChoice.choose(
      deviceName: "other", deviceNumber: 3, deviceParent: "/sys/devices/i2c/0-0010",
      triggers: [triggers[0], triggers[2]])
    #expect(motionOnly == nil)
  }

  @Test func configurationParsing() throws {
    let c = try configuration(
      """
      [detector]
      anything = goes
      [sampling]
      mode = polled
      poll-rate = 25
      buffered-rate = 12.5
      buffer-length = 4
      [device "lid"]
      match-label = accel-display
      match-modalias = acpi:BOSC0200*
      """)
    #expect(c.sampling.mode == .polled)
    #expect(c.sampling.pollRate == 25)
    #expect(c.sampling.bufferedRate == 12.5)
    #expect(c.sampling.bufferLength == 4)
    #expect(c.devices.count == 1)
    #expect(c.override(name: "x", label: "accel-display", modalias: "acpi:BOSC0200:") != nil)
    #expect(c.override(name: "x", label: "accel-display", modalias: "acpi:KIOX0009:") == nil)
    #expect(c.override(name: "x", label: nil, modalias: "acpi:BOSC0200:") == nil)
    let rate = try configuration("[sampling]\nrate = 30\n")
    #expect(rate.sampling.pollRate == 30 && rate.sampling.bufferedRate == 30)
  }

  @Test(
    arguments: [
      ("[sampling]\nmode = fast\n", 2, "mode 'fast'"),
      ("[sampling]\n\npoll-rate = 0,5\n", 3, "poll-rate '0,5'"),
      ("[sampling]\nrate = 5000\n", 2, "outside"),
      ("[sampling]\nbuffer-length = 1\n", 2, "buffer-length"),
      ("[sampling]\ncolour = red\n", 2, "unknown key 'colour'"),
      ("[sampling \"x\"]\n", 1, "no argument"),
      ("[device]\nmatch-name = a\n", 1, "needs a name"),
      ("[device \"a\"]\nmount-matrix = 1, 0, 0; 0, 1, 0; 0, 0, 1\n", 1, "needs match-name"),
      ("[device \"a\"]\nmatch-name = a\nmount-matrix = 1, 0; 0, 1\n", 3, "expected 3 rows"),
      ("[device \"a\"]\nmatch-name = a\nlocation = lid\n", 3, "location 'lid'"),
      ("[device \"a\"]\nmatch-name =\n", 2, "has no value"),
    ])
  func configurationErrorsSayWhere(text: String, line: Int, reason: String) {
    do {
      _ = try configuration(text)
      Issue.record("accepted: \(text)")
    } catch {
      #expect(error.line == line, "\(error)")
      #expect(error.reason.contains(reason), "\(error)")
      #expect(error.description.hasPrefix("/etc/orientd.conf:\(line): "))
    }
  }
}

@Suite(.ownThreads) struct DocumentedConfigurationTests {
  /// The `[sampling]` and `[device]` example of docs/sensors.md, comments and all, is a valid
  /// configuration that means what the page says.
  @Test func documentedExampleIsAccepted() throws {
    let path = "\(Built.packageRoot)/docs/sensors.md"
    let page = readFile(path)
    let start = try #require(page.firstRange(of: "```ini\n"), "no ini example in \(path)")
    let end = try #require(page[start.upperBound...].firstRange(of: "```"), "unclosed example")
    let text = String(page[start.upperBound..<end.lowerBound])
    let configuration = try AccelerometerConfiguration(ConfigFile(parsing: text, source: path))
    #expect(configuration.sampling.mode == .auto)
    #expect(configuration.sampling.pollRate == 30)
    #expect(configuration.sampling.bufferLength == 8)
    let device = try #require(configuration.devices.first)
    #expect(device.matchModalias == "acpi:MXC6655*")
    #expect(device.location == .display)
    #expect(device.matches(name: "mxc4005", label: "accel-display", modalias: "acpi:MXC6655:"))
  }
}
