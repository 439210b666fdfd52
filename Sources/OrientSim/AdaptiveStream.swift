import OrientCore

/// What a sampler with adaptive sampling reads out of a full-rate stream.
public enum AdaptiveStream {
  /// The samples of `samples` (all at the sensor's full rate) that a sampler following
  /// `AdaptiveSampling` would have read: all of them while fast, and while still only the
  /// first sample at or after each still interval, as a timer firing at `stillRate` reads the
  /// newest value. The decision after each read sample sets the pace for the next read, as in
  /// the daemon.
  public static func samplesRead(
    from samples: [Sample], parameters: AdaptiveSampling.Parameters
  ) -> [Sample] {
    var adaptive = AdaptiveSampling(parameters: parameters)
    var kept: [Sample] = []
    kept.reserveCapacity(samples.count)
    var nextStillRead = -Double.infinity
    let stillInterval = 1 / max(parameters.stillRate, 0.01)
    for sample in samples {
      if adaptive.pace == .still && sample.time < nextStillRead { continue }
      kept.append(sample)
      if adaptive.observe(sample.acceleration, at: sample.time) == .still {
        nextStillRead = sample.time + stillInterval
      }
    }
    return kept
  }
}
