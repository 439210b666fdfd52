import OrientCore
import TextFormats

/// The `[motion]` section of `/etc/orientd.conf`: how often `org.orientd.Motion1`'s properties
/// change (`property-rate`) and the fusion's settings (`MotionFusion.Parameters.table`: the
/// keys, units and ranges are declared there once).
public struct MotionSettings: Equatable, Sendable {
  /// `property-rate`: at most this many PropertiesChanged a second (0.1 to 100, default 5).
  public var propertyRate = MotionService.defaultPropertyRate
  /// The fusion's parameters.
  public var fusion = MotionFusion.Parameters()

  /// The defaults.
  public init() {}

  /// The `[motion]` section: `property-rate`, then the fusion's rows
  /// (`MotionFusion.Parameters.table`).
  public static let table = ConfigTable<MotionSettings>(
    section: "motion",
    keys: [
      .number(
        "property-rate", "per second", 0.1...100,
        "at most this many PropertiesChanged a second (streams are not affected)",
        \.propertyRate)
    ] + MotionFusion.Parameters.table.keys.map { $0.lifted(\MotionSettings.fusion) })

  /// The keys of the section.
  public static var keys: [String] { table.names }

  /// Reads every `[motion]` section of `file` on top of the defaults.
  ///
  /// - Throws: `ConfigError` at the entry's line for an unknown key or a bad value.
  public init(_ file: ConfigFile) throws(ConfigError) {
    try MotionSettings.table.read(file, into: &self)
  }
}
