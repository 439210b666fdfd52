import CEvdev
import EvdevKit
import TestThreads
import Testing

/// The report splitting that the input accelerometer and proximity readers share.
@Suite(.ownThreads) struct ChangedReportsTests {
  private static func abs(_ code: Int32, _ value: Int32) -> InputEvent {
    InputEvent(type: UInt16(EV_ABS), code: UInt16(code), value: value)
  }
  private static func report(at time: Int64) -> InputEvent {
    InputEvent(type: UInt16(EV_SYN), code: UInt16(SYN_REPORT), value: 0, timeNanoseconds: time)
  }

  @Test func onlyReportsWithAChangeAreGivenEvenWhenSplitAcrossReads() {
    var changes = ChangedReports { $0.type == UInt16(EV_ABS) && $0.code == UInt16(ABS_X) }
    let other = InputEvent(type: UInt16(EV_MSC), code: UInt16(MSC_SCAN), value: 7)
    #expect(changes.reports(in: [other, Self.report(at: 1)]).isEmpty, "nothing changed")
    #expect(changes.reports(in: [Self.abs(ABS_Y, 3), Self.report(at: 2)]).isEmpty, "not watched")
    #expect(changes.reports(in: [Self.abs(ABS_X, 5)]).isEmpty, "the report is not closed yet")
    #expect(changes.reports(in: [Self.report(at: 3)]).map(\.timeNanoseconds) == [3])
    let two = [Self.abs(ABS_X, 1), Self.report(at: 4), Self.abs(ABS_X, 2), Self.report(at: 5)]
    #expect(changes.reports(in: two).map(\.timeNanoseconds) == [4, 5])
    _ = changes.reports(in: [Self.abs(ABS_X, 9)])
    changes.reset()
    #expect(changes.reports(in: [Self.report(at: 6)]).isEmpty, "a report begun before a reset")
  }
}
