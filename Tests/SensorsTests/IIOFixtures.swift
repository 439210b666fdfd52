import JSON
import OrientCore
import TestSupport

/// Emulated IIO accelerometers for umockdev testbeds, shaped like real drivers' sysfs.
enum IIOFixture {
  /// Scale giving 1 g = 1000 counts.
  static let scale = "0.00980665\n"
  /// Counts per g with `scale`.
  static let countsPerG = 1000

  /// The bus device an accelerometer hangs off (an I2C client with a MODALIAS).
  static func parent(
    _ path: String = "/devices/platform/i2c-0/i2c-MXC6655:00",
    modalias: String = "acpi:MXC6655:"
  ) -> UMockdevDevice {
    UMockdevDevice(
      devpath: path, properties: [("SUBSYSTEM", "i2c"), ("MODALIAS", modalias)],
      attributes: [("modalias", modalias + "\n")])
  }

  /// A polled accelerometer: `in_accel_{x,y,z}_raw`, scale, a sampling frequency.
  static func polled(
    number: Int = 0, parent: UMockdevDevice = parent(), name: String = "mxc4005",
    raw: (Int, Int, Int) = (0, -1000, 0), properties: [(String, String)] = [],
    attributes: [(String, String)] = []
  ) -> UMockdevDevice {
    UMockdevDevice(
      devpath: "\(parent.devpath)/iio:device\(number)",
      properties: [("SUBSYSTEM", "iio")] + properties,
      attributes: [
        ("name", name + "\n"),
        ("in_accel_x_raw", "\(raw.0)\n"), ("in_accel_y_raw", "\(raw.1)\n"),
        ("in_accel_z_raw", "\(raw.2)\n"), ("in_accel_scale", scale),
        ("in_accel_sampling_frequency", "12.500000\n"),
        (
          "in_accel_sampling_frequency_available",
          "0.781000 1.563000 3.125000 6.250000 12.500000 25 50 100 200 400 800\n"
        ),
      ] + attributes)
  }

  /// One buffered channel layout to emulate.
  struct Format: CustomStringConvertible {
    /// `scan_elements/in_accel_*_type`.
    var type: String
    /// Whether an `in_timestamp` channel exists.
    var timestamp: Bool
    /// An extra channel enabled before orientd starts (it must disable and later restore it).
    var extraEnabledChannel: Bool

    var description: String { "\(type)\(timestamp ? " + timestamp" : "")" }
  }

  /// A buffered accelerometer (scan elements, buffer, trigger, `/dev/iio:deviceN` as a pty),
  /// plus its own data-ready trigger and an any-motion trigger as siblings.
  static func buffered(
    number: Int = 0, parent: UMockdevDevice = parent(), name: String = "bmc150_accel",
    format: Format, properties: [(String, String)] = [], attributes: [(String, String)] = []
  ) -> [UMockdevDevice] {
    var attrs: [(String, String)] = [
      ("name", name + "\n"), ("dev", "241:\(number)\n"),
      ("in_accel_x_raw", "0\n"), ("in_accel_y_raw", "-1000\n"), ("in_accel_z_raw", "0\n"),
      ("in_accel_scale", scale),
      ("sampling_frequency", "15.620000\n"),
      ("sampling_frequency_available", "15.620000 31.260000 62.500000 125\n"),
      ("current_timestamp_clock", "realtime\n"),
      ("buffer/enable", "0\n"), ("buffer/length", "2\n"), ("buffer/watermark", "1\n"),
      ("trigger/current_trigger", "\n"),
    ]
    for (i, axis) in ["x", "y", "z"].enumerated() {
      attrs += [
        ("scan_elements/in_accel_\(axis)_en", "0\n"),
        ("scan_elements/in_accel_\(axis)_index", "\(i)\n"),
        ("scan_elements/in_accel_\(axis)_type", format.type + "\n"),
      ]
    }
    var next = 3
    if format.extraEnabledChannel {
      attrs += [
        ("scan_elements/in_temp_en", "1\n"), ("scan_elements/in_temp_index", "3\n"),
        ("scan_elements/in_temp_type", "le:s8/8>>0\n"),
      ]
      next = 4
    }
    if format.timestamp {
      attrs += [
        ("scan_elements/in_timestamp_en", "0\n"), ("scan_elements/in_timestamp_index", "\(next)\n"),
        ("scan_elements/in_timestamp_type", "le:s64/64>>0\n"),
      ]
    }
    let device = UMockdevDevice(
      devpath: "\(parent.devpath)/iio:device\(number)",
      properties: [("SUBSYSTEM", "iio"), ("DEVNAME", "/dev/iio:device\(number)")] + properties,
      attributes: attrs + attributes, node: "iio:device\(number)")
    let motion = UMockdevDevice(
      devpath: "\(parent.devpath)/trigger\(2 * number)", properties: [("SUBSYSTEM", "iio")],
      attributes: [("name", "\(name)-any-motion-dev\(number)\n")])
    let dataReady = UMockdevDevice(
      devpath: "\(parent.devpath)/trigger\(2 * number + 1)", properties: [("SUBSYSTEM", "iio")],
      attributes: [("name", "\(name)-dev\(number)\n")])
    return [device, motion, dataReady]
  }

  /// Encodes one scan the way a driver writes it, independently of orientd's decoder: values
  /// are put in `bits` two's complement, shifted, with junk in the unused bits; the timestamp
  /// slot (left zero, the driver script fills it) follows at an 8-byte boundary.
  static func record(_ values: (Int, Int, Int), format: Format) -> (
    bytes: [UInt8], timestampOffset: Int?
  ) {
    let parts = format.type.split(separator: ":")
    let big = parts[0] == "be"
    let spec = parts[1]  // e.g. s12/16>>4
    let bits = Int(spec.dropFirst().split(separator: "/")[0]) ?? 16
    let rest = spec.split(separator: "/")[1]
    let storage = Int(rest.split(separator: ">")[0]) ?? 16
    let shift = Int(rest.split(separator: ">").last ?? "0") ?? 0
    let size = storage / 8
    var bytes: [UInt8] = []
    for value in [values.0, values.1, values.2] {
      let mask = (UInt64(1) << UInt64(bits)) - 1
      var word = (UInt64(bitPattern: Int64(value)) & mask) << UInt64(shift)
      // Junk outside the value's bits, which a correct decoder masks away.
      let used = ((UInt64(1) << UInt64(bits + shift)) - 1) ^ ((UInt64(1) << UInt64(shift)) - 1)
      let all: UInt64 = storage == 64 ? ~0 : (UInt64(1) << UInt64(storage)) - 1
      word |= 0xA5A5_A5A5_A5A5_A5A5 & all & ~used
      var item: [UInt8] = (0..<size).map { UInt8(truncatingIfNeeded: word >> UInt64(8 * $0)) }
      if big { item.reverse() }
      bytes += item
    }
    var timestampOffset: Int?
    if format.timestamp {
      // The extra channel is disabled by orientd, so scans hold 3 elements, then the timestamp
      // aligned to 8.
      let offset = (3 * size + 7) / 8 * 8
      bytes += [UInt8](repeating: 0, count: offset - bytes.count + 8)
      timestampOffset = offset
    } else {
      let padded = (bytes.count + size - 1) / size * size
      bytes += [UInt8](repeating: 0, count: padded - bytes.count)
    }
    return (bytes, timestampOffset)
  }

  /// The raw counts for an upright orientation (identity matrix): gravity / scale.
  static func raw(_ orientation: Orientation) -> (Int, Int, Int) {
    guard let g = orientation.uprightGravity else { return (0, 0, 0) }
    func counts(_ v: Double) -> Int { Int((v / standardGravity * Double(countsPerG)).rounded()) }
    return (counts(g.x), counts(g.y), counts(g.z))
  }

  /// The orientation a vector is closest to, or `nil` for a tiny vector.
  static func classify(_ v: Vector3) -> Orientation? {
    guard v.magnitude > 1 else { return nil }
    return Orientation.defined.max { a, b in
      (a.uprightGravity ?? .zero).dot(v) < (b.uprightGravity ?? .zero).dot(v)
    }
  }

  /// Parses `orientd record` CSV lines (the header is skipped).
  static func csv(_ lines: [String]) -> [(t: Double, v: Vector3)] {
    lines.compactMap { line in
      let f = line.split(separator: ",").compactMap { Double($0) }
      guard f.count == 4 else { return nil }
      return (f[0], Vector3(f[1], f[2], f[3]))
    }
  }

  /// Parses the probe's `sample <ns> <x> <y> <z>` lines.
  static func samples(_ lines: [String]) -> [(t: Int64, v: Vector3)] {
    lines.compactMap { line in
      let f = line.split(separator: " ")
      guard f.count == 5, f[0] == "sample", let t = Int64(f[1]), let x = Double(f[2]),
        let y = Double(f[3]), let z = Double(f[4])
      else { return nil }
      return (t, Vector3(x, y, z))
    }
  }

  /// The sensor status of an accel-probe `sensor {...}` line, parsed (nil for other lines and
  /// `sensor none`).
  static func sensor(_ line: String) -> JSONValue? {
    guard line.hasPrefix("sensor {") else { return nil }
    return try? JSONValue(parsing: String(line.dropFirst("sensor ".count)))
  }
}
