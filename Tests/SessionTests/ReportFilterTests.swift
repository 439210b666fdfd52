import EvdevKit
import TestThreads
import Testing

/// What a grabbed key device's events become: shutter presses kept back and reported, the
/// rest passed on whole reports at a time through the uinput copy.
@Suite(.ownThreads) struct ReportFilterTests {
  static let volumeUp: UInt16 = 115
  static let volumeDown: UInt16 = 114
  static let power: UInt16 = 116
  static let letterA: UInt16 = 30

  func key(_ code: UInt16, _ value: Int32) -> InputEvent {
    InputEvent(type: 1, code: code, value: value)
  }
  let report = InputEvent(type: 0, code: 0, value: 0)
  func scan(_ value: Int32) -> InputEvent { InputEvent(type: 4, code: 4, value: value) }

  @Test func shutterKeysAreKeptBackAndOthersPassedOn() {
    var filter = ReportFilter(shutterCodes: [115, 114])
    let output = filter.feed([
      scan(0xB0), key(Self.volumeUp, 1), report,  // press: kept back with its scan code
      key(Self.volumeUp, 2), report,  // auto-repeat: not a press, not passed on
      scan(0xB0), key(Self.volumeUp, 0), report,  // release
      scan(0x5E), key(Self.power, 1), report,  // power: passed on, scan code and all
      key(Self.power, 0), report,
    ])
    #expect(output.presses.map(\.code) == [Self.volumeUp])
    #expect(
      output.passOn == [scan(0x5E), key(Self.power, 1), report, key(Self.power, 0), report])
  }

  @Test func mixedReportKeepsTheOtherKeys() {
    var filter = ReportFilter(shutterCodes: [114])
    let output = filter.feed([
      scan(0x1E), key(Self.letterA, 1), key(Self.volumeDown, 1), report,
    ])
    #expect(output.presses.map(\.code) == [Self.volumeDown])
    // The report had more than the shutter key, so its scan code goes along with the letter.
    #expect(output.passOn == [scan(0x1E), key(Self.letterA, 1), report])
  }

  @Test func partialReportsWaitForTheirEnd() {
    var filter = ReportFilter(shutterCodes: [115])
    var output = filter.feed([key(Self.power, 1)])
    #expect(output.passOn.isEmpty && output.presses.isEmpty)
    output = filter.feed([key(Self.volumeUp, 1), report, InputEvent(type: 0, code: 3, value: 0)])
    #expect(output.presses.count == 1)
    #expect(output.passOn == [key(Self.power, 1), report])
  }

  /// SYN_DROPPED (the kernel's buffer overflowed) ends the report in progress unfinished: its
  /// events are neither passed on nor taken as presses. What follows (libevdev's re-read state,
  /// then new reports) is handled as usual.
  @Test func droppedEventsDiscardThePartialReport() {
    var filter = ReportFilter(shutterCodes: [115])
    let dropped = InputEvent(type: 0, code: 3, value: 0)
    var output = filter.feed([scan(0x5E), key(Self.power, 1), key(Self.volumeUp, 1)])
    #expect(output.passOn.isEmpty && output.presses.isEmpty)
    output = filter.feed([dropped, key(Self.letterA, 1), report])
    #expect(output.presses.isEmpty)
    #expect(output.passOn == [key(Self.letterA, 1), report])
    output = filter.feed([key(Self.volumeUp, 1), report, key(Self.power, 0), dropped, report])
    #expect(output.presses.map(\.code) == [Self.volumeUp])
    #expect(output.passOn.isEmpty)  // the power release was cut off by the drop
  }

  @Test func keyNames() {
    #expect(KeyCode.named("volumeup") == 115)
    #expect(KeyCode.named("VolumeDown") == 114)
    #expect(KeyCode.named("KEY_CAMERA") == 212)
    #expect(KeyCode.named("nonsense") == nil)
    #expect(KeyCode.name(115) == "volumeup")
  }
}
