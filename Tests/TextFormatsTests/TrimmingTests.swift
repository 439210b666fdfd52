import Testing
import TextFormats

/// The one trim helper of the project.
@Suite struct TrimmingTests {
  @Test func trimsOnlyTheGivenPaddingAtBothEnds() {
    #expect(" \t 1.5 \r".trimming() == "1.5")
    #expect("\n1.5\n".trimming() == "1.5")
    #expect("  a b  ".trimming() == "a b", "inner spaces stay")
    #expect(" \n ".trimming().isEmpty)
    #expect("12\0\n".trimming() == "12\0", "NUL is not whitespace")
    #expect("12\0\n".trimming(Padding.whitespaceAndNUL) == "12")
    #expect(" x\n".trimming(Padding.spacesAndTabs) == "x\n", "a line keeps its newline")
  }
}
