import TextFormats

/// One line of a motion trace: a reading of one sensor.
public enum MotionTraceEvent: Sendable, Equatable {
  /// An accelerometer reading (m/s^2, display frame, orientd's convention); `part` is the
  /// display (`display`, `lid` or `accel`) or a convertible's base (`base`).
  case acceleration(HingePart, Sample)
  /// A gyroscope reading: time in seconds, rad/s in the display frame.
  case gyro(time: Double, Vector3)
  /// A magnetometer reading: time, the field in the display frame (uT, or the sensor's unit).
  case magneticField(time: Double, Vector3)
  /// A rotation sensor's reading (display to earth), already normalised.
  case rotation(time: Double, Quaternion)

  /// The reading's time.
  public var time: Double {
    switch self {
    case .acceleration(_, let s): return s.time
    case .gyro(let t, _), .magneticField(let t, _), .rotation(let t, _): return t
    }
  }
}

/// Reads the traces `orientd record --motion` writes and `orientd replay` reads: the tagged
/// form `t,sensor,values` of the two-sensor trace (`TaggedTraceParser`) with more sensors.
///
/// ```
/// # orientd motion trace
/// t,sensor,values
/// 0.01,accel,0.12,-9.79,0.31        accelerometer, m/s^2 (also `display`, `lid`; `base`)
/// 0.01,gyro,0.0012,-0.0004,0.0301   gyroscope, rad/s
/// 0.02,magn,21.5,-3.25,-44.1        magnetometer, uT (or the sensor's own unit)
/// 0.02,rotation,0.7071,0.7071,0,0   rotation sensor, w,x,y,z (display to earth)
/// ```
///
/// Times are seconds; each sensor's own times must not decrease (two sensors stamped by two
/// devices may interleave out of order by a little). The header line (`t,sensor,values` or
/// `t,sensor,x,y,z`) may come before the first reading; `#` comments and blank lines anywhere.
/// A rotation must be a unit quaternion within 5% (it is normalised). Errors name the source
/// and line, like `TraceParser`'s.
public struct MotionTraceParser: Sendable {
  /// The sensor names, in the order the format lists them.
  public static let sensors = ["accel", "display", "lid", "base", "gyro", "magn", "rotation"]
  /// The longest line accepted, in bytes.
  public static let maxLineLength = TraceParser.maxLineLength

  /// Where the lines come from, for errors.
  public let source: String
  /// The number of the last line handed in (1-based).
  public private(set) var lineNumber = 0
  private var seenReading = false
  /// Last time per sensor kind: display, base, gyro, magn, rotation.
  private var lastTimes = [Double](repeating: -.infinity, count: 5)

  /// Creates a parser for lines from `source`.
  public init(source: String) {
    self.source = source
  }

  /// Parses the next line (without its newline).
  ///
  /// - Returns: the reading, or `nil` for a blank line, a comment or the header.
  /// - Throws: `TraceError` naming the source and line.
  public mutating func parse(line bytes: some Collection<UInt8>) throws(TraceError)
    -> MotionTraceEvent?
  {
    lineNumber += 1
    guard bytes.count <= Self.maxLineLength else {
      throw error("line is \(bytes.count) bytes long, more than the \(Self.maxLineLength) allowed")
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
      throw error("line is not valid UTF-8 text")
    }
    let line = text[...].trimming()
    if line.isEmpty || line.hasPrefix("#") { return nil }
    let fields = line.split(separator: ",", omittingEmptySubsequences: false).map {
      $0.trimming()
    }
    if !seenReading, fields.count >= 3, fields[0] == "t", fields[1] == "sensor" { return nil }
    guard fields.count >= 2 else {
      throw error("expected t,sensor,values, found '\(line.prefix(80))'")
    }
    let sensor = String(fields[1])
    let kind: Int
    let expected: Int
    switch sensor {
    case "accel", "display", "lid": (kind, expected) = (0, 3)
    case "base": (kind, expected) = (1, 3)
    case "gyro": (kind, expected) = (2, 3)
    case "magn": (kind, expected) = (3, 3)
    case "rotation": (kind, expected) = (4, 4)
    default:
      if fields.count == 4, (try? DecimalText.parseDouble(fields[1])) != nil {
        throw error("a t,x,y,z line: a motion trace names the sensor (t,sensor,values)")
      }
      throw error(
        "sensor '\(sensor.prefix(40))' is not one of \(Self.sensors.joined(separator: ", "))")
    }
    guard fields.count == expected + 2 else {
      throw error(
        "a \(sensor) line has \(expected) values after the sensor, found \(fields.count - 2)")
    }
    let time = try number(fields[0], "t")
    var v = [Double](repeating: 0, count: expected)
    let names = expected == 4 ? ["w", "x", "y", "z"] : ["x", "y", "z"]
    for i in 0..<expected { v[i] = try number(fields[i + 2], names[i]) }
    guard time >= lastTimes[kind] else {
      throw error(
        "\(sensor) time \(shortDecimal(time)) is before its previous reading's"
          + " \(shortDecimal(lastTimes[kind])); a sensor's times must not decrease")
    }
    lastTimes[kind] = time
    seenReading = true
    switch kind {
    case 0: return .acceleration(.lid, Sample(time: time, v[0], v[1], v[2]))
    case 1: return .acceleration(.base, Sample(time: time, v[0], v[1], v[2]))
    case 2: return .gyro(time: time, Vector3(v[0], v[1], v[2]))
    case 3: return .magneticField(time: time, Vector3(v[0], v[1], v[2]))
    default:
      let q = Quaternion(w: v[0], x: v[1], y: v[2], z: v[3])
      guard abs(q.norm - 1) <= 0.05 else {
        throw error("rotation \(q) is not a unit quaternion (norm \(shortDecimal(q.norm)))")
      }
      // A quaternion already unit length is kept as written, so a written one reads back
      // bit for bit (normalising again can change the last bit).
      return .rotation(time: time, abs(q.norm - 1) < 1e-12 ? q : q.normalized)
    }
  }

  private func number(_ field: Substring, _ name: String) throws(TraceError) -> Double {
    do {
      return try DecimalText.parseDouble(field)
    } catch {
      throw self.error("\(name) '\(field.prefix(40))' is \(error)")
    }
  }

  /// An error at the current line.
  public func error(_ reason: String) -> TraceError {
    TraceError(source: source, line: lineNumber, reason: reason)
  }
}

/// Writes motion trace lines (`MotionTraceParser`'s format), with the shortest decimals that
/// read back as the same values.
public enum MotionTraceWriter {
  /// The first lines of a trace.
  public static let header = "# orientd motion trace\nt,sensor,values\n"

  /// The line of one reading (with its newline).
  public static func line(_ event: MotionTraceEvent) -> String {
    func join(_ t: Double, _ sensor: String, _ values: [Double]) -> String {
      ([shortDecimal(t), sensor] + values.map(shortDecimal)).joined(separator: ",") + "\n"
    }
    switch event {
    case .acceleration(let part, let s):
      let a = s.acceleration
      return join(s.time, part == .base ? "base" : "accel", [a.x, a.y, a.z])
    case .gyro(let t, let w): return join(t, "gyro", [w.x, w.y, w.z])
    case .magneticField(let t, let m): return join(t, "magn", [m.x, m.y, m.z])
    case .rotation(let t, let q): return join(t, "rotation", [q.w, q.x, q.y, q.z])
    }
  }
}
