import JSON

extension StringProtocol {
  /// Each line that is a JSON document, parsed (`orientd --watch --json`, `--get --json`);
  /// other lines, and a last line still being written, are left out.
  public var jsonLines: [JSONValue] {
    split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
  }
}
