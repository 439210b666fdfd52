import Glibc
import OrientCore
import TestSupport
import TestThreads
import Testing

/// Sensors whose scale is off (issue 12): no `in_accel_scale` and 1024 counts per g, and raw
/// values written with a decimal point. Both are turned through the four orientations and
/// seen by `orientd --watch`; the daemon finds the first one's own 1 g from its still readings
/// and says so once.
@Suite(
  .ownThreads, .serialized, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct WrongScaleTests {
  /// A polled accelerometer at the daemon fixture's devpath with `attributes` (no scale unless
  /// given) reading `raw` for upright.
  static func sensor(_ raw: [String]) -> UMockdevDevice {
    UMockdevDevice(
      devpath: Accel.polled.devpath,
      properties: [("SUBSYSTEM", "iio"), ("IIO_SENSOR_PROXY_TYPE", "iio-poll-accel")],
      attributes: [
        ("name", "mxc4005\n"), ("in_accel_x_raw", raw[0] + "\n"),
        ("in_accel_y_raw", raw[1] + "\n"), ("in_accel_z_raw", raw[2] + "\n"),
      ])
  }

  /// Turns the emulated sensor to each orientation in turn (through zero, so no diagonal is
  /// read) and waits for `--watch` to show it.
  static func turnThroughAll(
    _ fixture: DaemonFixture, watch: ChildProcess, raw: (Orientation) -> [String]
  ) throws {
    for orientation in [Orientation.leftUp, .bottomUp, .rightUp, .normal] {
      let values = raw(orientation)
      try fixture.testbed.perform { scenario in
        scenario.set(fixture.device, "in_accel_x_raw", "0\n")
        scenario.set(fixture.device, "in_accel_y_raw", "0\n")
        scenario.set(fixture.device, "in_accel_x_raw", values[0] + "\n")
        scenario.set(fixture.device, "in_accel_y_raw", values[1] + "\n")
      }
      let before = watch.standardOutput.components("\n").count
      #expect(
        waitFor(timeout: 15) {
          watch.standardOutput.components("\n").dropFirst(before - 1).contains {
            $0.contains("  \(orientation.rawValue) (")
          }
        }, "\(orientation): \(watch.standardOutput)\n\(fixture.log)")
    }
  }

  @Test func countsPerGWithoutAScale() throws {
    func raw(_ orientation: Orientation) -> [String] {
      let r = Double(orientation.clockwiseRotation ?? 0) * Double.pi / 180
      return [
        String(Int((1024 * sin(r)).rounded())), String(Int((-1024 * cos(r)).rounded())), "0",
      ]
    }
    let fixture = try DaemonFixture(devices: [Accel.parent, Self.sensor(raw(.normal))])
    let watch = try fixture.start([try Built.executable("orientd"), "--watch"])
    defer { watch.signal(SIGKILL) }
    #expect(
      waitFor(timeout: 15) { watch.standardOutput.contains("normal (rotation 0") },
      "\(watch.standardOutput)\n\(fixture.log)")
    #expect(
      fixture.log.contains("the scale is off by x104.4")
        && fixture.log.contains("The scale should be 0.009577 instead of 1"), "\(fixture.log)")
    try Self.turnThroughAll(fixture, watch: watch, raw: raw)
    // Logged once, not per reading or per turn.
    #expect(fixture.log.components("the scale is off").count == 2, "\(fixture.log)")
  }

  @Test func decimalRawValues() throws {
    // m/s^2 with one decimal and no scale, as some drivers and test beds write them.
    func raw(_ orientation: Orientation) -> [String] {
      switch orientation {
      case .leftUp: return ["9.8", "-0.3"]
      case .bottomUp: return ["0.2", "9.8"]
      case .rightUp: return ["-9.8", "0.4"]
      default: return ["-0.2", "-9.8"]
      }
    }
    let fixture = try DaemonFixture(devices: [Accel.parent, Self.sensor(raw(.normal) + ["0.5"])])
    let watch = try fixture.start([try Built.executable("orientd"), "--watch"])
    defer { watch.signal(SIGKILL) }
    #expect(
      waitFor(timeout: 15) { watch.standardOutput.contains("normal (rotation 0") },
      "\(watch.standardOutput)\n\(fixture.log)")
    try Self.turnThroughAll(fixture, watch: watch, raw: raw)
    // (An "empty value" may be seen when a poll lands between the test bed's truncate and write.)
    #expect(!fixture.log.contains("not a number"), "\(fixture.log)")
    #expect(!fixture.log.contains("the scale is off"), "\(fixture.log)")
  }
}

extension String {
  fileprivate func components(_ separator: String) -> [Substring] {
    split(separator: separator, omittingEmptySubsequences: false)
  }
}
