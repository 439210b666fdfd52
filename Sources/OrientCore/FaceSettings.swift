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

  /// The `[face]` section, one row per key.
  public static let table = ConfigTable<FaceSettings>(
    section: "face",
    keys: [
      .boolean(
        "enabled", "use the front camera to confirm rotations", \.enabled, words: ("yes", "no")),
      .parsed(
        "camera", accepts: "auto | v4l2[:/dev/videoN] | file:DIR | libcamera[:ID]",
        summary: "the camera facing the user", \.camera, show: { $0 }, parse: parseCamera),
      .integer(
        "timeout", "ms", 100...5000, "how long a proposal may wait for the camera",
        \.timeoutMilliseconds),
      .parsed(
        "sensor-rotation", accepts: "auto | 0 | 90 | 180 | 270",
        summary: "the camera's mounting correction, clockwise degrees", \.sensorRotation,
        show: { $0.map { "\($0)" } ?? "auto" }, parse: parseRotation),
      .boolean(
        "mirror", "frames are a mirror image of the device's view", \.mirror, words: ("yes", "no")),
      .integer("frames", "", 1...10, "frames looked at, at most", \.frames),
      .parsed(
        "program", accepts: "absolute path",
        summary: "orientd-face (default: beside orientd, then PREFIX/libexec/orientd)",
        \.program, show: { $0 ?? "" }, parse: parseProgram),
    ])

  private static func parseCamera(_ text: String) throws(ConfigValueError) -> String {
    guard isCameraSpec(text) else {
      throw ConfigValueError(
        "camera '\(text)' must be auto, v4l2[:/dev/videoN], file:DIR or libcamera[:ID]")
    }
    return text
  }

  private static func parseRotation(_ text: String) throws(ConfigValueError) -> Int? {
    if text == "auto" { return nil }
    guard let degrees = Int(text), [0, 90, 180, 270].contains(degrees) else {
      throw ConfigValueError("sensor-rotation '\(text)' must be auto, 0, 90, 180 or 270")
    }
    return degrees
  }

  private static func parseProgram(_ text: String) throws(ConfigValueError) -> String? {
    guard text.hasPrefix("/") else {
      throw ConfigValueError("program '\(text)' must be an absolute path")
    }
    return text
  }

  /// The keys, for messages and documentation.
  public static var keys: [String] { table.names }

  /// The defaults.
  public init() {}

  /// Reads every `[face]` section of a configuration file, in order, on top of the defaults.
  ///
  /// - Throws: `ConfigError` at the file and line of an unknown key or a bad value.
  public init(config: ConfigFile) throws(ConfigError) {
    self.init()
    try FaceSettings.table.read(config, into: &self)
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
