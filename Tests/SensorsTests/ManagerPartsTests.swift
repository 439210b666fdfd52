import OrientCore
import SystemKit
import Testing

@testable import Sensors

/// The small parts `SensorManager` is made of, without a device.
@Suite struct ManagerPartsTests {
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
}
