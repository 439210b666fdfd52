/// The text of an orientd configuration file: INI-style sections of `key = value` lines.
///
/// ```
/// # comment (also ';')
/// [detector]                   # a '#' after a blank starts a comment too
/// filter-time-constant = 0.05
///
/// [device "tablet-display"]
/// match-name = mxc4005
/// mount-matrix = 0, 1, 0; -1, 0, 0; 0, 0, 1
/// ```
///
/// This type only splits the text; each consumer interprets its own sections and reports
/// unknown keys or bad values with `ConfigError` at the entry's line.
public struct ConfigFile: Sendable {
  /// One `key = value` line.
  public struct Entry: Sendable, Equatable {
    /// The key, as written (keys are kebab-case by convention).
    public var key: String
    /// The value with surrounding blanks removed (may be empty).
    public var value: String
    /// 1-based line number.
    public var line: Int
  }

  /// A `[name]` or `[name "argument"]` section and its entries.
  public struct Section: Sendable, Equatable {
    /// The section name, e.g. `detector` or `device`.
    public var name: String
    /// The quoted argument of `[device "tablet-display"]`, if any.
    public var argument: String?
    /// 1-based line of the header.
    public var line: Int
    /// The entries in order.
    public var entries: [Entry]
  }

  /// Where the text came from, for messages (a path, or `<command line>`).
  public var source: String
  /// The sections in order; entries before the first header go to a section named `""`.
  public var sections: [Section]

  /// Largest file accepted, in bytes.
  public static let maxBytes = 256 * 1024

  /// Splits `text` into sections.
  ///
  /// - Throws: `ConfigError` naming `source` and the line: a malformed header, a line without
  ///   `=`, an empty key, a carriage return inside a line, or a file over `maxBytes`.
  public init(parsing text: String, source: String) throws(ConfigError) {
    self.source = source
    guard text.utf8.count <= ConfigFile.maxBytes else {
      throw ConfigError(
        source: source, line: 0,
        reason: "file is \(text.utf8.count) bytes, more than the \(ConfigFile.maxBytes) allowed")
    }
    var sections = [Section(name: "", argument: nil, line: 0, entries: [])]
    var lineNumber = 0
    // Split at every line feed scalar: split into Characters, "\r\n" is one Character that is
    // not "\n", so a file saved with CRLF line endings would read as one long line.
    for scalars in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false) {
      lineNumber += 1
      let line = Substring(scalars).trimming()
      if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
      guard !line.unicodeScalars.contains("\r") else {
        throw ConfigError(
          source: source, line: lineNumber,
          reason: "carriage return inside the line; save the file with Unix (LF) or DOS (CRLF)"
            + " line endings")
      }
      if line.hasPrefix("[") {
        // The header ends at the first ']' followed only by blanks or a comment.
        guard
          let close = line.indices.first(where: { index in
            guard line[index] == "]" else { return false }
            let rest = line[line.index(after: index)...].trimming()
            return rest.isEmpty || rest.hasPrefix("#")
          })
        else {
          throw ConfigError(source: source, line: lineNumber, reason: "section header without ']'")
        }
        let inner = line[..<close].dropFirst().trimming()
        var name = inner
        var argument: String?
        if let space = inner.firstIndex(where: { $0 == " " || $0 == "\t" }) {
          name = inner[..<space]
          let rest = inner[space...].trimming()
          guard rest.count >= 2, rest.hasPrefix("\""), rest.hasSuffix("\"") else {
            throw ConfigError(
              source: source, line: lineNumber,
              reason: "section argument must be in double quotes: [\(inner)]")
          }
          argument = String(rest.dropFirst().dropLast())
        }
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
          throw ConfigError(
            source: source, line: lineNumber, reason: "invalid section name '[\(inner)]'")
        }
        sections.append(
          Section(name: String(name), argument: argument, line: lineNumber, entries: []))
        continue
      }
      guard let equals = line.firstIndex(of: "=") else {
        throw ConfigError(
          source: source, line: lineNumber,
          reason: "expected 'key = value', found '\(line.prefix(60))'")
      }
      let key = line[..<equals].trimming()
      guard !key.isEmpty else {
        throw ConfigError(source: source, line: lineNumber, reason: "empty key before '='")
      }
      let value = ConfigFile.withoutComment(line[line.index(after: equals)...]).trimming()
      sections[sections.count - 1].entries.append(
        Entry(key: String(key), value: String(value), line: lineNumber))
    }
    if sections[0].entries.isEmpty { sections.removeFirst() }
    self.sections = sections
  }

  /// The value without an inline comment: a `#` at its start or after a blank starts one
  /// (`mode = auto   # auto | buffered | polled`); `a#b` stays as written.
  static func withoutComment(_ value: Substring) -> Substring {
    var previous: Character = " "
    for index in value.indices {
      let c = value[index]
      if c == "#" && (previous == " " || previous == "\t") { return value[..<index] }
      previous = c
    }
    return value
  }

  /// The sections called `name`, in order.
  public func sections(named name: String) -> [Section] {
    sections.filter { $0.name == name }
  }
}

/// A problem in a text input (a configuration file, an option, a trace), with where it is.
public struct LineError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The file path, `<command line>` or `<stdin>`.
  public var source: String
  /// 1-based line, 0 when the problem is not on one line.
  public var line: Int
  /// What is wrong and, where possible, what would be right.
  public var reason: String

  /// Creates an error.
  public init(source: String, line: Int, reason: String) {
    self.source = source
    self.line = line
    self.reason = reason
  }

  /// `source:line: reason`, or `source: reason` when it is not on one line.
  public var description: String {
    line > 0 ? "\(source):\(line): \(reason)" : "\(source): \(reason)"
  }
}

/// A problem in a configuration file or option.
public typealias ConfigError = LineError
