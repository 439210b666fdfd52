import OrientCore
import TextFormats

/// The `[posture]` section of `/etc/orientd.conf`: the hinge tracker's parameters, the
/// tablet-mode switch and orientation in laptop posture.
public struct PostureSettings: Equatable, Sendable {
  /// Whether orientd provides an `SW_TABLET_MODE` input device of its own.
  public enum SwitchMode: String, Equatable, Sendable, CaseIterable {
    /// When the machine has two accelerometers and no input device reports `SW_TABLET_MODE`.
    case auto
    /// Whenever it has two accelerometers (even next to a real switch).
    case on
    /// Never.
    case off
  }

  /// `tablet-mode-switch`.
  public var tabletModeSwitch = SwitchMode.auto
  /// `laptop-orientation = normal`: `Orientation` stays `normal` while the posture is laptop
  /// (no rotation while typing); `follow` (the default) publishes what the display reads.
  public var keepNormalInLaptop = false
  /// The hinge tracker's parameters (`hinge-axis`, `posture-settle-time`, ...).
  public var hinge = HingeParameters()
  /// Whether `hinge-axis` was given: it then overrides the base sensor's udev
  /// `ORIENTD_HINGE_AXIS`.
  public var hingeAxisConfigured = false

  /// The defaults.
  public init() {}

  /// The keys of the section.
  public static var keys: [String] {
    ["tablet-mode-switch", "laptop-orientation"] + HingeParameters.keys
  }

  /// Reads every `[posture]` section of `file` on top of the defaults.
  ///
  /// - Throws: `ConfigError` at the entry's line for an unknown key or a bad value.
  public init(_ file: ConfigFile) throws(ConfigError) {
    for section in file.sections(named: "posture") {
      for entry in section.entries {
        try set(entry.key, entry.value, source: file.source, line: entry.line)
      }
    }
  }

  private mutating func set(_ key: String, _ value: String, source: String, line: Int)
    throws(ConfigError)
  {
    switch key {
    case "tablet-mode-switch":
      guard let mode = SwitchMode(rawValue: value) else {
        throw ConfigError(
          source: source, line: line,
          reason: "tablet-mode-switch: '\(value)' is not one of auto, on, off")
      }
      tabletModeSwitch = mode
    case "laptop-orientation":
      switch value {
      case "normal": keepNormalInLaptop = true
      case "follow": keepNormalInLaptop = false
      default:
        throw ConfigError(
          source: source, line: line,
          reason: "laptop-orientation: '\(value)' is not one of follow, normal")
      }
    default:
      do {
        try hinge.set(key, value)
        if key == "hinge-axis" { hingeAxisConfigured = true }
      } catch {
        let reason =
          error.reason.hasPrefix("unknown key")
          ? "unknown key '\(key)' in [posture] (known: "
            + PostureSettings.keys.joined(separator: ", ") + ")"
          : error.description
        throw ConfigError(source: source, line: line, reason: reason)
      }
    }
  }
}
