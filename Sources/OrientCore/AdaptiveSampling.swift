/// Decides when a sampler may read slowly: a still device is read at `stillRate`, and the first
/// reading that departs from the still estimate switches back to the full rate until the
/// readings have settled again for `settleTime`.
///
/// "Still" is measured against the noise the sensor actually shows, estimated online from the
/// differences between consecutive full-rate readings: the estimate falls quickly to a quieter
/// level and rises slowly (only from differences within a few times the current estimate), so
/// that motion does not teach it that the device is noisy. A reading departs when it differs
/// from the still reference by more than `noiseFactor` times that estimate, and never by less
/// than `minimumThreshold` (about half a degree of tilt at the default), which is what a
/// quantised sensor whose readings never change needs.
///
/// Pure: it is fed readings and says the pace; the samplers change their timers (polled) or
/// buffer watermark (buffered), and `orient-bench --adaptive` drops the samples a slow sampler
/// would not have read.
public struct AdaptiveSampling: Sendable {
  /// The configuration (`[sampling]` keys `adaptive`, `still-rate`, `settle-time`).
  public struct Parameters: Equatable, Sendable {
    /// Whether to slow down at all.
    public var enabled = true
    /// Readings per second while still. The first reading of a motion comes up to one still
    /// interval late: 5 Hz costs at most 200 ms before the full rate resumes.
    public var stillRate = 5.0
    /// Seconds the readings must stay within the threshold of each other before slowing down.
    public var settleTime = 1.0
    /// How many times the estimated noise a reading must depart by.
    public var noiseFactor = 4.0
    /// The smallest departure that counts, m/s^2 (0.08: about 0.5 degrees of tilt).
    public var minimumThreshold = 0.08

    /// The defaults.
    public init() {}
  }

  /// How fast to read.
  public enum Pace: Equatable, Sendable {
    /// The configured full rate.
    case fast
    /// `Parameters.stillRate`.
    case still
  }

  /// The configuration.
  public let parameters: Parameters
  /// The current pace.
  public private(set) var pace = Pace.fast
  /// The estimated noise: the typical size of the difference between consecutive full-rate
  /// readings, m/s^2 (`nil` until `warmUp` differences were seen).
  public private(set) var noise: Double?

  private var previous: Vector3?
  private var warmUp: [Double] = []
  /// The reading the current calm stretch started with (while fast) or the still reference.
  private var reference: Vector3?
  private var calmSince = 0.0

  /// Consecutive differences used for the first noise estimate (their median).
  static let warmUpCount = 8
  /// How quickly the estimate follows a quieter difference.
  static let fallRate = 0.2
  /// How quickly it follows a noisier one.
  static let riseRate = 0.02
  /// Differences above this many times the estimate are motion, not noise.
  static let noiseCeiling = 4.0

  /// Creates a detector of stillness that starts at the full rate.
  public init(parameters: Parameters = Parameters()) {
    self.parameters = parameters
  }

  /// The departure threshold in m/s^2.
  public var threshold: Double {
    max(parameters.minimumThreshold, (noise ?? 0) * parameters.noiseFactor)
  }

  /// Takes one reading (m/s^2, any fixed frame; `time` in seconds) and returns the pace for the
  /// next one.
  public mutating func observe(_ acceleration: Vector3, at time: Double) -> Pace {
    guard parameters.enabled else { return .fast }
    switch pace {
    case .fast:
      if let previous { learnNoise((acceleration - previous).magnitude) }
      previous = acceleration
      guard let start = reference, (acceleration - start).magnitude <= threshold else {
        reference = acceleration
        calmSince = time
        return pace
      }
      if noise != nil && time - calmSince >= parameters.settleTime {
        pace = .still
        previous = nil
      }
    case .still:
      if let still = reference, (acceleration - still).magnitude > threshold {
        pace = .fast
        reference = acceleration
        calmSince = time
        previous = acceleration
      }
    }
    return pace
  }

  /// Goes back to the full rate and forgets the still reference (the sampler restarted, or the
  /// readings were unusable for a while).
  public mutating func reset() {
    pace = .fast
    previous = nil
    reference = nil
  }

  private mutating func learnNoise(_ difference: Double) {
    guard let current = noise else {
      warmUp.append(difference)
      if warmUp.count == AdaptiveSampling.warmUpCount {
        warmUp.sort()
        noise = warmUp[warmUp.count / 2]
        warmUp = []
      }
      return
    }
    if difference < current {
      noise = current + (difference - current) * AdaptiveSampling.fallRate
    } else if difference
      <= AdaptiveSampling.noiseCeiling
      * max(current, parameters.minimumThreshold / parameters.noiseFactor)
    {
      noise = current + (difference - current) * AdaptiveSampling.riseRate
    }
  }
}
