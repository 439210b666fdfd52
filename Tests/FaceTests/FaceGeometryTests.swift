import OrientCore
import TestThreads
import Testing

/// The mapping from a head seen by the camera to a display orientation, checked against an
/// independent derivation: directions as vectors, the camera as rotation and reflection
/// matrices.
@Suite(.ownThreads) struct FaceGeometryTests {
  /// A direction in a picture or on the display, x to the right, y up (as seen from the front).
  struct Direction: Equatable {
    var x: Int
    var y: Int
    /// Turned clockwise by `degrees` (a multiple of 90).
    func clockwise(_ degrees: Int) -> Direction {
      var d = self
      for _ in 0..<(((degrees / 90) % 4 + 4) % 4) { d = Direction(x: d.y, y: -d.x) }
      return d
    }
    var edge: ImageEdge {
      switch (x, y) {
      case (0, 1): return .top
      case (1, 0): return .right
      case (0, -1): return .bottom
      default: return .left
      }
    }
  }

  /// Where the top of an upright head points, on the display, for each orientation: the edge
  /// that is up when the device is held that way (left-up: the device turned clockwise).
  static let headOnDisplay: [(Orientation, Direction)] = [
    (.normal, Direction(x: 0, y: 1)), (.leftUp, Direction(x: -1, y: 0)),
    (.bottomUp, Direction(x: 0, y: -1)), (.rightUp, Direction(x: 1, y: 0)),
  ]

  /// A camera facing the user sees the display's x axis reversed (the user's right hand is on
  /// the left of its picture); a frame as delivered is the upright picture turned back by the
  /// mounting correction (counter-clockwise, since the correction is clockwise).
  static func inFrame(_ onDisplay: Direction, sensorRotation: Int, mirrored: Bool) -> Direction {
    let picture = mirrored ? Direction(x: -onDisplay.x, y: onDisplay.y) : onDisplay
    return picture.clockwise(-sensorRotation)
  }

  @Test(arguments: [0, 90, 180, 270], [false, true])
  func everyOrientationComesBack(sensorRotation: Int, mirrored: Bool) {
    for (orientation, head) in Self.headOnDisplay {
      let seen = Self.inFrame(head, sensorRotation: sensorRotation, mirrored: mirrored).edge
      #expect(
        FaceGeometry.faceOrientation(
          headToward: seen, sensorRotation: sensorRotation, mirrored: mirrored) == orientation,
        "\(orientation): head toward \(seen) in the frame")
    }
  }

  @Test func aFrontCameraSwapsOnlyTheSideways() {
    // Upright device, camera mounted straight: a head toward the frame's top is upright.
    #expect(
      FaceGeometry.faceOrientation(headToward: .top, sensorRotation: 0, mirrored: true) == .normal)
    #expect(
      FaceGeometry.faceOrientation(headToward: .bottom, sensorRotation: 0, mirrored: true)
        == .bottomUp)
    // Lying on the right side, the head points to the display's left edge (left-up), which
    // the front camera shows on the right of its picture.
    #expect(
      FaceGeometry.faceOrientation(headToward: .right, sensorRotation: 0, mirrored: true)
        == .leftUp)
    #expect(
      FaceGeometry.faceOrientation(headToward: .right, sensorRotation: 0, mirrored: false)
        == .rightUp)
  }

  @Test func edgesTurnAndMirror() {
    #expect(ImageEdge.top.turnedClockwise(1) == .right)
    #expect(ImageEdge.top.turnedClockwise(-1) == .left)
    #expect(ImageEdge.left.turnedClockwise(6) == .right)
    #expect(ImageEdge.left.mirrored == .right)
    #expect(ImageEdge.top.mirrored == .top)
  }

  @Test func judgement() {
    #expect(FaceAnswer.judge(face: nil, current: .normal, proposed: .leftUp).answer == .accept)
    #expect(FaceAnswer.judge(face: .normal, current: .normal, proposed: .leftUp).answer == .veto)
    #expect(
      FaceAnswer.judge(face: .leftUp, current: .normal, proposed: .leftUp).answer == .accept)
    let other = FaceAnswer.judge(face: .rightUp, current: .normal, proposed: .leftUp)
    #expect(other.answer == .accept && other.reason.contains("neither"))
  }
}
