import OrientCore
import Testing

@testable import ScreenRotation

@Suite struct TurnTests {
  @Test(arguments: [
    (Orientation.normal, Orientation.normal, Turn.normal),
    (.leftUp, .normal, .quarter),
    (.bottomUp, .normal, .half),
    (.rightUp, .normal, .threeQuarters),
    // A portrait-native panel mounted right-up: upright needs 270, left-up wraps to normal.
    (.normal, .rightUp, .threeQuarters),
    (.leftUp, .rightUp, .normal),
    (.bottomUp, .leftUp, .threeQuarters),
  ])
  func panelOrientationIsComposedIn(device: Orientation, natural: Orientation, expected: Turn) {
    #expect(Turn.target(for: device, natural: natural) == expected)
  }

  @Test func undefinedOrientationDoesNotTurn() {
    #expect(Turn.target(for: .undefined) == nil)
  }

  @Test func namesRoundTrip() {
    for turn in Turn.allCases {
      #expect(Turn(name: turn.waylandName) == turn)
      #expect(Turn(name: turn.randrName) == turn)
    }
    #expect(Turn(name: "flipped-90") == nil)
  }

  @Test func touchMatricesAreRotations() {
    // Each matrix maps the touch corner (0,0) to where that corner lands on the turned screen.
    func apply(_ m: [Float], _ x: Float, _ y: Float) -> (Float, Float) {
      (m[0] * x + m[1] * y + m[2], m[3] * x + m[4] * y + m[5])
    }
    #expect(apply(Turn.normal.touchMatrix, 0, 0) == (0, 0))
    #expect(apply(Turn.quarter.touchMatrix, 0, 0) == (1, 0))
    #expect(apply(Turn.half.touchMatrix, 0, 0) == (1, 1))
    #expect(apply(Turn.threeQuarters.touchMatrix, 0, 0) == (0, 1))
  }
}

@Suite struct SessionDetectionTests {
  @Test func desktopsThatRotateThemselves() {
    #expect(Desktop.detect(["XDG_CURRENT_DESKTOP": "ubuntu:GNOME"]) == .rotatesItself("gnome"))
    #expect(Desktop.detect(["XDG_CURRENT_DESKTOP": "KDE"]) == .rotatesItself("kde"))
    #expect(Desktop.detect(["KDE_FULL_SESSION": "true"]) == .rotatesItself("kde"))
  }

  @Test func compositors() {
    #expect(
      Desktop.detect(["SWAYSOCK": "/run/user/1000/sway-ipc.sock", "WAYLAND_DISPLAY": "wayland-1"])
        == .sway(socket: "/run/user/1000/sway-ipc.sock"))
    #expect(
      Desktop.detect(["WAYLAND_DISPLAY": "wayland-1", "XDG_CURRENT_DESKTOP": "Hyprland"])
        == .wayland(display: "wayland-1"))
    #expect(Desktop.detect(["DISPLAY": ":0"]) == .x11(display: ":0"))
    #expect(Desktop.detect([:]) == .none)
  }

  @Test func builtInPanels() {
    for name in ["eDP-1", "eDP1", "DSI-1", "LVDS1"] {
      #expect(OutputState(name: name, turn: .normal, active: true).isBuiltInPanel)
    }
    for name in ["HDMI-A-1", "DP-2", "HEADLESS-1", "default"] {
      #expect(!OutputState(name: name, turn: .normal, active: true).isBuiltInPanel)
    }
  }

  @Test func lockPaths() {
    #expect(
      RotationLock.statePath(["XDG_STATE_HOME": "/s", "HOME": "/h"]) == "/s/orientd/rotation-lock")
    #expect(RotationLock.statePath(["HOME": "/h"]) == "/h/.local/state/orientd/rotation-lock")
    #expect(
      RotationLock.socketPath(["XDG_RUNTIME_DIR": "/run/user/7"])
        == "/run/user/7/orientd-rotate.sock")
    #expect(RotationLock.socketPath([:]) == nil)
  }

  @Test func hookEnvironment() {
    let env = Hooks.environment(
      stage: .after, orientation: "left-up", turn: .quarter, previous: "normal", output: "eDP-1")
    #expect(env["ORIENTATION"] == "left-up")
    #expect(env["ROTATION"] == "90")
    #expect(env["PREVIOUS_ORIENTATION"] == "normal")
    #expect(env["OUTPUT"] == "eDP-1")
    #expect(env["ORIENTD_HOOK"] == "after")
  }
}

@Suite struct BackendParsingTests {
  @Test func swayCountsClockwise() {
    #expect(Turn.quarter.swayName == "270")
    #expect(Turn.threeQuarters.swayName == "90")
    #expect(Turn.half.swayName == "180")
    for turn in Turn.allCases { #expect(Turn(swayName: turn.swayName) == turn) }
  }

  @Test func wlrRandrListing() {
    let text = """
      eDP-1 "BOE 0x0BCA (eDP-1)"
        Physical size: 280x190 mm
        Enabled: yes
        Modes:
          2256x1504 px, 59.999001 Hz (preferred, current)
        Position: 0,0
        Transform: 90
        Scale: 1.500000
      HDMI-A-1 "Unknown"
        Enabled: no
        Transform: normal
      """
    #expect(
      WlrRandrBackend.parse(text) == [
        OutputState(name: "eDP-1", turn: .quarter, active: true),
        OutputState(name: "HDMI-A-1", turn: .normal, active: false),
      ])
  }
}

/// Which X input devices the X11 backend maps, as a real Xorg with xf86-input-libinput lists a
/// touchscreen and a pen tablet (the rotate-x11 VM test's devices).
@Suite struct XInputSelectionTests {
  let wanted = [
    TouchDevice(name: "orientd-vm touchscreen", kind: .touchscreen, devnode: "/dev/input/event0"),
    TouchDevice(name: "orientd-vm pen", kind: .tablet, devnode: "/dev/input/event1"),
  ]

  func selects(_ node: String?, _ name: String, pointerSlave: Bool = true, enabled: Bool = true)
    -> Bool
  {
    XInputSelection.selects(
      pointerSlave: pointerSlave, enabled: enabled, node: node, name: name, wanted: wanted)
  }

  @Test func aTabletsToolDevicesShareItsNode() {
    // xf86-input-libinput names a tool's device after the tablet and the tool.
    #expect(selects("/dev/input/event1", "orientd-vm pen Pen (0)"))
    #expect(selects("/dev/input/event1", "orientd-vm pen Eraser (0)"))
    #expect(selects("/dev/input/event0", "orientd-vm touchscreen"))
  }

  @Test func theNodeDecidesNotTheName() {
    // A keyboard/mouse named like a wanted device, on another node: left alone.
    #expect(!selects("/dev/input/event2", "orientd-vm pen"))
    #expect(!selects("/dev/input/event2", "orientd-vm keyboard"))
  }

  @Test func slaveKeyboardsMastersAndDisabledDevicesAreNot() {
    // The tablet's base device is attached to the core keyboard: X refuses it a matrix.
    #expect(!selects("/dev/input/event1", "orientd-vm pen", pointerSlave: false))
    #expect(!selects(nil, "Virtual core pointer", pointerSlave: false))
    #expect(!selects("/dev/input/event0", "orientd-vm touchscreen", enabled: false))
  }

  @Test func withoutADeviceNodeTheNameOrTouchDecides() {
    // A driver that sets no "Device Node" (Xephyr's virtual mouse): by name.
    #expect(selects(nil, "orientd-vm touchscreen"))
    #expect(!selects(nil, "Xephyr virtual mouse"))
    let named = [TouchDevice(name: "Xephyr virtual mouse", kind: .named)]
    #expect(
      XInputSelection.selects(
        pointerSlave: true, enabled: true, node: "/dev/input/event5",
        name: "Xephyr virtual mouse", wanted: named))
  }
}
