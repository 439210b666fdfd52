import Testing

@testable import TextFormats

@Suite struct ConfigFileTests {
  @Test func splitsSectionsWithArgumentsAndLineNumbers() throws {
    let text = """
      # orientd.conf
      [detector]
      filter-time-constant = 0.05

      [device "tablet"]
      match-name = mxc4005
      mount-matrix = 0, 1, 0; -1, 0, 0; 0, 0, 1
      """
    let file = try ConfigFile(parsing: text, source: "/etc/orientd.conf")
    #expect(file.sections.map(\.name) == ["detector", "device"])
    #expect(file.sections[1].argument == "tablet")
    #expect(file.sections[1].entries[1].line == 7)
    #expect(file.sections[1].entries[1].value == "0, 1, 0; -1, 0, 0; 0, 0, 1")
  }

  @Test(arguments: [
    ("[detector\nx = 1", 1, "without ']'"),
    ("[detector]\nfilter", 2, "expected 'key = value'"),
    ("[device tablet]", 1, "double quotes"),
    ("[]", 1, "invalid section name"),
    ("[a]\n = 3", 2, "empty key"),
  ])
  func errorsNameSourceAndLine(text: String, line: Int, reason: String) {
    #expect {
      _ = try ConfigFile(parsing: text, source: "test.conf")
    } throws: { error in
      guard let error = error as? ConfigError else { return false }
      return error.line == line && error.reason.contains(reason)
        && error.description.hasPrefix("test.conf:\(line): ")
    }
  }
}

/// Inputs the fuzzer (fuzz/targets/config-file.swift) found; each also in fuzz/corpus/config-file.
@Suite struct ConfigFileFuzzRegressionTests {
  /// CRLF line endings: "\r\n" is a single Character, so splitting the text at Character "\n"
  /// read the whole file as one line and put the rest of the file into the first value.
  @Test func crlfLineEndingsReadLikeLF() throws {
    let lf = "[detector]\nhysteresis = 10\n\n[sampling]\nmode = polled\n"
    let crlf = lf.replacingLineFeeds(with: "\r\n")
    let expected = try ConfigFile(parsing: lf, source: "lf.conf")
    let file = try ConfigFile(parsing: crlf, source: "crlf.conf")
    #expect(file.sections == expected.sections)
    #expect(file.sections.first?.entries.first?.value == "10")
    #expect(file.sections.last?.entries.first?.line == 5)
    #expect(file.sections.map(\.name) == ["detector", "sampling"])
    #expect(file.sections.last?.entries.first?.value == "polled")
  }

  /// A lone carriage return (old Mac line ending, or a stray one) cannot be attributed to a
  /// line: an error at the line it is in, not a value with a line break in it.
  @Test func loneCarriageReturnIsAnErrorAtItsLine() {
    #expect {
      _ = try ConfigFile(parsing: "[detector]\nhysteresis = 10\rgravity = 9\n", source: "cr.conf")
    } throws: { error in
      guard let error = error as? ConfigError else { return false }
      return error.line == 2 && error.reason.contains("carriage return")
    }
  }
}

extension String {
  fileprivate func replacingLineFeeds(with ending: String) -> String {
    split(separator: "\n", omittingEmptySubsequences: false).joined(separator: ending)
  }
}

@Suite struct ConfigFileInlineCommentTests {
  /// The documented examples and `SamplingConfiguration`'s put comments after values; they used
  /// to become part of the value ("mode 'auto   # auto | buffered | polled' is not one of ...").
  @Test func commentAfterABlankEndsTheValue() throws {
    let text = """
      [detector]   # tuned for this tablet
      hysteresis = 14   # degrees
      [device "lid #1"] # the display
      match-name = mxc4005\t# glob
      match-label = a#b
      location =   # nothing
      """
    let file = try ConfigFile(parsing: text, source: "inline.conf")
    #expect(file.sections.map(\.name) == ["detector", "device"])
    #expect(file.sections[1].argument == "lid #1")
    #expect(file.sections[0].entries.map(\.value) == ["14"])
    #expect(file.sections[1].entries.map(\.value) == ["mxc4005", "a#b", ""])
  }
}
