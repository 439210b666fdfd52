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

extension FrequencySetting {
  /// A companion's own frequency attribute (a BMI160's `in_anglvel_sampling_frequency` beside
  /// `in_accel_sampling_frequency`) set to its stream rate, recorded in `journal`; with one
  /// attribute for both (`sampling_frequency`) the accelerometer's `rate` is the companion's.
  ///
  /// - Returns: the companion's frequency in effect afterwards.
  static func applyCompanion(
    _ info: MotionDescription, besides accelerometer: AccelerometerDescription, rate: Double,
    journal: SysfsJournal, logger: Logger
  ) -> Double {
    guard let attribute = info.frequencyAttribute,
      attribute != accelerometer.facts.samplingFrequency?.attribute
    else { return rate }
    let target = info.streamRate
    do {
      try journal.set("\(info.syspath)/\(attribute)", AvailableValues.format(target))
      logger.info("\(info.sysname): \(attribute) -> \(AvailableValues.format(target)) Hz")
      return target
    } catch {
      logger.notice("\(info.sysname): cannot set \(attribute) to \(target): \(error)")
      return info.samplingFrequency ?? rate
    }
  }
}
