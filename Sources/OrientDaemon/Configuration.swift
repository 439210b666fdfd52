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
  /// Every section and key orientd knows, declared once (`orientd --config-keys` prints it).
  public static let schema = ConfigSchema<DaemonConfiguration>([
    .single(DetectorParameters.table, at: \.detector, defaults: DetectorParameters()),
    SensorsConfiguration.samplingSection.lifted(\.sensors),
    SensorsConfiguration.deviceSection.lifted(\.sensors),
    .single(PostureSettings.table, at: \.posture, defaults: PostureSettings()),
    .single(MotionSettings.table, at: \.motion, defaults: MotionSettings()),
    .single(FaceSettings.table, at: \.face, defaults: FaceSettings()),
  ])
  /// The sections orientd knows.
  public static var sectionNames: [String] { schema.names }

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

  /// What the sensor layer reads with: `[sampling]` and `[device "..."]`.
  public var sensors: SensorsConfiguration {
    get {
      var sensors = SensorsConfiguration()
      sensors.accelerometer = accelerometer
      sensors.ambient = ambient
      return sensors
    }
    set {
      accelerometer = newValue.accelerometer
      ambient = newValue.ambient
    }
  }

  /// Interprets a parsed file on top of the defaults: a section the file lacks keeps its
  /// defaults (a reload that removes a key restores its default).
  ///
  /// - Throws: `ConfigError` at `path:line` for an unknown section, an entry outside any
  ///   section, an unknown key or a bad value.
  public init(_ file: ConfigFile) throws(ConfigError) {
    try DaemonConfiguration.schema.read(file, into: &self)
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
