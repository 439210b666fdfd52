import Testing
import TextFormats

@Suite struct SearchingTests {
  @Test(arguments: [
    ("sensor:modalias:acpi:MXC6655", "modalias:", 7..<16),
    ("in_accel_x_raw", "_x_", 8..<11),
    ("aaab", "aab", 1..<4),
    ("abc", "", 0..<0),
    ("", "", 0..<0),
  ])
  func findsTheFirstOccurrence(text: String, needle: String, offsets: Range<Int>) throws {
    let range = try #require(text.firstTextRange(of: needle))
    #expect(text.distance(from: text.startIndex, to: range.lowerBound) == offsets.lowerBound)
    #expect(text.distance(from: text.startIndex, to: range.upperBound) == offsets.upperBound)
    #expect(text.containsText(needle))
  }

  @Test(arguments: [("in_accel_x_raw", "_y_"), ("ab", "abc"), ("", "a"), ("mxc4005-dev0", "-dev1")])
  func missesWhatIsNotThere(text: String, needle: String) {
    #expect(text.firstTextRange(of: needle) == nil)
    #expect(!text.containsText(needle))
  }

  @Test func searchesASubstring() throws {
    let tail = "sensor:modalias:acpi:X:dmi:bvnA".dropFirst(7)
    let dmi = try #require(tail.firstTextRange(of: ":dmi:"))
    #expect(tail[dmi.upperBound...] == "bvnA")
  }
}
