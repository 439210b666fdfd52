import CTurboJPEG
import Imaging

/// A failure reported by TurboJPEG (`tjGetErrorStr2`) or found in a JPEG's structure.
public struct JPEGError: Error, Equatable, Sendable, CustomStringConvertible {
  /// What was being done, e.g. `"decode"`, `"lossless rotate 90"`.
  public var operation: String
  /// TurboJPEG's or our own explanation.
  public var message: String

  /// Creates an error.
  public init(operation: String, message: String) {
    self.operation = operation
    self.message = message
  }

  /// `"decode: Premature end of JPEG file"`.
  public var description: String { "\(operation): \(message)" }
}

/// JPEG chroma subsampling (`TJSAMP_*`), which sets the MCU size lossless transforms work in.
public enum ChromaSubsampling: Int32, Sendable, CaseIterable, CustomStringConvertible {
  /// `TJSAMP_444`: no subsampling, 8x8 MCU.
  case s444 = 0
  /// `TJSAMP_422`: half horizontal chroma, 16x8 MCU.
  case s422 = 1
  /// `TJSAMP_420`: half both ways, 16x16 MCU (what cameras use).
  case s420 = 2
  /// `TJSAMP_GRAY`: no chroma, 8x8 MCU.
  case gray = 3
  /// `TJSAMP_440`: half vertical chroma, 8x16 MCU.
  case s440 = 4
  /// `TJSAMP_411`: quarter horizontal chroma, 32x8 MCU.
  case s411 = 5

  /// MCU width in pixels (`tjMCUWidth`).
  public var mcuWidth: Int {
    switch self {
    case .s444, .gray, .s440: return 8
    case .s422, .s420: return 16
    case .s411: return 32
    }
  }

  /// MCU height in pixels (`tjMCUHeight`).
  public var mcuHeight: Int {
    switch self {
    case .s444, .gray, .s422, .s411: return 8
    case .s420, .s440: return 16
    }
  }

  /// `"4:2:0"` etc.
  public var description: String {
    switch self {
    case .s444: return "4:4:4"
    case .s422: return "4:2:2"
    case .s420: return "4:2:0"
    case .gray: return "greyscale"
    case .s440: return "4:4:0"
    case .s411: return "4:1:1"
    }
  }
}

/// What a JPEG header says (`tjDecompressHeader3`).
public struct JPEGInfo: Equatable, Sendable {
  /// Width in pixels.
  public var width: Int
  /// Height in pixels.
  public var height: Int
  /// Chroma subsampling, `nil` when TurboJPEG cannot name it (unusual sampling factors).
  public var subsampling: ChromaSubsampling?

  /// Creates a header record.
  public init(width: Int, height: Int, subsampling: ChromaSubsampling?) {
    self.width = width
    self.height = height
    self.subsampling = subsampling
  }
}

/// Bounds on the pictures JPEGKit decodes or turns.
///
/// A JPEG header can claim up to 65535 x 65535 pixels in a few hundred bytes, and arithmetic
/// coding stores a flat picture in almost nothing: without a bound, a 223-byte file made
/// `JPEGDecoder.decode` allocate (and zero) a 12.5 GB pixel buffer, and a transform can make
/// libjpeg fill coefficient arrays of the same order.
public enum JPEGLimits {
  /// The largest picture decoded or turned, in pixels: 2^28, for example 16384 x 16384 (a
  /// 268-megapixel picture, 805 MB as RGB). Phone sensors reach 200 megapixels.
  public static let maxPixels = 1 << 28

  /// Refuses a picture larger than `maxPixels` before anything is allocated for it.
  static func check(_ info: JPEGInfo, _ operation: String) throws(JPEGError) {
    guard info.width > 0, info.height > 0 else {
      throw JPEGError(
        operation: operation,
        message: "the header gives no picture size (\(info.width)x\(info.height))")
    }
    guard info.width * info.height <= maxPixels else {
      throw JPEGError(
        operation: operation,
        message: "the picture is \(info.width)x\(info.height) pixels, more than the "
          + "\(maxPixels / 1_000_000) megapixels allowed")
    }
  }
}

/// Owns a TurboJPEG instance (`tjInitCompress`/`tjInitDecompress`/`tjInitTransform`) and
/// destroys it with `tjDestroy`.
final class TurboJPEGHandle {
  let raw: tjhandle

  init(_ make: () -> tjhandle?, kind: String) throws(JPEGError) {
    guard let handle = make() else {
      throw JPEGError(operation: "tjInit\(kind)", message: String(cString: tjGetErrorStr2(nil)))
    }
    raw = handle
  }

  deinit { tjDestroy(raw) }

  func error(_ operation: String) -> JPEGError {
    JPEGError(operation: operation, message: String(cString: tjGetErrorStr2(raw)))
  }
}

/// Encodes RGB pictures as baseline JPEG (`tjCompress2`). Reusable for many pictures.
public final class JPEGEncoder {
  private let handle: TurboJPEGHandle

  /// Creates an encoder (`tjInitCompress`).
  public init() throws(JPEGError) {
    handle = try TurboJPEGHandle({ tjInitCompress() }, kind: "Compress")
  }

  /// Encodes `image`.
  ///
  /// - Parameters:
  ///   - quality: 1...100.
  ///   - subsampling: chroma subsampling of the result (4:2:0 like cameras by default).
  /// - Returns: the JPEG file bytes (SOI ... EOI, with a JFIF APP0 segment).
  /// - Throws: `JPEGError` from `tjCompress2`.
  public func encode(_ image: RGBImage, quality: Int, subsampling: ChromaSubsampling = .s420)
    throws(JPEGError) -> [UInt8]
  {
    var out: UnsafeMutablePointer<UInt8>? = nil
    var size: UInt = 0
    defer { if let out { tjFree(out) } }
    let rc = image.pixels.withUnsafeBufferPointer { src in
      tjCompress2(
        handle.raw, src.baseAddress, Int32(image.width), 0, Int32(image.height),
        Int32(TJPF_RGB.rawValue), &out, &size, subsampling.rawValue,
        Int32(min(100, max(1, quality))), TJFLAG_ACCURATEDCT)
    }
    guard rc == 0, let out else { throw handle.error("encode") }
    return Array(UnsafeBufferPointer(start: out, count: Int(size)))
  }

  /// Encodes full-range YCbCr planes as they are (`tjCompressFromYUVPlanes`): no conversion
  /// to RGB and back; the JPEG's subsampling is the planes' (4:2:0 from YUYV and NV12
  /// frames).
  ///
  /// - Throws: `JPEGError` for a plane layout JPEG has no subsampling for, or from TurboJPEG.
  public func encode(_ planes: YUVPlanes, quality: Int) throws(JPEGError) -> [UInt8] {
    let subsampling: ChromaSubsampling
    func factor(_ full: Int, _ chroma: Int) -> Int {
      chroma == full ? 1 : (chroma == (full + 1) / 2 ? 2 : 0)
    }
    switch (factor(planes.width, planes.chromaWidth), factor(planes.height, planes.chromaHeight)) {
    case (1, 1): subsampling = .s444
    case (2, 1): subsampling = .s422
    case (2, 2): subsampling = .s420
    case (1, 2): subsampling = .s440
    default:
      throw JPEGError(
        operation: "encode",
        message: "no JPEG subsampling for \(planes.width)x\(planes.height) with "
          + "\(planes.chromaWidth)x\(planes.chromaHeight) chroma")
    }
    var out: UnsafeMutablePointer<UInt8>? = nil
    var size: UInt = 0
    defer { if let out { tjFree(out) } }
    var strides: [Int32] = [
      Int32(planes.width), Int32(planes.chromaWidth), Int32(planes.chromaWidth),
    ]
    let rc = planes.y.withUnsafeBufferPointer { y in
      planes.u.withUnsafeBufferPointer { u in
        planes.v.withUnsafeBufferPointer { v in
          var sources: [UnsafePointer<UInt8>?] = [y.baseAddress, u.baseAddress, v.baseAddress]
          return tjCompressFromYUVPlanes(
            handle.raw, &sources, Int32(planes.width), &strides, Int32(planes.height),
            subsampling.rawValue, &out, &size, Int32(min(100, max(1, quality))),
            TJFLAG_ACCURATEDCT)
        }
      }
    }
    guard rc == 0, let out else { throw handle.error("encode") }
    return Array(UnsafeBufferPointer(start: out, count: Int(size)))
  }
}

/// Reads JPEG headers and decodes JPEGs to RGB (`tjDecompressHeader3`, `tjDecompress2`).
public final class JPEGDecoder {
  private let handle: TurboJPEGHandle

  /// Creates a decoder (`tjInitDecompress`).
  public init() throws(JPEGError) {
    handle = try TurboJPEGHandle({ tjInitDecompress() }, kind: "Decompress")
  }

  /// The size and subsampling from the frame header.
  ///
  /// - Throws: `JPEGError` if the data is not a JPEG TurboJPEG can read.
  public func header(_ jpeg: [UInt8]) throws(JPEGError) -> JPEGInfo {
    var width: Int32 = 0
    var height: Int32 = 0
    var subsampling: Int32 = -1
    var colourspace: Int32 = 0
    let rc = jpeg.withUnsafeBufferPointer { p in
      tjDecompressHeader3(
        handle.raw, p.baseAddress, UInt(p.count), &width, &height, &subsampling, &colourspace)
    }
    guard rc == 0 else { throw handle.error("read JPEG header") }
    return JPEGInfo(
      width: Int(width), height: Int(height),
      subsampling: ChromaSubsampling(rawValue: subsampling))
  }

  /// Decodes the whole picture; warnings (a truncated or damaged file) are errors.
  ///
  /// - Throws: `JPEGError` naming what TurboJPEG found wrong, or a picture without a size or
  ///   above `JPEGLimits.maxPixels`.
  public func decode(_ jpeg: [UInt8]) throws(JPEGError) -> RGBImage {
    let info = try header(jpeg)
    try JPEGLimits.check(info, "decode")
    var pixels = [UInt8](repeating: 0, count: info.width * info.height * 3)
    let rc = jpeg.withUnsafeBufferPointer { src in
      pixels.withUnsafeMutableBufferPointer { dst in
        tjDecompress2(
          handle.raw, src.baseAddress, UInt(src.count), dst.baseAddress, Int32(info.width), 0,
          Int32(info.height), Int32(TJPF_RGB.rawValue), TJFLAG_ACCURATEDCT | TJFLAG_STOPONWARNING)
      }
    }
    guard rc == 0 else { throw handle.error("decode") }
    return RGBImage(width: info.width, height: info.height, pixels: pixels)
  }
}

/// Lossless JPEG rotation and mirroring on DCT blocks (`tjTransform`), no re-encoding.
///
/// Blocks move as whole MCUs, so a transform that would have to move a partial MCU from the
/// right or bottom edge to the top or left is not exact: `isExact` says in advance, and the
/// caller chooses between refusing, trimming the partial blocks, or re-encoding.
public enum LosslessJPEG {
  /// What to do with partial MCUs on the edges that would have to move.
  public enum EdgePolicy: Sendable {
    /// Fail unless the transform is exact (`TJXOPT_PERFECT`).
    case exact
    /// Drop the partial MCUs that cannot move (`TJXOPT_TRIM`).
    case trim
  }

  /// The `TJXOP_*` operation that performs `transform`.
  public static func operation(for transform: ImageTransform) -> TJXOP {
    switch (transform.mirrored, transform.quarterTurns) {
    case (false, 0): return TJXOP_NONE
    case (true, 0): return TJXOP_HFLIP
    case (false, 1): return TJXOP_ROT90
    case (true, 1): return TJXOP_TRANSVERSE
    case (false, 2): return TJXOP_ROT180
    case (true, 2): return TJXOP_VFLIP
    case (true, 3): return TJXOP_TRANSPOSE
    default: return TJXOP_ROT270
    }
  }

  /// Which edges of the source must be whole MCUs for `transform` to be exact, following
  /// turbojpeg.h's notes on each `TJXOP_*`.
  static func needsWhole(_ transform: ImageTransform) -> (right: Bool, bottom: Bool) {
    switch (transform.mirrored, transform.quarterTurns) {
    case (false, 0), (true, 3): return (false, false)  // none, transpose
    case (true, 0), (false, 3): return (true, false)  // hflip, rot270
    case (true, 2), (false, 1): return (false, true)  // vflip, rot90
    default: return (true, true)  // rot180, transverse
    }
  }

  /// Whether `transform` moves every pixel exactly for a picture of this size and subsampling.
  public static func isExact(
    _ transform: ImageTransform, width: Int, height: Int, subsampling: ChromaSubsampling
  ) -> Bool {
    let need = needsWhole(transform)
    return !(need.right && width % subsampling.mcuWidth != 0)
      && !(need.bottom && height % subsampling.mcuHeight != 0)
  }

  /// The size of the result of a trimming transform (after the turn).
  public static func trimmedSize(
    _ transform: ImageTransform, width: Int, height: Int, subsampling: ChromaSubsampling
  ) -> (width: Int, height: Int) {
    let need = needsWhole(transform)
    let w = need.right ? width - width % subsampling.mcuWidth : width
    let h = need.bottom ? height - height % subsampling.mcuHeight : height
    return transform.outputSize(width: w, height: h)
  }

  /// Applies `transform` to a JPEG without decoding it.
  ///
  /// Uses a fresh `tjInitTransform` handle each time (TurboJPEG 2.1.5 ignores
  /// `TJXOPT_COPYNONE` on a reused handle) and drops every APP/COM marker, so the caller writes
  /// the EXIF that matches the new pixels. Warnings (damaged data) are errors.
  ///
  /// - Returns: the new JPEG bytes.
  /// - Throws: `JPEGError`, also when `edges` is `.exact` and the transform is not, and for a
  ///   picture without a size or above `JPEGLimits.maxPixels`.
  public static func transform(
    _ jpeg: [UInt8], _ transform: ImageTransform, edges: EdgePolicy
  ) throws(JPEGError) -> [UInt8] {
    let handle = try TurboJPEGHandle({ tjInitTransform() }, kind: "Transform")
    // A transform handle reads headers too (TurboJPEG's transformer is also a decompressor).
    var width: Int32 = 0
    var height: Int32 = 0
    var subsampling: Int32 = -1
    var colourspace: Int32 = 0
    let headerRC = jpeg.withUnsafeBufferPointer { p in
      tjDecompressHeader3(
        handle.raw, p.baseAddress, UInt(p.count), &width, &height, &subsampling, &colourspace)
    }
    guard headerRC == 0 else { throw handle.error("read JPEG header") }
    try JPEGLimits.check(
      JPEGInfo(width: Int(width), height: Int(height), subsampling: nil), "lossless \(transform)")
    var spec = tjtransform()
    spec.op = Int32(operation(for: transform).rawValue)
    spec.options = TJXOPT_COPYNONE | (edges == .exact ? TJXOPT_PERFECT : TJXOPT_TRIM)
    var out: UnsafeMutablePointer<UInt8>? = nil
    var size: UInt = 0
    defer { if let out { tjFree(out) } }
    let rc = jpeg.withUnsafeBufferPointer { src in
      tjTransform(
        handle.raw, src.baseAddress, UInt(src.count), 1, &out, &size, &spec,
        TJFLAG_STOPONWARNING)
    }
    guard rc == 0, let out else { throw handle.error("lossless \(transform)") }
    return Array(UnsafeBufferPointer(start: out, count: Int(size)))
  }
}
