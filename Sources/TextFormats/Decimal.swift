/// Locale-independent parsing of the decimal numbers the kernel, hwdb and trace files write.
///
/// Accepts `[+-]digits[.digits][(e|E)[+-]digits]` (also `.5` and `5.`), nothing else: no hex
/// floats, no `inf`/`nan`, no thousands separators, no surrounding text. The process locale is
/// never consulted (C `strtod` would read `0,5` in some locales).
public enum DecimalText {
  /// Why a piece of text is not a number.
  public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing there.
    case empty
    /// Not of the decimal form described above.
    case notANumber
    /// A NaN or infinity was written (`nan`, `inf`), or the value overflows a `Double`.
    case notFinite

    /// A short phrase for messages.
    public var description: String {
      switch self {
      case .empty: return "empty value"
      case .notANumber: return "not a decimal number"
      case .notFinite: return "not a finite number"
      }
    }
  }

  /// Parses `text` (surrounding spaces and tabs allowed) as a finite `Double`.
  public static func parseDouble(_ text: Substring) throws(Problem) -> Double {
    let trimmed = text.trimming()
    if trimmed.isEmpty { throw .empty }
    guard isDecimal(trimmed.utf8) else {
      let lower = trimmed.lowercased()
      if lower.containsText("inf") || lower.containsText("nan") { throw .notFinite }
      throw .notANumber
    }
    guard let value = Double(trimmed), value.isFinite else { throw .notFinite }
    return value
  }

  /// Parses `text` as a finite `Double`.
  public static func parseDouble(_ text: String) throws(Problem) -> Double {
    try parseDouble(text[...])
  }

  /// Parses a decimal integer such as the kernel writes for `in_accel_x_raw` (`-123`), with
  /// surrounding spaces and a trailing newline allowed.
  ///
  /// - Returns: the value, or `nil` when the text is not an integer or does not fit in `Int64`.
  public static func parseInteger(_ bytes: some Collection<UInt8>) -> Int64? {
    var index = bytes.startIndex
    // Skip leading blanks.
    while index != bytes.endIndex, bytes[index] == 0x20 || bytes[index] == 0x09 {
      index = bytes.index(after: index)
    }
    var negative = false
    if index != bytes.endIndex, bytes[index] == 0x2D || bytes[index] == 0x2B {
      negative = bytes[index] == 0x2D
      index = bytes.index(after: index)
    }
    var value: Int64 = 0
    var digits = 0
    while index != bytes.endIndex {
      let c = bytes[index]
      guard c >= 0x30 && c <= 0x39 else { break }
      let digit = Int64(c - 0x30)
      // Accumulate negatively so that Int64.min parses.
      let (m, o1) = value.multipliedReportingOverflow(by: 10)
      let (s, o2) = m.subtractingReportingOverflow(digit)
      if o1 || o2 { return nil }
      value = s
      digits += 1
      index = bytes.index(after: index)
    }
    guard digits > 0 else { return nil }
    // Only blanks, newlines and NULs may follow.
    while index != bytes.endIndex {
      let c = bytes[index]
      guard c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == 0 else { return nil }
      index = bytes.index(after: index)
    }
    if negative { return value }
    let (positive, overflow) = Int64(0).subtractingReportingOverflow(value)
    return overflow ? nil : positive
  }

  private static func isDecimal(_ utf8: Substring.UTF8View) -> Bool {
    var it = utf8.makeIterator()
    var c = it.next()
    if c == UInt8(ascii: "+") || c == UInt8(ascii: "-") { c = it.next() }
    var intDigits = 0
    while let d = c, d >= 0x30 && d <= 0x39 {
      intDigits += 1
      c = it.next()
    }
    var fracDigits = 0
    if c == UInt8(ascii: ".") {
      c = it.next()
      while let d = c, d >= 0x30 && d <= 0x39 {
        fracDigits += 1
        c = it.next()
      }
    }
    if intDigits + fracDigits == 0 { return false }
    if c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
      c = it.next()
      if c == UInt8(ascii: "+") || c == UInt8(ascii: "-") { c = it.next() }
      var expDigits = 0
      while let d = c, d >= 0x30 && d <= 0x39 {
        expDigits += 1
        c = it.next()
      }
      if expDigits == 0 { return false }
    }
    return c == nil
  }
}

/// Formats a time or value as a user would write it: `1.52`, `2`, `0.001` (the shortest text
/// that reads back as the same `Double`, without a trailing `.0`).
public func shortDecimal(_ value: Double) -> String {
  if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
  return String(value)
}
