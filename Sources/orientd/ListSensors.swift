import Glibc
import JSON
import OrientCore
import OrientDaemon
import OrientLog
import Sensors
import SystemKit

/// `orientd --list-sensors [--json] [--config FILE] [-v]`: every accelerometer found (IIO and
/// input-subsystem ones), what orientd makes of it, and which one it would use, for users
/// writing hwdb quirks; then every light, proximity (IIO, applesmc, input switch) and compass
/// sensor; then every gyroscope and rotation sensor.
enum ListSensorsCommand {
  /// Runs the command and returns the exit code: 0 when any sensor exists (a laptop with only
  /// a light sensor has something for orientd to serve), 69 when there is none of any kind.
  static func main(_ options: SensorCommandOptions) -> ExitStatus {
    let configuration = SensorCommandSupport.loadConfiguration(options.configPath)
    var logger = SensorCommandSupport.logger(verbose: options.verbose)
    if !options.verbose { logger.level = .error }
    // Every kind, found the way the daemon finds them.
    let hub: SensorHub
    do {
      let loop = try EventLoop()
      hub = try SensorHub(loop: loop, configuration: configuration, logger: logger)
      try hub.begin(monitor: false)
    } catch {
      SensorCommandSupport.fail(.unavailable, "cannot enumerate the sensors: \(error)")
    }
    let sensors = hub.accelerometers
    let choice = hub.choice(of: .accelerometer)
    let outcome = SensorChoice.Outcome(
      chosen: choice.chosen?.accelerometer, notChosen: choice.notChosen)
    let active = hub.status(of: .accelerometer)
    let ambient = hub.ambientSensors
    let motion = MotionListing(hub: hub)
    // The sensor's own 1 g, read for a moment from the one orientd would use (see docs/detector.md).
    let nominal =
      (try? DaemonConfiguration.load(path: options.configPath))?.detector.gravity ?? standardGravity
    let gravity = outcome.chosen.map { GravityCheck(sensor: $0, nominal: nominal) }
    if options.json {
      let document = JSONValue.object([
        ("sensors", .array(sensors.map(\.jsonValue))),
        ("chosen", outcome.chosen.map { .string($0.sysname) } ?? .null),
        ("chosen_mode", active.map { .string($0.mode.rawValue) } ?? .null),
        ("chosen_rate", active.map { .number($0.rate) } ?? .null),
        ("not_chosen", .array(outcome.notChosen.map { .string($0) })),
        ("triggers", .array(hub.knownTriggers.map { .string($0.name) })),
        ("gravity_estimate", gravity?.jsonValue ?? .null),
        ("ambient", .array(ambient.map(ambientJSON))),
      ])
      let deprecated = DeprecatedKeys(
        AccelerometerDescription.renamedJSONKeys.union(["chosen_mode", "chosen_rate", "not_chosen"])
      )
      // The 0.1 spellings are kept for what 0.1 printed; the motion list is new and has none.
      var output = deprecated.addingAliases(to: document)
      if case .object(let pairs) = output {
        output = .object(pairs + [("motion", motion.jsonValue)])
      }
      StandardStream.output.writeLine(output.encoded())
    } else {
      StandardStream.output.writeLine(
        text(sensors, outcome: outcome, active: active, gravity: gravity))
      StandardStream.output.writeLine(ambientText(ambient))
      StandardStream.output.writeLine(motion.text)
    }
    return sensors.isEmpty && ambient.isEmpty && motion.isEmpty ? .unavailable : .success
  }

  private static func ambientJSON(_ d: AmbientDescription) -> JSONValue {
    .object([
      ("kind", .string(d.kind.rawValue)), ("device", .string(d.sysname)),
      ("syspath", .string(d.syspath)), ("name", d.name.map { .string($0) } ?? .null),
      ("read", .string(d.driver.description)), ("classified_by", .string(d.classifiedBy)),
      ("unit", d.kind == .light ? .string(d.unit.rawValue) : .null),
      ("scale", .number(d.scale)), ("offset", .number(d.offset)),
      ("near_level", d.nearLevel.map { .number($0) } ?? .null),
      ("near_level_source", d.nearLevelSource.map { .string($0) } ?? .null),
    ])
  }

  private static func ambientText(_ ambient: [AmbientDescription]) -> String {
    guard !ambient.isEmpty else {
      return "\nNo ambient light, proximity or compass sensor found."
    }
    var lines = [""]
    for d in ambient {
      var line = "\(d.kind.rawValue): \(d.sysname) (\(d.name ?? "no name")) read \(d.driver)"
      if d.kind == .light { line += " in \(d.unit.rawValue)" }
      if d.scale != 1 || d.offset != 0 { line += ", scale \(d.scale) offset \(d.offset)" }
      if let level = d.nearLevel { line += ", near above \(level) (\(d.nearLevelSource ?? "?"))" }
      lines.append(line + "; \(d.classifiedBy)")
    }
    return lines.joined(separator: "\n")
  }

  private static func text(
    _ sensors: [AccelerometerDescription], outcome: SensorChoice.Outcome, active: SensorStatus?,
    gravity: GravityCheck?
  ) -> String {
    if sensors.isEmpty {
      return "No accelerometer found (looked for in_accel_{x,y,z}_raw and "
        + "scan_elements/in_accel_{x,y,z}_en in the iio subsystem, and for evdev nodes with "
        + "ID_INPUT_ACCELEROMETER=1 or IIO_SENSOR_PROXY_TYPE=input-accel in the input subsystem)."
    }
    var lines: [String] = []
    func row(_ key: String, _ value: String) {
      lines.append("  " + (key + ":").padding(18) + value)
    }
    for sensor in sensors {
      let used = sensor.sysname == outcome.chosen?.sysname
      lines.append("\(sensor.sysname)\(used ? "  (used for orientation)" : "")")
      row("name", sensor.facts.name ?? "-")
      row("label", sensor.facts.label ?? "-")
      row("syspath", sensor.facts.syspath)
      row("device node", sensor.facts.devnode ?? "-")
      row("modalias", sensor.facts.modalias ?? "-")
      row("hwdb key", sensor.facts.hwdbKey ?? "- (no parent with a modalias)")
      row("location", "\(sensor.location.rawValue) (\(sensor.locationSource))")
      var modes = sensor.readModes.joined(separator: ", ")
      if used, let active, active.mode == .events {
        modes += " (would use the evdev node as the driver reports)"
      } else if used, let active {
        modes += " (would use \(active.mode.rawValue) at \(AvailableValues.format(active.rate)) Hz)"
      }
      row("modes", modes.isEmpty ? "-" : modes)
      row("mount matrix", "\(sensor.mountMatrix) (\(sensor.mountMatrixSource))")
      if let udev = sensor.facts.udevMountMatrix { row("  udev", udev) }
      for item in sensor.facts.sysfsMountMatrices {
        row("  sysfs", "\(item.attribute) = \(item.text)")
      }
      let scaleSource = sensor.facts.scale.map(\.attribute).joined(separator: ", ")
      row(
        "scale",
        "\(vector(sensor.scale)) (\(scaleSource.isEmpty ? "none, assumed 1" : scaleSource))")
      row("offset", vector(sensor.offset))
      if let attribute = sensor.facts.samplingFrequency?.attribute {
        var text =
          "\(sensor.samplingFrequency.map { AvailableValues.format($0) } ?? "?") Hz (\(attribute))"
        if let available = sensor.availableFrequencies { text += ", available: \(available.text)" }
        row("sampling freq", text)
      } else {
        row("sampling freq", "-")
      }
      if used, let gravity { row("gravity (1 g)", gravity.text) }
      for problem in sensor.problems { row("problem", problem) }
      lines.append("")
    }
    if let chosen = outcome.chosen {
      lines.append("Would use \(chosen.sysname) for orientation.")
    } else {
      lines.append("Would use none: no display accelerometer (orientation stays undefined).")
    }
    for reason in outcome.notChosen { lines.append("  not used: \(reason)") }
    return lines.joined(separator: "\n")
  }

  private static func vector(_ v: Vector3) -> String {
    if v.x == v.y && v.y == v.z { return AvailableValues.format(v.x) }
    return [v.x, v.y, v.z].map { AvailableValues.format($0) }.joined(separator: ", ")
  }
}

extension String {
  fileprivate func padding(_ width: Int) -> String {
    count >= width ? self + " " : self + String(repeating: " ", count: width - count)
  }
}
