import Testing

@testable import JSON

@Suite struct JSONTests {
  @Test func parsesAndReEncodesAWatchLine() throws {
    let line = #"{"time":12.5,"orientation":"left-up","rotation":90,"ok":true,"n":null}"#
    let value = try JSONValue(parsing: line)
    #expect(value["orientation"]?.stringValue == "left-up")
    #expect(value["rotation"]?.numberValue == 90)
    #expect(value.encoded() == line)
  }

  @Test func escapesAndUnicodeRoundTrip() throws {
    let value = JSONValue.string("a\"b\\c\n\u{01}é😀")
    let text = value.encoded()
    #expect(text == #""a\"b\\c\n\u0001é😀""#)
    #expect(try JSONValue(parsing: text) == value)
    #expect(try JSONValue(parsing: #""\ud83d\ude00""#) == .string("😀"))
  }

  @Test(arguments: [
    ("{\n  \"a\": 1,\n  \"a\": 2\n}", 3, 3, "duplicate member"),
    ("[1, 2,]", 1, 7, "expected a value"),
    ("{\"a\" 1}", 1, 6, "expected ':'"),
    ("\"abc", 1, 1, "unterminated string"),
    ("01", 1, 2, "unexpected text"),
    ("[1] x", 1, 5, "unexpected text"),
    ("tru", 1, 1, "invalid literal"),
    ("", 1, 1, "expected a value"),
  ])
  func errorsCarryLineAndColumn(text: String, line: Int, column: Int, reason: String) {
    #expect {
      _ = try JSONValue(parsing: text)
    } throws: { error in
      guard let error = error as? JSONError else { return false }
      return error.line == line && error.column == column && error.reason.contains(reason)
    }
  }

  @Test func depthAndSizeAreBounded() {
    let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
    #expect(throws: JSONError.self) { try JSONValue(parsing: deep) }
    let big = "\"" + String(repeating: "x", count: 2000) + "\""
    #expect(throws: JSONError.self) {
      try JSONValue(parsing: big, limits: .init(maxBytes: 1000, maxDepth: 8))
    }
  }
}

/// Problems found while fuzzing the parser (fuzz/targets/json.swift).
@Suite struct JSONFuzzRegressionTests {
  /// Duplicate members were found by searching the members read so far: n^2/2 comparisons, so a
  /// 650 KB object of 60 000 members (within the 1 MiB limit) took minutes to parse.
  @Test func manyMembersParseAndADuplicateAtTheEndIsStillFound() throws {
    let members = (0..<60_000).map { "\"k\($0)\":\($0)" }
    let text = "{" + members.joined(separator: ",") + "}"
    let value = try JSONValue(parsing: text)
    #expect(value.objectValue?.count == 60_000)
    #expect(value["k59999"]?.numberValue == 59_999)
    #expect {
      _ = try JSONValue(parsing: "{" + members.joined(separator: ",") + ",\"k17\":0}")
    } throws: { error in
      (error as? JSONError)?.reason == "duplicate member \"k17\""
    }
  }

  /// Keys that are canonically equivalent (precomposed and decomposed é) are one member, as
  /// before: Swift compares and hashes strings by canonical equivalence.
  @Test func canonicallyEquivalentKeysAreDuplicates() {
    #expect(throws: JSONError.self) { try JSONValue(parsing: "{\"\u{E9}\":1,\"e\u{301}\":2}") }
  }
}
