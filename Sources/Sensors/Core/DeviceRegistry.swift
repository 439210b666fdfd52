/// The IIO devices udev reported: accelerometers (their facts and parent device) and trigger
/// devices, by syspath. Bookkeeping only; `SensorManager` decides what a change means.
struct DeviceRegistry {
  /// Accelerometers by syspath.
  private(set) var facts: [String: DeviceFacts] = [:]
  /// The parent device of each accelerometer (for triggers that belong to the same chip).
  private var parents: [String: String] = [:]
  /// Trigger devices by syspath.
  private var triggers: [String: TriggerInfo] = [:]

  /// Whether no accelerometer is known.
  var isEmpty: Bool { facts.isEmpty }

  /// Every accelerometer, described with `configuration`, ordered by device number.
  func sensors(configuration: AccelerometerConfiguration) -> [AccelerometerDescription] {
    facts.values.map { AccelerometerDescription(facts: $0, configuration: configuration) }
      .sorted {
        ($0.facts.deviceNumber ?? Int.max, $0.sysname) < (
          $1.facts.deviceNumber ?? Int.max, $1.sysname
        )
      }
  }

  /// The trigger devices, by name.
  var knownTriggers: [TriggerInfo] { triggers.values.sorted { $0.name < $1.name } }

  /// The trigger devices, in no particular order.
  var allTriggers: [TriggerInfo] { Array(triggers.values) }

  /// The parent device of the accelerometer at `syspath`.
  func parent(of syspath: String) -> String? { parents[syspath] }

  /// Records or forgets (`nil`) the trigger device at `syspath`.
  mutating func setTrigger(_ trigger: TriggerInfo?, at syspath: String) {
    triggers[syspath] = trigger
  }

  /// Records the accelerometer at `syspath`.
  ///
  /// - Returns: the facts it had before (`nil` for a new one).
  mutating func record(_ gathered: DeviceFacts, at syspath: String, parent: String?)
    -> DeviceFacts?
  {
    let previous = facts[syspath]
    facts[syspath] = gathered
    parents[syspath] = parent
    return previous
  }

  /// Forgets the device at `syspath`.
  ///
  /// - Returns: its facts if it was a known accelerometer.
  @discardableResult
  mutating func remove(_ syspath: String) -> DeviceFacts? {
    parents.removeValue(forKey: syspath)
    return facts.removeValue(forKey: syspath)
  }

  /// Forgets every device not in `present` (after enumerating again).
  ///
  /// - Returns: the syspaths of the accelerometers forgotten.
  mutating func keepOnly(_ present: Set<String>) -> [String] {
    let gone = facts.keys.filter { !present.contains($0) }
    for syspath in gone { remove(syspath) }
    for syspath in triggers.keys where !present.contains(syspath) {
      triggers.removeValue(forKey: syspath)
    }
    return gone
  }
}
