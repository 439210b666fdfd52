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
  /// The frequencies of an accelerometer read with a companion from the same scans (a
  /// BMI160's gyroscope, asked for `requested` readings a second: `MotionDescription.
  /// bufferedFrequency(for:)`): the accelerometer at least `bufferedRate` and at least the
  /// companion's (every scan carries both), the companion's own attribute (a BMI160's
  /// `in_anglvel_sampling_frequency` beside `in_accel_sampling_frequency`) set to its
  /// frequency; with one attribute for both (`sampling_frequency`) the accelerometer's is the
  /// companion's. Recorded in `journal`.
  ///
  /// - Returns: the accelerometer's and the companion's frequencies in effect afterwards.
  static func apply(
    _ accelerometer: AccelerometerDescription,
    companion: (info: MotionDescription, requested: Double)?, bufferedRate: Double,
    journal: SysfsJournal, logger: Logger
  ) -> (accelerometer: Double, companion: Double) {
    let wanted = companion.map { $0.info.bufferedFrequency(for: $0.requested) }
    let target = max(bufferedRate, wanted?.value ?? 0)
    let rate =
      apply(target: target, description: accelerometer, journal: journal, logger: logger)
      ?? target
    guard let (info, requested) = companion, let wanted, let attribute = info.frequencyAttribute,
      attribute != accelerometer.facts.samplingFrequency?.attribute
    else { return (rate, rate) }
    do {
      try journal.set("\(info.syspath)/\(attribute)", wanted.text)
      logger.info(
        "\(info.sysname): \(attribute) \(wanted.text) Hz (\(AvailableValues.format(requested)) "
          + "asked)")
      return (rate, wanted.value)
    } catch {
      logger.notice("\(info.sysname): cannot set \(attribute) to \(wanted.text): \(error)")
      return (rate, info.samplingFrequency ?? rate)
    }
  }
}
