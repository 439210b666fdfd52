import JSON
import OrientCore

extension AccelerometerDescription {
  /// Everything `orientd --list-sensors --json` shows about one sensor.
  public var jsonValue: JSONValue {
    func string(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
    var members: [(String, JSONValue)] = [
      ("device", .string(sysname)),
      ("syspath", .string(facts.syspath)),
      ("devnode", string(facts.devnode)),
      ("name", string(facts.name)),
      ("label", string(facts.label)),
      ("modalias", string(facts.modalias)),
      ("hwdbKey", string(facts.hwdbKey)),
      ("location", .string(location.rawValue)),
      ("locationSource", .string(locationSource)),
      ("modes", .array(readModes.map { .string($0) })),
      ("mountMatrix", .string(mountMatrix.description)),
      ("mountMatrixSource", .string(mountMatrixSource.description)),
      ("scale", .array([.number(scale.x), .number(scale.y), .number(scale.z)])),
      ("scaleSource", .string(facts.scale.map(\.attribute).joined(separator: ","))),
      ("offset", .array([.number(offset.x), .number(offset.y), .number(offset.z)])),
      ("samplingFrequency", samplingFrequency.map { .number($0) } ?? .null),
      ("samplingFrequencyAttribute", string(facts.samplingFrequency?.attribute)),
      (
        "availableFrequencies",
        availableFrequencies.map { .string($0.text) } ?? .null
      ),
    ]
    if facts.udevMountMatrix != nil || !facts.sysfsMountMatrices.isEmpty {
      var sources: [(String, JSONValue)] = []
      if let udev = facts.udevMountMatrix { sources.append(("ACCEL_MOUNT_MATRIX", .string(udev))) }
      for item in facts.sysfsMountMatrices { sources.append((item.attribute, .string(item.text))) }
      members.append(("mountMatrixCandidates", .object(sources)))
    }
    members.append(("problems", .array(problems.map { .string($0) })))
    return .object(members)
  }
}

extension SensorStatus {
  /// The active sensor as a JSON object: the description plus mode, rate and trigger.
  public var jsonValue: JSONValue {
    guard case .object(var members) = description.jsonValue else { return .null }
    members.append(("mode", .string(mode.rawValue)))
    members.append(("rate", .number(rate)))
    members.append(("trigger", trigger.map { .string($0) } ?? .null))
    members.append(("sampling", .bool(isSampling)))
    return .object(members)
  }
}
