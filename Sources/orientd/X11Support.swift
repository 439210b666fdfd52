import ScreenRotation

/// Makes the X11 backend.
enum X11Support {
  /// The X11 backend on `display`.
  static func backend(display: String?) throws(RotateError) -> RotationBackend {
    throw RotateError(.unavailable, "the X11 backend is not built yet")
  }
}
