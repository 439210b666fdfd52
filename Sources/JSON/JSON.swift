/// A JSON value, with a strict parser that reports line and column, and a compact encoder.
///
/// In-house because orientd keeps Foundation out of the daemon (memory), and because users
/// editing overlay files deserve errors with a line and column. RFC 8259; numbers are `Double`.
public enum JSONValue: Equatable, Sendable {
  /// `null`.
  case null
  /// `true` / `false`.
  case bool(Bool)
  /// A number.
  case number(Double)
  /// A string.
  case string(String)
  /// An array.
  case array([JSONValue])
  /// An object; key order is kept as written (duplicates are rejected by the parser).
  case object([(String, JSONValue)])

  /// Compares objects as ordered lists of members.
  public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): return true
    case (.bool(let a), .bool(let b)): return a == b
    case (.number(let a), .number(let b)): return a == b
    case (.string(let a), .string(let b)): return a == b
    case (.array(let a), .array(let b)): return a == b
    case (.object(let a), .object(let b)):
      return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    default: return false
    }
  }

  /// The member `key` of an object, or `nil`.
  public subscript(key: String) -> JSONValue? {
    guard case .object(let members) = self else { return nil }
    return members.first { $0.0 == key }?.1
  }

  /// The string, if this is one.
  public var stringValue: String? {
    if case .string(let s) = self { return s }
    return nil
  }

  /// The number, if this is one.
  public var numberValue: Double? {
    if case .number(let n) = self { return n }
    return nil
  }

  /// The boolean, if this is one.
  public var boolValue: Bool? {
    if case .bool(let b) = self { return b }
    return nil
  }

  /// The elements, if this is an array.
  public var arrayValue: [JSONValue]? {
    if case .array(let a) = self { return a }
    return nil
  }

  /// The members, if this is an object.
  public var objectValue: [(String, JSONValue)]? {
    if case .object(let o) = self { return o }
    return nil
  }

  /// A short name of the kind of value, for messages ("a string", "an object").
  public var kindName: String {
    switch self {
    case .null: return "null"
    case .bool: return "a boolean"
    case .number: return "a number"
    case .string: return "a string"
    case .array: return "an array"
    case .object: return "an object"
    }
  }
}

/// Where a JSON document is malformed.
public struct JSONError: Error, Equatable, Sendable, CustomStringConvertible {
  /// 1-based line.
  public var line: Int
  /// 1-based column, counted in bytes.
  public var column: Int
  /// What is wrong.
  public var reason: String

  /// `line L, column C: reason`.
  public var description: String { "line \(line), column \(column): \(reason)" }
}

extension JSONValue {
  /// Limits that keep a hostile document from exhausting memory or stack.
  public struct Limits: Sendable {
    /// Largest document in bytes.
    public var maxBytes: Int
    /// Deepest nesting of arrays and objects.
    public var maxDepth: Int

    /// Creates limits.
    public init(maxBytes: Int = 1 << 20, maxDepth: Int = 64) {
      self.maxBytes = maxBytes
      self.maxDepth = maxDepth
    }
  }

  /// Parses one JSON document (surrounding whitespace allowed).
  ///
  /// - Throws: `JSONError` with the line and column of the first problem.
  public init(parsing text: String, limits: Limits = Limits()) throws(JSONError) {
    var bytes = Array(text.utf8)
    if bytes.count > limits.maxBytes {
      throw JSONError(
        line: 1, column: 1, reason: "document is \(bytes.count) bytes, limit \(limits.maxBytes)")
    }
    bytes.append(0)  // sentinel
    var parser = JSONParser(bytes: bytes, maxDepth: limits.maxDepth)
    self = try parser.parseDocument()
  }

  /// Parses one JSON document and remembers where each value and member name starts, so that
  /// a document that is valid JSON but wrong for its purpose (an overlay control with an
  /// unknown anchor) can be reported at the offending line and column.
  ///
  /// - Throws: `JSONError` with the line and column of the first syntax problem.
  public static func parseWithLocations(_ text: String, limits: Limits = Limits())
    throws(JSONError) -> (value: JSONValue, locations: JSONLocations)
  {
    var bytes = Array(text.utf8)
    if bytes.count > limits.maxBytes {
      throw JSONError(
        line: 1, column: 1, reason: "document is \(bytes.count) bytes, limit \(limits.maxBytes)")
    }
    bytes.append(0)  // sentinel
    var parser = JSONParser(bytes: bytes, maxDepth: limits.maxDepth)
    parser.recording = true
    let value = try parser.parseDocument()
    var lineStarts = [0]
    for (i, byte) in bytes.enumerated() where byte == 0x0A { lineStarts.append(i + 1) }
    return (
      value,
      JSONLocations(values: parser.valueStarts, keys: parser.keyStarts, lineStarts: lineStarts)
    )
  }

  /// Encodes compactly on one line (`{"a":1,"b":[true,null]}`); integral numbers are written
  /// without a fraction, others with Swift's shortest round-tripping form.
  public func encoded() -> String {
    var out = ""
    encode(into: &out)
    return out
  }

  private func encode(into out: inout String) {
    switch self {
    case .null: out += "null"
    case .bool(let b): out += b ? "true" : "false"
    case .number(let n): out += JSONValue.format(n)
    case .string(let s): JSONValue.quote(s, into: &out)
    case .array(let items):
      out += "["
      for (i, item) in items.enumerated() {
        if i > 0 { out += "," }
        item.encode(into: &out)
      }
      out += "]"
    case .object(let members):
      out += "{"
      for (i, (key, value)) in members.enumerated() {
        if i > 0 { out += "," }
        JSONValue.quote(key, into: &out)
        out += ":"
        value.encode(into: &out)
      }
      out += "}"
    }
  }

  /// Formats a number as JSON: integers without `.0`; NaN and infinities as `null`.
  public static func format(_ n: Double) -> String {
    guard n.isFinite else { return "null" }
    if n == n.rounded(), abs(n) < 9e15 { return String(Int64(n)) }
    return String(n)
  }

  /// Appends `s` as a JSON string literal.
  public static func quote(_ s: String, into out: inout String) {
    out += "\""
    for scalar in s.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      default:
        if scalar.value < 0x20 {
          let hex = String(scalar.value, radix: 16)
          out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    out += "\""
  }
}

private struct JSONParser {
  let bytes: [UInt8]
  let maxDepth: Int
  var index = 0
  var depth = 0
  /// Whether to record where values and member names start (`parseWithLocations`).
  var recording = false
  var path: [JSONLocations.Step] = []
  var valueStarts: [[JSONLocations.Step]: Int] = [:]
  var keyStarts: [[JSONLocations.Step]: Int] = [:]

  init(bytes: [UInt8], maxDepth: Int) {
    self.bytes = bytes
    self.maxDepth = maxDepth
  }

  var atEnd: Bool { index >= bytes.count - 1 }

  func error(_ reason: String, at position: Int? = nil) -> JSONError {
    let position = min(position ?? index, bytes.count - 1)
    var line = 1
    var lineStart = 0
    for i in 0..<position where bytes[i] == 0x0A {
      line += 1
      lineStart = i + 1
    }
    return JSONError(line: line, column: position - lineStart + 1, reason: reason)
  }

  mutating func skipSpace() {
    while true {
      let c = bytes[index]
      guard c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D else { return }
      index += 1
    }
  }

  mutating func parseDocument() throws(JSONError) -> JSONValue {
    skipSpace()
    let value = try parseValue()
    skipSpace()
    guard atEnd else { throw error("unexpected text after the JSON value") }
    return value
  }

  func describeCurrent() -> String {
    if atEnd { return "end of input" }
    let c = bytes[index]
    if c >= 0x21 && c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
    return "byte 0x\(String(c, radix: 16))"
  }

  mutating func parseValue() throws(JSONError) -> JSONValue {
    if recording { valueStarts[path] = index }
    switch bytes[index] {
    case UInt8(ascii: "{"): return try parseObject()
    case UInt8(ascii: "["): return try parseArray()
    case UInt8(ascii: "\""): return .string(try parseString())
    case UInt8(ascii: "t"):
      try literal("true")
      return .bool(true)
    case UInt8(ascii: "f"):
      try literal("false")
      return .bool(false)
    case UInt8(ascii: "n"):
      try literal("null")
      return .null
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
    default: throw error("expected a value, found \(describeCurrent())")
    }
  }

  mutating func literal(_ word: StaticString) throws(JSONError) {
    let start = index
    for expected in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
      guard bytes[index] == expected else {
        throw error("invalid literal, expected \(word)", at: start)
      }
      index += 1
    }
  }

  mutating func enter() throws(JSONError) {
    depth += 1
    if depth > maxDepth { throw error("nesting deeper than \(maxDepth) levels") }
  }

  mutating func parseObject() throws(JSONError) -> JSONValue {
    try enter()
    index += 1
    var members: [(String, JSONValue)] = []
    // A set, not a search of `members`: that made a document of n members cost n^2/2 string
    // comparisons (a 650 KB object took minutes).
    var names = Set<String>()
    skipSpace()
    if bytes[index] == UInt8(ascii: "}") {
      index += 1
      depth -= 1
      return .object(members)
    }
    while true {
      skipSpace()
      guard bytes[index] == UInt8(ascii: "\"") else {
        throw error("expected a member name in double quotes, found \(describeCurrent())")
      }
      let keyStart = index
      let key = try parseString()
      guard names.insert(key).inserted else {
        throw error("duplicate member \"\(key)\"", at: keyStart)
      }
      skipSpace()
      guard bytes[index] == UInt8(ascii: ":") else {
        throw error("expected ':' after member name, found \(describeCurrent())")
      }
      index += 1
      skipSpace()
      if recording {
        path.append(.key(key))
        keyStarts[path] = keyStart
      }
      members.append((key, try parseValue()))
      if recording { path.removeLast() }
      skipSpace()
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
        continue
      }
      if bytes[index] == UInt8(ascii: "}") {
        index += 1
        depth -= 1
        return .object(members)
      }
      throw error("expected ',' or '}' in object, found \(describeCurrent())")
    }
  }

  mutating func parseArray() throws(JSONError) -> JSONValue {
    try enter()
    index += 1
    var items: [JSONValue] = []
    skipSpace()
    if bytes[index] == UInt8(ascii: "]") {
      index += 1
      depth -= 1
      return .array(items)
    }
    while true {
      skipSpace()
      if recording { path.append(.index(items.count)) }
      items.append(try parseValue())
      if recording { path.removeLast() }
      skipSpace()
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
        continue
      }
      if bytes[index] == UInt8(ascii: "]") {
        index += 1
        depth -= 1
        return .array(items)
      }
      throw error("expected ',' or ']' in array, found \(describeCurrent())")
    }
  }

  mutating func hex4() throws(JSONError) -> UInt32 {
    var value: UInt32 = 0
    for _ in 0..<4 {
      let c = bytes[index]
      let digit: UInt32
      switch c {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
      default: throw error("invalid \\u escape")
      }
      value = value * 16 + digit
      index += 1
    }
    return value
  }

  mutating func parseString() throws(JSONError) -> String {
    let start = index
    index += 1
    var scalars = String.UnicodeScalarView()
    var runStart = index
    func flush(_ parser: JSONParser, _ from: Int, _ to: Int, _ into: inout String.UnicodeScalarView)
    {
      if to > from {
        into.append(
          contentsOf: String(decoding: parser.bytes[from..<to], as: UTF8.self).unicodeScalars)
      }
    }
    while true {
      let c = bytes[index]
      if atEnd { throw error("unterminated string", at: start) }
      if c == UInt8(ascii: "\"") {
        flush(self, runStart, index, &scalars)
        index += 1
        return String(scalars)
      }
      if c < 0x20 { throw error("control character in string (escape it)") }
      if c == UInt8(ascii: "\\") {
        flush(self, runStart, index, &scalars)
        index += 1
        let e = bytes[index]
        index += 1
        switch e {
        case UInt8(ascii: "\""): scalars.append("\"")
        case UInt8(ascii: "\\"): scalars.append("\\")
        case UInt8(ascii: "/"): scalars.append("/")
        case UInt8(ascii: "b"): scalars.append("\u{08}")
        case UInt8(ascii: "f"): scalars.append("\u{0C}")
        case UInt8(ascii: "n"): scalars.append("\n")
        case UInt8(ascii: "r"): scalars.append("\r")
        case UInt8(ascii: "t"): scalars.append("\t")
        case UInt8(ascii: "u"):
          var code = try hex4()
          if code >= 0xD800 && code < 0xDC00 {
            guard bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
              throw error("unpaired surrogate in \\u escape")
            }
            index += 2
            let low = try hex4()
            guard low >= 0xDC00 && low < 0xE000 else { throw error("invalid surrogate pair") }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
          } else if code >= 0xDC00 && code < 0xE000 {
            throw error("unpaired surrogate in \\u escape")
          }
          guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
          scalars.append(scalar)
        default:
          throw error("invalid escape '\\\(Character(Unicode.Scalar(e)))'", at: index - 2)
        }
        runStart = index
        continue
      }
      index += 1
    }
  }

  mutating func parseNumber() throws(JSONError) -> Double {
    let start = index
    if bytes[index] == UInt8(ascii: "-") { index += 1 }
    func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
    guard isDigit(bytes[index]) else { throw error("invalid number", at: start) }
    if bytes[index] == UInt8(ascii: "0") {
      index += 1
    } else {
      while isDigit(bytes[index]) { index += 1 }
    }
    if bytes[index] == UInt8(ascii: ".") {
      index += 1
      guard isDigit(bytes[index]) else { throw error("invalid number", at: start) }
      while isDigit(bytes[index]) { index += 1 }
    }
    if bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
      index += 1
      if bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
      guard isDigit(bytes[index]) else { throw error("invalid number", at: start) }
      while isDigit(bytes[index]) { index += 1 }
    }
    let text = String(decoding: bytes[start..<index], as: UTF8.self)
    guard let value = Double(text), value.isFinite else {
      throw error("number out of range", at: start)
    }
    return value
  }
}
