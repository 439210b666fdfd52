import SystemKit

/// `--exec CMD` hooks: shell commands run before and after each turn with what changed in their
/// environment, for desktops orientd has no backend for and for extra work (on-screen
/// keyboards, wallpapers, kiosks' browsers).
public struct Hooks: Sendable {
  /// When a hook runs.
  public enum Stage: String, Sendable {
    /// Before the backend turns the output (`--exec-before`).
    case before
    /// After the output and touch were turned (`--exec`).
    case after
  }

  /// Commands run before a turn.
  public var before: [String]
  /// Commands run after a turn.
  public var after: [String]

  /// Creates hooks.
  public init(before: [String] = [], after: [String] = []) {
    self.before = before
    self.after = after
  }

  /// The environment a hook sees: `ORIENTATION` (`left-up`), `ROTATION` (the transform in
  /// degrees, panel orientation included), `PREVIOUS_ORIENTATION` (empty at the first),
  /// `OUTPUT` (connector name), `ORIENTD_HOOK` (`before`/`after`).
  public static func environment(
    stage: Stage, orientation: String, turn: Turn, previous: String?, output: String
  ) -> [String: String] {
    [
      "ORIENTATION": orientation, "ROTATION": String(turn.rawValue),
      "PREVIOUS_ORIENTATION": previous ?? "", "OUTPUT": output, "ORIENTD_HOOK": stage.rawValue,
    ]
  }
}
