import Glibc
import OrientCore
import TextFormats

/// How orientd samples accelerometers: the `[sampling]` section of the configuration file.
///
/// ```
/// [sampling]
/// mode = auto          # auto | buffered | polled
/// poll-rate = 30       # Hz, polled mode
/// buffered-rate = 30   # Hz, the smallest sampling_frequency at least this is chosen
/// buffer-length = 8    # scans the kernel may queue
/// adaptive = on        # on | off: read slowly while the device is still
/// still-rate = 5       # Hz while still (adaptive)
/// settle-time = 1      # seconds of calm before slowing down (adaptive)
/// hysteresis = auto    # auto | off | m/s^2: a HID sensor hub's change sensitivity
/// ```
public struct SamplingConfiguration: Equatable, Sendable {
  /// Which reading method to use.
  public enum Mode: String, Equatable, Sendable, CaseIterable {
    /// Buffered when the device supports it (and is free), polled otherwise.
    case auto
    /// Buffered only; a device without a usable buffer is not sampled.
    case buffered
    /// Polled only (read the `_raw` attributes on a timer).
    case polled
  }

  /// Default polled rate in Hz: one reading every 33 ms while claimed. The detector commits an
  /// abrupt turn after two or three agreeing readings (and at least 40 ms), so a change reaches
  /// clients in about 85 ms (median), a quarter of iio-sensor-proxy's 350 ms, while reading a
  /// polled (often I2C) sensor 40% less often than at 50 Hz. See docs/sensors.md ("Default rates").
  public static let defaultPollRate = 30.0
  /// Default buffered rate in Hz (the device rounds up to what it supports).
  public static let defaultBufferedRate = 30.0
  /// Default kernel buffer length in scans.
  public static let defaultBufferLength = 8

  /// The reading method.
  public var mode: Mode = .auto
  /// Polled mode: readings per second.
  public var pollRate: Double = SamplingConfiguration.defaultPollRate
  /// Buffered mode: the lowest acceptable `sampling_frequency` in Hz.
  public var bufferedRate: Double = SamplingConfiguration.defaultBufferedRate
  /// Buffered mode: `buffer/length` while sampling.
  public var bufferLength: Int = SamplingConfiguration.defaultBufferLength
  /// Adaptive sampling: the still rate and when to use it (`adaptive`, `still-rate`,
  /// `settle-time`).
  public var adaptive = AdaptiveSampling.Parameters()
  /// The change sensitivity asked of a HID sensor hub (`hysteresis`): from the noise (`auto`,
  /// once the device is still, with `adaptive` on), not at all, or a value in m/s^2.
  public var hysteresis = HubSensitivitySetting.auto
  /// Whether a still device may be left silent (hub sensitivity, motion trigger, motion
  /// events). Not a file key: `orientd calibrate` and `record` turn it off, since they need
  /// readings while the device lies still.
  public var silentWhileStill = true
  /// How often a device left silent is checked with one polled read (not a file key: a
  /// minute costs one wakeup; tests shorten it).
  public var quietCheckInterval: Duration = .seconds(60)
  /// The defaults.
  public init() {}
}

/// A per-device override: the `[device "NAME"]` sections of the configuration file.
///
/// ```
/// [device "tablet-lid"]
/// match-name = mxc4005          # IIO name attribute (glob, as fnmatch(3))
/// match-label = accel-display   # sysfs label (glob)
/// match-modalias = acpi:MXC6655* # the device's MODALIAS or its nearest parent's (glob)
/// mount-matrix = 0, 1, 0; -1, 0, 0; 0, 0, 1
/// location = display            # display | base
/// ```
///
/// Every `match-*` key given must match; a section needs at least one.
public struct DeviceOverride: Equatable, Sendable {
  /// The quoted section argument, for messages.
  public var title: String
  /// Where the section starts (`path:line`).
  public var origin: String
  /// Pattern for the `name` attribute.
  public var matchName: String?
  /// Pattern for the `label` attribute.
  public var matchLabel: String?
  /// Pattern for the modalias.
  public var matchModalias: String?
  /// The matrix text and where it was written (`path:line`); checked when the file is read.
  public var mountMatrix: (text: String, origin: String)?
  /// A location that overrides udev and sysfs.
  public var location: SensorLocation?

  /// Whether this override applies to a device with these identifiers.
  public func matches(name: String?, label: String?, modalias: String?) -> Bool {
    func check(_ pattern: String?, _ value: String?) -> Bool {
      guard let pattern else { return true }
      guard let value else { return false }
      return fnmatch(pattern, value, 0) == 0
    }
    return check(matchName, name) && check(matchLabel, label) && check(matchModalias, modalias)
  }

  /// Compares everything but the matrix origin tuple identity.
  public static func == (lhs: DeviceOverride, rhs: DeviceOverride) -> Bool {
    lhs.title == rhs.title && lhs.origin == rhs.origin && lhs.matchName == rhs.matchName
      && lhs.matchLabel == rhs.matchLabel && lhs.matchModalias == rhs.matchModalias
      && lhs.mountMatrix?.text == rhs.mountMatrix?.text
      && lhs.mountMatrix?.origin == rhs.mountMatrix?.origin && lhs.location == rhs.location
  }
}

/// The accelerometer part of orientd's configuration.
public struct AccelerometerConfiguration: Equatable, Sendable {
  /// `[sampling]`.
  public var sampling = SamplingConfiguration()
  /// `[device "…"]` sections, in file order (the first matching one applies).
  public var devices: [DeviceOverride] = []

  /// The defaults: auto mode, default rates, no overrides.
  public init() {}

  /// Reads the `[sampling]` and `[device]` sections (`SensorsConfiguration.samplingSection`,
  /// `deviceSection`); other sections are left to other parts of the daemon.
  ///
  /// - Throws: `ConfigError` at `path:line` for unknown keys, bad values, or a device section
  ///   without a match key.
  public init(_ file: ConfigFile) throws(ConfigError) {
    var sensors = SensorsConfiguration()
    for section in file.sections
    where section.name == SensorsConfiguration.samplingSection.name
      || section.name == SensorsConfiguration.deviceSection.name
    {
      let rule =
        section.name == SensorsConfiguration.deviceSection.name
        ? SensorsConfiguration.deviceSection : SensorsConfiguration.samplingSection
      try rule.read(section, into: &sensors, source: file.source)
    }
    self = sensors.accelerometer
  }

  /// The first override matching a device, if any.
  public func override(name: String?, label: String?, modalias: String?) -> DeviceOverride? {
    devices.first { $0.matches(name: name, label: label, modalias: modalias) }
  }
}

extension DeviceOverride {
  init(title: String, origin: String) {
    self.title = title
    self.origin = origin
  }
}
