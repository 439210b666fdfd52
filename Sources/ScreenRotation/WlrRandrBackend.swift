import SystemKit

/// Other wlroots compositors (Hyprland, labwc, wayfire, river) through their
/// wlr-output-management-unstable-v1 protocol, spoken by the compositor's own CLI `wlr-randr`.
///
/// Debian 12 ships no package with the protocol's XML (wayland-protocols 1.31 does not carry
/// the wlr-* protocols, libwlroots-dev has only its server headers), so orientd does not
/// generate a client from it; wlr-randr (Debian package `wlr-randr`) is that client.
/// Touch mapping is compositor configuration there (no protocol for it): reported as skipped.
public final class WlrRandrBackend: RotationBackend {
  /// `wlr-randr`.
  public let name = "wlr-randr"
  private let program: String

  /// Uses `program` (default `wlr-randr` from PATH).
  public init(program: String = "wlr-randr") { self.program = program }

  /// Parses `wlr-randr`'s listing: an unindented line per output (`eDP-1 "..."`), then indented
  /// `Enabled: yes` and `Transform: 90` lines.
  static func parse(_ text: String) -> [OutputState] {
    var outputs: [OutputState] = []
    for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
      if let first = line.first, first != " " && first != "\t" {
        let name = line.split(separator: " ").first.map(String.init) ?? String(line)
        outputs.append(OutputState(name: name, turn: .normal, active: true))
        continue
      }
      guard !outputs.isEmpty else { continue }
      let trimmed = line.drop { $0 == " " || $0 == "\t" }
      if trimmed.hasPrefix("Transform:") {
        let value = trimmed.dropFirst("Transform:".count).drop { $0 == " " }
        outputs[outputs.count - 1].turn = Turn(name: String(value))
      } else if trimmed.hasPrefix("Enabled:") {
        outputs[outputs.count - 1].active = trimmed.hasSuffix("yes")
      }
    }
    return outputs
  }

  /// `wlr-randr` with no arguments.
  public func outputs() throws(RotateError) -> [OutputState] {
    let result = try ProgramRunner.runHelper([program])
    guard result.status == 0 else {
      throw RotateError(
        .unavailable,
        "\(program) failed (status \(result.status)): \(result.errors.isEmpty ? result.output : result.errors)"
          + " (does the compositor support wlr-output-management-unstable-v1?)")
    }
    return WlrRandrBackend.parse(result.output)
  }

  /// `wlr-randr --output NAME --transform T`, then reads it back.
  public func apply(_ turn: Turn, output: String, touch: [TouchDevice]) throws(RotateError)
    -> Applied
  {
    let result = try ProgramRunner.runHelper([
      program, "--output", output, "--transform", turn.waylandName,
    ])
    guard result.status == 0 else {
      // wlr-randr sends back the whole head state it was told; a head the compositor reports
      // as off with no mode (sway 1.7's headless outputs, whose mode is a custom one) goes
      // back as "disabled", which the compositor refuses.
      let listedOff = (try? outputs())?.first { $0.name == output }?.active == false
      throw RotateError(
        .software,
        "\(program) --output \(output) --transform \(turn.waylandName) failed: "
          + result.errors.trimmingQuotes()
          + (listedOff
            ? " (the compositor reports \(output) to wlr-output-management as disabled, with no "
              + "mode, so wlr-randr cannot send its state back; sway does this for outputs with "
              + "only a custom mode, e.g. headless ones: use --backend sway there)" : ""))
    }
    guard let now = try outputs().first(where: { $0.name == output }), now.turn == turn else {
      throw RotateError(.software, "\(program): \(output) did not take transform \(turn)")
    }
    return Applied(
      output: now, touch: [],
      touchSkipped: touch.map {
        "\($0.name): map it to \(output) in the compositor's configuration"
      })
  }
}
