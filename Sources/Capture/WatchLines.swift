import JSON
import OrientCore
import TextFormats

/// Parses the lines `orientd --watch --json` prints, e.g.
/// `{"time":12.5,"orientation":"left-up","rotation":90,"tilt":"vertical"}`.
///
/// The latest line with a defined orientation wins. A line whose orientation is `undefined`
/// (no reading yet, flat since start) does not replace an earlier one. Malformed lines and
/// lines without an orientation are skipped with a warning naming the line; if no line gives an
/// orientation at all, the caller reports that as an error.
public struct WatchLineParser: Sendable {
  /// The latest defined orientation and its line number.
  public private(set) var latest: (orientation: Orientation, line: Int)?
  /// Warnings for skipped lines, `"stdin:3: ..."`.
  public private(set) var warnings: [String] = []
  /// Lines seen.
  public private(set) var lineCount = 0
  /// Whether any line said `undefined`.
  public private(set) var sawUndefined = false
  private let label: String
  private var pending: [UInt8] = []
  /// Set while the rest of an over-long line is skipped.
  private var overlong = false

  /// The longest line kept, in bytes: orientd's lines are under 100 bytes, and a stream that
  /// never sends a newline (the wrong file, `/dev/zero`) must not grow the buffer without bound.
  public static let maxLineLength = 64 * 1024

  /// Creates a parser; `label` names the input in warnings (`stdin`, a path).
  public init(label: String) { self.label = label }

  /// Feeds raw bytes; complete lines are parsed, a trailing partial line is kept (up to
  /// `maxLineLength` bytes; a longer line is skipped with a warning).
  public mutating func feed(_ bytes: some Sequence<UInt8>) {
    for byte in bytes {
      if byte == 0x0A {
        endLine()
      } else if overlong {
        continue
      } else if pending.count < WatchLineParser.maxLineLength {
        pending.append(byte)
      } else {
        overlong = true
        pending.removeAll()
      }
    }
  }

  /// Parses what is left after the input ended (a last line without a newline).
  public mutating func finish() {
    if !pending.isEmpty || overlong { endLine() }
    pending = []
  }

  private mutating func endLine() {
    if overlong {
      overlong = false
      lineCount += 1
      warnings.append(
        "\(label):\(lineCount): line longer than \(WatchLineParser.maxLineLength) bytes; ignored")
      return
    }
    let line = String(decoding: pending, as: UTF8.self)
    pending.removeAll(keepingCapacity: true)
    parse(line)
  }

  /// Parses one line.
  public mutating func parse(_ line: String) {
    lineCount += 1
    let here = "\(label):\(lineCount)"
    let trimmed = String(line.trimming(Padding.spacesAndTabs))
    if trimmed.isEmpty { return }
    let value: JSONValue
    do { value = try JSONValue(parsing: trimmed) } catch {
      warnings.append("\(here): not JSON (\(error)); line ignored")
      return
    }
    guard case .object = value else {
      warnings.append("\(here): expected a JSON object like orientd --watch --json prints; ignored")
      return
    }
    if let name = value["orientation"]?.stringValue {
      guard let orientation = Orientation(rawValue: name) else {
        warnings.append("\(here): unknown orientation \"\(name)\"; line ignored")
        return
      }
      if orientation == .undefined {
        sawUndefined = true
        return
      }
      latest = (orientation, lineCount)
    } else if let degrees = value["rotation"]?.numberValue,
      let whole = Int(exactly: degrees),  // Int(1e300) would trap
      let orientation = Orientation(clockwiseRotation: whole)
    {
      latest = (orientation, lineCount)
    } else {
      warnings.append("\(here): no \"orientation\" member; line ignored")
    }
  }
}
