// JSON documents: `JSON.JSONValue(parsing:limits:)` and `encoded()`.
//
// Input: byte 0 picks the nesting limit (it is fuzzed too); the rest is the document.
//
// Invariants: an accepted document nests no deeper than the limit; encoding it and parsing the
// encoding gives an equal value, and encoding is a fixed point from there; an error's line and
// column lie inside the document.
import JSON

/// libFuzzer's entry point: checks one input against the invariants above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = inputBytes(data, size)
  guard let first = bytes.first else { return 0 }
  let text = String(decoding: bytes.dropFirst(), as: UTF8.self)
  let limits = JSONValue.Limits(maxBytes: 1 << 20, maxDepth: Int(first % 70))
  let value: JSONValue
  do {
    value = try JSONValue(parsing: text, limits: limits)
  } catch {
    let lines = text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false)
    require(error.line >= 1 && error.line <= lines.count, "error at line \(error.line)")
    let length = lines[error.line - 1].count
    require(
      error.column >= 1 && error.column <= length + 1,
      "error at column \(error.column) of a \(length)-byte line")
    return 0
  }
  require(depth(value) <= limits.maxDepth, "nested \(depth(value)) deep, limit \(limits.maxDepth)")
  let encoded = value.encoded()
  let again: JSONValue
  do {
    again = try JSONValue(parsing: encoded, limits: limits)
  } catch {
    require(false, "the encoding \(encoded.prefix(200)) does not parse: \(error)")
    return 0
  }
  require(again == value, "the encoding reads back different: \(encoded.prefix(200))")
  require(again.encoded() == encoded, "encoding is not a fixed point: \(encoded.prefix(200))")
  require(!encoded.unicodeScalars.contains("\n"), "the encoding is not one line")
  return 0
}

private func depth(_ value: JSONValue) -> Int {
  switch value {
  case .array(let items): return 1 + (items.map(depth).max() ?? 0)
  case .object(let members): return 1 + (members.map { depth($0.1) }.max() ?? 0)
  default: return 0
  }
}
