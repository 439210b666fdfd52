import OrientCore

#if canImport(Glibc)
  import Glibc
#endif

/// A real recording of a device's accelerometer, as `orientd replay` reads it (m/s^2, display
/// frame, Linux IIO convention), with no ground truth: `RecordingOracle` finds the moments
/// whose orientation is beyond doubt.
public struct Recording: Sendable {
  /// A short name (the file name without `.csv`).
  public var name: String
  /// The samples, in time order.
  public var samples: [Sample]

  /// Creates a recording.
  public init(name: String, samples: [Sample]) {
    self.name = name
    self.samples = samples
  }

  /// Seconds from the first sample to the last.
  public var duration: Double {
    guard let first = samples.first, let last = samples.last else { return 0 }
    return last.time - first.time
  }

  /// The median sampling rate in Hz (0 with fewer than two samples).
  public var rate: Double {
    guard samples.count > 1 else { return 0 }
    var gaps: [Double] = []
    gaps.reserveCapacity(min(samples.count, 10_001))
    let step = max(1, samples.count / 10_000)
    var i = step
    while i < samples.count {
      gaps.append(samples[i].time - samples[i - 1].time)
      i += step
    }
    let median = percentile(gaps, 50) ?? 0
    return median > 0 ? 1 / median : 0
  }

  /// The recording as a sensor running at `rate` Hz would have delivered it: each output
  /// sample is the mean of the input samples in its period (the decimation filter of a MEMS
  /// part), stamped at the period's end. A recording not faster than `rate` is returned as it
  /// is.
  public func decimated(to rate: Double) -> Recording {
    guard rate > 0, self.rate > rate * 1.2, let first = samples.first else { return self }
    let period = 1 / rate
    var out: [Sample] = []
    out.reserveCapacity(Int(duration * rate) + 2)
    var end = first.time + period
    var sum = Vector3.zero
    var count = 0
    for s in samples {
      while s.time >= end {
        if count > 0 {
          out.append(Sample(time: end, acceleration: sum * (1 / Double(count))))
        }
        sum = .zero
        count = 0
        end += period
      }
      sum = sum + s.acceleration
      count += 1
    }
    return Recording(name: name, samples: out)
  }
}

/// What can be said for sure about a recording when the whole of it is known: where the
/// device was held in one orientation beyond doubt ("holds") and where it was turned from one
/// such hold to another ("turns").
///
/// The oracle sees the future, which no detector can: at every sample it averages the raw
/// readings over a window of `window` seconds centred on it. That mean is gravity (the hand's
/// and the body's accelerations average out) when it is unambiguous, which the oracle demands:
/// - its length is within `magnitudeTolerance` of the recording's own 1 g (the median
///   magnitude of all its samples, so a sensor's gain error does not matter) - nothing pushed
///   the device one way for the whole window;
/// - the readings in the window point the same way: the mean vector is at least `coherence`
///   of the mean magnitude (shaking and turning spread them);
/// - the display is at most `maximumTilt` degrees from vertical (nearer flat, the in-plane
///   angle means little, and every detector may hold its previous answer);
/// - the in-plane angle is within `45 - diagonalMargin` degrees of an orientation's centre
///   (near a diagonal, either neighbour is a fair answer).
///
/// A hold is a stretch of at least `minimumHold` seconds over which every sample is clear and
/// shows the same orientation. A turn joins two consecutive holds of different orientations
/// at most `maximumTurn` seconds apart, with the display never nearer flat than `maximumTilt`
/// in between (a device put down and picked up rotated is not a turn); its moment is when the
/// oracle's in-plane angle enters the new orientation's sector (crosses the 45 degree
/// boundary), as orient-bench measures latency from the true angle entering the sector.
public struct RecordingOracle: Sendable {
  /// Width of the centred averaging window, in seconds.
  public static let window = 0.5
  /// Largest relative distance of the window's mean from 1 g.
  public static let magnitudeTolerance = 0.1
  /// Smallest ratio of the mean vector's length to the mean magnitude.
  public static let coherence = 0.95
  /// Largest tilt from vertical, in degrees.
  public static let maximumTilt = 55.0
  /// Smallest distance from a diagonal, in degrees.
  public static let diagonalMargin = 15.0
  /// Shortest hold, in seconds.
  public static let minimumHold = 2.0
  /// Longest gap between the two holds of a turn, in seconds.
  public static let maximumTurn = 2.0

  /// A stretch with one unambiguous orientation.
  public struct Hold: Sendable, Equatable {
    /// Start time, seconds.
    public var start: Double
    /// End time, seconds.
    public var end: Double
    /// The orientation.
    public var orientation: Orientation
  }

  /// A turn from one hold to the next.
  public struct Turn: Sendable, Equatable {
    /// The hold before.
    public var from: Hold
    /// The hold after.
    public var to: Hold
    /// When the oracle's angle entered the new orientation's sector.
    public var crossing: Double
  }

  /// The recording's own 1 g (median magnitude).
  public let gravity: Double
  /// The holds, in time order.
  public let holds: [Hold]
  /// The turns, in time order.
  public let turns: [Turn]

  /// Runs the oracle over a whole recording.
  public init(samples: [Sample]) {
    let n = samples.count
    var magnitudes = samples.map(\.acceleration.magnitude)
    let sorted = magnitudes.sorted()
    gravity = n > 0 ? sorted[n / 2] : standardGravity
    // Prefix sums for the centred window means.
    var sx = [Double](repeating: 0, count: n + 1)
    var sy = sx
    var sz = sx
    var sm = sx
    for i in 0..<n {
      let a = samples[i].acceleration
      sx[i + 1] = sx[i] + a.x
      sy[i + 1] = sy[i] + a.y
      sz[i + 1] = sz[i] + a.z
      sm[i + 1] = sm[i] + magnitudes[i]
    }
    magnitudes = []
    let half = RecordingOracle.window / 2
    let degrees = 180 / Double.pi
    let tiltLimit = sin(RecordingOracle.maximumTilt / degrees)
    let sectorLimit = 45 - RecordingOracle.diagonalMargin
    // Per sample: the clear orientation (undefined when not clear), the nearest orientation
    // of the mean's in-plane angle, and whether the tilt is within the limit.
    var clear = [Orientation](repeating: .undefined, count: n)
    var nearest = [Orientation](repeating: .undefined, count: n)
    var upright = [Bool](repeating: false, count: n)
    var low = 0
    var high = 0
    for i in 0..<n {
      let t = samples[i].time
      while samples[low].time < t - half { low += 1 }
      while high < n && samples[high].time <= t + half { high += 1 }
      let count = Double(high - low)
      let m = Vector3(sx[high] - sx[low], sy[high] - sy[low], sz[high] - sz[low]) * (1 / count)
      let meanMagnitude = (sm[high] - sm[low]) / count
      let length = m.magnitude
      guard length > 0 else { continue }
      let angle = atan2(m.x, -m.y) * degrees
      let quarter = Int((angle / 90).rounded())
      let orientation = Orientation(clockwiseRotation: ((quarter % 4) + 4) % 4 * 90) ?? .normal
      nearest[i] = orientation
      upright[i] = abs(m.z) <= tiltLimit * length
      let offCentre = abs(angle - Double(quarter) * 90)
      if upright[i], offCentre <= sectorLimit,
        abs(length / gravity - 1) <= RecordingOracle.magnitudeTolerance,
        length >= RecordingOracle.coherence * meanMagnitude
      {
        clear[i] = orientation
      }
    }
    // Holds: runs of one clear orientation.
    var holds: [Hold] = []
    var runStart = 0
    for i in 1...max(n, 1) where n > 0 {
      if i == n || clear[i] != clear[runStart] {
        let o = clear[runStart]
        let start = samples[runStart].time
        let end = samples[i - 1].time
        if o != .undefined, end - start >= RecordingOracle.minimumHold {
          holds.append(Hold(start: start, end: end, orientation: o))
        }
        runStart = i
      }
    }
    self.holds = holds
    // Turns between consecutive holds.
    var turns: [Turn] = []
    var index = 0
    for (a, b) in zip(holds, holds.dropFirst()) {
      guard a.orientation != b.orientation, b.start - a.end <= RecordingOracle.maximumTurn else {
        continue
      }
      while index < n && samples[index].time <= a.end { index += 1 }
      var j = index
      var crossing: Double?
      var passesFlat = false
      while j < n && samples[j].time < b.start {
        if !upright[j] { passesFlat = true }
        if crossing == nil && nearest[j] == b.orientation { crossing = samples[j].time }
        j += 1
      }
      if passesFlat { continue }
      turns.append(Turn(from: a, to: b, crossing: crossing ?? b.start))
    }
    self.turns = turns
  }
}

/// How one detector did on a recording, against `RecordingOracle`.
public struct RecordingScore: Sendable, Equatable {
  /// Latencies of the turns it committed, in seconds from the oracle's sector crossing.
  public var latencies: [Double] = []
  /// Turns scored (those where it did not already show the new orientation).
  public var turns = 0
  /// Turns whose new orientation it did not commit before the new hold ended.
  public var missed = 0
  /// Changes undone within `flickerTime` (A -> B -> A).
  public var flicker = 0
  /// When they were undone, with the recording's name (`--details`).
  public var flickerLabels: [String] = []
  /// Hold time scored (each hold from `holdGrace` after its start), seconds.
  public var holdTime = 0.0
  /// Of it, the time it showed another orientation, seconds.
  public var wrongTime = 0.0
  /// Committed changes.
  public var changes = 0
  /// Length of the recordings, seconds.
  public var duration = 0.0

  /// A change undone within this many seconds is flicker.
  public static let flickerTime = 2.0
  /// Hold time is scored from this long after the hold began (a turn's commit is latency).
  public static let holdGrace = 1.0

  /// An empty score.
  public init() {}

  /// Adds another score's counts.
  public mutating func merge(_ other: RecordingScore) {
    latencies += other.latencies
    turns += other.turns
    missed += other.missed
    flicker += other.flicker
    flickerLabels += other.flickerLabels
    holdTime += other.holdTime
    wrongTime += other.wrongTime
    changes += other.changes
    duration += other.duration
  }

  /// The share of scored hold time with a wrong orientation (0...1).
  public var wrongShare: Double { holdTime > 0 ? wrongTime / holdTime : 0 }

  /// Scores commits against the oracle.
  public init(commits: [Commit], oracle: RecordingOracle, duration: Double, name: String = "") {
    self.duration = duration
    changes = commits.count
    func state(at t: Double) -> Orientation {
      // The last commit at or before t (binary search).
      var low = 0
      var high = commits.count
      while low < high {
        let mid = (low + high) / 2
        if commits[mid].time <= t { low = mid + 1 } else { high = mid }
      }
      return low > 0 ? commits[low - 1].orientation : .undefined
    }
    for k in 1..<max(commits.count, 1) where commits.count > 1 {
      let before = k >= 2 ? commits[k - 2].orientation : .undefined
      if commits[k].orientation == before,
        commits[k].time - commits[k - 1].time <= RecordingScore.flickerTime
      {
        flicker += 1
        flickerLabels.append(
          "\(name) \(commits[k - 1].orientation) at \(commits[k - 1].time) s, back at "
            + "\(commits[k].time) s")
      }
    }
    let firstCommit = commits.first?.time ?? .infinity
    for hold in oracle.holds {
      let start = max(hold.start + RecordingScore.holdGrace, firstCommit)
      guard hold.end > start else { continue }
      holdTime += hold.end - start
      var t = start
      var current = state(at: t)
      var k = commits.firstIndex { $0.time > start } ?? commits.count
      while k < commits.count && commits[k].time < hold.end {
        if current != hold.orientation { wrongTime += commits[k].time - t }
        t = commits[k].time
        current = commits[k].orientation
        k += 1
      }
      if current != hold.orientation { wrongTime += hold.end - t }
    }
    for turn in oracle.turns {
      guard state(at: turn.from.end) != turn.to.orientation else { continue }
      turns += 1
      let commit = commits.first {
        $0.time > turn.from.end && $0.time <= turn.to.end && $0.orientation == turn.to.orientation
      }
      if let commit {
        latencies.append(commit.time - turn.crossing)
      } else {
        missed += 1
      }
    }
  }
}

/// The three judges over one recording: their scores in `Benchmark.detectors` order.
public func scoreRecording(
  _ recording: Recording, parameters: DetectorParameters = DetectorParameters(),
  adaptive: AdaptiveSampling.Parameters? = nil
) -> (oracle: RecordingOracle, scores: [RecordingScore]) {
  let samples = recording.samples
  let oracle = RecordingOracle(samples: samples)
  let duration = recording.duration
  var ours = EngineJudge(parameters: parameters)
  let read = adaptive.map { AdaptiveStream.samplesRead(from: samples, parameters: $0) } ?? samples
  var android = AndroidJudge()
  var proxy = SensorProxyJudge()
  return (
    oracle,
    [
      RecordingScore(
        commits: commits(of: &ours, over: read), oracle: oracle, duration: duration,
        name: recording.name),
      RecordingScore(
        commits: commits(of: &android, over: samples), oracle: oracle, duration: duration,
        name: recording.name),
      RecordingScore(
        commits: commits(of: &proxy, over: samples), oracle: oracle, duration: duration,
        name: recording.name),
    ]
  )
}
