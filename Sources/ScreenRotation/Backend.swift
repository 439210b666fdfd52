/// One output as a backend sees it.
public struct OutputState: Equatable, Sendable {
  /// The connector name: `eDP-1`, `DSI-1`, `HEADLESS-1`, RandR's `default`.
  public var name: String
  /// The current transform, `nil` for a flipped one.
  public var turn: Turn?
  /// Whether it is on.
  public var active: Bool

  /// Creates a state.
  public init(name: String, turn: Turn?, active: Bool) {
    self.name = name
    self.turn = turn
    self.active = active
  }

  /// Whether the name is a built-in panel's connector (eDP, DSI, LVDS; RandR spells them
  /// `eDP-1`, `eDP1`, `DSI-1`, `LVDS1`).
  public var isBuiltInPanel: Bool {
    let lower = name.lowercased()
    return ["edp", "dsi", "lvds"].contains { lower.hasPrefix($0) }
  }
}

/// What one application of a turn did, for the log and the tests.
public struct Applied: Equatable, Sendable {
  /// The output and its transform read back after the change.
  public var output: OutputState
  /// The touch devices mapped (their names as the backend knows them).
  public var touch: [String]
  /// Touch devices the backend could not map, with the reason.
  public var touchSkipped: [String]

  /// Creates a report.
  public init(output: OutputState, touch: [String], touchSkipped: [String]) {
    self.output = output
    self.touch = touch
    self.touchSkipped = touchSkipped
  }
}

/// A way to turn an output and its touch devices: sway's IPC, wlr-randr, X11 RandR + XInput2.
///
/// `apply` never leaves a half-applied state: backends map or transform touch input first and
/// turn the output last, and undo the touch change when turning the output fails.
public protocol RotationBackend: AnyObject {
  /// `sway`, `wlr-randr`, `x11`.
  var name: String { get }
  /// Every output, active or not.
  func outputs() throws(RotateError) -> [OutputState]
  /// Turns `output` to `turn` with `touch` bound to it.
  ///
  /// - Throws: `RotateError`; nothing is left changed then (the message says what was undone).
  func apply(_ turn: Turn, output: String, touch: [TouchDevice]) throws(RotateError) -> Applied
}

extension RotationBackend {
  /// The output to turn: `requested` if given (it must exist), else the one active built-in
  /// panel.
  ///
  /// - Throws: `RotateError` (69) naming the outputs there are.
  public func chooseOutput(_ requested: String?) throws(RotateError) -> OutputState {
    let all = try outputs()
    let names = all.map { $0.name + ($0.active ? "" : " (off)") }.joined(separator: ", ")
    if let requested {
      guard let found = all.first(where: { $0.name == requested }) else {
        throw RotateError(
          .unavailable,
          "\(name): no output named '\(requested)' (there are: \(names.isEmpty ? "none" : names))")
      }
      return found
    }
    let panels = all.filter { $0.isBuiltInPanel && $0.active }
    guard let panel = panels.first else {
      throw RotateError(
        .unavailable,
        "\(name): no active built-in panel (eDP, DSI or LVDS) among the outputs "
          + "(\(names.isEmpty ? "none" : names)); name the one to turn with --output NAME")
    }
    return panel
  }
}

/// A backend whose touch devices can appear between turns: on X11, xf86-input-libinput makes
/// a tablet tool's X device (`... Pen (0)`, `... Eraser (0)`) only when the tool first comes into
/// proximity, with an identity matrix; the running `orientd rotate` maps it to the current turn.
public protocol TouchHotplugging: RotationBackend {
  /// A descriptor that becomes readable when the backend has events to read.
  var eventDescriptor: Int32 { get }
  /// Reads the pending events; true when input devices were added or enabled.
  func devicesChanged() -> Bool
  /// Gives the devices of `touch` the matrix of `turn` on `output` without turning the output;
  /// returns the names of the devices it changed.
  func mapTouch(_ turn: Turn, output: String, touch: [TouchDevice]) throws(RotateError) -> [String]
}

/// Which X input devices belong to the touch devices: pure logic of the X11 backend.
public enum XInputSelection {
  /// Whether an XInput2 device is one of `wanted`: a slave pointer (attached or floating) on
  /// the event node of a wanted device (a tablet's tool devices share its node), or named with
  /// `--touch`; a device without a "Device Node" property (a driver that sets none) by the name
  /// of any wanted device. Master devices and slave keyboards never: xf86-input-libinput
  /// attaches a pen tablet's base device to the core keyboard, where it carries no pointer
  /// events (its tools' devices do) and X refuses it a matrix (BadMatch).
  public static func selects(
    pointerSlave: Bool, enabled: Bool, node: String?, name: String, wanted: [TouchDevice]
  ) -> Bool {
    guard pointerSlave, enabled else { return false }
    if let node, wanted.contains(where: { $0.devnode == node }) { return true }
    return wanted.contains { ($0.kind == .named || node == nil) && $0.name == name }
  }
}
