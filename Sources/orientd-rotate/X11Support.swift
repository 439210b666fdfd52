import ScreenRotation
import X11Rotation

/// Makes the X11 backend.
enum X11Support {
  /// The X11 backend on `display` (`$DISPLAY`).
  static func backend(display: String?) throws(RotateError) -> RotationBackend {
    try X11Backend(displayName: display)
  }
}
