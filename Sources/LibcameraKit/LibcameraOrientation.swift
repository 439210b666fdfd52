import Imaging

/// Which way a camera faces (`properties::Location`).
public enum LibcameraLocation: Int, Sendable, CaseIterable {
  /// `CameraLocationFront`: faces the user.
  case front = 0
  /// `CameraLocationBack`: faces away from the user.
  case back = 1
  /// `CameraLocationExternal`: not fixed to the device.
  case external = 2

  /// `front`, `back`, `external`.
  public var name: String {
    switch self {
    case .front: return "front"
    case .back: return "back"
    case .external: return "external"
    }
  }
}

/// What a pipeline did to its frames, in the terms of the libcamera generation that says it.
public enum PipelineApplied: Equatable, Sendable {
  /// libcamera 0.0.x and 0.1: `CameraConfiguration::transform` after `validate()`.
  ///
  /// `combinedWithRotation`: the pipeline flips the sensor by this transform combined with
  /// `transformFromRotation(Rotation)` (ipu3 and raspberrypi; a transpose is left to the
  /// application, and a sensor without flips makes the transform the rotation's inverse).
  /// Otherwise it forces `Identity` and applies nothing (uvcvideo, vimc, simple, rkisp1,
  /// imx8-isi).
  case transform(LibcameraTransform, combinedWithRotation: Bool)
  /// libcamera 0.2 and later: `CameraConfiguration::orientation` after `validate()`, the EXIF
  /// Orientation value (1...8) of the delivered frames relative to the upright picture, the
  /// camera's `properties::Rotation` included.
  case orientation(exif: Int)
}

/// The turn still to apply to a camera's frames for its mounting, and whether it faces the user.
public struct LibcameraCorrection: Equatable, Sendable {
  /// What to do to each delivered frame so that it shows the scene as the camera sees it with
  /// the device held normally (a mirror first, then clockwise quarter turns).
  public var remaining: ImageTransform
  /// A front camera: orientcam turns the other way for the device's orientation and mirrors
  /// the upright photo (`RotationPlan.mirror`).
  public var facesUser: Bool

  /// Creates a correction.
  public init(remaining: ImageTransform, facesUser: Bool) {
    self.remaining = remaining
    self.facesUser = facesUser
  }
}

/// The arithmetic from what libcamera says about a camera to what orientcam still has to do.
///
/// `properties::Rotation` is the counter-clockwise turn that makes the sensor's picture upright
/// (property_ids.yaml; the same convention as V4L2_CID_CAMERA_SENSOR_ROTATION). Let S be the
/// sensor's picture, C the wanted correction (that turn, or `--sensor-rotation` clockwise when
/// given), A what the pipeline did; the frames are A(S), so what remains is A's inverse, then C.
///
/// - libcamera 0.0.x/0.1, a pipeline that forces Identity: A is nothing.
/// - 0.0.x/0.1, ipu3 or raspberrypi: A = `transform * transformFromRotation(Rotation)`, the
///   flips the pipeline set on the sensor. Those pipelines read the rotation clockwise, so for
///   a sensor mounted at 90 or 270 the flips they leave are not half of the right turn: what
///   remains is then a turn with a mirror, which undoes them exactly.
/// - 0.2 and later: the frames are upright (for the reported Rotation) after the EXIF
///   Orientation `orientation` says, so A is that orientation's inverse after the reported
///   correction; without an override, what remains is just the orientation.
public enum LibcameraOrientation {
  /// The correction for a camera.
  ///
  /// - Parameters:
  ///   - location: `properties::Location`, `nil` when not reported.
  ///   - rotation: `properties::Rotation` in degrees, `nil` when not reported (0 applies).
  ///   - override: `--sensor-rotation`, the mounting correction in degrees clockwise, which
  ///     replaces `rotation` (for cameras that report none, or wrongly); `nil` for none.
  ///   - applied: what the pipeline reports having done.
  public static func correction(
    location: LibcameraLocation?, rotation: Int?, override: Int?, applied: PipelineApplied
  ) -> LibcameraCorrection {
    let reported = ImageTransform(quarterTurns: -((rotation ?? 0) / 90))
    let wanted = override.map { ImageTransform(quarterTurns: $0 / 90) } ?? reported
    let done: ImageTransform
    switch applied {
    case .transform(let transform, let combined):
      let fromRotation = LibcameraTransform(fromRotation: rotation ?? 0) ?? .identity
      done = (combined ? transform * fromRotation : transform).imageTransform
    case .orientation(let exif):
      let shown = ImageTransform(exifOrientation: exif) ?? .identity
      done = reported.then(shown.inverse)
    }
    return LibcameraCorrection(
      remaining: done.inverse.then(wanted), facesUser: location == .front)
  }
}
