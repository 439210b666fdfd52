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

  /// The keys of the section.
  public static var keys: [String] { ["property-rate"] + MotionFusion.Parameters.keys }

  /// Reads every `[motion]` section of `file` on top of the defaults.
  ///
  /// - Throws: `ConfigError` at the entry's line for an unknown key or a bad value.
  public init(_ file: ConfigFile) throws(ConfigError) {
    for section in file.sections(named: "motion") {
      for entry in section.entries {
        if entry.key == "property-rate" {
          guard let rate = try? DecimalText.parseDouble(entry.value[...]), rate >= 0.1,
            rate <= 100
          else {
            throw ConfigError(
              source: file.source, line: entry.line,
              reason: "property-rate: '\(entry.value.prefix(40))' is not a rate from 0.1 to "
                + "100 per second")
          }
          propertyRate = rate
          continue
        }
        do {
          try fusion.set(entry.key, entry.value)
        } catch {
          throw ConfigError(
            source: file.source, line: entry.line,
            reason: "[motion] \(error.key): \(error.reason)"
              + (entry.key == error.key && !MotionSettings.keys.contains(entry.key)
                ? " (or property-rate)" : ""))
        }
      }
    }
  }
}
