import OrientCore
import TextFormats

/// A gyroscope or a device-rotation sensor as the kernel presents it, made from sysfs alone.
///
/// - Gyroscopes (`hid-sensor-gyro-3d` as `gyro_3d`, `bmi160`, `bmi260`, `st_lsm6dsx`'s
///   `*_gyro`): `in_anglvel_{x,y,z}_raw` and/or the `anglvel` scan elements, `in_anglvel_scale`
///   (rad/s per count), `in_anglvel_offset`, the mount matrix from `in_anglvel_mount_matrix`,
///   `mount_matrix` or `in_mount_matrix` (there is no hwdb key for gyroscopes: the udev
///   `ACCEL_MOUNT_MATRIX` of the same device applies, for chips that are also the display
///   accelerometer).
/// - Rotation (`hid-sensor-rotation` as `dev_rotation`, `relative_orientation`,
///   `geomagnetic_orientation`): `in_rot_quaternion_raw` read as `"x y z w "`, `in_rot_scale`;
///   buffered, the repeated element `in_rot_quaternion` (`le:s16/32X4>>0`), whose timestamp
///   the driver writes into the scan's last 8 bytes (docs/motion.md, "Sensors").
public struct MotionDescription: Equatable, Sendable {
  /// `gyroscope` or `rotation`.
  public var kind: SensorKind
  /// The device's sysfs path.
  public var syspath: String
  /// `iio:device4`.
  public var sysname: String
  /// The IIO `name` (`gyro_3d`, `bmi160`, `dev_rotation`).
  public var name: String?
  /// The device node, for buffered reading.
  public var devnode: String?
  /// Units per count: rad/s for a gyroscope, 1 for a quaternion's unit length.
  public var scale: Double
  /// Counts added before scaling.
  public var offset: Double
  /// Sensor frame to display frame.
  public var mountMatrix: MountMatrix
  /// Where the matrix came from: the attribute or udev property, or `identity`.
  public var mountMatrixSource: String
  /// Whether the values can be polled (`_raw` attributes).
  public var hasRaw: Bool
  /// The scan elements to enable for buffered reading (empty: polled only).
  public var scanElements: [String]
  /// The device's sampling frequency, if it says.
  public var samplingFrequency: Double?
  /// The fastest rate it offers (`_sampling_frequency_available`), if it says.
  public var maximumRate: Double?
  /// The rates it offers (`_sampling_frequency_available`), if it says.
  public var availableFrequencies: AvailableValues?
  /// The attribute its sampling frequency is set with, if it has one.
  public var frequencyAttribute: String?
  /// A rotation sensor's heading is absolute (north), not relative to where it started.
  public var headingIsAbsolute: Bool

  /// Creates a description.
  public init(
    kind: SensorKind, syspath: String, sysname: String, name: String?, devnode: String?,
    scale: Double, offset: Double, mountMatrix: MountMatrix, mountMatrixSource: String,
    hasRaw: Bool, scanElements: [String], samplingFrequency: Double?, maximumRate: Double?,
    headingIsAbsolute: Bool
  ) {
    self.kind = kind
    self.syspath = syspath
    self.sysname = sysname
    self.name = name
    self.devnode = devnode
    self.scale = scale
    self.offset = offset
    self.mountMatrix = mountMatrix
    self.mountMatrixSource = mountMatrixSource
    self.hasRaw = hasRaw
    self.scanElements = scanElements
    self.samplingFrequency = samplingFrequency
    self.maximumRate = maximumRate
    frequencyAttribute = nil
    self.headingIsAbsolute = headingIsAbsolute
  }

  /// 100 Hz: the rate a motion sensor runs at when nobody asks for one, and the most one
  /// without `_sampling_frequency_available` is asked for.
  public static let streamRate = 100.0

  /// The sampling frequency a buffered motion sensor is set to for `requested` readings a
  /// second (0: nobody asks, `streamRate`): the smallest it offers at or above that (the
  /// fastest it offers when none is, so above 100 Hz where it offers more); without a list of
  /// what it offers, the rate asked up to 100 Hz.
  ///
  /// - Returns: the text to write and its value.
  public func bufferedFrequency(for requested: Double) -> (text: String, value: Double) {
    let target = requested > 0 ? requested : MotionDescription.streamRate
    if let available = availableFrequencies { return available.smallest(atLeast: target) }
    let value = min(target, MotionDescription.streamRate)
    return (AvailableValues.format(value), value)
  }

  /// The rate orientd polls a motion sensor at when nobody asks for one: the device's
  /// frequency up to 100 Hz, 50 Hz when it does not say.
  public var pollRate: Double { min(max(samplingFrequency ?? 50, 1), 100) }

  /// The rate a polled motion sensor is read at for `requested` readings a second (0: nobody
  /// asks): at most `pollRate` (a read faster than the device samples repeats its value), at
  /// least 1 Hz.
  public func pollRate(for requested: Double) -> Double {
    requested > 0 ? min(max(requested, 1), pollRate) : pollRate
  }

  /// The angular velocity in rad/s (a magnetometer's field) in the display frame from three
  /// raw counts.
  public func angularVelocity(x: Double, y: Double, z: Double) -> Vector3? {
    let v = mountMatrix.apply(
      Vector3((x + offset) * scale, (y + offset) * scale, (z + offset) * scale))
    return v.x.isFinite && v.y.isFinite && v.z.isFinite ? v : nil
  }

  /// The rotation from four raw counts in the kernel's order x, y, z, w: normalised, turned
  /// into the display frame, `nil` unless it is near a unit quaternion (within 20%) or has
  /// no length at all.
  public func rotation(x: Double, y: Double, z: Double, w: Double) -> Quaternion? {
    let q = Quaternion(
      w: (w + offset) * scale, x: (x + offset) * scale, y: (y + offset) * scale,
      z: (z + offset) * scale)
    guard q.isFinite, abs(q.norm - 1) <= 0.2 else { return nil }
    // Sensor to earth, and the display frame's vectors are M times the sensor's: display to
    // earth is q * M^T.
    guard !mountMatrix.isIdentity, let m = MotionDescription.quaternion(transposeOf: mountMatrix)
    else { return q.normalized.canonical }
    return (q.normalized * m).normalized.canonical
  }

  /// The rotation of the transpose of a proper rotation matrix, `nil` for a matrix that is no
  /// rotation (a mirror).
  static func quaternion(transposeOf matrix: MountMatrix) -> Quaternion? {
    let e = matrix.entries
    return Quaternion(rotationMatrix: [e[0], e[3], e[6], e[1], e[4], e[7], e[2], e[5], e[8]])
  }

  /// The IIO names of HID rotation sensors, and whether their heading is absolute.
  static let rotationNames: [String: Bool] = [
    "dev_rotation": true, "geomagnetic_orientation": true, "relative_orientation": false,
  ]

  /// The gyroscope of an IIO device, if it has one; `read` reads one of its attributes
  /// (trimmed), nil when absent; `property` a udev property.
  public static func gyroscope(
    syspath: String, sysname: String, devnode: String?, read: (String) -> String?,
    property: (String) -> String?
  ) -> MotionDescription? {
    vector(
      .gyroscope, channel: "anglvel", syspath: syspath, sysname: sysname, devnode: devnode,
      read: read, property: property)
  }

  /// The magnetometer of an IIO device (`in_magn_{x,y,z}_raw`, `in_magn_scale` in gauss:
  /// hid-sensor-magn-3d's `magn_3d`, `bmc150_magn`, `ak8975`), if it has one; polled only.
  public static func magnetometer(
    syspath: String, sysname: String, read: (String) -> String?,
    property: (String) -> String?
  ) -> MotionDescription? {
    let d = vector(
      .magnetometer, channel: "magn", syspath: syspath, sysname: sysname, devnode: nil,
      read: read, property: property)
    return d?.hasRaw == true ? d : nil
  }

  /// A three-axis sensor of `kind` whose channels are `in_<channel>_{x,y,z}`.
  static func vector(
    _ kind: SensorKind, channel: String, syspath: String, sysname: String, devnode: String?,
    read: (String) -> String?, property: (String) -> String?
  ) -> MotionDescription? {
    let axes = ["x", "y", "z"]
    let hasRaw = axes.allSatisfy { read("in_\(channel)_\($0)_raw") != nil }
    let scan = axes.map { "in_\(channel)_\($0)" }
    let hasScan = devnode != nil && scan.allSatisfy { read("scan_elements/\($0)_en") != nil }
    guard hasRaw || hasScan else { return nil }
    let scale = read("in_\(channel)_scale").flatMap(MotionDescription.number) ?? 1
    let offset = read("in_\(channel)_offset").flatMap(MotionDescription.number) ?? 0
    var matrix = MountMatrix.identity
    var source = "identity"
    let candidates =
      ["in_\(channel)_mount_matrix", "mount_matrix", "in_mount_matrix"].map { ($0, read($0)) }
      + [("udev ACCEL_MOUNT_MATRIX", property("ACCEL_MOUNT_MATRIX"))]
    for case (let origin, let text?) in candidates {
      if let parsed = try? MountMatrix(parsing: text) {
        matrix = parsed
        source = origin
        break
      }
    }
    let frequencyAttribute = ["in_\(channel)_sampling_frequency", "sampling_frequency"].first {
      read($0) != nil
    }
    let frequency = frequencyAttribute.flatMap(read).flatMap(MotionDescription.number)
    let available =
      (read("in_\(channel)_sampling_frequency_available")
      ?? read("sampling_frequency_available")).flatMap(AvailableValues.init(parsing:))
    var d = MotionDescription(
      kind: kind, syspath: syspath, sysname: sysname, name: read("name"), devnode: devnode,
      scale: scale > 0 ? scale : 1, offset: offset, mountMatrix: matrix, mountMatrixSource: source,
      hasRaw: hasRaw, scanElements: hasScan ? scan : [], samplingFrequency: frequency,
      maximumRate: available?.displayValues.max(), headingIsAbsolute: false)
    d.frequencyAttribute = frequencyAttribute
    d.availableFrequencies = available
    return d
  }

  /// A finite number from a sysfs attribute: `Double.init` takes "nan" and "inf", and a
  /// NaN frequency made the poll interval's conversion to nanoseconds trap.
  static func number(_ text: String) -> Double? { try? DecimalText.parseDouble(text) }

  /// The rotation sensor of an IIO device, if it is one (`hid-sensor-rotation`).
  public static func rotation(
    syspath: String, sysname: String, devnode: String?, read: (String) -> String?
  ) -> MotionDescription? {
    let name = read("name")
    let hasRaw = read("in_rot_quaternion_raw") != nil
    let hasScan = devnode != nil && read("scan_elements/in_rot_quaternion_en") != nil
    guard hasRaw || hasScan else { return nil }
    let scale = read("in_rot_scale").flatMap(MotionDescription.number) ?? 1
    let offset = read("in_rot_offset").flatMap(MotionDescription.number) ?? 0
    var d = MotionDescription(
      kind: .rotation, syspath: syspath, sysname: sysname, name: name, devnode: devnode,
      scale: scale > 0 ? scale : 1, offset: offset,
      mountMatrix: .identity, mountMatrixSource: "identity", hasRaw: hasRaw,
      scanElements: hasScan ? ["in_rot_quaternion"] : [],
      samplingFrequency: read("in_rot_sampling_frequency").flatMap(MotionDescription.number),
      maximumRate: nil, headingIsAbsolute: name.flatMap { rotationNames[$0] } ?? true)
    d.frequencyAttribute =
      read("in_rot_sampling_frequency") != nil ? "in_rot_sampling_frequency" : nil
    return d
  }
}
