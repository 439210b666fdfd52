import OrientCore
import TextFormats

/// Where an accelerometer sits in a convertible or laptop.
public enum SensorLocation: String, Equatable, Sendable {
  /// In the display or tablet part: the one orientation is computed from.
  case display
  /// In the keyboard base: known, never used for orientation (kept for hinge-angle work).
  case base
  /// Not said anywhere; treated as a display sensor, like iio-sensor-proxy does.
  case unknown
}

/// Where the mount matrix in use came from, in order of precedence.
public enum MountMatrixSource: Equatable, Sendable, CustomStringConvertible {
  /// A `[device]` section of orientd's configuration (`path:line`).
  case configuration(String)
  /// The udev property `ACCEL_MOUNT_MATRIX` (systemd's 60-sensor.hwdb or a local hwdb file).
  case udevProperty
  /// A sysfs attribute: `in_accel_mount_matrix`, `mount_matrix` or `in_mount_matrix`.
  case sysfs(String)
  /// No source gave a usable matrix.
  case identity

  /// `udev ACCEL_MOUNT_MATRIX`, `sysfs in_accel_mount_matrix`, `configuration /etc/...:12`,
  /// `identity (no matrix found)`.
  public var description: String {
    switch self {
    case .configuration(let origin): return "configuration \(origin)"
    case .udevProperty: return "udev ACCEL_MOUNT_MATRIX"
    case .sysfs(let attribute): return "sysfs \(attribute)"
    case .identity: return "identity (no matrix found)"
    }
  }
}

/// What udev and sysfs say about one IIO device, as text, before interpretation.
///
/// Gathered by `DeviceFacts.gather(_:)` (I/O) and interpreted by `AccelerometerDescription`
/// (pure), so that the rules can be tested without devices.
public struct DeviceFacts: Equatable, Sendable {
  /// The sysfs path.
  public var syspath: String
  /// The kernel name, e.g. `iio:device0`.
  public var sysname: String
  /// `/dev/iio:device0`, when the device has a node.
  public var devnode: String?
  /// The `name` attribute (driver's device name, e.g. `accel_3d`, `mxc4005`).
  public var name: String?
  /// The `label` attribute (Linux 5.13+, e.g. `accel-display`).
  public var label: String?
  /// The cros-ec `location` attribute (`lid` or `base`).
  public var locationAttribute: String?
  /// The nearest `MODALIAS` up the device tree (what hwdb matches on).
  public var modalias: String?
  /// The key systemd's 60-sensor.rules looks up in the hwdb for this device:
  /// `sensor:[<label>:]modalias:<parent's modalias attribute>:<DMI modalias>`. A local hwdb
  /// entry whose match line globs this key overrides the matrix or location.
  public var hwdbKey: String?
  /// The udev property `ACCEL_LOCATION`.
  public var udevLocation: String?
  /// The udev property `ACCEL_MOUNT_MATRIX`.
  public var udevMountMatrix: String?
  /// The udev property `ORIENTD_HINGE_AXIS` (a local hwdb entry on a convertible's base sensor
  /// whose hinge is not the frames' x axis: `-x`, `y`, or three numbers).
  public var udevHingeAxis: String?
  /// Sysfs mount matrices present, in precedence order: (attribute, text).
  public var sysfsMountMatrices: [SysfsText] = []
  /// Whether `in_accel_{x,y,z}_raw` all exist.
  public var hasRawAttributes = false
  /// Whether `scan_elements/in_accel_{x,y,z}_en` all exist.
  public var hasScanElements = false
  /// `in_accel_scale`, or the per-axis `in_accel_{x,y,z}_scale`.
  public var scale: [SysfsText] = []
  /// `in_accel_offset`, or the per-axis offsets.
  public var offset: [SysfsText] = []
  /// The sampling frequency attribute and its text.
  public var samplingFrequency: SysfsText?
  /// The matching `*_available` attribute and its text.
  public var samplingFrequencyAvailable: SysfsText?
  /// Whether this is an input-subsystem accelerometer (an evdev node with `ABS_X/Y/Z`, see
  /// InputAccelerometer.swift) rather than an IIO device.
  public var isInputAccelerometer = false

  /// An attribute name and the text read from it.
  public struct SysfsText: Equatable, Sendable {
    /// The attribute, relative to the device directory.
    public var attribute: String
    /// Its text without the trailing newline.
    public var text: String

    /// Creates one.
    public init(_ attribute: String, _ text: String) {
      self.attribute = attribute
      self.text = text
    }
  }

  /// Creates facts with only the identity filled in.
  public init(syspath: String, sysname: String) {
    self.syspath = syspath
    self.sysname = sysname
  }

  /// The trailing number of the kernel name (`iio:device3` -> 3), for ordering and for the
  /// `<name>-dev<N>` trigger convention.
  public var deviceNumber: Int? {
    let digits = sysname.reversed().prefix { $0.isASCII && $0.isNumber }
    guard !digits.isEmpty, digits.count < 10 else { return nil }
    return Int(String(digits.reversed()))
  }

  /// Whether this is an accelerometer at all: pollable or bufferable accel channels.
  public var isAccelerometer: Bool { hasRawAttributes || hasScanElements || isInputAccelerometer }
}

/// An accelerometer as orientd understands it: location, capabilities and calibration, with
/// where each choice came from.
public struct AccelerometerDescription: Equatable, Sendable {
  /// The facts it was made from.
  public var facts: DeviceFacts
  /// Display, base or unknown.
  public var location: SensorLocation
  /// Where the location came from (`udev ACCEL_LOCATION`, `sysfs label`, ...).
  public var locationSource: String
  /// Raw values in the device frame become m/s^2 as `(raw + offset) * scale`, per axis.
  public var scale: Vector3
  /// Per-axis offset in raw units.
  public var offset: Vector3
  /// The matrix from the device frame to the display frame.
  public var mountMatrix: MountMatrix
  /// Where `mountMatrix` came from.
  public var mountMatrixSource: MountMatrixSource
  /// Things that were wrong and skipped (an invalid matrix, a missing scale), each a full
  /// sentence naming the device, the source and the reason; logged once when the device is
  /// found.
  public var problems: [String]
  /// The current sampling frequency in Hz, if the device has one.
  public var samplingFrequency: Double?
  /// What the device accepts for the sampling frequency.
  public var availableFrequencies: AvailableValues?

  /// The kernel name, e.g. `iio:device0`.
  public var sysname: String { facts.sysname }
  /// Whether the `_raw` attributes can be polled.
  public var canPoll: Bool { facts.hasRawAttributes }
  /// Whether the buffer can be used (scan elements and a device node).
  public var canBuffer: Bool { facts.hasScanElements && facts.devnode != nil }
  /// Whether orientation may be computed from it.
  public var isDisplaySensor: Bool { location != .base }

  /// Interprets `facts` with the configuration's overrides.
  public init(facts: DeviceFacts, configuration: AccelerometerConfiguration) {
    self.facts = facts
    var problems: [String] = []
    let device = "\(facts.sysname)\(facts.name.map { " (\($0))" } ?? "")"
    let override = configuration.override(
      name: facts.name, label: facts.label, modalias: facts.modalias)

    // Location: configuration, udev ACCEL_LOCATION, sysfs label, cros-ec location, default.
    var location: (SensorLocation, String)?
    if let configured = override?.location {
      location = (configured, "configuration \(override?.origin ?? "")")
    }
    if location == nil, let text = facts.udevLocation {
      switch text {
      case "display": location = (.display, "udev ACCEL_LOCATION")
      case "base": location = (.base, "udev ACCEL_LOCATION")
      default:
        problems.append(
          "\(device): ignoring udev ACCEL_LOCATION=\"\(text)\": expected 'display' or 'base'")
      }
    }
    if location == nil, let label = facts.label {
      switch label {
      case "accel-display": location = (.display, "sysfs label")
      case "accel-base": location = (.base, "sysfs label")
      default: break  // labels name other things too (e.g. "accel-camera"); not a location
      }
    }
    if location == nil, let text = facts.locationAttribute {
      switch text {
      case "lid", "display": location = (.display, "sysfs location")
      case "base": location = (.base, "sysfs location")
      default:
        problems.append(
          "\(device): ignoring sysfs location \"\(text)\": expected 'lid' or 'base'")
      }
    }
    (self.location, locationSource) = location ?? (.unknown, "default (no location given)")

    // Mount matrix: configuration, udev, sysfs attributes, identity; first valid one wins.
    var candidates: [(MountMatrixSource, String)] = []
    if let configured = override?.mountMatrix {
      candidates.append((.configuration(configured.origin), configured.text))
    }
    if let text = facts.udevMountMatrix { candidates.append((.udevProperty, text)) }
    for item in facts.sysfsMountMatrices { candidates.append((.sysfs(item.attribute), item.text)) }
    var chosen: (MountMatrix, MountMatrixSource)?
    var rejected: [(MountMatrixSource, String)] = []
    for (source, text) in candidates where chosen == nil {
      do {
        chosen = (try MountMatrix(parsing: text), source)
      } catch {
        rejected.append((source, error.description))
      }
    }
    let matrix = chosen ?? (.identity, .identity)
    for (source, error) in rejected {
      problems.append(
        "\(device): ignoring mount matrix from \(source): \(error); using \(matrix.1) instead")
    }
    // A singular matrix folds two axes onto one. systemd's 60-sensor.hwdb ships such matrices
    // for real devices (e.g. "1, 0, 0; 0, -1, 0; 1, 0, 0"): the in-plane rows still give the
    // four orientations, so it is used, with a warning that the tilt may be wrong.
    if let reason = AccelerometerDescription.singularity(matrix.0) {
      problems.append(
        "\(device): mount matrix \"\(matrix.0)\" from \(matrix.1) \(reason); using it as given"
          + " (the orientation follows its first two rows; Tilt may be wrong)")
    }
    (mountMatrix, mountMatrixSource) = matrix

    // Scale and offset, shared or per axis.
    func axes(_ items: [DeviceFacts.SysfsText], what: String, fallback: Double) -> Vector3 {
      var values = [fallback, fallback, fallback]
      for item in items {
        let axis: Int?
        if item.attribute.containsText("_x_") {
          axis = 0
        } else if item.attribute.containsText("_y_") {
          axis = 1
        } else if item.attribute.containsText("_z_") {
          axis = 2
        } else {
          axis = nil
        }
        do {
          let value = try SysfsValue.parseDecimal(item.text)
          if what == "scale" && value <= 0 {
            problems.append(
              "\(device): ignoring \(item.attribute) \"\(item.text)\": a scale must be positive;"
                + " assuming \(fallback)")
            continue
          }
          if let axis { values[axis] = value } else { values = [value, value, value] }
        } catch {
          problems.append(
            "\(device): ignoring \(item.attribute) \"\(item.text)\": \(error); assuming \(fallback)"
          )
        }
      }
      return Vector3(values[0], values[1], values[2])
    }
    if facts.scale.isEmpty {
      problems.append(
        "\(device): no in_accel_scale; assuming raw values are already in m/s^2")
    }
    scale = axes(facts.scale, what: "scale", fallback: 1)
    offset = axes(facts.offset, what: "offset", fallback: 0)
    samplingFrequency = facts.samplingFrequency.flatMap { try? SysfsValue.parseDecimal($0.text) }
    availableFrequencies = facts.samplingFrequencyAvailable.flatMap {
      AvailableValues(parsing: $0.text)
    }
    self.problems = problems
  }

  /// Says why a matrix folds two axes onto each other (determinant zero), as some of
  /// systemd's 60-sensor.hwdb entries do.
  ///
  /// - Returns: the reason, or `nil` for an invertible matrix.
  static func singularity(_ m: MountMatrix) -> String? {
    let e = m.entries
    guard e.count == 9 else { return "is not 3x3" }
    let det =
      e[0] * (e[4] * e[8] - e[5] * e[7]) - e[1] * (e[3] * e[8] - e[5] * e[6])
      + e[2] * (e[3] * e[7] - e[4] * e[6])
    guard abs(det) < 1e-6 else { return nil }
    return "is singular (determinant 0: two rows read the same axis)"
  }

  /// Turns one raw reading (an integer from a buffer, or a polled value that may have decimals
  /// such as `-25.6`) into m/s^2 in the display frame: `M x ((raw + offset) * scale)`.
  @inlinable
  public func calibrate(x: Double, y: Double, z: Double) -> Vector3 {
    let device = Vector3(
      (x + offset.x) * scale.x, (y + offset.y) * scale.y, (z + offset.z) * scale.z)
    return mountMatrix.apply(device)
  }

  /// Compares descriptions by their facts and interpretation.
  public static func == (lhs: AccelerometerDescription, rhs: AccelerometerDescription) -> Bool {
    lhs.facts == rhs.facts && lhs.location == rhs.location
      && lhs.locationSource == rhs.locationSource && lhs.scale == rhs.scale
      && lhs.offset == rhs.offset && lhs.mountMatrix == rhs.mountMatrix
      && lhs.mountMatrixSource == rhs.mountMatrixSource && lhs.problems == rhs.problems
  }
}

/// Picks the display accelerometer among those present, deterministically.
public enum SensorChoice {
  /// The result of a choice: the sensor to use, and why the others were not used.
  public struct Outcome: Equatable, Sendable {
    /// The sensor to sample, if any.
    public var chosen: AccelerometerDescription?
    /// One line per sensor not chosen, with the reason.
    public var notChosen: [String]

    /// Creates an outcome.
    public init(chosen: AccelerometerDescription?, notChosen: [String]) {
      self.chosen = chosen
      self.notChosen = notChosen
    }
  }

  /// Chooses among `sensors`: base sensors are never used; sensors that cannot be sampled in
  /// `mode` are skipped; then a sensor whose location is stated beats one assumed to be a
  /// display sensor, and the lowest device number breaks ties.
  public static func choose(
    _ sensors: [AccelerometerDescription], mode: SamplingConfiguration.Mode
  ) -> Outcome {
    var notChosen: [String] = []
    var usable: [AccelerometerDescription] = []
    for sensor in sensors {
      if !sensor.isDisplaySensor {
        notChosen.append(
          "\(sensor.sysname): base sensor (\(sensor.locationSource)), never used for orientation")
      } else if sensor.facts.isInputAccelerometer {
        usable.append(sensor)  // read one way only, whatever the IIO sampling mode
      } else if mode == .buffered && !sensor.canBuffer {
        notChosen.append("\(sensor.sysname): cannot be buffered and mode is 'buffered'")
      } else if mode == .polled && !sensor.canPoll {
        notChosen.append("\(sensor.sysname): has no _raw attributes and mode is 'polled'")
      } else {
        usable.append(sensor)
      }
    }
    let ranked = usable.sorted { a, b in
      // An input-subsystem accelerometer only when no IIO display sensor is usable.
      let aInput = a.facts.isInputAccelerometer
      if aInput != b.facts.isInputAccelerometer { return !aInput }
      let aStated = a.location == .display
      let bStated = b.location == .display
      if aStated != bStated { return aStated }
      let an = a.facts.deviceNumber ?? Int.max
      let bn = b.facts.deviceNumber ?? Int.max
      if an != bn { return an < bn }
      return a.facts.syspath < b.facts.syspath
    }
    guard let first = ranked.first else { return Outcome(chosen: nil, notChosen: notChosen) }
    for other in ranked.dropFirst() {
      let why =
        other.facts.isInputAccelerometer && !first.facts.isInputAccelerometer
        ? "an input-subsystem device, \(first.sysname) is IIO"
        : first.location == .display && other.location != .display
          ? "location not stated, \(first.sysname)'s is" : "higher device number"
      notChosen.append("\(other.sysname): another display sensor (\(why))")
    }
    return Outcome(chosen: first, notChosen: notChosen)
  }
}
