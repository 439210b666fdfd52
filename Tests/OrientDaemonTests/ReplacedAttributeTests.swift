import Glibc
import JSON
import TestSupport
import TestThreads
import Testing

/// umockdev's own `set_attribute()` (what iio-sensor-proxy's tests and distributions' tests
/// change values with) writes a new file and renames it over the old one. orientd keeps the
/// attributes it polls open (`SysfsAttribute`), so it must notice the replacement: every polled
/// reader (accelerometer, light, proximity, compass) is followed here through such changes.
@Suite(.ownThreads, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct ReplacedAttributeTests {
  @Test func valuesReplacedByUMockdevReachTheClient() throws {
    let light = EmulatedAmbient.light[1]
    let proximity = EmulatedAmbient.proximity[1]
    let compass = EmulatedAmbient.compass
    let fixture = try DaemonFixture(
      devices: [Accel.parent, Accel.polled] + EmulatedAmbient.light + EmulatedAmbient.proximity
        + [compass])
    let watch = try fixture.start([
      try Built.executable("orientd"), "--watch", "--json", "--light", "--proximity",
      "--compass",
    ])
    defer {
      watch.signal(SIGTERM)
      _ = watch.wait(timeout: 10)
    }
    func last(_ check: (JSONValue) -> Bool) -> Bool {
      watch.standardOutput.jsonLines.last.map(check) ?? false
    }
    #expect(
      waitFor(timeout: 20) {
        last {
          $0["orientation"] == .string("normal") && $0["light_level"] == .number(55)
            && $0["proximity_near"] == .bool(false) && $0["compass_heading"] == .number(90)
        }
      }, "\(watch.standardOutput)\n\(watch.standardError)\n\(fixture.log)")
    // Each file is replaced (a new inode): the old ones, still open, keep the old values.
    try fixture.testbed.perform {
      $0.replace(Accel.polled, "in_accel_x_raw", "1000\n")
      $0.replace(Accel.polled, "in_accel_y_raw", "0\n")
      $0.replace(light, "in_illuminance_raw", "290\n")
      $0.replace(proximity, "in_proximity_raw", "256\n")
      $0.replace(compass, "in_rot_from_north_magnetic_tilt_comp_raw", "1800\n")
    }
    #expect(
      waitFor(timeout: 20) {
        last {
          $0["orientation"] == .string("left-up") && $0["light_level"] == .number(150)
            && $0["proximity_near"] == .bool(true) && $0["compass_heading"] == .number(180)
        }
      }, "\(watch.standardOutput)\n\(fixture.log)")
    // And again: the reopened files are followed in turn.
    try fixture.testbed.perform {
      $0.replace(Accel.polled, "in_accel_y_raw", "-1000\n")
      $0.replace(Accel.polled, "in_accel_x_raw", "0\n")
      $0.replace(light, "in_illuminance_raw", "100\n")
      $0.replace(proximity, "in_proximity_raw", "0\n")
      $0.replace(compass, "in_rot_from_north_magnetic_tilt_comp_raw", "900\n")
    }
    #expect(
      waitFor(timeout: 20) {
        last {
          $0["orientation"] == .string("normal") && $0["light_level"] == .number(55)
            && $0["proximity_near"] == .bool(false) && $0["compass_heading"] == .number(90)
        }
      }, "\(watch.standardOutput)\n\(fixture.log)")
  }
}
