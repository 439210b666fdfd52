import OrientCore

/// A set of the four defined orientations.
public struct OrientationSet: OptionSet, Sendable, Hashable {
  /// Bit per orientation.
  public let rawValue: UInt8
  /// Creates a set from bits.
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// The set holding one orientation (empty for `undefined`).
  public init(_ orientation: Orientation) {
    switch orientation {
    case .undefined: rawValue = 0
    case .normal: rawValue = 1
    case .leftUp: rawValue = 2
    case .bottomUp: rawValue = 4
    case .rightUp: rawValue = 8
    }
  }

  /// The set of the given orientations.
  public init(_ orientations: [Orientation]) {
    var bits: UInt8 = 0
    for o in orientations { bits |= OrientationSet(o).rawValue }
    rawValue = bits
  }

  /// Whether `orientation` is in the set (`undefined` never is).
  public func contains(_ orientation: Orientation) -> Bool {
    orientation != .undefined && isSuperset(of: OrientationSet(orientation))
  }
}

/// The orientation whose sector holds the angle (degrees clockwise, any value).
public func nearestOrientation(toAngle degrees: Double) -> Orientation {
  let quarter = Int((degrees / 90).rounded())
  return Orientation(clockwiseRotation: quarter * 90) ?? .normal
}

/// What the ground truth says about one stretch of a run; the metrics judge commits by it.
public enum Expectation: Sendable, Equatable {
  /// The device is held steady: any committed change is spurious (flicker), and the committed
  /// orientation should be in the set (two orientations for a hold within 15 degrees of a
  /// diagonal, where either neighbour is right).
  case hold(acceptable: OrientationSet)
  /// The device is moving but not between orientations (approaching a diagonal, being put
  /// down): commits to orientations in the set are fine, others are spurious. Not part of hold
  /// accuracy.
  case transition(allowed: OrientationSet)
  /// A rotation to `target`: the first commit of `target` in the window counts for latency,
  /// measured from `crossTime`, when the true angle enters the target's sector (crosses its
  /// 45 degree boundary). During a 180 degree turn one commit of the orientation it passes
  /// through (`intermediates`) is allowed and counted separately; any other commit, or any
  /// change after the target was committed, is spurious. No commit of `target` by the end of
  /// the window is a missed rotation.
  case rotation(target: Orientation, intermediates: OrientationSet, crossTime: Double, tilt: Double)
  /// A slow sweep across a boundary: exactly one change, to `target`, is expected; the true
  /// angle at that moment, measured from `fromCentre`, is the switching angle. Extra changes
  /// are spurious; none at all is a missed sweep.
  case sweep(target: Orientation, fromCentre: Double)
}

/// A stretch of a run with its expectation. Windows of a run do not overlap.
public struct Window: Sendable, Equatable {
  /// Start time in seconds (inclusive).
  public var start: Double
  /// End time in seconds (exclusive).
  public var end: Double
  /// What should happen.
  public var expectation: Expectation

  /// Creates a window.
  public init(start: Double, end: Double, expectation: Expectation) {
    self.start = start
    self.end = end
    self.expectation = expectation
  }
}

/// One synthetic recording: a motion script and its ground truth.
public struct Run: Sendable {
  /// A label for messages, e.g. `rotate-90-fast #3 tilt 55`.
  public var label: String
  /// The motion.
  public var script: MotionScript
  /// The ground truth, in time order. Time before the first window is warm-up: not scored
  /// (the first commit from `undefined` happens there).
  public var windows: [Window]

  /// Creates a run.
  public init(label: String, script: MotionScript, windows: [Window]) {
    self.label = label
    self.script = script
    self.windows = windows
  }

  /// When scoring starts.
  public var warmUp: Double { windows.first?.start ?? script.duration }
}
