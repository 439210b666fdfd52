/// Where the values and member names of a document parsed with
/// `JSONValue.parseWithLocations` start, addressed by their path from the root
/// (`[.key("controls"), .index(2), .key("anchor")]`).
public struct JSONLocations: Sendable {
  /// One step from a container to a child: a member name or an array index.
  public enum Step: Hashable, Sendable, CustomStringConvertible {
    /// The member with this name.
    case key(String)
    /// The element at this 0-based index.
    case index(Int)

    /// `.name` or `[3]`, as in `controls[2].anchor`.
    public var description: String {
      switch self {
      case .key(let name): return ".\(name)"
      case .index(let i): return "[\(i)]"
      }
    }
  }

  /// A 1-based line and column (in bytes), as `JSONError` counts them.
  public struct Position: Equatable, Sendable {
    /// 1-based line.
    public var line: Int
    /// 1-based column, counted in bytes.
    public var column: Int

    /// Creates a position.
    public init(line: Int, column: Int) {
      self.line = line
      self.column = column
    }
  }

  let values: [[Step]: Int]
  let keys: [[Step]: Int]
  let lineStarts: [Int]

  /// Where the value at `path` starts (the root is `[]`), or `nil` for a path not in the
  /// document.
  public func value(at path: [Step]) -> Position? {
    values[path].map(position)
  }

  /// Where the member name of the value at `path` starts (the opening quote), or `nil` if the
  /// path does not end in a member.
  public func key(at path: [Step]) -> Position? {
    keys[path].map(position)
  }

  /// A readable path: `controls[2].anchor` (the root is `(document)`).
  public static func describe(_ path: [Step]) -> String {
    guard !path.isEmpty else { return "(document)" }
    let text = path.map(\.description).joined()
    return text.hasPrefix(".") ? String(text.dropFirst()) : text
  }

  private func position(_ offset: Int) -> Position {
    // The last line start at or before the offset.
    var low = 0
    var high = lineStarts.count - 1
    while low < high {
      let mid = (low + high + 1) / 2
      if lineStarts[mid] <= offset { low = mid } else { high = mid - 1 }
    }
    return Position(line: low + 1, column: offset - lineStarts[low] + 1)
  }
}
