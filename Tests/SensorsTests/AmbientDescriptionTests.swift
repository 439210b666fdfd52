import Sensors
import TestThreads
import Testing

/// How orientd classifies and interprets light, proximity and compass attributes (pure: no
/// device; the daemon tests read the same shapes from umockdev).
@Suite(.ownThreads)
struct AmbientDescriptionTests {
  private func describe(
    _ attributes: [String: String], subsystem: String = "iio", udev: [String: String] = [:],
    devnode: String? = nil
  ) -> (sensors: [AmbientDescription], problems: [String]) {
    AmbientDescription.describe(
      syspath: "/sys/devices/x/iio:device1", sysname: "iio:device1", subsystem: subsystem,
      devnode: devnode, property: { udev[$0] }, read: { attributes[$0] })
  }

  @Test func rawIlluminanceUsesScaleAndOffsetInLux() throws {
    let found = describe([
      "in_illuminance_raw": "100", "in_illuminance_scale": "0.5", "in_illuminance_offset": "10",
    ])
    let light = try #require(found.sensors.first)
    #expect(found.sensors.count == 1)
    #expect(light.kind == .light && light.unit == .lux)
    #expect(light.classifiedBy == "sysfs in_illuminance_raw")
    var interpreter = AmbientInterpreter(light)
    #expect(interpreter.interpret("100\n") == .light(55, .lux))
  }

  @Test func processedIlluminanceIsPreferredAndIntensityIsVendor() throws {
    let both = describe(["in_illuminance_input": "12.5", "in_intensity_clear_raw": "300"])
    #expect(both.sensors.map(\.driver) == [.iioPoll(attribute: "in_illuminance_input")])
    let intensity = try #require(describe(["in_intensity_clear_raw": "300"]).sensors.first)
    #expect(intensity.unit == .vendor)
    var interpreter = AmbientInterpreter(intensity)
    #expect(interpreter.interpret("300\n") == .light(300, .vendor))
  }

  @Test(arguments: [("(128,128)", 128.0 / 255 * 100), ("(255,255)", 100.0), ("(0,0)", 0.0)])
  func hwmonLightIsAPercentageOf255(text: String, level: Double) throws {
    let light = try #require(
      describe(["light": text], subsystem: "platform", udev: ["IIO_SENSOR_PROXY_TYPE": "hwmon-als"])
        .sensors.first)
    #expect(light.driver == .hwmonLight && light.unit == .vendor)
    #expect(light.classifiedBy == "udev IIO_SENSOR_PROXY_TYPE=hwmon-als")
    var interpreter = AmbientInterpreter(light)
    #expect(interpreter.interpret(text + "\n") == .light(level, .vendor))
    #expect(interpreter.interpret("garbage") == nil)
  }

  /// iio-sensor-proxy's sequence: 256 near, 0 far, 129 near, 127 still near; then only a
  /// clear drop below the margin is far.
  @Test func proximityHasAMarginSoItDoesNotChatter() throws {
    let prox = try #require(
      describe(["in_proximity_raw": "0", "in_proximity_nearlevel": "128"]).sensors.first)
    #expect(prox.nearLevel == 128 && prox.nearLevelSource == "sysfs in_proximity_nearlevel")
    var interpreter = AmbientInterpreter(prox)
    let sequence = ["256", "0", "129", "127", "116", "115", "127", "128", "129"]
    let near = sequence.map { interpreter.interpret($0) }
    #expect(
      near
        == [true, false, true, true, true, false, false, false, true].map {
          .proximity(near: $0)
        })
  }

  /// `in_proximity0_raw` with the near level in `in_proximity_nearlevel` (a level shared by
  /// type, and the one attribute iio-sensor-proxy reads): 129 is near, as with `in_proximity_raw`.
  @Test func proximity0TakesTheSharedNearLevel() throws {
    let prox = try #require(
      describe(["in_proximity0_raw": "256", "in_proximity_nearlevel": "128"]).sensors.first)
    #expect(prox.nearLevel == 128 && prox.nearLevelSource == "sysfs in_proximity_nearlevel")
    var interpreter = AmbientInterpreter(prox)
    #expect(
      ["256", "0", "129"].map { interpreter.interpret($0) }
        == [true, false, true].map {
          .proximity(near: $0)
        })
  }

  @Test func udevNearLevelWinsOverSysfs() throws {
    let prox = try #require(
      describe(
        ["in_proximity0_raw": "0", "in_proximity0_nearlevel": "128"],
        udev: ["PROXIMITY_NEAR_LEVEL": "50", "IIO_SENSOR_PROXY_TYPE": "iio-poll-proximity"]
      ).sensors.first)
    #expect(prox.nearLevel == 50 && prox.nearLevelSource == "udev PROXIMITY_NEAR_LEVEL")
    #expect(prox.driver == .iioPoll(attribute: "in_proximity0_raw"))
    #expect(prox.classifiedBy == "udev IIO_SENSOR_PROXY_TYPE=iio-poll-proximity")
  }

  @Test func compassHeadingIsScaled() throws {
    let compass = try #require(
      describe([
        "in_rot_from_north_magnetic_tilt_comp_raw": "900",
        "in_rot_from_north_magnetic_tilt_comp_scale": "0.1",
      ]).sensors.first)
    #expect(compass.kind == .compass)
    var interpreter = AmbientInterpreter(compass)
    #expect(interpreter.interpret("900\n") == .compass(heading: 90))
  }

  /// hid-sensor-magn-3d's shape (recorded in the VM): the scale is shared by the type.
  @Test func hidCompassUsesTheSharedRotScale() throws {
    let compass = try #require(
      describe(
        [
          "in_rot_from_north_magnetic_tilt_comp_raw": "271", "in_rot_scale": "0.5",
          "in_rot_offset": "2",
        ], udev: ["IIO_SENSOR_PROXY_TYPE": "iio-buffer-compass"]
      ).sensors.first)
    #expect(compass.scale == 0.5 && compass.offset == 2)
    #expect(compass.classifiedBy == "udev IIO_SENSOR_PROXY_TYPE=iio-buffer-compass")
  }

  @Test func oneChipCanBeLightAndProximity() {
    let found = describe(["in_illuminance_input": "3", "in_proximity_raw": "1"])
    #expect(found.sensors.map(\.kind) == [.light, .proximity])
  }

  @Test func aTagWithoutAnAttributeIsAProblemNotASensor() {
    let found = describe(
      ["scan_elements/in_illuminance_en": "0"], udev: ["IIO_SENSOR_PROXY_TYPE": "iio-buffer-als"])
    #expect(found.sensors.isEmpty)
    #expect(found.problems.count == 1)
    #expect(found.problems.first?.contains("iio-buffer-als") == true)
  }

  /// A channel that is only a scan element is read through the node (with the attribute's
  /// calibration); a polled attribute, when there is one, is preferred.
  @Test func aScanElementWithANodeIsReadBuffered() throws {
    let found = describe(
      [
        "scan_elements/in_illuminance_en": "0", "in_illuminance_scale": "0.1",
        "scan_elements/in_rot_from_north_magnetic_tilt_comp_en": "0", "in_rot_scale": "0.5",
      ], udev: ["IIO_SENSOR_PROXY_TYPE": "iio-buffer-als iio-buffer-compass"],
      devnode: "/dev/iio:device1")
    #expect(found.problems.isEmpty)
    let light = try #require(found.sensors.first { $0.kind == .light })
    #expect(light.driver == .iioBuffer(channel: "in_illuminance"))
    #expect(light.devnode == "/dev/iio:device1" && light.scale == 0.1 && light.unit == .lux)
    var interpreter = AmbientInterpreter(light)
    #expect(interpreter.interpret(raw: 550) == .light(55, .lux))
    let compass = try #require(found.sensors.first { $0.kind == .compass })
    #expect(compass.driver == .iioBuffer(channel: "in_rot_from_north_magnetic_tilt_comp"))
    #expect(compass.scale == 0.5)
    let polled = describe(
      ["scan_elements/in_illuminance_en": "0", "in_illuminance_raw": "5"],
      devnode: "/dev/iio:device1")
    #expect(polled.sensors.first?.driver == .iioPoll(attribute: "in_illuminance_raw"))
  }

  @Test func anAccelerometerIsNoAmbientSensor() {
    #expect(describe(["in_accel_x_raw": "0", "in_accel_y_raw": "0"]).sensors.isEmpty)
  }

  /// An input switch is a proximity sensor only with SW_FRONT_PROXIMITY (bit 11 of the kernel's
  /// `capabilities/sw` words, least significant word last) and udev's switch mark or
  /// iio-sensor-proxy's type; a lid switch (SW_LID, bit 0) is not.
  @Test(arguments: [
    (["ID_INPUT_SWITCH": "1"], "800", "/dev/input/event5", true),
    (["ID_INPUT_SWITCH": "1"], "0 801", "/dev/input/event5", true),
    (["IIO_SENSOR_PROXY_TYPE": "input-proximity"], "800", "/dev/input/event5", true),
    (["ID_INPUT_SWITCH": "1"], "1", "/dev/input/event5", false),
    (["ID_INPUT_SWITCH": "1"], "800 0", "/dev/input/event5", false),
    ([:], "800", "/dev/input/event5", false),
    (["ID_INPUT_SWITCH": "1"], "800", "/dev/input/js0", false),
  ])
  func inputProximitySwitch(udev: [String: String], sw: String, node: String, found: Bool) {
    let info = AmbientDescription.inputProximity(
      syspath: "/sys/devices/platform/gpio_keys/input/input5/event5", sysname: "event5",
      devnode: node, name: "gpio_keys", property: { udev[$0] }, capabilities: sw)
    #expect((info != nil) == found, "\(udev) sw=\(sw) \(node)")
    if let info {
      #expect(info.kind == .proximity && info.driver == .inputSwitch(node: node))
      var interpreter = AmbientInterpreter(info)
      #expect(interpreter.interpret("1") == .proximity(near: true))
      #expect(interpreter.interpret("0") == .proximity(near: false))
    }
  }
}
