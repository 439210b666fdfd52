import Glibc
import JSON
import OrientCore
import TestSupport
import TestThreads
import Testing

/// `orientcam session --orientation auto`: orientd on a private bus (with the project's
/// policy) reading an emulated accelerometer in a live umockdev testbed; the session claims it
/// over D-Bus and follows its changes.
@Suite(.ownThreads, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct BusOrientationTests {
  /// The project's emulated MXC4005 (Tests/Fixtures/umockdev/mxc4005.umockdev), upright.
  static let parent = EmulatedAccelerometer.parent
  static let accelerometer = EmulatedAccelerometer.polled

  /// Raw counts (1 g = 1000) for a vertical display held in `orientation`.
  static func raw(_ orientation: Orientation) -> (x: Int, y: Int) {
    let r = Double(orientation.clockwiseRotation ?? 0) * Double.pi / 180
    return (Int((1000 * sin(r)).rounded()), Int((-1000 * cos(r)).rounded()))
  }

  @Test func followsOrientdOverTheBus() throws {
    let bus = try PrivateBus()
    let testbed = try LiveTestbed(
      devices: [Self.parent, Self.accelerometer],
      program: [try Built.executable("orientd"), "-v"], environment: bus.environment)
    #expect(waitFor(timeout: 15) { testbed.programStderr.contains("notice: serving ") })
    let dir = try TemporaryDirectory("session-bus")
    let session = try SessionProcess(
      [
        "--source", "pattern", "--resolution", "640x360", "--headless", "-o",
        dir.file("{orientation}-{n}.jpg"),
      ], in: dir, environment: bus.environment)
    #expect(session.ready["orientation"]?.stringValue == "normal")
    #expect(session.ready["orientation_source"]?.stringValue == "orientd")
    for (index, orientation) in [Orientation.leftUp, .bottomUp].enumerated() {
      // Axes that become non-zero first, so every step is a reading between the two.
      let next = Self.raw(orientation)
      try testbed.perform { scenario in
        if next.x != 0 { scenario.set(Self.accelerometer, "in_accel_x_raw", "\(next.x)\n") }
        if next.y != 0 { scenario.set(Self.accelerometer, "in_accel_y_raw", "\(next.y)\n") }
        if next.x == 0 { scenario.set(Self.accelerometer, "in_accel_x_raw", "0\n") }
        if next.y == 0 { scenario.set(Self.accelerometer, "in_accel_y_raw", "0\n") }
      }
      let change = try session.waitFor("orientation", count: index + 1, timeout: 15)
      #expect(change["orientation"]?.stringValue == orientation.rawValue)
      session.stdin.send("\n")
      let photo = try session.waitFor("photo", count: index + 1)
      #expect(photo["orientation"]?.stringValue == orientation.rawValue)
      #expect(photo["orientation_source"]?.stringValue == "orientd")
      let portrait = orientation == .leftUp
      try expectUprightPhoto(
        try #require(photo["path"]?.stringValue), width: portrait ? 360 : 640,
        height: portrait ? 640 : 360)
    }
    session.stdin.send("q\n")
    #expect(try session.exitStatus() == 0)
    // The claim went with the session.
    #expect(
      waitFor(timeout: 10) { !testbed.openFiles().contains { $0.contains("in_accel_") } },
      "\(testbed.programStderr)")
  }

  /// No orientation service: without a fallback the session refuses (69) and says what to
  /// do; with one it starts.
  @Test func noServiceNeedsTheFallback() throws {
    let bus = try PrivateBus()
    let dir = try TemporaryDirectory("session-bus")
    let refused = try ChildProcess.run(
      [
        try Built.executable("orientcam"), "session", "--source", "pattern", "--headless", "-o",
        dir.file("x.jpg"),
      ], environment: bus.environment, outputDirectory: dir.path, timeout: 30)
    #expect(refused.status == 69, "\(refused.stderr)")
    #expect(refused.stderr.contains("orientd not reachable"), "\(refused.stderr)")
    #expect(refused.stderr.contains("--orientation-fallback"), "\(refused.stderr)")
    let session = try SessionProcess(
      [
        "--source", "pattern", "--resolution", "640x360", "--headless",
        "--orientation-fallback", "right-up", "-o", dir.file("{orientation}.jpg"),
      ], in: dir, environment: bus.environment)
    #expect(session.ready["orientation_source"]?.stringValue == "fallback")
    session.stdin.send("\nq\n")
    #expect(try session.exitStatus() == 0)
    try expectUprightPhoto(dir.file("right-up.jpg"), width: 360, height: 640)
    // No bus at all is the same: the fallback applies.
    let noBus = try SessionProcess(
      ["--source", "pattern", "--headless", "--orientation-fallback", "normal"], in: dir,
      environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(dir.file("no-such-socket"))"])
    #expect(noBus.ready["orientation_source"]?.stringValue == "fallback")
    noBus.stdin.send("q\n")
    #expect(try noBus.exitStatus() == 0)
    #expect(noBus.child.standardError.contains("orientd not reachable"))
  }
}
