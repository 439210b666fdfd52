import OrientCore
import OrientLog
import SystemKit

/// Chooses and applies `sampling_frequency` so that the device produces at least `target`
/// readings per second.
enum FrequencySetting {
  /// Writes the smallest available frequency at least `target` (or the largest available),
  /// recording the old value in `journal`.
  ///
  /// - Returns: the frequency in effect afterwards, or `nil` if the device has none.
  static func apply(
    target: Double, description: AccelerometerDescription, journal: SysfsJournal, logger: Logger
  ) -> Double? {
    guard let attribute = description.facts.samplingFrequency?.attribute else { return nil }
    let path = "\(description.facts.syspath)/\(attribute)"
    guard let currentText = Sysfs.readIfPresent(path),
      let current = try? SysfsValue.parseDecimal(currentText)
    else { return nil }
    let wanted: (text: String, value: Double)
    if let available = description.availableFrequencies {
      wanted = available.smallest(atLeast: target)
    } else if current >= target {
      return current
    } else {
      wanted = (AvailableValues.format(target), target)
    }
    if abs(wanted.value - current) < 1e-9 { return current }
    do {
      try journal.set(path, wanted.text)
      logger.info(
        "\(description.sysname): \(attribute) \(currentText) -> \(wanted.text) Hz "
          + "(lowest meeting \(AvailableValues.format(target)) Hz)")
    } catch {
      logger.warning(
        "\(description.sysname): cannot set \(attribute) to \(wanted.text): \(error); "
          + "keeping \(currentText) Hz")
      return current
    }
    return Sysfs.readIfPresent(path).flatMap { try? SysfsValue.parseDecimal($0) } ?? wanted.value
  }
}
