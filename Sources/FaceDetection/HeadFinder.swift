import OrientCore

/// What the faces in one picture say about which way is up.
public struct HeadFinding: Equatable, Sendable {
  /// The evidence at one quarter turn.
  public struct Turn: Equatable, Sendable {
    /// The picture's edge that was at the top when it was searched (the head points there if
    /// this turn wins).
    public var headToward: ImageEdge
    /// The faces found with that edge up.
    public var faces: [DetectedFace]
    /// The strongest confidence among them (`nil`: none found).
    public var strongest: Double? { faces.map(\.confidence).max() }
  }

  /// The four turns, top edge up first, then left, bottom, right (clockwise quarter turns of
  /// the picture).
  public var turns: [Turn]

  /// The turn with the strongest face, or `nil` when no turn found one. A picture can show
  /// faces in more than one turn (a tilted head, a poster); the strongest decides, not the
  /// first nor the count.
  public var best: Turn? {
    turns.filter { $0.strongest != nil }.max { ($0.strongest ?? 0) < ($1.strongest ?? 0) }
  }

  /// The edge the top of the head points to (`nil`: no face).
  public var headToward: ImageEdge? { best?.headToward }
  /// How many faces the winning turn found, counting those at least half as confident as the
  /// strongest (0 when none). A much weaker detection beside a clear face is mostly a false
  /// positive: the astronaut photograph turned a quarter has one at 0.12 on the suit beside
  /// the face at 1.63.
  public var faceCount: Int {
    guard let best, let strongest = best.strongest else { return 0 }
    return best.faces.filter { $0.confidence >= strongest / 2 }.count
  }
}

/// Finds which way the head points: the detector finds upright faces only, so the picture is
/// searched in its four quarter turns.
public final class HeadFinder {
  /// The detector.
  public let detector: FaceDetector
  /// Pictures are scaled down to this longer side first (dlib's window is 80x80 pixels: a
  /// face must be at least a sixth of the longer side at 480).
  public var workingSize: Int

  /// Creates a finder.
  public init(detector: FaceDetector, workingSize: Int = 480) {
    self.detector = detector
    self.workingSize = workingSize
  }

  /// Searches `image` in its four quarter turns.
  ///
  /// - Throws: `FaceDetectionError` from the detector.
  public func find(in image: GrayImage) throws(FaceDetectionError) -> HeadFinding {
    let small = image.fitted(longestSide: workingSize)
    var turns: [HeadFinding.Turn] = []
    for quarterTurns in 0..<4 {
      // Turned clockwise by k, the picture's edge k quarter turns counter-clockwise from the
      // top is now at the top: a face upright there has its head toward that edge.
      let edge = ImageEdge.top.turnedClockwise(-quarterTurns)
      let faces = try detector.faces(in: small.turnedClockwise(quarterTurns))
      turns.append(HeadFinding.Turn(headToward: edge, faces: faces))
    }
    return HeadFinding(turns: turns)
  }
}
