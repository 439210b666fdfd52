import OrientCore
import Sensors
import SystemKit
import TextFormats

/// Everything `/etc/orientd.conf` configures: the detector (`[detector]`), how sensors are
/// sampled (`[sampling]`), per-device overrides (`[device "NAME"]`), convertibles
/// (`[posture]`), motion (`[motion]`) and face-aware rotation (`[face]`, off by default).
///
/// Unknown sections, unknown keys and bad values are errors naming the file and line; a
/// daemon keeps its previous configuration when a reload finds one.
public struct DaemonConfiguration: Equatable, Sendable {
  /// `/etc/orientd.conf`, read when it exists and no `--config` is given.
  public static let defaultPath = "/etc/orientd.conf"
  /// The sections orientd knows.
  public static let sectionNames = [
    "detector", "sampling", "device", "posture", "motion", "face",
  ]

  /// `[detector]`.
  public var detector = DetectorParameters()
  /// `[sampling]` (the accelerometers' keys) and `[device "..."]`.
  public var accelerometer = AccelerometerConfiguration()
  /// `light-interval` and `proximity-interval` of `[sampling]`.
  public var ambient = AmbientConfiguration()
  /// `[posture]`: convertibles (hinge, tablet-mode switch).
  public var posture = PostureSettings()
  /// `[motion]`: org.orientd.Motion1's property rate and the fusion.
  public var motion = MotionSettings()
  /// `[face]`: face-aware rotation with the front camera (docs/face.md).
  public var face = FaceSettings()
  /// The file it was read from (`nil`: built-in defaults).
  public var source: String?

  /// The built-in defaults.
  public init() {}

  /// What the sensor layer reads with.
  public var sensors: SensorsConfiguration {
    var sensors = SensorsConfiguration()
    sensors.accelerometer = accelerometer
    sensors.ambient = ambient
    return sensors
  }

  /// Interprets a parsed file.
  ///
  /// - Throws: `ConfigError` at `path:line` for an unknown section, an entry outside any
  ///   section, an unknown key or a bad value.
  public init(_ file: ConfigFile) throws(ConfigError) {
    for section in file.sections where !DaemonConfiguration.sectionNames.contains(section.name) {
      if section.name.isEmpty {
        throw ConfigError(
          source: file.source, line: section.entries.first?.line ?? 0,
          reason: "'\(section.entries.first?.key ?? "")' is outside any section; put it under "
            + "[detector], [sampling], [posture], [motion], [face] or [device \"NAME\"]")
      }
      throw ConfigError(
        source: file.source, line: section.line,
        reason: "unknown section [\(section.name)] (known: [detector], [sampling], "
          + "[posture], [motion], [face], [device \"NAME\"])")
    }
    detector = try DetectorParameters(config: file)
    accelerometer = try AccelerometerConfiguration(file)
    for section in file.sections(named: "sampling") {
      for entry in section.entries
      where entry.key == "light-interval" || entry.key == "proximity-interval" {
        // Checked by AccelerometerConfiguration: a number of seconds within 0.05 ... 10.
        let seconds = (try? DecimalText.parseDouble(entry.value)) ?? 0.5
        let interval = Duration.milliseconds(Int64((seconds * 1000).rounded()))
        if entry.key == "light-interval" {
          ambient.lightInterval = interval
        } else {
          ambient.proximityInterval = interval
        }
      }
    }
    posture = try PostureSettings(file)
    motion = try MotionSettings(file)
    face = try FaceSettings(config: file)
    source = file.source
  }

  /// Parses configuration text (for tests and `--config`).
  ///
  /// - Throws: `ConfigError` naming `source` and the line.
  public init(parsing text: String, source: String) throws(ConfigError) {
    try self.init(ConfigFile(parsing: text, source: source))
  }

  /// Reads the configuration: `path` if given (it must exist), otherwise
  /// `/etc/orientd.conf` if it exists, otherwise the defaults.
  ///
  /// - Throws: `DaemonConfigurationError`: status `noInput` (66) or `dataError` (65).
  public static func load(path: String?, defaultPath: String = defaultPath)
    throws(DaemonConfigurationError) -> DaemonConfiguration
  {
    let chosen: String
    if let path {
      chosen = path
    } else if Sysfs.exists(defaultPath) {
      chosen = defaultPath
    } else {
      return DaemonConfiguration()
    }
    let bytes: [UInt8]
    do {
      let file = try FileDescriptor(path: chosen)
      bytes = try file.readToEnd(limit: ConfigFile.maxBytes)
    } catch {
      throw DaemonConfigurationError(.noInput, "cannot read the configuration: \(error)")
    }
    do {
      return try DaemonConfiguration(
        parsing: String(decoding: bytes, as: UTF8.self), source: chosen)
    } catch {
      throw DaemonConfigurationError(.dataError, error.description)
    }
  }
}

/// Why the configuration could not be loaded: `noInput` (66) for a file that cannot be read,
/// `dataError` (65) for one whose content is wrong (the message names `path:line`).
public typealias DaemonConfigurationError = StatusError
