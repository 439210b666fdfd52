import Imaging
import OrientCore
import V4L2Kit

/// Where `orientcam capture` takes the orientation from.
public enum OrientationChoice: Equatable, Sendable {
  /// Ask orientd over the system bus (`--orientation auto`, the default).
  case auto
  /// `--orientation NAME`.
  case fixed(Orientation)
  /// `--orientation-from -|FILE`.
  case watchLines(String)
}

/// `orientcam capture` options.
public struct CaptureOptions: Equatable, Sendable {
  /// `--source` (default: the first camera).
  public var source: SourceSpec = .camera(path: nil)
  /// `--resolution WxH` (default: the largest).
  public var resolution: FrameSize?
  /// `--format a,b` (default: MJPEG, JPEG, YUYV, NV12, RGB24, BGR24 in that order).
  public var formats: [PixelFormat] = PixelFormat.preference
  /// Whether `--format` was given.
  public var formatGiven = false
  /// `--skip N` warm-up frames (default 3 for cameras, 0 otherwise).
  public var skip: Int?
  /// `--count N` photos (default 1; for `file:` every matched file).
  public var count: Int?
  /// `--orientation` / `--orientation-from`.
  public var orientation: OrientationChoice = .auto
  /// `--orientation-fallback NAME`.
  public var fallback: Orientation?
  /// `--sensor-rotation DEG` (default: what the driver reports, else 0).
  public var sensorRotation: Int?
  /// `--mirror`.
  public var mirror = false
  /// `--rotate`.
  public var rotate: RotateMode = .both
  /// `--lossless`.
  public var lossless: LosslessPolicy = .reencode
  /// `--quality`.
  public var quality = 90
  /// `-o`.
  public var output: OutputTemplate
  /// `--force`.
  public var force = false
  /// `--min-resolution WxH`.
  public var minimumResolution: FrameSize?
  /// `--json`.
  public var json = false
  /// `-v`/`--verbose`.
  public var verbose = false
  /// Whether `--orientation` or `--orientation-from` was given (they exclude each other; set
  /// by orientcam's option parser).
  public var orientationGiven = false

  /// Defaults.
  public init() {
    output = OutputTemplate.standard
  }
}
