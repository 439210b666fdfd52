import Glibc
import OrientCore
import TestSupport
import TestThreads
import Testing

/// `orientd rotate --suggest` against real parts: orientd on an emulated accelerometer, a real
/// headless sway, and a stand-in desktop notification server on a private session bus
/// (Tests/Fixtures/dbus/notification_server.py, Gio) that logs every call and can press a
/// notification's button.
@Suite(
  .ownThreads,
  .serialized,
  .enabled(
    if: runsInCI || (UMockdevScenario.isAvailable && HeadlessSway.isAvailable),
    "umockdev or sway is not installed"))
struct SuggestTests {
  /// The session bus with the notification server on it.
  final class Desktop {
    let bus: PrivateBus
    let server: ChildProcess

    init() throws {
      bus = try PrivateBus(openPolicy: true)
      server = try ChildProcess(
        [
          "/usr/bin/python3", "\(Built.packageRoot)/Tests/Fixtures/dbus/notification_server.py",
          bus.address,
        ], outputDirectory: bus.directory.path)
      let server = server
      guard waitFor(timeout: 15, { server.standardOutput.contains("ready") }) else {
        throw TestFailure("notification server did not start: \(server.standardError)")
      }
    }

    /// The calls the server received: `notify ID|SUMMARY|BODY|ACTIONS|TIMEOUT`, `close ID`.
    var calls: [String] {
      server.standardOutput.split(separator: "\n").map(String.init).filter { $0 != "ready" }
    }

    /// Presses `action` on notification `id`, as a user clicking it.
    func invoke(_ id: String, _ action: String) throws {
      let result = try ChildProcess.run(
        [
          "busctl", "--address=\(bus.address)", "call", "org.freedesktop.Notifications",
          "/org/freedesktop/Notifications", "org.orientd.Test", "Invoke", "us", id, action,
        ], outputDirectory: bus.directory.path, timeout: 20)
      guard result.status == 0 else { throw TestFailure("busctl: \(result.stderr)") }
    }
  }

  func start(
    _ fixture: DaemonFixture, _ sway: HeadlessSway, _ desktop: Desktop, state: TemporaryDirectory,
    timeout: String, locked: Bool = true
  ) throws -> ChildProcess {
    var environment = fixture.bus.environment.merging(sway.environment) { $1 }
    environment["DBUS_SESSION_BUS_ADDRESS"] = desktop.bus.address
    environment["XDG_RUNTIME_DIR"] = state.path
    environment["XDG_STATE_HOME"] = state.file("state")
    environment["XDG_CURRENT_DESKTOP"] = "sway"
    mkdir(state.file("state"), 0o700)
    mkdir(state.file("state/orientd"), 0o700)
    try writeFile(state.file("state/orientd/rotation-lock"), locked ? "locked\n" : "unlocked\n")
    let rotate = try ChildProcess(
      [
        try Built.executable("orientd"), "rotate", "-v", "--output", "HEADLESS-1", "--settle", "0",
        "--suggest", "--suggest-timeout", timeout,
      ], environment: environment, outputDirectory: fixture.bus.directory.path)
    #expect(
      waitFor(timeout: 15) { rotate.standardError.contains("following org.orientd.Orientation1") },
      "\(rotate.standardError)")
    return rotate
  }

  @Test func aSuggestionAcceptedTurnsOnceAndTheLockStays() throws {
    let fixture = try DaemonFixture()
    let sway = try HeadlessSway()
    let desktop = try Desktop()
    let state = try TemporaryDirectory("suggest")
    let rotate = try start(fixture, sway, desktop, state: state, timeout: "60")
    try fixture.turn(.leftUp)
    #expect(
      waitFor(timeout: 15) { desktop.calls.contains { $0.hasPrefix("notify ") } },
      "\(desktop.calls)\n\(rotate.standardError)")
    let notify = desktop.calls.first { $0.hasPrefix("notify ") } ?? ""
    let fields = notify.dropFirst("notify ".count).split(separator: "|").map(String.init)
    try #require(fields.count == 5, "\(notify)")
    #expect(fields[1] == "Rotate the screen?")
    #expect(fields[2].contains("with its left edge up"))
    #expect(fields[3] == "rotate,Rotate" && fields[4] == "60000")
    #expect(try sway.transform() == "normal", "locked: nothing turned before the answer")

    try desktop.invoke(fields[0], "rotate")
    #expect(waitFor(timeout: 10) { (try? sway.transform()) == "270" }, "\(rotate.standardError)")
    #expect(rotate.standardError.contains("rotation suggestion accepted: turning to left-up once"))
    let status = try ChildProcess.run(
      [try Built.executable("orientd"), "rotate", "--lock-status"],
      environment: ["XDG_RUNTIME_DIR": state.path, "XDG_STATE_HOME": state.file("state")],
      outputDirectory: state.path, timeout: 20)
    #expect(status.stdout == "locked\n", "the lock stays on")

    // Back upright: the screen shows left-up, so a new suggestion (for normal) is offered.
    try fixture.turn(.normal)
    #expect(
      waitFor(timeout: 15) { desktop.calls.filter { $0.hasPrefix("notify ") }.count == 2 },
      "\(desktop.calls)")
    #expect(try sway.transform() == "270")
    rotate.signal(SIGTERM)
    #expect(rotate.wait(timeout: 10) == 0)
  }

  @Test func theSuggestionGoesAwayWhenTheDeviceTurnsBackOrInTime() throws {
    let fixture = try DaemonFixture()
    let sway = try HeadlessSway()
    let desktop = try Desktop()
    let state = try TemporaryDirectory("suggest")
    let rotate = try start(fixture, sway, desktop, state: state, timeout: "60")
    try fixture.turn(.rightUp)
    #expect(waitFor(timeout: 15) { desktop.calls.contains { $0.hasPrefix("notify 1|") } })
    try fixture.turn(.normal)
    #expect(
      waitFor(timeout: 15) { desktop.calls.contains("close 1") },
      "turned back: \(desktop.calls)\n\(rotate.standardError)")
    #expect(try sway.transform() == "normal")
    rotate.signal(SIGTERM)
    #expect(rotate.wait(timeout: 10) == 0)

    // A short timeout: the offer is taken down by orientd rotate itself.
    let quick = try start(fixture, sway, desktop, state: state, timeout: "1")
    try fixture.turn(.bottomUp)
    #expect(waitFor(timeout: 15) { desktop.calls.contains { $0.hasPrefix("notify 2|") } })
    #expect(
      waitFor(timeout: 15) {
        quick.standardError.contains("rotation suggestion withdrawn: no answer within 1 s")
      }, "\(quick.standardError)")
    #expect(try sway.transform() == "normal")
    quick.signal(SIGTERM)
    #expect(quick.wait(timeout: 10) == 0)
  }

  /// The daemon with `[face] enabled`, a file camera showing Grace Hopper upright (as when
  /// lying on one side in bed) and dbusmock's logind with an unlocked session: a turn the face
  /// keeps back (`SuggestedOrientation`) is offered unlocked too; accepted, it holds until the
  /// device turns back.
  @Test(
    .enabled(
      if: runsInCI || (DBusMock.isAvailable && access(Self.hopper, R_OK) == 0),
      "python3-dbusmock or python-matplotlib-data is not installed"))
  func aTurnAFaceKeptBackIsOfferedAndHoldsOnceAccepted() throws {
    let bus = try PrivateBus(openPolicy: true)
    let logind = try DBusMock.logindWithSession(bus: bus)
    let face = try TemporaryDirectory("face-suggest")
    mkdir(face.file("camera"), 0o755)
    let hopperCopy = try ChildProcess.run(
      ["cp", Self.hopper, face.file("camera/0001.jpg")], outputDirectory: face.path)
    try #require(hopperCopy.status == 0)
    let config = face.file("orientd.conf")
    try writeFile(
      config, "[face]\nenabled = yes\ncamera = file:\(face.file("camera"))\ntimeout = 5000\n")
    let fixture = try DaemonFixture(["--config", config], bus: bus)
    let sway = try HeadlessSway()
    let desktop = try Desktop()
    let state = try TemporaryDirectory("suggest")
    let rotate = try start(fixture, sway, desktop, state: state, timeout: "60", locked: false)
    try fixture.turn(.leftUp)
    #expect(
      waitFor(timeout: 30) { desktop.calls.contains { $0.hasPrefix("notify ") } },
      "\(desktop.calls)\n\(rotate.standardError)\n\(fixture.log)")
    #expect(fixture.log.contains("face: kept normal, not left-up"))
    #expect(try sway.transform() == "normal", "the face kept the screen upright")
    let notify = desktop.calls.first { $0.hasPrefix("notify ") } ?? ""
    let id = String(notify.dropFirst("notify ".count).prefix { $0 != "|" })
    #expect(notify.contains("with its left edge up"), "\(notify)")
    try desktop.invoke(id, "rotate")
    #expect(waitFor(timeout: 10) { (try? sway.transform()) == "270" }, "\(rotate.standardError)")
    #expect(fixture.waitForPolls(5))
    #expect(try sway.transform() == "270", "accepted: it holds while the device stays turned")
    try fixture.turn(.normal)
    #expect(
      waitFor(timeout: 15) { (try? sway.transform()) == "normal" },
      "turned back: \(rotate.standardError)")
    rotate.signal(SIGTERM)
    #expect(rotate.wait(timeout: 10) == 0)
    withExtendedLifetime(logind) {}
  }

  static let hopper = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"
}
