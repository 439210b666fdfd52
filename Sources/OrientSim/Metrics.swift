import OrientCore
import TextFormats

/// The quality numbers of one detector over a set of runs.
///
/// Definitions (also in docs/benchmark.md):
/// - latency: commit time of the target minus the time the true (scripted) angle entered the
///   target's sector, i.e. crossed its 45 degree boundary (135 for a 180 degree turn); can be
///   negative for a rule that switches before the boundary;
/// - missed: a rotation whose target was not committed within 1.5 s after the turn ended, at a
///   back-tilt up to 55 degrees (beyond it, counted apart as `highTiltUncommitted`);
/// - spurious: a committed change during a hold, a change to an orientation not allowed in a
///   transition, a change during a rotation other than the target or the one intermediate the
///   turn passes through, any change after the target, or any change beyond the first during a
///   sweep; reported per minute of scored time;
/// - hold accuracy: the fraction of hold time during which the committed orientation was an
///   acceptable one (the true sector, or either neighbour within 15 degrees of a diagonal);
/// - switching angle: on the slow sweep, the true angle at the change, in degrees from the
///   centre of the orientation being left (45 = exactly at the boundary).
public struct Score: Sendable, Equatable {
  /// Rotation latencies in seconds.
  public var latencies: [Double] = []
  /// The run (and back-tilt) of each latency, in the same order, for the report.
  public var latencyLabels: [String] = []
  /// Rotations expected.
  public var rotations = 0
  /// Rotations not committed in time.
  public var missed = 0
  /// Labels of the missed rotations (run and tilt), for the report.
  public var missedLabels: [String] = []
  /// Rotations beyond `Score.requiredTilt` of back-tilt that were not committed (not a miss:
  /// the device is close to flat there; counted apart so a judge cannot look fast by
  /// committing only the easy ones unnoticed).
  public var highTiltUncommitted = 0
  /// Commits of the orientation a 180 degree turn passes through.
  public var intermediates = 0
  /// Spurious changes.
  public var spurious = 0
  /// Labels of runs with spurious changes.
  public var spuriousLabels: [String] = []
  /// Scored time in seconds (everything after warm-up).
  public var scoredTime = 0.0
  /// Total hold time in seconds.
  public var holdTime = 0.0
  /// Hold time with an acceptable orientation committed.
  public var holdCorrect = 0.0
  /// Switching angles on slow sweeps, in degrees.
  public var switchAngles: [Double] = []
  /// Sweeps expected.
  public var sweeps = 0
  /// Sweeps that never switched.
  public var missedSweeps = 0

  /// The largest back-tilt, in degrees, at which a rotation must be committed.
  public static let requiredTilt = 55.0

  /// An empty score.
  public init() {}

  /// Adds another score's counts.
  public mutating func merge(_ other: Score) {
    latencies += other.latencies
    latencyLabels += other.latencyLabels
    rotations += other.rotations
    missed += other.missed
    missedLabels += other.missedLabels
    highTiltUncommitted += other.highTiltUncommitted
    intermediates += other.intermediates
    spurious += other.spurious
    spuriousLabels += other.spuriousLabels
    scoredTime += other.scoredTime
    holdTime += other.holdTime
    holdCorrect += other.holdCorrect
    switchAngles += other.switchAngles
    sweeps += other.sweeps
    missedSweeps += other.missedSweeps
  }

  /// The p-th percentile (0...100) of the latencies (nearest rank), or `nil` with none.
  public func latencyPercentile(_ p: Double) -> Double? {
    percentile(latencies, p)
  }

  /// Spurious changes per minute of scored time.
  public var spuriousPerMinute: Double {
    scoredTime > 0 ? Double(spurious) / (scoredTime / 60) : 0
  }

  /// Hold accuracy as a fraction (1 when there was no hold).
  public var holdAccuracy: Double {
    holdTime > 0 ? holdCorrect / holdTime : 1
  }

  /// The mean switching angle, or `nil`.
  public var meanSwitchAngle: Double? {
    switchAngles.isEmpty ? nil : switchAngles.reduce(0, +) / Double(switchAngles.count)
  }
}

/// The p-th percentile (nearest rank) of `values`, or `nil` when empty.
public func percentile(_ values: [Double], _ p: Double) -> Double? {
  guard !values.isEmpty else { return nil }
  let sorted = values.sorted()
  let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
  return sorted[max(0, min(sorted.count - 1, rank - 1))]
}

/// A committed change: when and to what.
public struct Commit: Sendable, Equatable {
  /// The sample time.
  public var time: Double
  /// The new orientation.
  public var orientation: Orientation

  /// Creates a commit.
  public init(time: Double, orientation: Orientation) {
    self.time = time
    self.orientation = orientation
  }
}

/// Runs a judge over samples and returns its commits.
public func commits<J: OrientationJudge>(of judge: inout J, over samples: [Sample]) -> [Commit] {
  var result: [Commit] = []
  for sample in samples {
    if let orientation = judge.process(sample) {
      result.append(Commit(time: sample.time, orientation: orientation))
    }
  }
  return result
}

/// Scores commits against a run's ground truth (see `Score` for the definitions).
///
/// - Parameter index: the run's index in its scenario, used in the labels of misses and
///   spurious changes (`--run` of `orient-bench trace`).
public func score(_ commits: [Commit], against run: Run, index: Int = 0) -> Score {
  var s = Score()
  let label = "\(run.label) (--run \(index))"
  let end = run.script.duration
  s.scoredTime = max(0, end - run.warmUp)
  // The committed orientation as a step function of time.
  func committed(at t: Double) -> Orientation {
    var current = Orientation.undefined
    for c in commits {
      if c.time > t { break }
      current = c.orientation
    }
    return current
  }
  var index = 0
  for window in run.windows {
    while index < commits.count, commits[index].time < window.start { index += 1 }
    var inside: [Commit] = []
    var j = index
    while j < commits.count, commits[j].time < window.end {
      inside.append(commits[j])
      j += 1
    }
    func flag(_ count: Int) {
      guard count > 0 else { return }
      s.spurious += count
      s.spuriousLabels.append(label)
    }
    switch window.expectation {
    case .hold(let acceptable):
      flag(inside.count)
      // Integrate correctness over the window.
      var t = window.start
      var current = committed(at: t)
      for c in inside {
        if acceptable.contains(current) { s.holdCorrect += c.time - t }
        t = c.time
        current = c.orientation
      }
      if acceptable.contains(current) { s.holdCorrect += window.end - t }
      s.holdTime += window.end - window.start
    case .transition(let allowed):
      flag(inside.filter { !allowed.contains($0.orientation) }.count)
    case .rotation(let target, let intermediates, let crossTime, let tilt):
      s.rotations += 1
      var done = false
      var usedIntermediate = false
      var bad = 0
      for c in inside {
        if done {
          bad += 1
        } else if c.orientation == target {
          done = true
          s.latencies.append(c.time - crossTime)
          s.latencyLabels.append("\(label) at \(shortDecimal(crossTime)) s")
        } else if intermediates.contains(c.orientation), !usedIntermediate {
          usedIntermediate = true
          s.intermediates += 1
        } else {
          bad += 1
        }
      }
      flag(bad)
      if !done && tilt > Score.requiredTilt {
        s.highTiltUncommitted += 1
      } else if !done {
        // Already showing the target before the turn (a baseline that never left it) does
        // not count as a commit; it is still a miss.
        s.missed += 1
        s.missedLabels.append("\(label) tilt \(shortDecimal(tilt))")
      }
    case .sweep(let target, let fromCentre):
      s.sweeps += 1
      if let first = inside.first, first.orientation == target {
        let angle = run.script.keyPose(at: first.time).angle
        s.switchAngles.append(abs(angle - fromCentre))
        flag(inside.count - 1)
      } else {
        if inside.isEmpty { s.missedSweeps += 1 }
        flag(inside.count)
      }
    }
  }
  return s
}
