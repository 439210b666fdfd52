import TextFormats

/// Whether the camera may be used for face-aware rotation now.
///
/// Privacy first: the camera is used only when the user enabled it, never while the session
/// is locked (logind's `LockedHint`) or its lock state cannot be read, never in power saving,
/// and never while another program holds the camera (that one is found when the camera is
/// opened: orientd-face answers `unknown`).
public enum FaceCameraPolicy {
  /// The verdict.
  public enum Decision: Equatable, Sendable {
    /// The camera may be used.
    case allowed
    /// It may not, for this reason (for the log).
    case refused(String)
  }

  /// Decides from the settings and the system's state.
  ///
  /// - Parameters:
  ///   - enabled: `[face] enabled`.
  ///   - sessionLocked: the active session's `LockedHint`; `nil` when it cannot be read (no
  ///     logind, no active session), which counts as locked.
  ///   - powerSaving: whether power saving is on (power-profiles-daemon's `ActiveProfile` is
  ///     `power-saver`, or UPower says the battery is low).
  public static func decide(enabled: Bool, sessionLocked: Bool?, powerSaving: Bool) -> Decision {
    guard enabled else { return .refused("face-aware rotation is off ([face] enabled = no)") }
    guard let locked = sessionLocked else {
      return .refused("the session's lock state is unknown (no logind session)")
    }
    if locked { return .refused("the session is locked") }
    if powerSaving { return .refused("power saving is on") }
    return .allowed
  }
}

/// The `[face]` section of orientd.conf: face-aware rotation (off by default).
///
/// ```
/// [face]
/// enabled = yes
/// camera = v4l2:/dev/video0
/// timeout = 700
/// ```
public struct FaceSettings: Equatable, Sendable {
  /// `enabled`: use the camera for proposals (default no).
  public var enabled = false
  /// `camera`: `auto` (the first camera facing the user), `v4l2:/dev/videoN`, `file:DIR` (a
  /// directory of frames, for tests), later `libcamera:ID`.
  public var camera = "auto"
  /// `timeout`: milliseconds a proposal may wait for the camera (100 to 5000, default 700).
  public var timeoutMilliseconds = 700
  /// `sensor-rotation`: the camera's mounting correction, clockwise degrees; `nil` (`auto`):
  /// what the driver reports, else 0.
  public var sensorRotation: Int?
  /// `mirror`: whether frames are a mirror image of the device's view (default yes: a camera
  /// facing the user; no when its driver flips them already).
  public var mirror = true
  /// `frames`: how many frames to look at, at most (1 to 10, default 3).
  public var frames = 3
  /// `program`: the orientd-face executable (default: found beside orientd, then in
  /// `PREFIX/libexec/orientd`).
  public var program: String?

  /// The keys, for messages and documentation.
  public static let keys = [
    "enabled", "camera", "timeout", "sensor-rotation", "mirror", "frames", "program",
  ]

  /// The defaults.
  public init() {}

  /// Reads every `[face]` section of a configuration file, in order, on top of the defaults.
  ///
  /// - Throws: `ConfigError` at the file and line of an unknown key or a bad value.
  public init(config: ConfigFile) throws(ConfigError) {
    self.init()
    for section in config.sections(named: "face") {
      try apply(section: section, source: config.source)
    }
  }

  /// Applies a `[face]` section's entries on top of the current values.
  public mutating func apply(section: ConfigFile.Section, source: String) throws(ConfigError) {
    for entry in section.entries {
      try set(entry.key, entry.value, source: source, line: entry.line)
    }
  }

  /// Sets one key.
  ///
  /// - Throws: `ConfigError` naming `source:line`, the key and what it accepts.
  public mutating func set(_ key: String, _ value: String, source: String, line: Int)
    throws(ConfigError)
  {
    func fail(_ reason: String) -> ConfigError {
      ConfigError(source: source, line: line, reason: "[face] \(key) = \(value): \(reason)")
    }
    func integer(_ range: ClosedRange<Int>) throws(ConfigError) -> Int {
      guard let number = Int(value), range.contains(number) else {
        throw fail("must be a whole number from \(range.lowerBound) to \(range.upperBound)")
      }
      return number
    }
    func boolean() throws(ConfigError) -> Bool {
      switch value.lowercased() {
      case "yes", "true", "on", "1": return true
      case "no", "false", "off", "0": return false
      default: throw fail("must be yes or no")
      }
    }
    switch key {
    case "enabled": enabled = try boolean()
    case "camera":
      guard FaceSettings.isCameraSpec(value) else {
        throw fail("must be auto, v4l2[:/dev/videoN], file:DIR or libcamera[:ID]")
      }
      camera = value
    case "timeout": timeoutMilliseconds = try integer(100...5000)
    case "sensor-rotation":
      if value == "auto" {
        sensorRotation = nil
      } else {
        guard let degrees = Int(value), [0, 90, 180, 270].contains(degrees) else {
          throw fail("must be auto, 0, 90, 180 or 270")
        }
        sensorRotation = degrees
      }
    case "mirror": mirror = try boolean()
    case "frames": frames = try integer(1...10)
    case "program":
      guard value.hasPrefix("/") else { throw fail("must be an absolute path") }
      program = value
    default:
      throw ConfigError(
        source: source, line: line,
        reason:
          "unknown key \"\(key)\" in [face] (known: \(FaceSettings.keys.joined(separator: ", ")))"
      )
    }
  }

  /// Whether `text` names a camera: `auto`, `v4l2`, `v4l2:/PATH`, `file:PATH`, `libcamera`,
  /// `libcamera:ID`.
  public static func isCameraSpec(_ text: String) -> Bool {
    if ["auto", "v4l2", "libcamera"].contains(text) { return true }
    if text.hasPrefix("v4l2:/") { return true }
    if text.hasPrefix("file:"), text.count > 5 { return true }
    if text.hasPrefix("libcamera:"), text.count > 10 { return true }
    return false
  }
}
