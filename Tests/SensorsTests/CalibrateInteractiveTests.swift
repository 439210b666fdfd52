import Glibc
import OrientCore
import TestSupport
import TestThreads
import Testing

/// `orientd calibrate` used as a person would: in a terminal (tmux), reading the screen and
/// pressing Enter, while the emulated sensor is turned through the poses.
@Suite(.ownThreads, .serialized) struct CalibrateInteractiveTests {
  static var tmuxAvailable: Bool { runsInCI || access("/usr/bin/tmux", X_OK) == 0 }

  /// A private tmux server (its own socket) whose one session runs a command.
  final class Terminal {
    let socket: String
    let session = "calibrate"

    init(socket: String) { self.socket = socket }

    @discardableResult
    func tmux(_ arguments: [String]) throws -> String {
      let directory = try TemporaryDirectory("tmux")
      let result = try ChildProcess.run(
        ["tmux", "-S", socket] + arguments, outputDirectory: directory.path, timeout: 10)
      guard result.status == 0 else {
        throw TestFailure("tmux \(arguments.joined(separator: " ")): \(result.stderr)")
      }
      return result.stdout
    }

    /// The visible screen.
    func screen() throws -> String { try tmux(["capture-pane", "-p", "-t", session]) }

    /// Waits until the screen shows `text` (below the last line containing `after`).
    func waitFor(_ text: String, after: String? = nil, timeout: Double = 20) throws -> String {
      var last = ""
      // The server may not be up yet right after the session is started.
      let seen = TestSupport.waitFor(timeout: timeout) {
        last = (try? screen()) ?? last
        guard let after else { return last.contains(text) }
        let lines = last.split(separator: "\n")
        guard let mark = lines.lastIndex(where: { $0.contains(after) }) else { return false }
        return lines[mark...].contains { $0.contains(text) }
      }
      guard seen else { throw TestFailure("the screen never showed '\(text)':\n\(last)") }
      return last
    }

    func press(_ key: String) throws { try tmux(["send-keys", "-t", session, key]) }

    func kill() { _ = try? tmux(["kill-server"]) }
  }

  @Test(.enabled(if: UMockdevScenario.isAvailable && tmuxAvailable, "umockdev or tmux missing"))
  func aPersonTurnsTheDeviceAndPressesEnter() throws {
    let directory = try TemporaryDirectory("calibrate-tmux")
    let config = directory.file("orientd.conf")
    try writeFile(config, "[sampling]\nmode = polled\npoll-rate = 50\n")
    // The sensor sits in the device a quarter turn off: upright it reads +x.
    let truth = try MountMatrix(parsing: "0, 1, 0; -1, 0, 0; 0, 0, 1")
    let counts = { (pose: CalibrationPose) -> (Int, Int, Int) in
      let v = (truth.inverse ?? .identity).apply(pose.displayDirection * 1000)
      return (Int(v.x.rounded()), Int(v.y.rounded()), Int(v.z.rounded()))
    }
    let parent = IIOFixture.parent()
    let sensor = IIOFixture.polled(parent: parent, raw: counts(.normal))
    let terminal = Terminal(socket: directory.file("tmux.sock"))
    defer { terminal.kill() }
    let orientd = try Built.executable("orientd")
    // The tmux server starts inside the testbed (it inherits the umockdev preload and
    // UMOCKDEV_DIR), so the program in its pane sees the emulated sensor. A long --hold makes
    // Enter the way each pose is confirmed.
    let command =
      "\(orientd) calibrate --hold 60 --config \(config); echo \"calibrate exited $?\"; sleep 60"
    let live = try LiveTestbed(
      devices: [parent, sensor],
      program: [
        "tmux", "-S", terminal.socket, "-f", "/dev/null", "new-session", "-d", "-s",
        terminal.session, "-x", "120", "-y", "50", command,
      ])
    func turn(_ pose: CalibrationPose) throws {
      let value = counts(pose)
      try live.perform {
        $0.set(sensor, "in_accel_x_raw", "\(value.0)\n")
        $0.set(sensor, "in_accel_y_raw", "\(value.1)\n")
        $0.set(sensor, "in_accel_z_raw", "\(value.2)\n")
      }
    }
    var screen = try terminal.waitFor("Step 1 of 3 (normal)")
    #expect(screen.contains("Calibrating iio:device0 (mxc4005"), "\(screen)")
    #expect(
      screen.contains("matrix now:   1, 0, 0; 0, 1, 0; 0, 0, 1 (none set anywhere"), "\(screen)")
    // The live readout shows the raw reading and how long it has been still.
    screen = try terminal.waitFor("raw (9.81, 0.00, 0.00)")
    screen = try terminal.waitFor("still 1.", after: "Step 1 of 3")
    try terminal.press("Enter")
    screen = try terminal.waitFor("Step 2 of 3 (left-up)")
    #expect(screen.contains("taken (Enter): raw (9.81, 0.00, 0.00)"), "\(screen)")
    // Pressing Enter without turning the device is refused, with the reason.
    screen = try terminal.waitFor("still 1.", after: "Step 2 of 3")
    try terminal.press("Enter")
    screen = try terminal.waitFor("not taken: this is the normal pose again")
    try turn(.leftUp)
    screen = try terminal.waitFor("raw (0.00, 9.81, 0.00)")
    screen = try terminal.waitFor("still 1.", after: "not taken")
    try terminal.press("Enter")
    screen = try terminal.waitFor("Step 3 of 3 (face-up)")
    try turn(.faceUp)
    screen = try terminal.waitFor("raw (0.00, 0.00, -9.81)")
    screen = try terminal.waitFor("still 1.", after: "Step 3 of 3")
    try terminal.press("Enter")
    screen = try terminal.waitFor("calibrate exited 0")
    #expect(screen.contains("Mount matrix: 0, 1, 0; -1, 0, 0; 0, 0, 1"), "\(screen)")
    #expect(screen.contains("a proper rotation"), "\(screen)")
    #expect(screen.contains("ACCEL_MOUNT_MATRIX=0, 1, 0; -1, 0, 0; 0, 0, 1"), "\(screen)")
    #expect(screen.contains("sensor:modalias:acpi:MXC6655*"), "\(screen)")
    #expect(screen.contains("mount-matrix = 0, 1, 0; -1, 0, 0; 0, 0, 1"), "\(screen)")
    // Today upright reads as left-up; with the new matrix as normal.
    let upright = screen.split(separator: "\n").first { $0.hasPrefix("  normal ") } ?? ""
    #expect(upright.contains(": normal") && upright.contains("(today: left-up)"), "\(screen)")
    withExtendedLifetime(live) {}
  }
}
