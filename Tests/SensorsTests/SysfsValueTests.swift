import Glibc
import OrientCore
import SystemKit
import TestThreads
import Testing
import TextFormats

@testable import Sensors

@Suite(.ownThreads) struct SysfsValueTests {
  @Test(
    arguments: [
      ("123\n", Int64(123)), ("-512\n", -512), ("0", 0), ("+7\n", 7), ("  42 \n", 42),
      ("-9223372036854775808\n", Int64.min), ("9223372036854775807\n", Int64.max),
      ("17\n\0\0", 17),
    ])
  func parsesRawValues(text: String, value: Int64) {
    #expect(SysfsValue.parseRaw(Array(text.utf8)) == .success(value))
  }

  @Test(
    arguments: [
      ("", RawValueProblem.empty), ("\n", .empty), ("   \n", .empty),
      ("9223372036854775808\n", .overflow), ("-99999999999999999999999\n", .overflow),
      ("abc\n", .notANumber("abc")), ("-25.6\n", .notANumber("-25.6")),
      ("12abc\n", .notANumber("12abc")), ("-\n", .notANumber("-")),
      ("0x10\n", .notANumber("0x10")), ("1 2\n", .notANumber("1 2")),
    ])
  func refusesGarbage(text: String, problem: RawValueProblem) {
    #expect(SysfsValue.parseRaw(Array(text.utf8)) == .failure(problem))
  }

  @Test func garbageTextIsBoundedAndPrintable() {
    let bytes: [UInt8] = [0x41, 0xFF, 0x00, 0x42] + Array(repeating: 0x43, count: 100)
    guard case .failure(.notANumber(let shown)) = SysfsValue.parseRaw(bytes) else {
      Issue.record("expected garbage")
      return
    }
    #expect(shown.count == 32)
    #expect(shown.hasPrefix("A??B"))
  }

  @Test func problemKindsAreStableForLogOnce() {
    #expect(RawValueProblem.notANumber("a").kind == RawValueProblem.notANumber("b").kind)
    #expect(RawValueProblem.readError(.ioError).description.contains("Input/output error"))
  }

  @Test func decimalsIgnoreTheLocale() throws {
    // Whatever LC_NUMERIC says, "0.009582" is a dot decimal and "0,009582" is not a number.
    _ = setlocale(LC_ALL, "de_DE.UTF-8")
    defer { _ = setlocale(LC_ALL, "C") }
    #expect(try SysfsValue.parseDecimal("0.009582\n") == 0.009582)
    #expect(throws: DecimalText.Problem.self) { try SysfsValue.parseDecimal("0,009582") }
    #expect(throws: DecimalText.Problem.self) { try SysfsValue.parseDecimal("nan") }
    #expect(SysfsValue.parseFlag("1\n") == true)
    #expect(SysfsValue.parseFlag("0") == false)
    #expect(SysfsValue.parseFlag("yes") == nil)
  }

  @Test func availableListPicksSmallestMeetingTheRate() throws {
    let list = try #require(AvailableValues(parsing: "1.5625 3.125 6.25 12.5 25 50 100 200\n"))
    #expect(list.smallest(atLeast: 20).text == "25")
    #expect(list.smallest(atLeast: 25).text == "25")
    #expect(list.smallest(atLeast: 0.5).text == "1.5625")
    #expect(list.smallest(atLeast: 1000).text == "200")  // none meets it: the fastest
    // Unsorted lists (some drivers) work too.
    let unsorted = try #require(AvailableValues(parsing: "100 12.5 50 25"))
    #expect(unsorted.smallest(atLeast: 20).text == "25")
  }

  @Test func availableRangePicksAStep() throws {
    let range = try #require(AvailableValues(parsing: "[0.5 0.5 100]\n"))
    #expect(range == .range(minimum: 0.5, step: 0.5, maximum: 100))
    #expect(range.smallest(atLeast: 20.2).value == 20.5)
    #expect(range.smallest(atLeast: 0.1).value == 0.5)
    #expect(range.smallest(atLeast: 500).value == 100)
    #expect(range.smallest(atLeast: 20.2).text == "20.5")
  }

  @Test(arguments: ["", "\n", "fast slow", "[1 2]", "[1 2 x]", "[5 1 2]"])
  func refusesBadAvailableLists(text: String) {
    #expect(AvailableValues(parsing: text) == nil)
  }

  @Test func fixedPointFormatting() {
    #expect(FixedPoint.format(9.80665, decimals: 4) == "9.8067")
    #expect(FixedPoint.format(-0.00001, decimals: 4) == "0.0000")
    #expect(FixedPoint.format(-1.5, decimals: 3) == "-1.500")
    #expect(FixedPoint.format(12.5, decimals: 6, trimZeros: true) == "12.5")
    #expect(FixedPoint.format(3, decimals: 0) == "3")
    #expect(AvailableValues.format(31.25) == "31.25")
    #expect(AvailableValues.format(20) == "20")
  }

  @Test func timestampClocks() {
    #expect(TimestampClock(attribute: "monotonic\n") == .monotonic)
    #expect(TimestampClock(attribute: "boottime") == .boottime)
    #expect(TimestampClock(attribute: "sundial") == nil)
    #expect(TimestampClock.realtime.clockID == CLOCK_REALTIME)
    #expect(TimestampClock.monotonic.clockID == CLOCK_MONOTONIC)
    #expect(TimestampClock.boottime.clockID == CLOCK_BOOTTIME)
    #expect(TimestampClock.tai.clockID == CLOCK_TAI)
    let converter = TimestampConverter(clock: .realtime)
    // A scan stamped 5 ms before "now" in realtime is 5 ms before now in monotonic too.
    let now = Int64(1_000_000_000_000)
    let real = Int64(1_700_000_000_000_000_000)
    #expect(
      converter.monotonic(real - 5_000_000, clockNow: real, monotonicNow: now) == now - 5_000_000)
    #expect(TimestampConverter(clock: .monotonic).monotonic(7, clockNow: 1, monotonicNow: 2) == 7)
  }
}
