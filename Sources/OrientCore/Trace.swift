import TextFormats

/// Parses recorded accelerometer traces, one line at a time, for `orientd replay`.
///
/// The format is CSV, one sample per line: `t,x,y,z` with `t` in seconds (non-decreasing) and
/// `x,y,z` in m/s^2 in the display frame (Linux IIO convention, see `Sample`). An optional
/// header line `t,x,y,z` may come before the first sample; lines starting with `#` are comments;
/// blank lines, spaces around values and a trailing carriage return are allowed. Anything else
/// is an error naming the source and line: nothing is silently skipped.
///
/// The parser holds no buffer: the caller reads lines (streaming, bounded by
/// `maxLineLength`) and hands each one in.
public struct TraceParser: Sendable {
  /// The longest line accepted, in bytes (without the newline).
  public static let maxLineLength = 4096

  /// Where the lines come from (a path, or `<stdin>`), for errors.
  public let source: String
  /// The number of the last line handed in (1-based).
  public private(set) var lineNumber = 0
  private var seenSample = false
  private var previousTime = -Double.infinity

  /// Creates a parser for lines from `source`.
  public init(source: String) {
    self.source = source
  }

  /// Parses the next line (without its newline).
  ///
  /// - Returns: the sample, or `nil` for a blank line, a comment or the header.
  /// - Throws: `TraceError` naming the source and line: too long, wrong number of fields, a
  ///   value that is not a finite decimal number, or a time before the previous sample's.
  public mutating func parse(line bytes: some Collection<UInt8>) throws(TraceError) -> Sample? {
    lineNumber += 1
    guard bytes.count <= TraceParser.maxLineLength else {
      throw error(
        "line is \(bytes.count) bytes long, more than the \(TraceParser.maxLineLength) allowed")
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
      throw error("line is not valid UTF-8 text")
    }
    let line = text[...].trimming()
    if line.isEmpty || line.hasPrefix("#") { return nil }
    let fields = line.split(separator: ",", omittingEmptySubsequences: false)
    if !seenSample, fields.count == 4,
      zip(fields, ["t", "x", "y", "z"]).allSatisfy({ $0.trimming() == $1 })
    {
      return nil
    }
    guard fields.count == 4 else {
      throw error(
        "expected 4 comma-separated values t,x,y,z, found \(fields.count): '\(line.prefix(80))'")
    }
    var values = (0.0, 0.0, 0.0, 0.0)
    for (index, field) in fields.enumerated() {
      let value: Double
      do {
        value = try DecimalText.parseDouble(field)
      } catch {
        let name = ["t", "x", "y", "z"][index]
        throw self.error("\(name) '\(field.trimming().prefix(40))' is \(error)")
      }
      switch index {
      case 0: values.0 = value
      case 1: values.1 = value
      case 2: values.2 = value
      default: values.3 = value
      }
    }
    guard values.0 >= previousTime else {
      throw error(
        "time \(shortDecimal(values.0)) is before the previous sample's"
          + " \(shortDecimal(previousTime)); times must not decrease")
    }
    previousTime = values.0
    seenSample = true
    return Sample(time: values.0, values.1, values.2, values.3)
  }

  /// An error at the current line.
  public func error(_ reason: String) -> TraceError {
    TraceError(source: source, line: lineNumber, reason: reason)
  }
}

/// A malformed trace line (the same located error as a configuration file's).
public typealias TraceError = LineError
