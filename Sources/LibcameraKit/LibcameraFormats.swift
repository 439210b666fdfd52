import Imaging

/// Which libcamera pixel format delivers each of orientcam's memory layouts.
///
/// libcamera names formats as DRM does, by the bits of a little-endian word, V4L2 by the bytes
/// in memory: libcamera's `BGR888` is R, G, B in memory, V4L2's `RGB24` (orientcam's `rgb24`);
/// `RGB888` is V4L2's `BGR24`. YUYV, NV12 and MJPEG have the same code in both.
public enum LibcameraFormats {
  /// The DRM four-character code for a layout (`nil` for `jpeg`: libcamera has only MJPEG).
  public static func fourCC(for format: PixelFormat) -> UInt32? {
    switch format {
    case .mjpeg: return code("MJPG")
    case .jpeg: return nil
    case .yuyv: return code("YUYV")
    case .nv12: return code("NV12")
    case .rgb24: return code("BG24")
    case .bgr24: return code("RG24")
    }
  }

  /// The layout a libcamera format delivers, if orientcam handles it (modifier 0 only: a
  /// tiled or compressed modifier is a different layout).
  public static func pixelFormat(fourCC: UInt32, modifier: UInt64 = 0) -> PixelFormat? {
    guard modifier == 0 else { return nil }
    return PixelFormat.allCases.first { self.fourCC(for: $0) == fourCC }
  }

  /// The codes for a preference list, in its order, without the layouts libcamera lacks.
  public static func fourCCs(for preferences: [PixelFormat]) -> [UInt32] {
    preferences.compactMap { fourCC(for: $0) }
  }

  private static func code(_ text: String) -> UInt32 { FourCC(text)?.rawValue ?? 0 }
}
