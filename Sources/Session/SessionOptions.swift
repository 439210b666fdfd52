import Capture
import EvdevKit
import V4L2Kit

/// `orientcam session` options: every capture option (source, orientation, rotation, output)
/// plus the session's own.
public struct SessionOptions: Equatable, Sendable {
  /// The shared capture options; `--count` means "end after this many photos" here.
  public var capture = CaptureOptions()
  /// `--burst N`: photos per trigger (default 1).
  public var burst = 1
  /// `--shutter-keys a,b`: key names as given (`volumeup`).
  public var shutterKeys: [String] = []
  /// The key codes for `shutterKeys`.
  public var shutterKeyCodes: [UInt32] = []
  /// `--shutter-device PATH` (repeatable): use these devices instead of scanning.
  public var shutterDevices: [String]?
  /// `--headless`: no preview window.
  public var headless = false
  /// `--overlay FILE` (default: the built-in overlay).
  public var overlayPath: String?
  /// `--preview-size WxH` (default: the frame size, scaled down to fit 960x960).
  public var previewSize: FrameSize?
  /// `--fullscreen`.
  public var fullscreen = false
  /// `--fps N`: preview refresh and input polling rate (default 15).
  public var fps = 15

  /// Defaults.
  public init() {}
}
