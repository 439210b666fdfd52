// Substring search without the `_StringProcessing` module. The standard library's
// `contains(_:)` and `firstRange(of:)` for strings live there, and calling either links that
// module and `_RegexParser` into orientd: about 800 KiB of code, 200 KiB of it resident in the
// daemon (docs/benchmark.md "Memory"). orientd only looks for short ASCII markers in short
// strings, so a direct search is all it needs.

extension StringProtocol {
  /// The range of the first occurrence of `needle`, compared character by character, or `nil`.
  ///
  /// The same result as `firstRange(of:)` from `_StringProcessing` for these strings; an empty
  /// `needle` is found at the start.
  public func firstTextRange(of needle: some StringProtocol) -> Range<Index>? {
    var start = startIndex
    while true {
      var here = start
      var wanted = needle.startIndex
      while wanted != needle.endIndex, here != endIndex, self[here] == needle[wanted] {
        formIndex(after: &here)
        needle.formIndex(after: &wanted)
      }
      if wanted == needle.endIndex { return start..<here }
      if start == endIndex { return nil }
      formIndex(after: &start)
    }
  }

  /// Whether `needle` occurs in the text (see `firstTextRange(of:)`).
  public func containsText(_ needle: some StringProtocol) -> Bool {
    firstTextRange(of: needle) != nil
  }
}
