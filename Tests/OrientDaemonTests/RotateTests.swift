import Glibc
import JSON
import OrientCore
import TestSupport
import Testing

/// `orientd rotate` against real parts: orientd on an emulated accelerometer on a private bus,
/// a real headless sway, and the transform read back with `swaymsg -t get_outputs`.
@Suite(
  .serialized,
  .enabled(
    if: runsInCI || (UMockdevScenario.isAvailable && HeadlessSway.isAvailable),
    "umockdev or sway is not installed"))
struct RotateTests {
  /// Starts `orientd rotate` in the sway session with `arguments`.
  func rotate(
    _ fixture: DaemonFixture, _ sway: HeadlessSway, _ arguments: [String],
    state: TemporaryDirectory
  ) throws -> ChildProcess {
    var environment = fixture.bus.environment.merging(sway.environment) { $1 }
    environment["XDG_RUNTIME_DIR"] = state.path
    environment["XDG_STATE_HOME"] = state.file("state")
    environment["XDG_CURRENT_DESKTOP"] = "sway"
    return try ChildProcess(
      [try Built.executable("orientd"), "rotate", "-v"] + arguments, environment: environment,
      outputDirectory: fixture.bus.directory.path)
  }

  @Test func swayFollowsFourTurns() throws {
    let fixture = try DaemonFixture()
    let sway = try HeadlessSway()
    let state = try TemporaryDirectory("rotate")
    #expect(try sway.transform() == "normal")
    let rotate = try self.rotate(
      fixture, sway, ["--output", "HEADLESS-1", "--json", "--settle", "0"], state: state)
    #expect(
      waitFor(timeout: 15) { rotate.standardError.contains("following org.orientd.Orientation1") },
      "\(rotate.standardError)")
    for (orientation, transform) in [
      (Orientation.leftUp, "90"), (.bottomUp, "180"), (.rightUp, "270"), (.normal, "normal"),
    ] {
      try fixture.turn(orientation)
      #expect(
        waitFor(timeout: 10) { (try? sway.transform()) == transform },
        "\(orientation): \(rotate.standardError)")
      #expect(
        waitFor(timeout: 5) {
          rotate.standardOutput.lines.last.flatMap { try? JSONValue(parsing: $0) }?["transform"]
            == .string(transform)
        }, "\(rotate.standardOutput)")
    }
    let last = try JSONValue(parsing: rotate.standardOutput.lines.last ?? "")
    #expect(last["orientation"] == .string("normal"))
    #expect(last["output"] == .string("HEADLESS-1"))
    rotate.signal(SIGTERM)
    #expect(rotate.wait(timeout: 10) == 0)
  }
}
