import Testing

@testable import Orientation

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
