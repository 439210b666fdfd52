import JSON
import OrientCore

extension AccelerometerDescription {
  /// The keys of `jsonValue` that 0.1 spelt in camelCase (`mount_matrix` was `mountMatrix`);
  /// `orientd --list-sensors --json` also writes the old spelling until 0.3.
  public static let renamedJSONKeys: Set<String> = [
    "hwdb_key", "location_source", "mount_matrix", "mount_matrix_source", "scale_source",
    "sampling_frequency", "sampling_frequency_attribute", "available_frequencies",
    "mount_matrix_candidates",
  ]

  /// Everything `orientd --list-sensors --json` shows about one sensor (snake_case keys).
  public var jsonValue: JSONValue {
    func string(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
    var members: [(String, JSONValue)] = [
      ("device", .string(sysname)),
      // After "device": consumers match lines that begin with it.
      ("kind", .string(SensorKind.accelerometer.rawValue)),
      ("syspath", .string(facts.syspath)),
      ("devnode", string(facts.devnode)),
      ("name", string(facts.name)),
      ("label", string(facts.label)),
      ("modalias", string(facts.modalias)),
      ("hwdb_key", string(facts.hwdbKey)),
      ("location", .string(location.rawValue)),
      ("location_source", .string(locationSource)),
      ("modes", .array(readModes.map { .string($0) })),
      ("mount_matrix", .string(mountMatrix.description)),
      ("mount_matrix_source", .string(mountMatrixSource.description)),
      ("scale", .array([.number(scale.x), .number(scale.y), .number(scale.z)])),
      ("scale_source", .string(facts.scale.map(\.attribute).joined(separator: ","))),
      ("offset", .array([.number(offset.x), .number(offset.y), .number(offset.z)])),
      ("sampling_frequency", samplingFrequency.map { .number($0) } ?? .null),
      ("sampling_frequency_attribute", string(facts.samplingFrequency?.attribute)),
      (
        "available_frequencies",
        availableFrequencies.map { .string($0.text) } ?? .null
      ),
    ]
    if facts.udevMountMatrix != nil || !facts.sysfsMountMatrices.isEmpty {
      var sources: [(String, JSONValue)] = []
      if let udev = facts.udevMountMatrix { sources.append(("ACCEL_MOUNT_MATRIX", .string(udev))) }
      for item in facts.sysfsMountMatrices { sources.append((item.attribute, .string(item.text))) }
      members.append(("mount_matrix_candidates", .object(sources)))
    }
    members.append(("problems", .array(problems.map { .string($0) })))
    return .object(members)
  }
}

extension SensorStatus {
  /// The active accelerometer as a JSON object: the description plus mode, rate and trigger.
  public var jsonValue: JSONValue {
    guard let d = accelerometer, case .object(var members) = d.jsonValue else { return .null }
    members.append(("mode", .string(mode.rawValue)))
    members.append(("rate", .number(rate)))
    members.append(("trigger", trigger.map { .string($0) } ?? .null))
    members.append(("sampling", .bool(isSampling)))
    return .object(members)
  }
}
