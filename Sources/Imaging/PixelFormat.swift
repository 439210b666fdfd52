/// A V4L2 four-character code (`v4l2_fourcc(a, b, c, d)`: `a | b << 8 | c << 16 | d << 24`).
public struct FourCC: Hashable, Sendable, CustomStringConvertible {
  /// The little-endian packed code, as in `v4l2_pix_format.pixelformat`.
  public let rawValue: UInt32

  /// Wraps a packed code.
  public init(rawValue: UInt32) { self.rawValue = rawValue }

  /// Packs four ASCII characters, e.g. `FourCC("YUYV")`; `nil` unless exactly four ASCII bytes.
  public init?(_ text: String) {
    let bytes = Array(text.utf8)
    guard bytes.count == 4, bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
    rawValue =
      UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
  }

  /// The four characters (non-printable bytes as `?`), trailing spaces kept.
  public var description: String {
    let bytes = (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (8 * UInt32($0))) }
    return String(decoding: bytes.map { (0x20..<0x7f).contains($0) ? $0 : 0x3f }, as: UTF8.self)
  }
}

/// The frame formats orientcam can take from a camera (and produce from its test pattern).
///
/// The order of `preference` is the negotiation order: compressed frames first (the camera did
/// the encoding and lossless rotation keeps its quality), then packed and planar YUV, then RGB.
public enum PixelFormat: String, CaseIterable, Sendable, CustomStringConvertible {
  /// Motion-JPEG: every frame a JPEG image (`V4L2_PIX_FMT_MJPEG`, "MJPG").
  case mjpeg
  /// Plain JPEG frames (`V4L2_PIX_FMT_JPEG`, "JPEG"); handled exactly like MJPEG.
  case jpeg
  /// Packed 4:2:2 YUV, Y0 U Y1 V (`V4L2_PIX_FMT_YUYV`, "YUYV").
  case yuyv
  /// A Y plane then an interleaved UV plane at half resolution (`V4L2_PIX_FMT_NV12`, "NV12").
  case nv12
  /// Packed R, G, B (`V4L2_PIX_FMT_RGB24`, "RGB3").
  case rgb24
  /// Packed B, G, R (`V4L2_PIX_FMT_BGR24`, "BGR3").
  case bgr24

  /// The negotiation preference, best first.
  public static let preference: [PixelFormat] = [.mjpeg, .jpeg, .yuyv, .nv12, .rgb24, .bgr24]

  /// The V4L2 four-character code.
  public var fourCC: FourCC {
    switch self {
    case .mjpeg: return FourCC(rawValue: 0x4750_4a4d)  // "MJPG"
    case .jpeg: return FourCC(rawValue: 0x4745_504a)  // "JPEG"
    case .yuyv: return FourCC(rawValue: 0x5659_5559)  // "YUYV"
    case .nv12: return FourCC(rawValue: 0x3231_564e)  // "NV12"
    case .rgb24: return FourCC(rawValue: 0x3342_4752)  // "RGB3"
    case .bgr24: return FourCC(rawValue: 0x3352_4742)  // "BGR3"
    }
  }

  /// The format with this four-character code, if orientcam handles it.
  public init?(fourCC: FourCC) {
    guard let match = PixelFormat.allCases.first(where: { $0.fourCC == fourCC }) else {
      return nil
    }
    self = match
  }

  /// The option and display name (`mjpeg`, `yuyv`, ...).
  public var description: String { rawValue }

  /// Whether frames are JPEG images rather than pixels.
  public var isCompressed: Bool { self == .mjpeg || self == .jpeg }

  /// Whether a frame of this size can exist (YUYV needs an even width, NV12 even sides).
  public func supports(width: Int, height: Int) -> Bool {
    guard width > 0, height > 0 else { return false }
    switch self {
    case .yuyv: return width % 2 == 0
    case .nv12: return width % 2 == 0 && height % 2 == 0
    default: return true
    }
  }

  /// The smallest `bytesperline` of the first plane (0 for compressed formats).
  public func minimumBytesPerLine(width: Int) -> Int {
    switch self {
    case .mjpeg, .jpeg: return 0
    case .yuyv: return width * 2
    case .nv12: return width
    case .rgb24, .bgr24: return width * 3
    }
  }

  /// The bytes a frame needs at `bytesPerLine` (0 for compressed formats).
  public func frameSize(width: Int, height: Int, bytesPerLine: Int) -> Int {
    switch self {
    case .mjpeg, .jpeg: return 0
    case .nv12: return bytesPerLine * height + bytesPerLine * ((height + 1) / 2)
    default: return bytesPerLine * height
    }
  }
}

/// Why raw frame bytes cannot be read as a picture.
public struct FrameFormatError: Error, Equatable, Sendable, CustomStringConvertible {
  /// What is wrong, e.g. "YUYV frame 640x480 needs 614400 bytes, got 1000".
  public var description: String
  /// Creates an error.
  public init(_ description: String) { self.description = description }
}

/// An uncompressed camera frame as the driver filled it: packed or planar, maybe with row
/// padding (`bytesPerLine`).
public struct RawFrame: Sendable {
  /// The pixel layout.
  public let format: PixelFormat
  /// Width in pixels.
  public let width: Int
  /// Height in pixels.
  public let height: Int
  /// Bytes from one row of the first plane to the next (`v4l2_pix_format.bytesperline`).
  public let bytesPerLine: Int
  /// The frame bytes (at least `format.frameSize`).
  public private(set) var bytes: [UInt8]

  /// Checks that the bytes can hold such a frame.
  ///
  /// - Throws: `FrameFormatError` for a compressed format, an impossible size, a short stride
  ///   or too few bytes.
  public init(
    format: PixelFormat, width: Int, height: Int, bytesPerLine: Int? = nil, bytes: [UInt8]
  )
    throws(FrameFormatError)
  {
    guard !format.isCompressed else {
      throw FrameFormatError("\(format.fourCC) frames are JPEG images, not raw pixels")
    }
    guard format.supports(width: width, height: height) else {
      throw FrameFormatError("\(format.fourCC) cannot have the size \(width)x\(height)")
    }
    let stride = bytesPerLine ?? format.minimumBytesPerLine(width: width)
    guard stride >= format.minimumBytesPerLine(width: width) else {
      throw FrameFormatError(
        "\(format.fourCC) \(width)x\(height): bytesperline \(stride) is less than "
          + "\(format.minimumBytesPerLine(width: width))")
    }
    let need = format.frameSize(width: width, height: height, bytesPerLine: stride)
    guard bytes.count >= need else {
      throw FrameFormatError(
        "\(format.fourCC) frame \(width)x\(height) needs \(need) bytes, got \(bytes.count)")
    }
    self.format = format
    self.width = width
    self.height = height
    self.bytesPerLine = stride
    self.bytes = bytes
  }

  /// The frame as RGB (BT.601 limited-range YUV, as webcams and V4L2's default colourspace use).
  public func rgb() -> RGBImage {
    var out = [UInt8](repeating: 0, count: width * height * 3)
    let (w, h, stride) = (width, height, bytesPerLine)
    bytes.withUnsafeBufferPointer { src in
      out.withUnsafeMutableBufferPointer { dst in
        guard let s = src.baseAddress, let d = dst.baseAddress else { return }
        switch format {
        case .yuyv:
          for y in 0..<h {
            var p = s + y * stride
            var q = d + y * w * 3
            for _ in 0..<(w / 2) {
              let u = Int(p[1])
              let v = Int(p[3])
              YUV.toRGB(y: Int(p[0]), u: u, v: v, into: q)
              YUV.toRGB(y: Int(p[2]), u: u, v: v, into: q + 3)
              p += 4
              q += 6
            }
          }
        case .nv12:
          let chroma = s + stride * h
          for y in 0..<h {
            let luma = s + y * stride
            let uv = chroma + (y / 2) * stride
            var q = d + y * w * 3
            for x in 0..<w {
              let c = uv + (x & ~1)
              YUV.toRGB(y: Int(luma[x]), u: Int(c[0]), v: Int(c[1]), into: q)
              q += 3
            }
          }
        case .rgb24, .bgr24:
          let swap = format == .bgr24
          for y in 0..<h {
            var p = s + y * stride
            var q = d + y * w * 3
            for _ in 0..<w {
              q[0] = swap ? p[2] : p[0]
              q[1] = p[1]
              q[2] = swap ? p[0] : p[2]
              p += 3
              q += 3
            }
          }
        case .mjpeg, .jpeg:
          break  // excluded by init
        }
      }
    }
    return RGBImage(width: w, height: h, pixels: out)
  }

  /// Packs an RGB picture the way a camera delivering `format` would (no row padding).
  ///
  /// - Throws: `FrameFormatError` for compressed formats or sizes the format cannot have.
  public init(packing image: RGBImage, as format: PixelFormat) throws(FrameFormatError) {
    guard !format.isCompressed else {
      throw FrameFormatError("\(format.fourCC) frames are JPEG images, not raw pixels")
    }
    guard format.supports(width: image.width, height: image.height) else {
      throw FrameFormatError("\(format.fourCC) cannot have the size \(image.width)x\(image.height)")
    }
    let (w, h) = (image.width, image.height)
    let stride = format.minimumBytesPerLine(width: w)
    var out = [UInt8](
      repeating: 0, count: format.frameSize(width: w, height: h, bytesPerLine: stride))
    image.pixels.withUnsafeBufferPointer { src in
      out.withUnsafeMutableBufferPointer { dst in
        guard let s = src.baseAddress, let d = dst.baseAddress else { return }
        switch format {
        case .yuyv:
          for y in 0..<h {
            var p = s + y * w * 3
            var q = d + y * stride
            for _ in 0..<(w / 2) {
              let a = YUV.fromRGB(Int(p[0]), Int(p[1]), Int(p[2]))
              let b = YUV.fromRGB(Int(p[3]), Int(p[4]), Int(p[5]))
              q[0] = a.y
              q[1] = UInt8((Int(a.u) + Int(b.u) + 1) / 2)
              q[2] = b.y
              q[3] = UInt8((Int(a.v) + Int(b.v) + 1) / 2)
              p += 6
              q += 4
            }
          }
        case .nv12:
          let chroma = d + stride * h
          for y in 0..<h {
            var p = s + y * w * 3
            let luma = d + y * stride
            for x in 0..<w {
              let c = YUV.fromRGB(Int(p[0]), Int(p[1]), Int(p[2]))
              luma[x] = c.y
              // The top-left pixel of each 2x2 block stands for its chroma.
              if y % 2 == 0 && x % 2 == 0 {
                let uv = chroma + (y / 2) * stride + x
                uv[0] = c.u
                uv[1] = c.v
              }
              p += 3
            }
          }
        case .rgb24, .bgr24:
          let swap = format == .bgr24
          var p = s
          var q = d
          for _ in 0..<(w * h) {
            q[0] = swap ? p[2] : p[0]
            q[1] = p[1]
            q[2] = swap ? p[0] : p[2]
            p += 3
            q += 3
          }
        case .mjpeg, .jpeg:
          break
        }
      }
    }
    try self.init(format: format, width: w, height: h, bytesPerLine: stride, bytes: out)
  }
}

extension RawFrame {
  /// Paints the rectangle [x0, x1) x [y0, y1) (clipped) in `colour`, in place.
  ///
  /// Luma is set per pixel; chroma, which YUYV shares between two pixels and NV12 between
  /// four, takes the new colour for every pair or block the rectangle touches (exact for
  /// neutral colours, which is what the test pattern's frame counter uses).
  public mutating func fill(x0: Int, y0: Int, x1: Int, y1: Int, with colour: RGB) {
    let left = max(0, x0)
    let right = min(width, x1)
    let top = max(0, y0)
    let bottom = min(height, y1)
    guard left < right, top < bottom else { return }
    let yuv = YUV.fromRGB(Int(colour.r), Int(colour.g), Int(colour.b))
    let (stride, h, format) = (bytesPerLine, height, self.format)
    bytes.withUnsafeMutableBufferPointer { buffer in
      guard let d = buffer.baseAddress else { return }
      switch format {
      case .yuyv:
        for y in top..<bottom {
          let row = d + y * stride
          for x in left..<right {
            row[x * 2] = yuv.y
            row[(x & ~1) * 2 + 1] = yuv.u
            row[(x & ~1) * 2 + 3] = yuv.v
          }
        }
      case .nv12:
        let chroma = d + stride * h
        for y in top..<bottom {
          for x in left..<right {
            d[y * stride + x] = yuv.y
            let uv = chroma + (y / 2) * stride + (x & ~1)
            uv[0] = yuv.u
            uv[1] = yuv.v
          }
        }
      case .rgb24, .bgr24:
        let (first, last) = format == .bgr24 ? (colour.b, colour.r) : (colour.r, colour.b)
        for y in top..<bottom {
          var p = d + y * stride + left * 3
          for _ in left..<right {
            p[0] = first
            p[1] = colour.g
            p[2] = last
            p += 3
          }
        }
      case .mjpeg, .jpeg:
        break
      }
    }
  }

  /// The frame as full-range YCbCr planes (JPEG's colour space) at its own chroma resolution,
  /// for encoding without a round trip through RGB; `nil` for RGB formats.
  ///
  /// Both become 4:2:0 planes (YUYV's chroma rows averaged in pairs); the camera's limited
  /// range (BT.601, luma 16-235, chroma 16-240) is stretched to JPEG's full range on the way.
  public func yuvPlanes() -> YUVPlanes? {
    let (w, h, stride) = (width, height, bytesPerLine)
    switch format {
    case .yuyv:
      // 4:2:2 to 4:2:0 (each chroma sample the mean of two rows): what cameras' own JPEGs
      // use, and half the chroma to encode.
      let ch = (h + 1) / 2
      var planes = YUVPlanes(width: w, height: h, chromaWidth: w / 2, chromaHeight: ch)
      bytes.withUnsafeBufferPointer { src in
        guard let s = src.baseAddress else { return }
        planes.withPlanes { yp, up, vp in
          YUV.luma.withUnsafeBufferPointer { luma in
            YUV.chroma.withUnsafeBufferPointer { chroma in
              for cy in 0..<ch {
                let top = s + (2 * cy) * stride
                let hasSecond = 2 * cy + 1 < h
                let bottom = hasSecond ? top + stride : top
                var a = top
                var b = bottom
                var ly0 = yp + (2 * cy) * w
                var ly1 = ly0 + w
                var cu = up + cy * (w / 2)
                var cv = vp + cy * (w / 2)
                for _ in 0..<(w / 2) {
                  ly0[0] = luma[Int(a[0])]
                  ly0[1] = luma[Int(a[2])]
                  if hasSecond {
                    ly1[0] = luma[Int(b[0])]
                    ly1[1] = luma[Int(b[2])]
                  }
                  cu[0] = chroma[(Int(a[1]) + Int(b[1]) + 1) >> 1]
                  cv[0] = chroma[(Int(a[3]) + Int(b[3]) + 1) >> 1]
                  a += 4
                  b += 4
                  ly0 += 2
                  ly1 += 2
                  cu += 1
                  cv += 1
                }
              }
            }
          }
        }
      }
      return planes
    case .nv12:
      var planes = YUVPlanes(
        width: w, height: h, chromaWidth: w / 2, chromaHeight: h / 2)
      bytes.withUnsafeBufferPointer { src in
        guard let s = src.baseAddress else { return }
        planes.withPlanes { yp, up, vp in
          YUV.luma.withUnsafeBufferPointer { luma in
            YUV.chroma.withUnsafeBufferPointer { chroma in
              for y in 0..<h {
                let row = s + y * stride
                let out = yp + y * w
                for x in 0..<w { out[x] = luma[Int(row[x])] }
              }
              let uv = s + stride * h
              for y in 0..<(h / 2) {
                let row = uv + y * stride
                for x in 0..<(w / 2) {
                  up[y * (w / 2) + x] = chroma[Int(row[2 * x])]
                  vp[y * (w / 2) + x] = chroma[Int(row[2 * x + 1])]
                }
              }
            }
          }
        }
      }
      return planes
    case .rgb24, .bgr24, .mjpeg, .jpeg:
      return nil
    }
  }
}

/// A picture as three planes of full-range YCbCr (JPEG's colour space): full-size luma and
/// chroma planes that may be subsampled horizontally and/or vertically by 2.
public struct YUVPlanes: Sendable {
  /// Width in pixels.
  public let width: Int
  /// Height in pixels.
  public let height: Int
  /// Width of the Cb and Cr planes (`width` or `width / 2`).
  public let chromaWidth: Int
  /// Height of the Cb and Cr planes (`height` or `height / 2`).
  public let chromaHeight: Int
  /// Luma, `width * height` bytes, no padding.
  public var y: [UInt8]
  /// Cb, `chromaWidth * chromaHeight` bytes.
  public var u: [UInt8]
  /// Cr, `chromaWidth * chromaHeight` bytes.
  public var v: [UInt8]

  /// Zero-filled planes of these sizes.
  public init(width: Int, height: Int, chromaWidth: Int, chromaHeight: Int) {
    self.width = width
    self.height = height
    self.chromaWidth = chromaWidth
    self.chromaHeight = chromaHeight
    y = [UInt8](repeating: 0, count: width * height)
    u = [UInt8](repeating: 128, count: chromaWidth * chromaHeight)
    v = [UInt8](repeating: 128, count: chromaWidth * chromaHeight)
  }

  mutating func withPlanes(
    _ body: (UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt8>)
      -> Void
  ) {
    y.withUnsafeMutableBufferPointer { yb in
      u.withUnsafeMutableBufferPointer { ub in
        v.withUnsafeMutableBufferPointer { vb in
          guard let yp = yb.baseAddress, let up = ub.baseAddress, let vp = vb.baseAddress
          else { return }
          body(yp, up, vp)
        }
      }
    }
  }

  /// The planes turned and/or mirrored, moving whole samples; a quarter turn trades the
  /// horizontal and vertical chroma subsampling (4:2:2 becomes 4:4:0).
  public func transformed(_ transform: ImageTransform) -> YUVPlanes {
    guard transform != .identity else { return self }
    let size = transform.outputSize(width: width, height: height)
    let chroma = transform.outputSize(width: chromaWidth, height: chromaHeight)
    // (4:2:0 stays 4:2:0 under any turn; other layouts trade their subsampling.)
    var out = YUVPlanes(
      width: size.width, height: size.height, chromaWidth: chroma.width,
      chromaHeight: chroma.height)
    out.y = YUVPlanes.turn(y, width: width, height: height, transform)
    out.u = YUVPlanes.turn(u, width: chromaWidth, height: chromaHeight, transform)
    out.v = YUVPlanes.turn(v, width: chromaWidth, height: chromaHeight, transform)
    return out
  }

  /// One plane turned: the destination index is linear in the source coordinates, so the
  /// loop only adds steps (as `RGBImage.transformed` does).
  static func turn(_ plane: [UInt8], width w: Int, height h: Int, _ transform: ImageTransform)
    -> [UInt8]
  {
    let ow = transform.outputSize(width: w, height: h).width
    func index(_ x: Int, _ y: Int) -> Int {
      let p = transform.map(x: x, y: y, width: w, height: h)
      return p.y * ow + p.x
    }
    let origin = index(0, 0)
    let stepX = w > 1 ? index(1, 0) - origin : 0
    let stepY = h > 1 ? index(0, 1) - origin : 0
    var out = [UInt8](repeating: 0, count: plane.count)
    plane.withUnsafeBufferPointer { src in
      out.withUnsafeMutableBufferPointer { dst in
        guard let s = src.baseAddress, let d = dst.baseAddress else { return }
        // In 32x32 tiles, so that a quarter turn's scattered writes stay within a few
        // cache lines per tile row instead of touching a new line for every pixel.
        let tile = 32
        for ty in stride(from: 0, to: h, by: tile) {
          for tx in stride(from: 0, to: w, by: tile) {
            let xEnd = min(tx + tile, w)
            for y in ty..<min(ty + tile, h) {
              var from = s + y * w + tx
              var to = d + origin + y * stepY + tx * stepX
              for _ in tx..<xEnd {
                to.pointee = from.pointee
                from += 1
                to += stepX
              }
            }
          }
        }
      }
    }
    return out
  }
}

/// BT.601 limited-range ("studio swing") YUV <-> RGB in integer arithmetic.
enum YUV {
  /// Limited-range luma (16-235) to full range (0-255).
  static let luma: [UInt8] = (0..<256).map { clamp(((($0 - 16) * 255 * 2 / 219) + 1) / 2) }
  /// Limited-range chroma (16-240 around 128) to full range (0-255 around 128).
  static let chroma: [UInt8] = (0..<256).map {
    clamp(128 + (((($0 - 128) * 255 * 2 / 224) + ($0 >= 128 ? 1 : -1)) / 2))
  }

  @inline(__always)
  static func clamp(_ v: Int) -> UInt8 { UInt8(v < 0 ? 0 : (v > 255 ? 255 : v)) }

  @inline(__always)
  static func toRGB(y: Int, u: Int, v: Int, into q: UnsafeMutablePointer<UInt8>) {
    let c = 298 * (y - 16) + 128
    let d = u - 128
    let e = v - 128
    q[0] = clamp((c + 409 * e) >> 8)
    q[1] = clamp((c - 100 * d - 208 * e) >> 8)
    q[2] = clamp((c + 516 * d) >> 8)
  }

  @inline(__always)
  static func fromRGB(_ r: Int, _ g: Int, _ b: Int) -> (y: UInt8, u: UInt8, v: UInt8) {
    (
      clamp(((66 * r + 129 * g + 25 * b + 128) >> 8) + 16),
      clamp(((-38 * r - 74 * g + 112 * b + 128) >> 8) + 128),
      clamp(((112 * r - 94 * g - 18 * b + 128) >> 8) + 128)
    )
  }
}
