import JSON
import OrientCore
import TestSupport
import TestThreads
import Testing

/// `orientd --list-sensors` reads the sensor it would use for a moment and shows its own 1 g:
/// a sensor without `in_accel_scale` at 1024 counts per g is off by x104.4, and the scale it
/// should have is shown (text and JSON).
@Suite(
  .ownThreads, .serialized, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct GravityListTests {
  static func unscaled() -> (UMockdevDevice, UMockdevDevice) {
    let parent = IIOFixture.parent()
    let device = UMockdevDevice(
      devpath: "\(parent.devpath)/iio:device0", properties: [("SUBSYSTEM", "iio")],
      attributes: [
        ("name", "mxc4005\n"), ("in_accel_x_raw", "3\n"), ("in_accel_y_raw", "-1024\n"),
        ("in_accel_z_raw", "-2\n"),
      ])
    return (parent, device)
  }

  @Test func textShowsTheScaleItShouldHave() throws {
    let (parent, device) = Self.unscaled()
    var scenario = UMockdevScenario(devices: [parent, device])
    scenario.spawn([try Built.executable("orientd"), "--list-sensors"])
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.exitCodes == [0], "\(transcript.summary)")
    let line = transcript.lines.first { $0.hasPrefix("  gravity (1 g):") } ?? ""
    #expect(line.contains("the scale is off by x104.4"), "\(transcript.summary)")
    #expect(line.contains("The scale should be 0.009577 instead of 1"), "\(line)")
  }

  @Test func jsonCarriesTheEstimate() throws {
    let (parent, device) = Self.unscaled()
    var scenario = UMockdevScenario(devices: [parent, device])
    scenario.spawn([try Built.executable("orientd"), "--list-sensors", "--json"])
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.exitCodes == [0], "\(transcript.summary)")
    let document = try JSONValue(parsing: try #require(transcript.lines.first))
    let gravity = try #require(document["gravity_estimate"])
    let measured = try #require(gravity["measured"]?.numberValue)
    #expect(abs(measured - 1024) < 0.1)
    #expect(gravity["scale_off"] == .bool(true))
    let suggested = try #require(gravity["suggested_scale"]?.numberValue)
    #expect(abs(suggested - standardGravity / 1024) < 1e-6)
  }
}
