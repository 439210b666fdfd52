import OrientCore
import TextFormats

/// The sensors besides the accelerometer that iio-sensor-proxy serves: ambient light,
/// proximity and the compass heading.
public enum AmbientKind: String, CaseIterable, Hashable, Sendable, Comparable {
  /// An ambient light sensor (`LightLevel`).
  case light
  /// A proximity sensor (`ProximityNear`).
  case proximity
  /// A magnetometer's tilt-compensated heading (`CompassHeading`).
  case compass

  /// Ordered as declared.
  public static func < (a: AmbientKind, b: AmbientKind) -> Bool {
    allCases.firstIndex(of: a) ?? 0 < allCases.firstIndex(of: b) ?? 0
  }
}

/// The unit of `LightLevel`, as iio-sensor-proxy names it.
public enum LightUnit: String, Hashable, Sendable {
  /// Lux: `in_illuminance_*` channels.
  case lux
  /// A vendor-specific scale: intensity channels, hwmon `light` (percent of 255).
  case vendor
}

/// One reading of an ambient sensor.
public enum AmbientReading: Equatable, Sendable {
  /// A light level in `unit`.
  case light(Double, LightUnit)
  /// Whether something is near.
  case proximity(near: Bool)
  /// The heading in degrees from north.
  case compass(heading: Double)

  /// The kind of sensor it came from.
  public var kind: AmbientKind {
    switch self {
    case .light: .light
    case .proximity: .proximity
    case .compass: .compass
    }
  }
}

/// How an ambient sensor is read.
public enum AmbientDriver: Hashable, Sendable, CustomStringConvertible {
  /// An IIO attribute polled on a timer: `channel` is the attribute's name without the
  /// `_raw`/`_input` suffix, e.g. `in_illuminance`; `attribute` the file read.
  case iioPoll(attribute: String)
  /// An IIO channel read through the buffer (`/dev/iio:deviceN`): `channel` is the scan
  /// element's name, e.g. `in_illuminance`, for devices that have no attribute to poll.
  case iioBuffer(channel: String)
  /// An applesmc-style hwmon `light` attribute: `(left,right)`.
  case hwmonLight
  /// An input switch (`SW_FRONT_PROXIMITY`) on the event node `node`, read as events arrive.
  case inputSwitch(node: String)
  /// A source from another subsystem, named for logs and listings.
  case external(String)

  /// `iio-poll`, `iio-buffer`, `hwmon` or the external name: as `--list-sensors` shows it.
  public var description: String {
    switch self {
    case .iioPoll(let attribute): "iio-poll \(attribute)"
    case .iioBuffer(let channel): "iio-buffer \(channel)"
    case .hwmonLight: "hwmon light"
    case .inputSwitch(let node): "input-switch \(node)"
    case .external(let name): name
    }
  }
}

/// An ambient sensor: the device, how it is read and how its raw numbers become a reading.
/// Pure data, built by `AmbientDescription.describe` from what udev and sysfs say.
public struct AmbientDescription: Hashable, Sendable {
  /// What it measures.
  public var kind: AmbientKind
  /// The device's sysfs path.
  public var syspath: String
  /// `iio:device2`, `applesmc.768`, ...
  public var sysname: String
  /// The sysfs `name` attribute, if any.
  public var name: String?
  /// The character device (`/dev/iio:deviceN`), for buffered reading.
  public var devnode: String?
  /// How it is read.
  public var driver: AmbientDriver
  /// Why orientd took it for this kind, e.g. `udev IIO_SENSOR_PROXY_TYPE=iio-poll-als`.
  public var classifiedBy: String
  /// Multiplies `raw + offset` (1 when absent).
  public var scale: Double = 1
  /// Added to the raw value before scaling (0 when absent).
  public var offset: Double = 0
  /// The unit of light readings.
  public var unit: LightUnit = .lux
  /// Proximity: the raw value above which something is near.
  public var nearLevel: Double?
  /// Where `nearLevel` came from (`udev PROXIMITY_NEAR_LEVEL`, a sysfs attribute).
  public var nearLevelSource: String?

  /// Creates a description.
  public init(
    kind: AmbientKind, syspath: String, sysname: String, name: String? = nil,
    driver: AmbientDriver, classifiedBy: String
  ) {
    self.kind = kind
    self.syspath = syspath
    self.sysname = sysname
    self.name = name
    self.driver = driver
    self.classifiedBy = classifiedBy
  }

  /// The light attributes tried, best first, with their unit: processed lux, raw lux (with
  /// scale/offset), then intensity channels whose unit only the vendor knows.
  static let lightAttributes: [(String, LightUnit)] = [
    ("in_illuminance_input", .lux), ("in_illuminance0_input", .lux),
    ("in_illuminance_raw", .lux), ("in_illuminance0_raw", .lux),
    ("in_intensity_clear_raw", .vendor), ("in_intensity_both_raw", .vendor),
    ("in_intensity_raw", .vendor),
  ]
  /// The light channels read through the buffer when no attribute can be polled, with their
  /// unit (the HID sensor hub's light sensor on some machines offers only these).
  static let bufferedLightChannels: [(String, LightUnit)] = [
    ("in_illuminance", .lux), ("in_illuminance0", .lux), ("in_intensity_clear", .vendor),
    ("in_intensity_both", .vendor), ("in_intensity", .vendor),
  ]
  /// The proximity attributes tried.
  static let proximityAttributes = ["in_proximity_raw", "in_proximity0_raw"]
  /// The heading attributes tried: tilt compensated first, magnetic before true north.
  static let compassAttributes = [
    "in_rot_from_north_magnetic_tilt_comp_raw", "in_rot_from_north_true_tilt_comp_raw",
    "in_rot_from_north_magnetic_raw", "in_rot_from_north_true_raw",
  ]

  /// The `IIO_SENSOR_PROXY_TYPE` words iio-sensor-proxy's udev rules set, by kind.
  static let proxyTypes: [String: AmbientKind] = [
    "iio-poll-als": .light, "iio-buffer-als": .light, "hwmon-als": .light,
    "iio-poll-proximity": .proximity, "iio-buffer-compass": .compass,
    "iio-poll-compass": .compass,
  ]

  /// Describes the ambient sensors of one device (a chip may measure light and proximity).
  ///
  /// A kind is recognised by its sysfs attributes (orientd's own classification) or by a word
  /// of udev's `IIO_SENSOR_PROXY_TYPE` (iio-sensor-proxy's rules); either is enough, but a
  /// kind is read only through an attribute that exists, so a tag on a device without one is
  /// reported (`problems`) instead of being served as a sensor that never reads.
  ///
  /// - Parameters:
  ///   - subsystem: `iio`, `hwmon` or `platform` (applesmc).
  ///   - property: a udev property of the device.
  ///   - read: a sysfs attribute's text (trimmed), `nil` if absent.
  /// - Returns: the sensors found and the reasons tagged kinds could not be used.
  ///   - devnode: the device node, if any (a buffered channel needs one).
  public static func describe(
    syspath: String, sysname: String, subsystem: String, devnode: String? = nil,
    property: (String) -> String?, read: (String) -> String?
  ) -> (sensors: [AmbientDescription], problems: [String]) {
    let tags = Set((property("IIO_SENSOR_PROXY_TYPE") ?? "").split(separator: " ").map(String.init))
    func tagged(_ kind: AmbientKind) -> String? {
      tags.sorted().first { proxyTypes[$0] == kind }.map { "udev IIO_SENSOR_PROXY_TYPE=\($0)" }
    }
    let name = read("name")
    var sensors: [AmbientDescription] = []
    var problems: [String] = []
    func number(_ attribute: String) -> Double? { read(attribute).flatMap(parseNumber) }
    // A channel's own `_scale`/`_offset`, else the one its type shares (the HID sensor hub's
    // magnetometer has `in_rot_scale` for every `in_rot_from_north_*` channel).
    func calibration(_ channel: String, _ what: String) -> Double? {
      number("\(channel)_\(what)") ?? number("\(channelType(channel))_\(what)")
    }
    /// The first of `channels` the device can stream (a scan element and a node to read).
    func buffered(_ channels: [String]) -> String? {
      guard devnode != nil else { return nil }
      return channels.first { read("scan_elements/\($0)_en") != nil }
    }
    /// A sensor of `kind` read through the buffer's `channel`, with its scale and offset.
    func bufferedSensor(_ kind: AmbientKind, _ channel: String, unit: LightUnit = .lux)
      -> AmbientDescription
    {
      var d = AmbientDescription(
        kind: kind, syspath: syspath, sysname: sysname, name: name,
        driver: .iioBuffer(channel: channel),
        classifiedBy: tagged(kind) ?? "sysfs scan_elements/\(channel)_en")
      d.devnode = devnode
      d.unit = unit
      d.scale = calibration(channel, "scale") ?? 1
      d.offset = calibration(channel, "offset") ?? 0
      return d
    }

    if subsystem == "iio" {
      if let (attribute, unit) = lightAttributes.first(where: { read($0.0) != nil }) {
        let channel = channelName(attribute)
        var d = AmbientDescription(
          kind: .light, syspath: syspath, sysname: sysname, name: name,
          driver: .iioPoll(attribute: attribute),
          classifiedBy: tagged(.light) ?? "sysfs \(attribute)")
        d.unit = unit
        if attribute.hasSuffix("_raw") {
          d.scale = calibration(channel, "scale") ?? 1
          d.offset = calibration(channel, "offset") ?? 0
        }
        sensors.append(d)
      } else if let channel = buffered(bufferedLightChannels.map(\.0)) {
        let unit = bufferedLightChannels.first { $0.0 == channel }?.1 ?? .lux
        sensors.append(bufferedSensor(.light, channel, unit: unit))
      } else if let tag = tagged(.light) {
        problems.append(
          "\(sysname): \(tag) but no in_illuminance_{input,raw} or in_intensity_*_raw "
            + "attribute to poll and no such scan element with a device node to read")
      }
      if let attribute = proximityAttributes.first(where: { read($0) != nil }) {
        let channel = channelName(attribute)
        var d = AmbientDescription(
          kind: .proximity, syspath: syspath, sysname: sysname, name: name,
          driver: .iioPoll(attribute: attribute),
          classifiedBy: tagged(.proximity) ?? "sysfs \(attribute)")
        if let level = property("PROXIMITY_NEAR_LEVEL").flatMap(parseNumber) {
          d.nearLevel = level
          d.nearLevelSource = "udev PROXIMITY_NEAR_LEVEL"
        } else if let (attribute, level) = ["\(channel)_nearlevel", "in_proximity_nearlevel"]
          .compactMap({ name in number(name).map { (name, $0) } }).first
        {
          // A driver's indexed channel has in_proximity0_nearlevel; a shared one (and what
          // iio-sensor-proxy reads for either channel) is in_proximity_nearlevel.
          d.nearLevel = level
          d.nearLevelSource = "sysfs \(attribute)"
        }
        sensors.append(d)
      } else if let tag = tagged(.proximity) {
        problems.append("\(sysname): \(tag) but no in_proximity_raw or in_proximity0_raw")
      }
      if let attribute = compassAttributes.first(where: { read($0) != nil }) {
        let channel = channelName(attribute)
        var d = AmbientDescription(
          kind: .compass, syspath: syspath, sysname: sysname, name: name,
          driver: .iioPoll(attribute: attribute),
          classifiedBy: tagged(.compass) ?? "sysfs \(attribute)")
        d.scale = calibration(channel, "scale") ?? 1
        d.offset = calibration(channel, "offset") ?? 0
        sensors.append(d)
      } else if let channel = buffered(compassAttributes.map(channelName)) {
        sensors.append(bufferedSensor(.compass, channel))
      } else if let tag = tagged(.compass) {
        problems.append(
          "\(sysname): \(tag) but no in_rot_from_north_*_raw attribute or scan element")
      }
    } else if read("light") != nil {
      var d = AmbientDescription(
        kind: .light, syspath: syspath, sysname: sysname, name: name, driver: .hwmonLight,
        classifiedBy: tagged(.light) ?? "sysfs light")
      d.unit = .vendor
      sensors.append(d)
    }
    return (sensors, problems)
  }

  /// `in_rot_from_north_magnetic_tilt_comp` -> `in_rot`, `in_illuminance0` -> `in_illuminance`.
  private static func channelType(_ channel: String) -> String {
    let name = channel.dropFirst("in_".count)
    let type = name.prefix { $0 != "_" && !$0.isNumber }
    return "in_\(type)"
  }

  /// `in_illuminance_raw` -> `in_illuminance`.
  private static func channelName(_ attribute: String) -> String {
    for suffix in ["_raw", "_input"] where attribute.hasSuffix(suffix) {
      return String(attribute.dropLast(suffix.count))
    }
    return attribute
  }
}

/// Turns the text of a sensor's attribute into a reading. Pure, so that the rules (units,
/// the proximity margin) are tested without a device.
public struct AmbientInterpreter: Sendable {
  /// The sensor.
  public let description: AmbientDescription
  /// Whether the proximity sensor said near last time (the margin depends on it).
  public private(set) var near = false

  /// The share of the near level a near object must drop below before it counts as far:
  /// readings hovering around the level (noise, a hand moving slowly) would otherwise
  /// switch the screen on and off. 10 %: with a level of 128, 129 is near, 127 still near,
  /// 115 far.
  public static let farFraction = 0.9

  /// Starts with "far".
  public init(_ description: AmbientDescription) { self.description = description }

  /// The reading in `text` (the attribute's content), or `nil` if it is not a number (or
  /// `(L,R)` for hwmon).
  public mutating func interpret(_ text: String) -> AmbientReading? {
    switch description.driver {
    case .hwmonLight:
      // applesmc: "(left,right)", each 0-255; iio-sensor-proxy reports the percentage.
      let inner = text.trimmingWhitespace().trimmingCharacters(in: "()")
      let parts = inner.split(separator: ",").map { parseNumber(String($0)) }
      guard parts.count == 2, let left = parts[0], let right = parts[1] else { return nil }
      return .light((left + right) / 2 / 255 * 100, .vendor)
    case .inputSwitch:
      // A switch's value: 1 near, 0 far (InputProximitySource reads it from libevdev).
      guard let raw = parseNumber(text) else { return nil }
      return .proximity(near: raw != 0)
    case .iioPoll, .iioBuffer, .external:
      guard let raw = parseNumber(text) else { return nil }
      return interpret(raw: raw)
    }
  }

  /// The reading for a raw channel value (a polled attribute's number, a buffered scan's
  /// element): offset and scale applied, the proximity margin kept.
  public mutating func interpret(raw: Double) -> AmbientReading {
    let value = (raw + description.offset) * description.scale
    switch description.kind {
    case .light: return .light(max(0, value), description.unit)
    case .compass: return .compass(heading: value)
    case .proximity:
      let level = description.nearLevel ?? 0
      near = near ? raw >= level * AmbientInterpreter.farFraction : raw > level
      return .proximity(near: near)
    }
  }
}

/// A sysfs number (a trailing newline allowed), `nil` if it is not one.
func parseNumber(_ text: String) -> Double? {
  try? DecimalText.parseDouble(text.trimmingWhitespace())
}

extension String {
  fileprivate func trimmingWhitespace() -> String {
    var s = Substring(self)
    while let c = s.first, c == " " || c == "\n" || c == "\t" { s = s.dropFirst() }
    while let c = s.last, c == " " || c == "\n" || c == "\t" { s = s.dropLast() }
    return String(s)
  }

  fileprivate func trimmingCharacters(in set: String) -> String {
    var s = Substring(self)
    while let c = s.first, set.contains(c) { s = s.dropFirst() }
    while let c = s.last, set.contains(c) { s = s.dropLast() }
    return String(s)
  }
}
