import CLinuxShims
import Glibc
import OrientCore
import SystemKit
import TextFormats

/// The hub sensitivity to ask a HID sensor hub for (`[sampling] hysteresis`).
public enum HubSensitivitySetting: Equatable, Sendable {
  /// From the noise the sensor shows: the still threshold of `AdaptiveSampling`, written once
  /// the device is first found still.
  case auto
  /// Leave `in_accel_hysteresis` as found.
  case off
  /// This many m/s^2, written when sampling starts.
  case fixed(Double)
}

/// A HID sensor hub's change sensitivity, as hid-sensor-accel-3d shows it: `in_accel_hysteresis`
/// (HID Change Sensitivity Absolute, in the unit of the acceleration fields) or, where only that
/// exists, `in_accel_hysteresis_relative` (Change Sensitivity Relative, percent of the value).
struct HubSensitivity: Equatable {
  /// The attribute's sysfs path.
  let path: String
  /// Whether it is the relative (percent) form.
  let relative: Bool
  /// m/s^2 per unit of the attribute (absolute form).
  let unit: Double

  /// The device's sensitivity attribute, if the hub has the property.
  ///
  /// The kernel creates the attribute for every HID accelerometer but answers EINVAL when the
  /// hub's report descriptor lacks the property, so "present" means "readable as a number".
  static func find(syspath: String, scale: Double) -> HubSensitivity? {
    for (name, relative) in [
      ("in_accel_hysteresis", false), ("in_accel_hysteresis_relative", true),
    ] {
      let path = "\(syspath)/\(name)"
      guard let text = Sysfs.readIfPresent(path), (try? SysfsValue.parseDecimal(text)) != nil
      else { continue }
      return HubSensitivity(path: path, relative: relative, unit: unitOfHysteresis(scale: scale))
    }
    return nil
  }

  /// m/s^2 per unit of `in_accel_hysteresis`.
  ///
  /// The driver reports the sensitivity as the HID field's value times 10^exponent, in the
  /// field's own unit (g, or m/s^2), while `in_accel_scale` is that unit in m/s^2 times
  /// 10^exponent. So the unit is the scale's decimal mantissa: 9.80665e-3 gives 9.80665 (g),
  /// 1e-2 gives 1 (m/s^2). A hub counting in cm/s^2 would be taken for m/s^2 and get a
  /// sensitivity 100 times too fine: more reports than needed, never a missed turn.
  static func unitOfHysteresis(scale: Double) -> Double {
    guard scale.isFinite, scale > 0 else { return 1 }
    let exponent = (log10(scale) + 1e-9).rounded(.down)
    return scale / pow(10, exponent)
  }

  /// The attribute's text for a threshold in m/s^2 (relative: percent of gravity).
  func text(forThreshold threshold: Double) -> String {
    let value = relative ? threshold / standardGravity * 100 : threshold / unit
    return FixedPoint.format(value, decimals: 6)
  }
}

/// Finds what a device offers for waking on motion.
enum MotionWakeups {
  /// The device's own any-motion trigger: `<name>-any-motion-dev<N>` (bmc150, kxcjk-1013), else a
  /// trigger of the same parent device with "motion" in its name.
  static func trigger(
    deviceName: String?, deviceNumber: Int?, deviceParent: String?, triggers: [TriggerInfo]
  ) -> String? {
    if let deviceName, let deviceNumber {
      let conventional = "\(deviceName)-any-motion-dev\(deviceNumber)"
      if triggers.contains(where: { $0.name == conventional }) { return conventional }
    }
    guard let deviceParent else { return nil }
    return triggers.filter { $0.parentSyspath == deviceParent && $0.name.containsText("motion") }
      .map(\.name).sorted().first
  }

  /// The enable attributes (names in `events/`) of the accelerometer's motion events: rate of
  /// change, threshold and magnitude events, rising or either direction. Falling ones (free
  /// fall, "no motion") are not motion starting.
  static func events(in names: [String]) -> [String] {
    names.filter { name in
      guard name.hasPrefix("in_accel"), name.hasSuffix("_en") else { return false }
      let kinds = ["_roc_", "_thresh_", "_mag_"]
      let directions = ["_rising_en", "_either_en"]
      return kinds.contains { name.containsText($0) } && directions.contains { name.hasSuffix($0) }
    }.sorted()
  }

  /// `buffer/hwfifo_watermark_max`: the most scans the chip's FIFO holds before interrupting.
  static func hardwareFIFO(syspath: String) -> Int? {
    guard let text = Sysfs.readIfPresent("\(syspath)/buffer/hwfifo_watermark_max"),
      let value = SysfsValue.parseInteger(text), value >= 2
    else { return nil }
    return Int(value)
  }
}

extension FileDescriptor {
  /// The IIO device's event descriptor (`IIO_GET_EVENT_FD_IOCTL`), non-blocking.
  ///
  /// - Throws: `SystemError` (ENODEV: the device has no events; EBUSY: another reader has them).
  func iioEventDescriptor() throws(SystemError) -> FileDescriptor {
    let fd = orient_iio_event_fd(rawValue)
    guard fd >= 0 else {
      throw SystemError(errno: errno, operation: "IIO_GET_EVENT_FD_IOCTL", path: path)
    }
    return FileDescriptor(owning: fd, path: "\(path) (events)")
  }
}
