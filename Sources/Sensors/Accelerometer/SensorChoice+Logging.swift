extension SensorChoice {
  /// Whether switching from `a` to `b` needs no restart: same device, location, capabilities
  /// and calibration (a change event also reports the frequency orientd itself set).
  static func isSameSensor(_ a: AccelerometerDescription, _ b: AccelerometerDescription)
    -> Bool
  {
    a.facts.syspath == b.facts.syspath && a.facts.devnode == b.facts.devnode
      && a.location == b.location && a.canPoll == b.canPoll && a.canBuffer == b.canBuffer
      && a.mountMatrix == b.mountMatrix && a.mountMatrixSource == b.mountMatrixSource
      && a.scale == b.scale && a.offset == b.offset
  }

  /// The log line for `outcome`: which sensor is used and why the others are not.
  static func summary(_ outcome: Outcome, anyPresent: Bool) -> String {
    var text: String
    if let chosen = outcome.chosen {
      text =
        "using \(chosen.sysname) (\(chosen.facts.name ?? "?")) for orientation: "
        + "\(chosen.location == .display ? "display sensor" : "location unknown, assumed display")"
    } else if !anyPresent {
      text = "no accelerometer present"
    } else {
      text = "no display accelerometer: orientation undefined"
    }
    if !outcome.notChosen.isEmpty {
      text += "; not used: " + outcome.notChosen.joined(separator: "; ")
    }
    return text
  }
}
