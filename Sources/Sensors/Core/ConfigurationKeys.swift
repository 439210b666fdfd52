import OrientCore
import TextFormats

extension SensorsConfiguration {
  /// `[sampling]`: how accelerometers are read, and the ambient sensors' poll intervals (they
  /// go to `ambient`, so a reload that drops them restores their defaults).
  public static let samplingTable = ConfigTable<SensorsConfiguration>(
    section: "sampling",
    keys: [
      .choice(
        "mode", "buffered when the device can, polled otherwise; or only one of them",
        \.accelerometer.sampling.mode),
      ConfigKey(
        "rate", unit: "Hz", range: 0.1...1000, accepts: "0.1 ... 1000 Hz",
        summary: "sets poll-rate and buffered-rate",
        show: { shortDecimal($0.sampling.pollRate) },
        store: {
          (settings: inout SensorsConfiguration, text: String, _: String) throws(ConfigValueError)
          in
          let rate = try rateValue("rate", text)
          settings.sampling.pollRate = rate
          settings.sampling.bufferedRate = rate
        }),
      rateKey("poll-rate", "polled mode: readings per second while claimed", \.sampling.pollRate),
      rateKey(
        "buffered-rate", "buffered mode: the lowest sampling frequency accepted",
        \.sampling.bufferedRate),
      .integer(
        "buffer-length", "scans", 2...4096, "scans the kernel may queue in buffered mode",
        \.sampling.bufferLength),
      .boolean("adaptive", "read slowly while the device is still", \.sampling.adaptive.enabled),
      .number(
        "still-rate", "Hz", 0.1...1000, "rate while still (adaptive)", \.sampling.adaptive.stillRate
      ),
      .number(
        "settle-time", "s", 0.1...60, "calm before slowing down (adaptive)",
        \.sampling.adaptive.settleTime),
      ConfigKey(
        "hysteresis", unit: "m/s^2", accepts: "auto | off | 0 ... 5 m/s^2",
        summary: "a HID sensor hub's change sensitivity",
        show: { settings in
          switch settings.sampling.hysteresis {
          case .auto: return "auto"
          case .off: return "off"
          case .fixed(let value): return shortDecimal(value)
          }
        },
        store: {
          (settings: inout SensorsConfiguration, text: String, _: String) throws(ConfigValueError)
          in
          switch text {
          case "auto": settings.sampling.hysteresis = .auto
          case "off": settings.sampling.hysteresis = .off
          default: settings.sampling.hysteresis = .fixed(try sensitivity(text))
          }
        }),
      intervalKey(
        "light-interval", "between two reads of a polled light sensor (and compass)",
        \.ambient.lightInterval),
      intervalKey(
        "proximity-interval", "between two reads of a polled proximity sensor",
        \.ambient.proximityInterval),
    ])

  /// `[sampling]` in a whole file.
  public static let samplingSection = ConfigSection.single(
    samplingTable, at: \SensorsConfiguration.self, defaults: SensorsConfiguration())

  /// `[device "NAME"]`: one override per device, appended in file order.
  public static let deviceSection = ConfigSection.repeated(
    DeviceOverride.table, argument: "NAME", at: \SensorsConfiguration.accelerometer.devices,
    make: { title, origin in DeviceOverride(title: title, origin: origin) },
    complete: { (override: DeviceOverride) throws(ConfigValueError) in
      guard
        override.matchName != nil || override.matchLabel != nil
          || override.matchModalias != nil
      else {
        throw ConfigValueError(
          "[device \"\(override.title)\"] needs match-name, match-label or match-modalias")
      }
    })

  private static func rateValue(_ key: String, _ text: String) throws(ConfigValueError) -> Double {
    // Not a number at all: say what a rate looks like; a number: the range check's message.
    guard (try? DecimalText.parseDouble(text)) != nil else {
      throw ConfigValueError("\(key) '\(text)' is not a rate; write a rate in Hz, e.g. 20")
    }
    return try ConfigValue.number(key, text, 0.1...1000, "Hz")
  }

  /// A hub's change sensitivity in m/s^2: above 0, at most 5.
  private static func sensitivity(_ text: String) throws(ConfigValueError) -> Double {
    let value: Double
    do {
      value = try ConfigValue.number("hysteresis", text, 0...5, "m/s^2")
    } catch {
      throw ConfigValueError(error.reason + " (or write auto, off)")
    }
    guard value > 0 else {
      throw ConfigValueError("hysteresis 0 m/s^2 must be above 0 (or write off)")
    }
    return value
  }

  private static func rateKey(
    _ name: String, _ summary: String,
    _ path: WritableKeyPath<SensorsConfiguration, Double> & Sendable
  ) -> ConfigKey<SensorsConfiguration> {
    .parsed(
      name, unit: "Hz", range: 0.1...1000, accepts: "0.1 ... 1000 Hz", summary: summary, path,
      show: shortDecimal,
      parse: { (text: String) throws(ConfigValueError) in
        try rateValue(name, text)
      })
  }

  private static func intervalKey(
    _ name: String, _ summary: String,
    _ path: WritableKeyPath<SensorsConfiguration, Duration> & Sendable
  ) -> ConfigKey<SensorsConfiguration> {
    .parsed(
      name, unit: "s", range: 0.05...10, accepts: "0.05 ... 10 s", summary: summary, path,
      show: { interval in
        let (seconds, attoseconds) = interval.components
        return shortDecimal(Double(seconds) + Double(attoseconds) / 1e18)
      },
      parse: { (text: String) throws(ConfigValueError) in
        let seconds = try ConfigValue.number(name, text, 0.05...10, "s")
        return .milliseconds(Int64((seconds * 1000).rounded()))
      })
  }
}

extension DeviceOverride {
  /// The keys of a `[device "NAME"]` section.
  public static let table = ConfigTable<DeviceOverride>(
    section: "device",
    keys: [
      pattern("match-name", "the IIO name attribute (glob, as fnmatch(3))", \.matchName),
      pattern("match-label", "the sysfs label (glob)", \.matchLabel),
      pattern(
        "match-modalias", "the device's MODALIAS or its nearest parent's (glob)",
        \.matchModalias),
      ConfigKey(
        "mount-matrix", accepts: "x1, y1, z1; x2, y2, z2; x3, y3, z3",
        summary: "overrides udev's and the kernel's mount matrix",
        show: { $0.mountMatrix?.text ?? "" },
        store: {
          (override: inout DeviceOverride, text: String, origin: String) throws(ConfigValueError) in
          guard !text.isEmpty else { throw ConfigValueError("mount-matrix has no value") }
          do {
            _ = try MountMatrix(parsing: text)
          } catch {
            throw ConfigValueError("\(error)")
          }
          override.mountMatrix = (text, origin)
        }),
      .parsed(
        "location", accepts: "display | base", summary: "overrides udev and sysfs", \.location,
        show: { $0?.rawValue ?? "" }, parse: parseLocation),
    ])

  private static func parseLocation(_ text: String) throws(ConfigValueError) -> SensorLocation? {
    guard !text.isEmpty else { throw ConfigValueError("location has no value") }
    guard let location = SensorLocation(rawValue: text), location != .unknown else {
      throw ConfigValueError("location '\(text)' must be 'display' or 'base'")
    }
    return location
  }

  private static func pattern(
    _ name: String, _ summary: String, _ path: WritableKeyPath<DeviceOverride, String?> & Sendable
  ) -> ConfigKey<DeviceOverride> {
    .parsed(
      name, accepts: "glob", summary: summary, path, show: { $0 ?? "" },
      parse: { (text: String) throws(ConfigValueError) -> String? in
        guard !text.isEmpty else { throw ConfigValueError("\(name) has no value") }
        return text
      })
  }
}
