import JSON
import OrientClient
import Sensors

/// How `--watch --light --proximity --compass` prints those sensors after the orientation.
enum AmbientFormat {
  /// The members of the kinds followed: `"has_ambient_light":true,"light_level":55,
  /// "light_level_unit":"lux"`, `"has_proximity":true,"proximity_near":false`,
  /// `"has_compass":true,"compass_heading":90`; a value is null while there is no sensor (or,
  /// for the heading, no reading).
  static func json(_ v: AmbientValues, kinds: [AmbientFollower.Kind]) -> [(String, JSONValue)] {
    kinds.flatMap { kind -> [(String, JSONValue)] in
      switch kind {
      case .light:
        return [
          ("has_ambient_light", .bool(v.hasLight)),
          ("light_level", v.hasLight ? .number(v.lightLevel) : .null),
          ("light_level_unit", .string(v.lightUnit)),
        ]
      case .proximity:
        return [
          ("has_proximity", .bool(v.hasProximity)),
          ("proximity_near", v.hasProximity ? .bool(v.proximityNear) : .null),
        ]
      case .compass:
        return [
          ("has_compass", .bool(v.hasCompass)),
          (
            "compass_heading",
            v.hasCompass && v.compassHeading >= 0 ? .number(v.compassHeading) : .null
          ),
        ]
      }
    }
  }

  /// `, light 55 lux, proximity far, heading 90 degrees` (or `no light sensor`, ...); the unit
  /// is `lux` or `vendor` (applesmc's percentage).
  static func line(_ v: AmbientValues, kinds: [AmbientFollower.Kind]) -> String {
    kinds.map { kind -> String in
      switch kind {
      case .light:
        guard v.hasLight else { return ", no light sensor" }
        return ", light \(oneDecimal(v.lightLevel)) \(v.lightUnit)"
      case .proximity:
        guard v.hasProximity else { return ", no proximity sensor" }
        return ", proximity \(v.proximityNear ? "near" : "far")"
      case .compass:
        guard v.hasCompass else { return ", no compass" }
        guard v.compassHeading >= 0 else { return ", heading unknown" }
        return ", heading \(oneDecimal(v.compassHeading)) degrees"
      }
    }.joined()
  }

  /// One decimal at most: finer than any light sensor's or compass's noise.
  private static func oneDecimal(_ value: Double) -> String {
    FixedPoint.format(value, decimals: 1, trimZeros: true)
  }
}
