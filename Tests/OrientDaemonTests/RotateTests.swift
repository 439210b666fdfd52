import Glibc
import JSON
import OrientCore
import OrientWire
import TestSupport
import TestThreads
import Testing

/// `orientd rotate` against real parts: orientd on an emulated accelerometer on a private bus,
/// a real headless sway, and the transform read back with `swaymsg -t get_outputs`.
@Suite(
  .ownThreads,
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
      waitFor(timeout: 15) { rotate.standardError.contains("following \(Wire.orientdName)") },
      "\(rotate.standardError)")
    // sway spells transforms clockwise: left-up (wl_output 90, xrandr left) is its 270.
    for (orientation, transform, wayland) in [
      (Orientation.leftUp, "270", "90"), (.bottomUp, "180", "180"), (.rightUp, "90", "270"),
      (.normal, "normal", "normal"),
    ] {
      try fixture.turn(orientation)
      #expect(
        waitFor(timeout: 10) { (try? sway.transform()) == transform },
        "\(orientation): \(rotate.standardError)")
      #expect(
        waitFor(timeout: 5) {
          rotate.standardOutput.lines.last.flatMap { try? JSONValue(parsing: $0) }?["transform"]
            == .string(wayland)
        }, "\(rotate.standardOutput)")
    }
    let last = try JSONValue(parsing: rotate.standardOutput.lines.last ?? "")
    #expect(last["orientation"] == .string("normal"))
    #expect(last["output"] == .string("HEADLESS-1"))
    rotate.signal(SIGTERM)
    #expect(rotate.wait(timeout: 10) == 0)
  }
}

extension RotateTests {
  @Test func hooksRunBeforeAndAfterWithTheChangeInTheirEnvironment() throws {
    let fixture = try DaemonFixture()
    let sway = try HeadlessSway()
    let state = try TemporaryDirectory("rotate")
    let log = state.file("hooks.log")
    // Each hook records its stage, its environment and the transform sway has at that moment.
    let record = { (stage: String) in
      "echo \(stage) \"$ORIENTD_HOOK|$ORIENTATION|$ROTATION|$PREVIOUS_ORIENTATION|$OUTPUT|"
        + "$(swaymsg -r -t get_outputs | jq -r '.[0].transform')\" >> '\(log)'"
    }
    let rotate = try self.rotate(
      fixture, sway,
      [
        "--output", "HEADLESS-1", "--settle", "0", "--exec-before", record("B"), "--exec",
        record("A"),
      ], state: state)
    #expect(waitFor(timeout: 15) { rotate.standardError.contains("following ") })
    try fixture.turn(.leftUp)
    #expect(waitFor(timeout: 10) { readFile(log).lines.count == 2 }, "\(rotate.standardError)")
    try fixture.turn(.bottomUp)
    #expect(waitFor(timeout: 10) { readFile(log).lines.count == 4 }, "\(rotate.standardError)")
    #expect(
      readFile(log).lines == [
        "B before|left-up|90||HEADLESS-1|normal",
        "A after|left-up|90||HEADLESS-1|270",
        "B before|bottom-up|180|left-up|HEADLESS-1|270",
        "A after|bottom-up|180|left-up|HEADLESS-1|180",
      ])
  }

  /// Hooks are children watched on the loop: while a before hook runs, the loop answers a lock
  /// request and the output waits; an after hook does not hold up the next turn, and after
  /// hooks still run one at a time, in turn order.
  @Test func aSlowHookNeitherBlocksTheLoopNorHoldsUpTheNextTurn() throws {
    let fixture = try DaemonFixture()
    let sway = try HeadlessSway()
    let state = try TemporaryDirectory("rotate")
    let log = state.file("hooks.log")
    // Each hook records its stage and sway's transform, then waits until its gate file exists.
    let slow = { (stage: String, gate: String) in
      "echo \(stage) \"$ORIENTATION|$(swaymsg -r -t get_outputs | jq -r '.[0].transform')\" "
        + ">> '\(log)'; until [ -e '\(state.file(gate))' ]; do sleep 0.05; done; "
        + "echo \(stage) $ORIENTATION done >> '\(log)'"
    }
    let rotate = try self.rotate(
      fixture, sway,
      [
        "--output", "HEADLESS-1", "--settle", "0", "--exec-before", slow("B", "gate-before"),
        "--exec", slow("A", "gate-after"),
      ], state: state)
    #expect(waitFor(timeout: 15) { rotate.standardError.contains("following ") })
    try fixture.turn(.leftUp)
    #expect(
      waitFor(timeout: 10) { readFile(log).lines == ["B left-up|normal"] },
      "\(readFile(log))\n\(rotate.standardError)")

    var environment = fixture.bus.environment
    environment["XDG_RUNTIME_DIR"] = state.path
    environment["XDG_STATE_HOME"] = state.file("state")
    let status = try ChildProcess.run(
      [try Built.executable("orientd"), "rotate", "--lock-status"], environment: environment,
      outputDirectory: state.path, timeout: 20)
    #expect(status.status == 0 && status.stdout == "unlocked\n", "the loop was blocked: \(status)")
    #expect(try sway.transform() == "normal", "the output turned before its before hook ended")

    try writeFile(state.file("gate-before"), "")
    #expect(waitFor(timeout: 10) { (try? sway.transform()) == "270" }, "\(rotate.standardError)")
    #expect(waitFor(timeout: 10) { readFile(log).lines.contains("A left-up|270") })

    // The after hook of left-up still waits; the next turn goes ahead without it.
    try fixture.turn(.bottomUp)
    #expect(waitFor(timeout: 10) { (try? sway.transform()) == "180" }, "\(rotate.standardError)")
    #expect(!readFile(log).lines.contains { $0.hasPrefix("A bottom-up") })
    #expect(!readFile(log).lines.contains("A left-up done"))

    try writeFile(state.file("gate-after"), "")
    #expect(waitFor(timeout: 10) { readFile(log).lines.contains("A bottom-up done") })
    let lines = readFile(log).lines
    #expect(
      lines.filter { $0.hasPrefix("A ") } == [
        "A left-up|270", "A left-up done", "A bottom-up|180", "A bottom-up done",
      ], "\(lines)")
    #expect(
      lines.filter { $0.hasPrefix("B ") } == [
        "B left-up|normal", "B left-up done", "B bottom-up|270", "B bottom-up done",
      ], "\(lines)")
  }

  @Test func lockedRotationWaitsAndUnlockAppliesTheCurrentOrientation() throws {
    let fixture = try DaemonFixture()
    let sway = try HeadlessSway()
    let state = try TemporaryDirectory("rotate")
    let rotate = try self.rotate(fixture, sway, ["--output", "HEADLESS-1"], state: state)
    #expect(waitFor(timeout: 15) { rotate.standardError.contains("following ") })
    var environment = fixture.bus.environment
    environment["XDG_RUNTIME_DIR"] = state.path
    environment["XDG_STATE_HOME"] = state.file("state")
    let orientd = try Built.executable("orientd")
    let lock = try ChildProcess.run(
      [orientd, "rotate", "--lock"], environment: environment,
      outputDirectory: state.path)
    #expect(lock.status == 0 && lock.stdout == "locked\n", "\(lock)")
    #expect(readFile(state.file("state/orientd/rotation-lock")) == "locked\n")

    try fixture.turn(.leftUp)
    #expect(
      waitFor(timeout: 10) { rotate.standardError.contains("locked: not turning to left-up") },
      "\(rotate.standardError)")
    #expect(try sway.transform() == "normal")

    let toggle = try ChildProcess.run(
      [orientd, "rotate", "--toggle-lock"], environment: environment,
      outputDirectory: state.path)
    #expect(toggle.stdout == "unlocked\n", "\(toggle)")
    #expect(waitFor(timeout: 10) { (try? sway.transform()) == "270" }, "\(rotate.standardError)")
    #expect(readFile(state.file("state/orientd/rotation-lock")) == "unlocked\n")

    // Without a running instance the request changes the saved state for the next start.
    rotate.signal(SIGTERM)
    #expect(rotate.wait(timeout: 10) == 0)
    let offline = try ChildProcess.run(
      [orientd, "rotate", "--lock"], environment: environment, outputDirectory: state.path)
    #expect(offline.status == 0 && offline.stdout == "locked\n")
    #expect(offline.stderr.contains("no orientd rotate is running"))
    let restarted = try self.rotate(fixture, sway, ["--output", "HEADLESS-1"], state: state)
    #expect(waitFor(timeout: 15) { restarted.standardError.contains("rotation locked") })
  }

  @Test func aWobbleWithinTheSettleTimeTurnsOnce() throws {
    let fixture = try DaemonFixture()
    let sway = try HeadlessSway()
    let state = try TemporaryDirectory("rotate")
    let rotate = try self.rotate(
      fixture, sway, ["--output", "HEADLESS-1", "--settle", "4000"], state: state)
    #expect(waitFor(timeout: 15) { rotate.standardError.contains("following ") })
    try fixture.turn(.leftUp)
    #expect(waitFor(timeout: 10) { (try? sway.transform()) == "270" })
    // Back to normal and to left-up again while settling: orientd reports both changes...
    try fixture.turn(.normal)
    #expect(waitFor(timeout: 10) { (try? fixture.property("Orientation")) == "s \"normal\"" })
    try fixture.turn(.leftUp)
    #expect(waitFor(timeout: 10) { (try? fixture.property("Orientation")) == "s \"left-up\"" })
    // ...and once settled, the screen has turned once.
    #expect(
      waitFor(timeout: 10) { rotate.standardError.contains("settled; latest orientation left-up") },
      "\(rotate.standardError)")
    #expect(try sway.transform() == "270")
    #expect(rotate.standardOutput.lines.count == 1, "\(rotate.standardOutput)")
  }

  @Test func errorsSayWhatIsMissing() throws {
    let fixture = try DaemonFixture()
    let orientd = try Built.executable("orientd")
    let state = try TemporaryDirectory("rotate")
    var environment = fixture.bus.environment
    environment["XDG_RUNTIME_DIR"] = state.path
    for name in ["SWAYSOCK", "WAYLAND_DISPLAY", "DISPLAY", "XDG_CURRENT_DESKTOP"] {
      environment[name] = ""
    }
    let bare = try ChildProcess.run(
      ["env", "-u", "SWAYSOCK", "-u", "WAYLAND_DISPLAY", "-u", "DISPLAY", orientd, "rotate"],
      environment: environment, outputDirectory: state.path)
    #expect(bare.status == 69)
    #expect(bare.stderr.contains("no compositor or X server to talk to"), "\(bare.stderr)")

    environment["XDG_CURRENT_DESKTOP"] = "GNOME"
    let gnome = try ChildProcess.run(
      [orientd, "rotate"], environment: environment, outputDirectory: state.path)
    #expect(gnome.status == 0)
    #expect(gnome.stderr.contains("GNOME (mutter) turns the screen by itself"))

    let sway = try HeadlessSway()
    environment["XDG_CURRENT_DESKTOP"] = "sway"
    let unknown = try ChildProcess.run(
      [orientd, "rotate", "--output", "eDP-9"],
      environment: environment.merging(sway.environment) { $1 },
      outputDirectory: state.path)
    #expect(unknown.status == 69)
    #expect(
      unknown.stderr.contains("no output named 'eDP-9' (there are: HEADLESS-1)"),
      "\(unknown.stderr)")
    let noPanel = try ChildProcess.run(
      [orientd, "rotate"], environment: environment.merging(sway.environment) { $1 },
      outputDirectory: state.path)
    #expect(noPanel.status == 69)
    #expect(noPanel.stderr.contains("no active built-in panel"), "\(noPanel.stderr)")
  }
}

/// orientd rotate is a separate program so the root daemon maps no display library.
@Suite(.ownThreads) struct RotateProgramTests {
  @Test func theDaemonBinaryLinksNoX11OrXcbLibrary() throws {
    let state = try TemporaryDirectory("rotate")
    let daemon = try ChildProcess.run(
      ["ldd", try Built.executable("orientd")], outputDirectory: state.path)
    #expect(daemon.status == 0)
    #expect(daemon.stdout.contains("libdbus-1"), "\(daemon.stdout)")
    // libevdev stays: the daemon reads input-subsystem accelerometers and tablet-mode switches
    // and makes its own uinput switch on convertibles.
    #expect(daemon.stdout.contains("libevdev"), "\(daemon.stdout)")
    for library in ["libX11", "libxcb", "libXi.", "libXrandr", "libdrm"] {
      #expect(!daemon.stdout.contains(library), "orientd links \(library):\n\(daemon.stdout)")
    }
    let rotate = try ChildProcess.run(
      ["ldd", try Built.executable("orientd-rotate")], outputDirectory: state.path)
    #expect(rotate.stdout.contains("libXrandr"), "\(rotate.stdout)")
  }

  /// Without orientd-rotate beside it or in ../libexec/orientd, orientd says what to install.
  @Test func aMissingOrientdRotateIsReported() throws {
    let state = try TemporaryDirectory("rotate")
    let copy = state.file("orientd")
    let cp = try ChildProcess.run(
      ["cp", try Built.executable("orientd"), copy], outputDirectory: state.path)
    #expect(cp.status == 0)
    let run = try ChildProcess.run([copy, "rotate", "--lock-status"], outputDirectory: state.path)
    #expect(run.status == 69)
    #expect(run.stderr.contains("orientd-rotate is not installed"), "\(run.stderr)")
    #expect(run.stderr.contains("apt install orientd-rotate"), "\(run.stderr)")
  }
}

extension RotateTests {
  @Test func waitsForTheServiceAndTurnsWhenItAppears() throws {
    let bus = try PrivateBus()
    let sway = try HeadlessSway()
    let state = try TemporaryDirectory("rotate")
    var environment = bus.environment.merging(sway.environment) { $1 }
    environment["XDG_RUNTIME_DIR"] = state.path
    environment["XDG_CURRENT_DESKTOP"] = "sway"
    let rotate = try ChildProcess(
      [try Built.executable("orientd"), "rotate", "--output", "HEADLESS-1", "--settle", "0"],
      environment: environment, outputDirectory: state.path)
    #expect(
      waitFor(timeout: 15) {
        rotate.standardError.contains("waiting for \(Wire.orientdName)")
      },
      "\(rotate.standardError)")
    let fixture = try DaemonFixture(bus: bus)
    #expect(waitFor(timeout: 15) { rotate.standardError.contains("following ") })
    try fixture.turn(.rightUp)
    #expect(waitFor(timeout: 10) { (try? sway.transform()) == "90" }, "\(rotate.standardError)")
  }
}

extension RotateTests {
  @Test(.enabled(if: runsInCI || RotatingXServer.isAvailable, "Xephyr/xrandr/xinput missing"))
  func x11RotatesTheOutputAndTheDeviceMatrix() throws {
    let fixture = try DaemonFixture()
    let x = try RotatingXServer()
    let state = try TemporaryDirectory("rotate")
    var environment = fixture.bus.environment
    environment["DISPLAY"] = x.display
    environment["XDG_RUNTIME_DIR"] = state.path
    environment["XDG_CURRENT_DESKTOP"] = "i3"
    // Xephyr's pointer stands in for a touchscreen: a real XInput slave pointer with the
    // matrix property (no evdev devices in a nested server).
    let device = "Xephyr virtual mouse"
    let rotate = try ChildProcess(
      [
        try Built.executable("orientd"), "rotate", "-v", "--backend", "x11", "--output",
        "default", "--touch", device, "--touch-only", "--settle", "0", "--json",
      ], environment: environment, outputDirectory: state.path)
    #expect(waitFor(timeout: 15) { rotate.standardError.contains("following ") })
    #expect(try x.rotation() == "normal")
    for (orientation, rotation, matrix) in [
      (Orientation.leftUp, "left", [0.0, -1, 1, 1, 0, 0, 0, 0, 1]),
      (.bottomUp, "inverted", [-1, 0, 1, 0, -1, 1, 0, 0, 1]),
      (.rightUp, "right", [0, 1, 0, -1, 0, 1, 0, 0, 1]),
      (.normal, "normal", [1, 0, 0, 0, 1, 0, 0, 0, 1]),
    ] {
      try fixture.turn(orientation)
      #expect(
        waitFor(timeout: 10) {
          rotate.standardOutput.lines.last.flatMap { try? JSONValue(parsing: $0) }?["orientation"]
            == .string(orientation.rawValue)
        }, "\(orientation): \(rotate.standardError)")
      let line = try JSONValue(parsing: rotate.standardOutput.lines.last ?? "")
      #expect(line["touch"] == .array([.string(device)]))
      #expect(try x.rotation() == rotation)
      let read = try x.matrix(device)
      #expect(read == matrix, "\(orientation): \(read)")
    }
    // The screen follows the output: portrait after a quarter turn was 800x1280.
    rotate.signal(SIGTERM)
    #expect(rotate.wait(timeout: 10) == 0)
  }
}

/// udev's view of a laptop's input devices for `umockdev-run -d`: an I2C-HID touchscreen
/// (ID_INPUT_TOUCHSCREEN), a pen tablet bound to another output (WL_OUTPUT), a keyboard.
let touchDevices = """
  P: /devices/pci0000:00/0000:00:15.0/i2c_designware.0/i2c-1/i2c-ELAN9008:00/0018:04F3:2C82.0001/input/input12/event12
  N: input/event12
  E: DEVNAME=/dev/input/event12
  E: ID_INPUT=1
  E: ID_INPUT_TOUCHSCREEN=1
  E: MAJOR=13
  E: MINOR=76
  E: SUBSYSTEM=input
  A: dev=13:76
  L: device=../../input12

  P: /devices/pci0000:00/0000:00:15.0/i2c_designware.0/i2c-1/i2c-ELAN9008:00/0018:04F3:2C82.0001/input/input12
  E: ID_INPUT=1
  E: ID_INPUT_TOUCHSCREEN=1
  E: NAME="ELAN9008:00 04F3:2C82"
  E: SUBSYSTEM=input
  A: name=ELAN9008:00 04F3:2C82
  A: id/vendor=04f3
  A: id/product=2c82

  P: /devices/pci0000:00/0000:00:14.0/usb1/1-3/1-3:1.0/0003:056A:0357.0002/input/input20/event20
  N: input/event20
  E: DEVNAME=/dev/input/event20
  E: ID_INPUT=1
  E: ID_INPUT_TABLET=1
  E: WL_OUTPUT=HDMI-A-1
  E: MAJOR=13
  E: MINOR=84
  E: SUBSYSTEM=input
  A: dev=13:84
  L: device=../../input20

  P: /devices/pci0000:00/0000:00:14.0/usb1/1-3/1-3:1.0/0003:056A:0357.0002/input/input20
  E: NAME="Wacom Intuos Pro M Pen"
  E: SUBSYSTEM=input
  A: name=Wacom Intuos Pro M Pen
  A: id/vendor=056a
  A: id/product=0357

  P: /devices/platform/i8042/serio0/input/input2/event2
  N: input/event2
  E: DEVNAME=/dev/input/event2
  E: ID_INPUT=1
  E: ID_INPUT_KEY=1
  E: MAJOR=13
  E: MINOR=66
  E: SUBSYSTEM=input
  A: dev=13:66
  L: device=../../input2

  P: /devices/platform/i8042/serio0/input/input2
  E: NAME="AT Translated Set 2 keyboard"
  E: SUBSYSTEM=input
  A: name=AT Translated Set 2 keyboard

  """

extension RotateTests {
  /// Touch devices are found by their udev properties: the touchscreen is mapped to the output
  /// with sway's identifier for it (vendor:product:name); the pen bound to HDMI-A-1 and the
  /// keyboard are left alone; sway accepts the mapping before the output turns.
  @Test func touchscreensFoundByUdevAreMappedToTheOutput() throws {
    let fixture = try DaemonFixture()
    let sway = try HeadlessSway()
    let state = try TemporaryDirectory("rotate")
    let devices = state.file("touch.umockdev")
    try writeFile(devices, touchDevices)
    var environment = fixture.bus.environment.merging(sway.environment) { $1 }
    environment["XDG_RUNTIME_DIR"] = state.path
    environment["XDG_CURRENT_DESKTOP"] = "sway"
    let rotate = try ChildProcess(
      [
        "umockdev-run", "-d", devices, "--", try Built.executable("orientd"), "rotate", "-v",
        "--output", "HEADLESS-1", "--settle", "0", "--json", "--touch", "extra-pen",
      ], environment: environment, outputDirectory: state.path)
    #expect(
      waitFor(timeout: 15) { rotate.standardError.contains("following ") },
      "\(rotate.standardError)")
    #expect(
      rotate.standardError.contains(
        "touch: ELAN9008:00 04F3:2C82 (touchscreen), extra-pen (named)"),
      "\(rotate.standardError)")
    try fixture.turn(.leftUp)
    #expect(waitFor(timeout: 10) { (try? sway.transform()) == "270" }, "\(rotate.standardError)")
    #expect(
      waitFor(timeout: 5) {
        rotate.standardOutput.lines.last.flatMap { try? JSONValue(parsing: $0) }?["touch"]
          == .array([.string("1267:11394:ELAN9008:00_04F3:2C82"), .string("extra-pen")])
      }, "\(rotate.standardOutput)")
  }
}

extension RotateTests {
  /// A panel mounted right-up (portrait-native in a landscape device): upright needs the
  /// panel's own quarter turn, and the device's turns are added to it.
  @Test func aPortraitNativePanelIsComposedIn() throws {
    let fixture = try DaemonFixture()
    let sway = try HeadlessSway()
    let state = try TemporaryDirectory("rotate")
    let rotate = try self.rotate(
      fixture, sway, ["--output", "HEADLESS-1", "--settle", "0", "--natural", "right-up"],
      state: state)
    // Upright at start: wl_output 270, which sway spells 90.
    #expect(waitFor(timeout: 15) { (try? sway.transform()) == "90" }, "\(rotate.standardError)")
    try fixture.turn(.leftUp)  // 90 + 270 = 0
    #expect(waitFor(timeout: 10) { (try? sway.transform()) == "normal" }, "\(rotate.standardError)")
  }
}

/// An intel-vbtn switch device ("Intel Virtual Switches", EV_SW with SW_TABLET_MODE, off) for
/// umockdev-run: the udev record, the evdev ioctls libevdev asks (answered with the sizes
/// libevdev 1.13 uses, as Tests/SessionTests/Fixtures/make-key-fixtures.py explains), and its
/// events in evemu's format: tablet mode on at 0.5 s, off at `offAt` s.
enum TabletSwitch {
  static let node = "/dev/input/event7"
  static let record = """
    P: /devices/platform/INT33D6:00/input/input7/event7
    N: input/event7
    E: DEVNAME=/dev/input/event7
    E: ID_INPUT=1
    E: ID_INPUT_SWITCH=1
    E: MAJOR=13
    E: MINOR=71
    E: SUBSYSTEM=input
    A: dev=13:71
    L: device=../../input7

    P: /devices/platform/INT33D6:00/input/input7
    E: EV=21
    E: ID_INPUT=1
    E: ID_INPUT_SWITCH=1
    E: NAME="Intel Virtual Switches"
    E: SUBSYSTEM=input
    A: capabilities/ev=21
    A: capabilities/sw=2
    A: name=Intel Virtual Switches

    P: /devices/platform/INT33D6:00
    E: DRIVER=intel-vbtn
    E: SUBSYSTEM=platform

    """

  /// The ioctls: a switch device with SW_TABLET_MODE (bit 1).
  static let ioctls = EmulatedSwitchDevice.ioctls(
    name: "Intel Virtual Switches", id: "1900000001000000", switchBits: "02")

  /// The same switch as devices to add to a live testbed: the platform device (present from
  /// the start), and its input device and event node (hotplugged). `number` and `name` make
  /// others like it.
  static func devices(number: Int = 7, name: String = "Intel Virtual Switches") -> (
    platform: UMockdevDevice, input: UMockdevDevice, event: UMockdevDevice
  ) {
    let platform = UMockdevDevice(
      devpath: "/devices/platform/INT33D6:00",
      properties: [("SUBSYSTEM", "platform"), ("DRIVER", "intel-vbtn")])
    let input = UMockdevDevice(
      devpath: "\(platform.devpath)/input/input\(number)",
      properties: [("SUBSYSTEM", "input"), ("ID_INPUT", "1"), ("ID_INPUT_SWITCH", "1")],
      attributes: [("name", "\(name)\n"), ("capabilities/sw", "2\n")])
    let event = UMockdevDevice(
      devpath: "\(input.devpath)/event\(number)",
      properties: [
        ("SUBSYSTEM", "input"), ("DEVNAME", "/dev/input/event\(number)"), ("ID_INPUT", "1"),
        ("ID_INPUT_SWITCH", "1"), ("MAJOR", "13"), ("MINOR", "\(64 + number)"),
      ], attributes: [("dev", "13:\(64 + number)\n")], node: "input/event\(number)")
    return (platform, input, event)
  }

  static func events(offAt: Double) -> String {
    """
    E: 0.500000 0005 0001 1
    E: 0.500000 0000 0000 0
    E: \(String(offAt)) 0005 0001 0
    E: \(String(offAt)) 0000 0000 0

    """
  }
}

extension RotateTests {
  /// `--when tablet`: turns while SW_TABLET_MODE is on; when it goes off the screen goes back
  /// upright (a laptop is typed on upright) and stays there whatever the sensor says.
  @Test func onlyInTabletModeWithWhenTablet() throws {
    let fixture = try DaemonFixture()
    let sway = try HeadlessSway()
    let state = try TemporaryDirectory("rotate")
    try writeFile(state.file("switch.umockdev"), TabletSwitch.record)
    try writeFile(state.file("switch.ioctl"), TabletSwitch.ioctls)
    try writeFile(state.file("switch.events"), TabletSwitch.events(offAt: 8))
    var environment = fixture.bus.environment.merging(sway.environment) { $1 }
    environment["XDG_RUNTIME_DIR"] = state.path
    environment["XDG_CURRENT_DESKTOP"] = "sway"
    let rotate = try ChildProcess(
      [
        "umockdev-run", "-d", state.file("switch.umockdev"),
        "-i", "\(TabletSwitch.node)=\(state.file("switch.ioctl"))",
        "-e", "\(TabletSwitch.node)=\(state.file("switch.events"))", "--",
        try Built.executable("orientd"), "rotate", "-v", "--output", "HEADLESS-1", "--settle",
        "0", "--when", "tablet",
      ], environment: environment, outputDirectory: state.path)
    #expect(
      waitFor(timeout: 15) {
        rotate.standardError.contains("following ")
          && rotate.standardError.contains("tablet mode on")
      }, "\(rotate.standardError)")
    try fixture.turn(.leftUp)
    #expect(waitFor(timeout: 6) { (try? sway.transform()) == "270" }, "\(rotate.standardError)")
    #expect(
      waitFor(timeout: 15) { rotate.standardError.contains("tablet mode off") },
      "\(rotate.standardError)")
    #expect(
      waitFor(timeout: 10) { (try? sway.transform()) == "normal" }, "\(rotate.standardError)")
    try fixture.turn(.bottomUp)
    #expect(
      waitFor(timeout: 10) {
        rotate.standardError.contains("not in tablet mode: not turning to bottom-up")
      }, "\(rotate.standardError)")
    #expect(try sway.transform() == "normal")
  }
}

extension RotateTests {
  /// A turn the X server cannot take (Xephyr's screen is at most 1600x1200, a turned 1280x800
  /// needs 800x1280) changes nothing: neither the rotation nor the touch matrix.
  @Test(.enabled(if: runsInCI || RotatingXServer.isAvailable, "Xephyr/xrandr/xinput missing"))
  func x11TurnThatCannotFitChangesNothing() throws {
    let fixture = try DaemonFixture()
    let x = try RotatingXServer(size: "1280x800")
    let state = try TemporaryDirectory("rotate")
    var environment = fixture.bus.environment
    environment["DISPLAY"] = x.display
    environment["XDG_RUNTIME_DIR"] = state.path
    environment["XDG_CURRENT_DESKTOP"] = "i3"
    let device = "Xephyr virtual mouse"
    let rotate = try ChildProcess(
      [
        try Built.executable("orientd"), "rotate", "--output", "default", "--touch", device,
        "--touch-only", "--settle", "0",
      ], environment: environment, outputDirectory: state.path)
    #expect(waitFor(timeout: 15) { rotate.standardError.contains("following ") })
    try fixture.turn(.leftUp)
    #expect(
      waitFor(timeout: 10) { rotate.standardError.contains("this X server allows at most") },
      "\(rotate.standardError)")
    #expect(rotate.standardError.contains("nothing changed"))
    #expect(try x.rotation() == "normal")
    #expect(try x.matrix(device) == [1, 0, 0, 0, 1, 0, 0, 0, 1])
    #expect(rotate.isRunning)
  }

  @Test func onceAppliesTheCurrentOrientationAndExits() throws {
    let fixture = try DaemonFixture()
    let sway = try HeadlessSway()
    let state = try TemporaryDirectory("rotate")
    // Unclaimed, orientd does not read the sensor; the claim's first reading is this one.
    try fixture.turn(.bottomUp)
    let once = try self.rotate(fixture, sway, ["--output", "HEADLESS-1", "--once"], state: state)
    #expect(once.wait(timeout: 15) == 0, "\(once.standardError)")
    #expect(try sway.transform() == "180")
  }
}

extension RotateTests {
  /// `--when tablet` with no switch at the start: a switch that appears later (orientd's own
  /// uinput switch made after a restart, a keyboard dock) is followed through udev's input
  /// events, and one that goes away takes tablet mode with it.
  @Test(.enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
  func aTabletModeSwitchThatAppearsLaterIsFollowed() throws {
    let fixture = try DaemonFixture()
    let sway = try HeadlessSway()
    let state = try TemporaryDirectory("rotate")
    try writeFile(state.file("switch.ioctl"), TabletSwitch.ioctls)
    // On half a second after it appears, and stays on.
    try writeFile(state.file("switch.events"), TabletSwitch.events(offAt: 3600))
    var environment = fixture.bus.environment.merging(sway.environment) { $1 }
    environment["XDG_RUNTIME_DIR"] = state.path
    environment["XDG_CURRENT_DESKTOP"] = "sway"
    let (platform, input, event) = TabletSwitch.devices()
    let testbed = try LiveTestbed(
      devices: [platform],
      program: [
        try Built.executable("orientd"), "rotate", "-v", "--output", "HEADLESS-1", "--settle",
        "0", "--when", "tablet",
      ], environment: environment)
    defer { _ = try? testbed.stopProgram() }
    #expect(
      waitFor(timeout: 15) {
        testbed.programStderr.contains("following ")
          && testbed.programStderr.contains("no input device reports SW_TABLET_MODE yet")
      }, "\(testbed.programStderr)")
    try fixture.turn(.leftUp)
    #expect(
      waitFor(timeout: 10) {
        testbed.programStderr.contains("not in tablet mode: not turning to left-up")
      }, "\(testbed.programStderr)")
    #expect(try sway.transform() == "normal")

    // The switch appears; umockdev announces it before its node answers the evdev ioctls, so
    // a "change" follows once they are loaded (udevd announces a node only when it is ready).
    try testbed.perform {
      $0.hotplug([event, input])
      $0.evdev(
        TabletSwitch.node, ioctls: state.file("switch.ioctl"), events: state.file("switch.events"))
      $0.uevent(event, "change")
    }
    #expect(
      waitFor(timeout: 15) {
        testbed.programStderr.contains(
          "tablet-mode switch \(TabletSwitch.node) (Intel Virtual Switches) appeared")
          && testbed.programStderr.contains("tablet mode on")
      }, "\(testbed.programStderr)")
    #expect(
      waitFor(timeout: 10) { (try? sway.transform()) == "270" }, "\(testbed.programStderr)")

    // Unplugged: tablet mode goes with it and the screen turns back upright.
    try testbed.perform { $0.unplug(event) }
    #expect(
      waitFor(timeout: 15) { testbed.programStderr.contains("tablet mode off") },
      "\(testbed.programStderr)")
    #expect(
      waitFor(timeout: 10) { (try? sway.transform()) == "normal" }, "\(testbed.programStderr)")
    #expect(testbed.programIsRunning)
  }
}

extension RotateTests {
  /// `--when tablet` on a convertible that orientd sees through two accelerometers: rotate
  /// claims orientd's posture and follows its `TabletMode` (no evdev switch anywhere): folded
  /// to a tablet the screen follows the display, opened to a laptop it goes back upright and
  /// stays there while the laptop is tipped.
  @Test func followsOrientdsPostureWithWhenTablet() throws {
    let pair = PostureTests.devices(.udev)
    let bus = try PrivateBus()
    let config = bus.directory.file("posture.conf")
    // No uinput on the test host: orientd's own switch stays off, TabletMode is the posture's.
    try writeFile(config, "[posture]\ntablet-mode-switch = off\n")
    let fixture = try DaemonFixture(
      ["--config", config], devices: [Accel.parent, pair.base, pair.display], bus: bus)
    try PostureTests.fold(fixture, pair, angle: 110, pitch: 0)
    let sway = try HeadlessSway()
    let state = try TemporaryDirectory("rotate")
    let rotate = try self.rotate(
      fixture, sway, ["--output", "HEADLESS-1", "--settle", "0", "--when", "tablet"],
      state: state)
    defer {
      rotate.signal(SIGTERM)
      _ = rotate.wait(timeout: 10)
    }
    #expect(
      waitFor(timeout: 20) {
        rotate.standardError.contains("following ")
          && rotate.standardError.contains("tablet mode off (orientd: posture")
      }, "\(rotate.standardError)\n\(fixture.log)")
    // Folded back through flat, stand and tent (as the hinge tracker needs to tell a tablet from
    // a closed lid), then a tablet held upside down (hinge horizontal, display bottom-up).
    for (angle, pitch, posture) in [
      (180.0, 0.0, "flat"), (270, 180, "stand"), (300, 60, "tent"), (355, 85, "tablet"),
    ] {
      try PostureTests.fold(fixture, pair, angle: angle, pitch: pitch)
      #expect(
        waitFor(timeout: 20) {
          (try? fixture.property(
            "Posture", path: PostureTests.path, interface: PostureTests.interface))
            == "s \"\(posture)\""
        }, "\(posture): \(fixture.log)")
    }
    #expect(
      waitFor(timeout: 20) { (try? sway.transform()) == "180" },
      "\(rotate.standardError)\n\(fixture.log)")
    // Stand and tent are tablet mode too (the keyboard faces away or down).
    #expect(rotate.standardError.contains("tablet mode on (orientd: posture stand"))
    // Opened to a laptop tipped on its side: back upright, whatever the display reads.
    try PostureTests.fold(fixture, pair, angle: 110, pitch: 0, roll: 65)
    #expect(
      waitFor(timeout: 20) {
        (try? sway.transform()) == "normal"
          && rotate.standardError.contains("not in tablet mode: not turning to")
      }, "\(rotate.standardError)\n\(fixture.log)")
    #expect(rotate.isRunning)
  }
}
