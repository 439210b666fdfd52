import JSON
import OrientCore
import Sensors

/// `orientd --list-sensors`' gyroscopes and rotation sensors (`"kind": "gyroscope"` and
/// `"rotation"` in JSON), each with how it would be read and whether it is the one used.
struct MotionListing {
  /// The sensors, gyroscopes first, and whether each is chosen.
  let sensors: [(sensor: Sensor, description: MotionDescription, chosen: Bool)]

  /// The motion sensors `hub` found.
  init(hub: SensorHub) {
    var found: [(Sensor, MotionDescription, Bool)] = []
    for kind in [SensorKind.gyroscope, .rotation, .magnetometer] {
      let chosen = hub.choice(of: kind).chosen?.syspath
      for sensor in hub.sensors(for: kind) {
        guard let d = sensor.motion else { continue }
        found.append((sensor, d, sensor.syspath == chosen))
      }
    }
    sensors = found
  }

  /// What its values are in.
  static func unit(_ kind: SensorKind) -> String {
    switch kind {
    case .rotation: "quaternion"
    case .magnetometer: "gauss"
    default: "rad/s"
    }
  }

  /// Whether there is none.
  var isEmpty: Bool { sensors.isEmpty }

  /// The `motion` array.
  var jsonValue: JSONValue {
    .array(
      sensors.map { sensor, d, chosen in
        .object([
          ("kind", .string(d.kind.rawValue)), ("device", .string(d.sysname)),
          ("syspath", .string(d.syspath)), ("name", d.name.map { .string($0) } ?? .null),
          ("devnode", d.devnode.map { .string($0) } ?? .null),
          ("read", .array(sensor.drivers.map { .string($0) })),
          ("unit", .string(MotionListing.unit(d.kind))),
          ("scale", .number(d.scale)), ("offset", .number(d.offset)),
          ("mount_matrix", .string(d.mountMatrix.description)),
          ("mount_matrix_source", .string(d.mountMatrixSource)),
          ("sampling_frequency", d.samplingFrequency.map { .number($0) } ?? .null),
          (
            "heading",
            d.kind == .rotation ? .string(d.headingIsAbsolute ? "absolute" : "relative") : .null
          ),
          ("chosen", .bool(chosen)),
        ])
      })
  }

  /// The text: one line per sensor.
  var text: String {
    guard !sensors.isEmpty else { return "\nNo gyroscope or rotation sensor found." }
    var lines = [""]
    for (sensor, d, chosen) in sensors {
      var line = "\(d.kind.rawValue): \(d.sysname) (\(d.name ?? "no name")) read "
      line += sensor.drivers.joined(separator: " or ") + ", scale \(d.scale)"
      if d.kind == .gyroscope { line += ", mount matrix \(d.mountMatrix) (\(d.mountMatrixSource))" }
      if d.kind == .rotation {
        line += ", heading \(d.headingIsAbsolute ? "absolute" : "relative")"
      }
      lines.append(line + (chosen ? "  (used)" : ""))
    }
    return lines.joined(separator: "\n")
  }
}
