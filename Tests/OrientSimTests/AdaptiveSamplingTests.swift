import OrientCore
import OrientSim
import Testing

/// Adaptive sampling: when a still device may be read slowly, and that the first departing
/// reading brings the full rate back.
@Suite struct AdaptiveSamplingTests {
  /// A deterministic normal-ish noise source (sum of uniforms), so the tests do not flake.
  struct Noise {
    var state: UInt64
    mutating func next() -> Double {
      var sum = 0.0
      for _ in 0..<4 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        sum += Double(state >> 11) / Double(1 << 53)
      }
      return (sum - 2) * 1.732  // variance 1
    }
    mutating func vector(_ sigma: Double) -> Vector3 {
      Vector3(next() * sigma, next() * sigma, next() * sigma)
    }
  }

  static let upright = Vector3(0, -9.81, 0)

  /// Feeds `seconds` of readings at `rate` from `reading(t)`; returns the time it went still.
  static func feed(
    _ adaptive: inout AdaptiveSampling, from start: Double = 0, seconds: Double, rate: Double,
    _ reading: (Double) -> Vector3
  ) -> Double? {
    var stillAt: Double?
    var t = start
    while t < start + seconds {
      let pace = adaptive.observe(reading(t), at: t)
      if pace == .still, stillAt == nil { stillAt = t }
      t += adaptive.pace == .still ? 1 / adaptive.parameters.stillRate : 1 / rate
    }
    return stillAt
  }

  @Test(arguments: [0.0, 0.005, 0.03, 0.12])
  func aStillDeviceSlowsDownAfterTheSettleTimeAndStaysSlow(sigma: Double) throws {
    var noise = Noise(state: 7)
    var adaptive = AdaptiveSampling()
    let stillAt = try #require(
      Self.feed(&adaptive, seconds: 60, rate: 30) { _ in Self.upright + noise.vector(sigma) })
    #expect(stillAt >= adaptive.parameters.settleTime)
    #expect(stillAt < 3 * adaptive.parameters.settleTime + 1, "noise \(sigma)")
    #expect(adaptive.pace == .still, "a noisy still device must not keep departing")
    #expect(adaptive.threshold >= adaptive.parameters.minimumThreshold)
    // The threshold follows the noise it saw rather than a fixed guess.
    if sigma >= 0.03 { #expect(adaptive.threshold > 3 * sigma) }
  }

  @Test func theFirstDepartingReadingRestoresTheFullRate() throws {
    var noise = Noise(state: 3)
    var adaptive = AdaptiveSampling()
    _ = Self.feed(&adaptive, seconds: 5, rate: 30) { _ in Self.upright + noise.vector(0.01) }
    #expect(adaptive.pace == .still)
    // One degree of tilt already departs.
    let tilted = Vector3(9.81 * 0.0175, -9.81, 0)
    #expect(adaptive.observe(tilted, at: 5.1) == .fast)
    // A turn in progress keeps it fast; settling makes it slow again.
    var angle = 0.0
    for i in 0..<30 {
      angle += 0.05
      let v = Vector3(9.81 * angle.sinApprox, -9.81, 0)
      #expect(adaptive.observe(v, at: 5.2 + Double(i) / 30) == .fast)
    }
    let resting = Vector3(9.81 * angle.sinApprox, -9.81, 0)
    let stillAgain = Self.feed(&adaptive, from: 6.2, seconds: 5, rate: 30) { _ in
      resting + noise.vector(0.01)
    }
    #expect(stillAgain != nil)
  }

  @Test func offMeansAlwaysFast() {
    var parameters = AdaptiveSampling.Parameters()
    parameters.enabled = false
    var adaptive = AdaptiveSampling(parameters: parameters)
    #expect(Self.feed(&adaptive, seconds: 10, rate: 30) { _ in Self.upright } == nil)
  }

  @Test func theStreamAStillSamplerReadsHasTheStillRate() {
    var samples: [Sample] = []
    for i in 0..<(100 * 20) {
      samples.append(Sample(time: Double(i) / 100, acceleration: Self.upright))
    }
    let read = AdaptiveStream.samplesRead(from: samples, parameters: AdaptiveSampling.Parameters())
    // About 1 s at 100 Hz, then 19 s at 5 Hz.
    #expect(read.count > 100 + 19 * 5 - 5 && read.count < 100 + 19 * 5 + 20)
  }
}

extension Double {
  /// sin for small test angles without Foundation.
  fileprivate var sinApprox: Double { self - self * self * self / 6 }
}
