/// An edge of a picture or of the device's display, as seen from the front.
public enum ImageEdge: String, CaseIterable, Sendable, CustomStringConvertible {
  /// The top edge.
  case top
  /// The right edge.
  case right
  /// The bottom edge.
  case bottom
  /// The left edge.
  case left

  /// The name used in JSON (`"top"`).
  public var description: String { rawValue }

  /// The edge this one becomes when the picture is turned clockwise by `quarterTurns` quarter
  /// turns (any integer, negative counter-clockwise): a clockwise quarter turn takes the top
  /// edge to the right, the right to the bottom, and so on.
  public func turnedClockwise(_ quarterTurns: Int) -> ImageEdge {
    let all = ImageEdge.allCases
    let index = all.firstIndex(of: self) ?? 0
    return all[(((index + quarterTurns) % 4) + 4) % 4]
  }

  /// The edge after a left-right mirror image: left and right swap, top and bottom stay.
  public var mirrored: ImageEdge {
    switch self {
    case .left: return .right
    case .right: return .left
    case .top, .bottom: return self
    }
  }

  /// The display orientation in which this edge of the device is the top of the picture:
  /// `top` is `normal`, `left` is `left-up` (the device turned clockwise, its left edge up),
  /// `bottom` is `bottom-up`, `right` is `right-up`.
  public var orientationWithThisEdgeUp: Orientation {
    switch self {
    case .top: return .normal
    case .left: return .leftUp
    case .bottom: return .bottomUp
    case .right: return .rightUp
    }
  }
}

/// Where a face seen by the camera says "up" is, in the device's terms.
///
/// A camera facing the user sees a mirror image of the display's frame: the device's left
/// edge (as the user looks at the screen) is on the right of the camera's picture. The camera
/// may also be mounted turned in the device; its mounting correction is the clockwise turn
/// that makes its frames upright on an upright device (orientcam's `--sensor-rotation`; the
/// driver's `V4L2_CID_CAMERA_SENSOR_ROTATION` is the same correction counted
/// counter-clockwise). The correction applies to the frame as delivered, then the mirror.
public enum FaceGeometry {
  /// The device edge the top of the head points to, for a head pointing to `headToward` in
  /// a frame as the camera delivered it.
  ///
  /// - Parameters:
  ///   - headToward: the frame's edge the top of the head points to.
  ///   - sensorRotation: the camera's mounting correction, clockwise degrees (multiples of
  ///     90; others are rounded down to one).
  ///   - mirrored: whether the frames are a mirror image of the device's view (a camera
  ///     facing the user, unless its driver already flips them).
  public static func deviceEdge(headToward: ImageEdge, sensorRotation: Int, mirrored: Bool)
    -> ImageEdge
  {
    let upright = headToward.turnedClockwise(sensorRotation / 90)
    return mirrored ? upright.mirrored : upright
  }

  /// The display orientation in which the face is upright: the one whose top edge is the
  /// edge the head points to.
  public static func faceOrientation(
    headToward: ImageEdge, sensorRotation: Int, mirrored: Bool
  ) -> Orientation {
    deviceEdge(headToward: headToward, sensorRotation: sensorRotation, mirrored: mirrored)
      .orientationWithThisEdgeUp
  }
}
