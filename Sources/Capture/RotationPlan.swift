import Imaging
import OrientCore

/// How a photo is made upright (`--rotate`).
public enum RotateMode: String, Sendable, CaseIterable {
  /// Turn the pixels; write no Orientation tag.
  case pixels
  /// Keep the pixels as captured; write the Orientation tag that shows them upright.
  case exif
  /// Turn the pixels and write Orientation = 1 (the default: viewers and upload tools that
  /// ignore EXIF still show the photo upright, and tools that honour it do not turn it again).
  case both
  /// Neither: the frame as the camera delivered it, no Orientation tag.
  case none
}

/// What to do when a JPEG frame cannot be turned exactly without decoding (`--lossless`).
public enum LosslessPolicy: String, Sendable, CaseIterable {
  /// Refuse: only exact lossless transforms.
  case strict
  /// Drop the partial 8/16-pixel blocks on the edges that cannot move (a few pixels).
  case trim
  /// Decode, turn the pixels and encode again at `--quality` (keeps every pixel; the default).
  case reencode
}

/// The arithmetic from device orientation to pixels and tag.
///
/// A device turned clockwise by r (as its user sees it, from the screen side) turns a rear
/// camera clockwise by r about its own axis, so the rear camera sees the scene turned
/// counter-clockwise by r and the frame is turned clockwise by r. A front camera looks the
/// other way along the same axis: for it the device turned counter-clockwise, it sees the scene
/// turned clockwise by r, and the frame is turned counter-clockwise by r (left-up and right-up
/// swap; normal and bottom-up are the same either way). Then comes the camera's mounting
/// correction (`--sensor-rotation`, clockwise, in the frame's own terms; before it, a mirror a
/// libcamera pipeline's sensor flips may have left, `sensorMirrored`), and for a front
/// camera (`--mirror`) the upright picture is mirrored left-right, as the user saw it in the
/// preview. A frame that already carries an Orientation tag (a replayed file) is first shown as
/// its tag says.
public struct RotationPlan: Equatable, Sendable {
  /// The device orientation the photo is taken in.
  public var orientation: Orientation
  /// The camera's mounting correction in degrees clockwise (0, 90, 180, 270).
  public var sensorRotation: Int
  /// The frames come mirrored (flips a libcamera pipeline set on the sensor that are not a
  /// turn; `LibcameraOrientation`): mirror them back before `sensorRotation`.
  public var sensorMirrored: Bool
  /// A front camera (`--mirror`): turn the other way, and mirror the upright photo
  /// left-right.
  public var mirror: Bool
  /// How to apply the correction.
  public var mode: RotateMode

  /// Creates a plan.
  public init(
    orientation: Orientation, sensorRotation: Int = 0, sensorMirrored: Bool = false,
    mirror: Bool = false, mode: RotateMode = .both
  ) {
    self.orientation = orientation
    self.sensorRotation = sensorRotation
    self.sensorMirrored = sensorMirrored
    self.mirror = mirror
    self.mode = mode
  }

  /// The clockwise turn that undoes the device orientation (`undefined` counts as upright):
  /// the orientation's rotation r for a rear camera, 360 - r for a front camera (`mirror`).
  public var deviceRotation: Int {
    let r = orientation.clockwiseRotation ?? 0
    return mirror ? (360 - r) % 360 : r
  }

  /// The transform that makes a frame (as the camera delivered it) upright.
  public var correction: ImageTransform {
    ImageTransform(quarterTurns: (deviceRotation + sensorRotation) / 90, mirrored: sensorMirrored)
      .then(mirror ? .mirror : .identity)
  }

  /// What to do to the stored pixels of a frame whose own Orientation tag asks for `stored`.
  public func pixelTransform(stored: ImageTransform = .identity) -> ImageTransform {
    switch mode {
    case .pixels, .both: return stored.then(correction)
    case .exif, .none: return .identity
    }
  }

  /// The Orientation value to write (`nil`: no tag), for a frame whose own tag asks for
  /// `stored`.
  public func exifOrientation(stored: ImageTransform = .identity) -> Int? {
    switch mode {
    case .both: return 1
    case .pixels: return nil
    case .exif: return stored.then(correction).exifOrientation
    case .none: return stored == .identity ? nil : stored.exifOrientation
    }
  }
}
