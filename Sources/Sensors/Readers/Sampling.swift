import OrientCore
import OrientLog
import SystemKit

/// How a sensor is being read.
public enum SamplingMode: String, Equatable, Sendable {
  /// `/dev/iio:deviceN`: the kernel pushes scans, stamped by the kernel.
  case buffered
  /// `in_accel_{x,y,z}_raw` read on a timer.
  case polled
  /// An input-subsystem accelerometer's evdev node, read as the driver reports (`EV_ABS`).
  case events
}

/// One reading: gravity plus acceleration in m/s^2 in the display frame, at a
/// `CLOCK_MONOTONIC` time.
public struct AccelerometerSample: Equatable, Sendable {
  /// `CLOCK_MONOTONIC` nanoseconds: the kernel's scan timestamp in buffered mode (converted
  /// from the device's clock), the time of the read in polled mode.
  public var timestamp: Int64
  /// The calibrated vector in the display frame, m/s^2.
  public var acceleration: Vector3

  /// Creates a sample.
  public init(timestamp: Int64, acceleration: Vector3) {
    self.timestamp = timestamp
    self.acceleration = acceleration
  }
}

/// An uncalibrated reading from a sampler (raw values are integers from a buffer; a polled
/// driver may write decimals such as `-25.6`).
struct RawReading {
  var timestamp: Int64
  var x: Double
  var y: Double
  var z: Double
}

/// What a sampler tells its owner.
enum SamplerEvent {
  /// A reading.
  case reading(RawReading)
  /// The device went away (ENODEV/ENOENT/ENXIO, hang-up); the sampler has stopped itself.
  case gone(String)
  /// A buffered sampler has had no scan for a while, even after re-enabling the buffer; it
  /// keeps trying, and the owner may read the device another way instead.
  case stalled(String)
}

/// A running sampler; `stop()` ends it and restores the device.
protocol Sampler: AnyObject {
  /// How it reads.
  var mode: SamplingMode { get }
  /// Readings per second it aims for (the device's frequency in buffered mode).
  var rate: Double { get }
  /// Readings skipped as garbage so far.
  var skipped: Int { get }
  /// Stops reading, closes descriptors and restores sysfs; idempotent.
  func stop()
}

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
