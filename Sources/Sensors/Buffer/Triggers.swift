import TextFormats

/// An IIO trigger device (`/sys/bus/iio/devices/triggerN`) as seen by udev.
public struct TriggerInfo: Equatable, Sendable {
  /// The trigger's `name` attribute, what `trigger/current_trigger` takes.
  public var name: String
  /// The sysfs path of the trigger's parent device (the physical device whose driver
  /// allocated it).
  public var parentSyspath: String?

  /// Creates one.
  public init(name: String, parentSyspath: String?) {
    self.name = name
    self.parentSyspath = parentSyspath
  }
}

/// Finds the trigger that belongs to an accelerometer.
///
/// The kernel's convention: a driver that needs a trigger allocates its own data-ready trigger
/// with `devm_iio_trigger_alloc(parent, "%s-dev%d", indio_dev->name, iio_device_id(indio_dev))`
/// (bmc150, kxcjk-1013, mma8452, hid-sensor-accel-3d, ...), so it is called
/// `<name>-dev<N>` for `iio:deviceN`, and its sysfs parent is the same physical device as the
/// IIO device's parent. Other drivers use other names for the same thing (st_sensors:
/// `<name>-trigger`) or add event triggers (`<name>-any-motion-dev<N>`) that only fire on
/// movement and must not be used for sampling. So: the exact conventional name first, then a
/// sibling trigger (same parent) that is not a motion trigger. Nothing else is tried: a
/// trigger of another device (an hrtimer or sysfs trigger somebody set up) is not ours to take.
public enum TriggerChoice {
  /// The trigger to attach, with the reason for the log, or `nil` if the device has none.
  public static func choose(
    deviceName: String?, deviceNumber: Int?, deviceParent: String?, triggers: [TriggerInfo]
  ) -> (trigger: TriggerInfo, reason: String)? {
    if let deviceName, let deviceNumber {
      let conventional = "\(deviceName)-dev\(deviceNumber)"
      if let hit = triggers.first(where: { $0.name == conventional }) {
        return (hit, "named <name>-dev<N>")
      }
    }
    guard let deviceParent else { return nil }
    let siblings = triggers.filter {
      $0.parentSyspath == deviceParent && !$0.name.containsText("motion")
    }.sorted { a, b in
      let ad = a.name.containsText("-dev")
      let bd = b.name.containsText("-dev")
      if ad != bd { return ad }
      return a.name < b.name
    }
    if let hit = siblings.first { return (hit, "same parent device") }
    return nil
  }
}

/// Converts kernel scan timestamps to `CLOCK_MONOTONIC`.
///
/// The kernel stamps scans with the device's `current_timestamp_clock` (realtime by default).
/// orientd asks for `monotonic` while sampling; when it cannot, the offset between the two
/// clocks, measured when the scans are read, is subtracted.
public struct TimestampConverter: Equatable, Sendable {
  /// The clock the device stamps with.
  public var clock: TimestampClock

  /// Creates a converter for `clock`.
  public init(clock: TimestampClock) {
    self.clock = clock
  }

  /// `timestamp` in `CLOCK_MONOTONIC`, given both clocks read at (nearly) the same moment.
  public func monotonic(_ timestamp: Int64, clockNow: Int64, monotonicNow: Int64) -> Int64 {
    if clock == .monotonic { return timestamp }
    let offset = clockNow &- monotonicNow
    return timestamp &- offset
  }
}
