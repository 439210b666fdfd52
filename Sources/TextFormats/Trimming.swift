/// What text is padded with, for `trimming(_:)`.
public enum Padding {
  /// Spaces, tabs, carriage returns and newlines (INI files, sysfs, text protocols).
  public static let whitespace: Set<Character> = [" ", "\t", "\r", "\n"]
  /// `whitespace` and NUL (sysfs attributes some drivers pad with NUL).
  public static let whitespaceAndNUL: Set<Character> = whitespace.union(["\0"])
  /// Spaces, tabs and carriage returns, not newlines (one line of a line protocol).
  public static let spacesAndTabs: Set<Character> = [" ", "\t", "\r"]
}

extension StringProtocol {
  /// The text without leading and trailing characters in `padding`.
  public func trimming(_ padding: Set<Character> = Padding.whitespace) -> SubSequence {
    guard let first = firstIndex(where: { !padding.contains($0) }),
      let last = lastIndex(where: { !padding.contains($0) })
    else { return self[endIndex...] }
    return self[first...last]
  }
}
