import OrientCore
import OrientLog
import SystemKit
import TestThreads
import Testing

@testable import Sensors

/// The small parts the sensor layer (`SensorHub`, `KindSlot`) is made of, without a device,
/// on a `ManualScheduler`'s clock.
@Suite(.ownThreads) struct ManagerPartsTests {
  @Test func calibrationIsRereadAfterImplausibleReadingsAtMostOncePerInterval() {
    var watch = CalibrationWatch()
    func due(_ vector: Vector3, _ now: Duration) -> Bool { watch.isDue(vector, now: now) }
    let wild = Vector3(0, 0, 4 * standardGravity)
    let calm = Vector3(0, 0, standardGravity)
    let t0 = Duration.seconds(100)
    for _ in 1..<CalibrationWatch.implausibleBeforeCheck {
      #expect(!due(wild, t0))
    }
    #expect(due(wild, t0), "the fifth implausible reading in a row")
    watch.checked(at: t0)
    #expect(!due(wild, t0 + .milliseconds(999)), "within the first interval")
    #expect(due(wild, t0 + .seconds(1)))
    watch.checked(at: t0 + .seconds(1))
    #expect(!due(wild, t0 + .seconds(2)), "the interval doubled to 2 s")
    #expect(due(wild, t0 + .seconds(3)))
    // A plausible reading starts the count again.
    #expect(!due(calm, t0 + .seconds(10)))
    #expect(!due(wild, t0 + .seconds(10)))
  }

  @Test func retriesBackOffFromOneToThirtySeconds() throws {
    let loop = try EventLoop()
    let retry = RetryBackoff(loop: loop) {}
    var delays: [Duration] = []
    for _ in 0..<7 {
      delays.append(retry.delay)
      try retry.schedule()
    }
    #expect(delays == [1, 2, 4, 8, 16, 30, 30].map { .seconds($0) })
    retry.cancel()
    #expect(retry.delay == .seconds(1))
    #expect(loop.registrationCount == 0, "a cancelled retry holds no timer")
  }

  @Test func aRetryFiresAfterItsDelayAndAgainLaterOnlyWhenScheduledAgain() throws {
    let clock = ManualScheduler()
    var attempts: [Duration] = []
    var retry: RetryBackoff?
    retry = RetryBackoff(loop: clock) {
      attempts.append(clock.now)
      try? retry?.schedule()
    }
    let start = clock.now
    try retry?.schedule()
    clock.advance(by: .seconds(40))
    #expect(attempts.map { $0 - start } == [1, 3, 7, 15, 31].map { .seconds($0) })
    retry?.cancel()
    clock.advance(by: .seconds(100))
    #expect(attempts.count == 5, "cancelled: no more attempts")
    #expect(clock.armedTimers == 0)
    // The handler holds the variable that holds the backoff: let go of that cycle.
    retry = nil
  }

  @Test func aStormOfHotplugEventsIsLoggedAtDebugAndChosenOnceItSettles() {
    let clock = ManualScheduler()
    let throttle = HotplugThrottle(loop: clock, logger: Logger(label: "test", level: .error))
    var choices = 0
    // Rare events: chosen at once, announced as notices.
    #expect(throttle.level() == .notice)
    throttle.afterBatch { choices += 1 }
    #expect(choices == 1)
    // A storm: past the budget, debug level, and the choice waits for a pause.
    var levels: [LogLevel] = []
    for _ in 0..<HotplugThrottle.logBudget { levels.append(throttle.level()) }
    #expect(levels.last == .debug && levels.dropLast().allSatisfy { $0 == .notice })
    throttle.afterBatch { choices += 1 }
    clock.advance(by: .milliseconds(200))
    throttle.afterBatch { choices += 1 }
    clock.advance(by: .milliseconds(200))
    #expect(choices == 1, "events keep coming: not chosen yet")
    clock.advance(by: .milliseconds(60))
    #expect(choices == 2, "chosen once, 250 ms after the last batch")
    // After a quiet window the events are notices again.
    clock.advance(by: HotplugThrottle.window)
    #expect(throttle.level() == .notice)
  }
}
