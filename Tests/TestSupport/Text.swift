import JSON

extension StringProtocol {
  /// Without leading and trailing whitespace and newlines.
  public func trimmingCharacters() -> String {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
    guard let start = firstIndex(where: { !isSpace($0) }),
      let end = lastIndex(where: { !isSpace($0) })
    else { return "" }
    return String(self[start...end])
  }

  /// Each line that is a JSON document, parsed (`orientd --watch --json`, `--get --json`);
  /// other lines, and a last line still being written, are left out.
  public var jsonLines: [JSONValue] {
    split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
  }
}
