import TextFormats

/// Parses traces of either form for `orientd replay`: the one-sensor `t,x,y,z` and the
/// two-sensor `t,sensor,x,y,z` that `orientd record --base` writes for a convertible.
///
/// In the two-sensor form `sensor` is `display` (or `lid`) or `base`, and each sensor's times
/// must not decrease (the two sensors' readings may interleave out of order by a little: they
/// are stamped by two devices). The header `t,sensor,x,y,z` is allowed before the first sample.
/// The values follow `TraceParser`'s rules, and so do errors (source and line).
public struct TaggedTraceParser: Sendable {
  /// Which sensor a sample is from.
  public typealias Part = HingePart

  private var parsers: [TraceParser]
  /// Whether a sample line was seen, and whether it had a sensor field.
  public private(set) var isTwoSensor: Bool?
  /// The number of the last line handed in (1-based).
  public private(set) var lineNumber = 0

  /// Creates a parser for lines from `source`.
  public init(source: String) {
    parsers = [TraceParser(source: source), TraceParser(source: source)]
  }

  /// Parses the next line (without its newline).
  ///
  /// - Returns: the sensor and the sample, or `nil` for a blank line, a comment or a header.
  /// - Throws: `TraceError` naming the source and line: as `TraceParser`, plus an unknown
  ///   sensor, or a file mixing the two forms.
  public mutating func parse(line bytes: some Collection<UInt8>) throws(TraceError)
    -> (part: Part, sample: Sample)?
  {
    lineNumber += 1
    let array = Array(bytes)
    let commas = array.indices.filter { array[$0] == UInt8(ascii: ",") }
    let first = String(decoding: array.prefix { $0 != UInt8(ascii: ",") }, as: UTF8.self)
      .trimmingSpaces
    let isComment = first.isEmpty || first.hasPrefix("#")
    guard commas.count == 4, !isComment else {
      if !isComment, commas.count == 3, isTwoSensor == true {
        throw error("expected 5 comma-separated values t,sensor,x,y,z (the file's form)")
      }
      return try parse(array, part: .lid, twoSensor: false)
    }
    let field = String(decoding: array[(commas[0] + 1)..<commas[1]], as: UTF8.self)
      .trimmingSpaces
    if isTwoSensor == nil, first == "t", field == "sensor" { return nil }
    let part: Part
    switch field {
    case "display", "lid": part = .lid
    case "base": part = .base
    default:
      throw error("sensor '\(field.prefix(40))' is not display, lid or base")
    }
    var rest = Array(array[..<commas[0]])
    rest += array[commas[1]...]
    return try parse(rest, part: part, twoSensor: true)
  }

  private mutating func parse(_ bytes: [UInt8], part: Part, twoSensor: Bool) throws(TraceError)
    -> (part: Part, sample: Sample)?
  {
    let index = part == .lid ? 0 : 1
    // Keep the inner parser's line count in step, so that its errors name this line.
    while parsers[index].lineNumber < lineNumber - 1 {
      _ = try? parsers[index].parse(line: [UInt8]())
    }
    guard let sample = try parsers[index].parse(line: bytes) else { return nil }
    if let known = isTwoSensor, known != twoSensor {
      throw error("a t,x,y,z line in a t,sensor,x,y,z trace")
    }
    isTwoSensor = twoSensor
    return (part, sample)
  }

  private func error(_ reason: String) -> TraceError {
    TraceError(source: parsers[0].source, line: lineNumber, reason: reason)
  }
}

extension String {
  /// Without leading and trailing spaces, tabs and carriage returns.
  fileprivate var trimmingSpaces: String {
    String(self[...].trimming())
  }
}
