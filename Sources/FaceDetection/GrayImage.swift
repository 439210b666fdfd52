import Imaging

/// An 8-bit grayscale picture, rows packed (`width` bytes each): what the face detector reads.
public struct GrayImage: Equatable, Sendable {
  /// Width in pixels.
  public let width: Int
  /// Height in pixels.
  public let height: Int
  /// `width * height` luma values, row by row from the top left.
  public var pixels: [UInt8]

  /// Wraps pixels; `pixels.count` must be `width * height`.
  public init(width: Int, height: Int, pixels: [UInt8]) {
    precondition(width >= 0 && height >= 0 && pixels.count == width * height)
    self.width = width
    self.height = height
    self.pixels = pixels
  }

  /// The luma of an RGB picture (ITU-R BT.601 weights, as JPEG's Y).
  public init(_ image: RGBImage) {
    var out = [UInt8](repeating: 0, count: image.width * image.height)
    image.pixels.withUnsafeBufferPointer { rgb in
      for i in 0..<out.count {
        let r = Int(rgb[3 * i])
        let g = Int(rgb[3 * i + 1])
        let b = Int(rgb[3 * i + 2])
        out[i] = UInt8((77 * r + 150 * g + 29 * b + 128) >> 8)
      }
    }
    self.init(width: image.width, height: image.height, pixels: out)
  }

  /// The luma of a raw camera frame: the Y plane of YUYV and NV12 as it is, RGB24/BGR24
  /// through `init(_: RGBImage)`.
  public init(_ frame: RawFrame) {
    if let planes = frame.yuvPlanes() {
      self.init(width: planes.width, height: planes.height, pixels: planes.y)
    } else {
      self.init(frame.rgb())
    }
  }

  /// The picture turned clockwise by `quarterTurns` (any integer).
  public func turnedClockwise(_ quarterTurns: Int) -> GrayImage {
    transformed(ImageTransform(quarterTurns: quarterTurns))
  }

  /// The picture under `transform` (a turn, then a mirror: `ImageTransform`'s meaning).
  public func transformed(_ transform: ImageTransform) -> GrayImage {
    if transform == .identity { return self }
    let size = transform.outputSize(width: width, height: height)
    var out = [UInt8](repeating: 0, count: width * height)
    pixels.withUnsafeBufferPointer { source in
      out.withUnsafeMutableBufferPointer { target in
        for y in 0..<height {
          for x in 0..<width {
            let p = transform.map(x: x, y: y, width: width, height: height)
            target[p.y * size.width + p.x] = source[y * width + x]
          }
        }
      }
    }
    return GrayImage(width: size.width, height: size.height, pixels: out)
  }

  /// The picture scaled down (averaging whole source areas) so that its longer side is at most
  /// `longestSide`; unchanged when it is already that small.
  public func fitted(longestSide: Int) -> GrayImage {
    let longest = max(width, height)
    guard longest > longestSide, longestSide > 0 else { return self }
    let newWidth = max(1, width * longestSide / longest)
    let newHeight = max(1, height * longestSide / longest)
    var out = [UInt8](repeating: 0, count: newWidth * newHeight)
    pixels.withUnsafeBufferPointer { source in
      for y in 0..<newHeight {
        let y0 = y * height / newHeight
        let y1 = max(y0 + 1, (y + 1) * height / newHeight)
        for x in 0..<newWidth {
          let x0 = x * width / newWidth
          let x1 = max(x0 + 1, (x + 1) * width / newWidth)
          var sum = 0
          for sy in y0..<y1 {
            let row = sy * width
            for sx in x0..<x1 { sum += Int(source[row + sx]) }
          }
          let count = (y1 - y0) * (x1 - x0)
          out[y * newWidth + x] = UInt8((sum + count / 2) / count)
        }
      }
    }
    return GrayImage(width: newWidth, height: newHeight, pixels: out)
  }
}
