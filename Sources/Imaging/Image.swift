/// A picture as 8-bit RGB triplets, row after row with no padding: what TurboJPEG encodes
/// (`TJPF_RGB`) and decodes, and what the pixel-space rotations work on.
public struct RGBImage: Equatable, Sendable {
  /// Width in pixels.
  public let width: Int
  /// Height in pixels.
  public let height: Int
  /// `width * height * 3` bytes: R, G, B for each pixel, top row first.
  public var pixels: [UInt8]

  /// Wraps existing pixels; `pixels.count` must be `width * height * 3`.
  public init(width: Int, height: Int, pixels: [UInt8]) {
    precondition(width > 0 && height > 0 && pixels.count == width * height * 3)
    self.width = width
    self.height = height
    self.pixels = pixels
  }

  /// A picture filled with one colour.
  public init(width: Int, height: Int, fill: RGB = RGB(0, 0, 0)) {
    precondition(width > 0 && height > 0)
    self.width = width
    self.height = height
    var pixels = [UInt8](repeating: 0, count: width * height * 3)
    pixels.withUnsafeMutableBufferPointer { p in
      var i = 0
      while i < p.count {
        p[i] = fill.r
        p[i + 1] = fill.g
        p[i + 2] = fill.b
        i += 3
      }
    }
    self.pixels = pixels
  }

  /// The colour at (x, y).
  public subscript(x: Int, y: Int) -> RGB {
    get {
      let i = (y * width + x) * 3
      return RGB(pixels[i], pixels[i + 1], pixels[i + 2])
    }
    set {
      let i = (y * width + x) * 3
      pixels[i] = newValue.r
      pixels[i + 1] = newValue.g
      pixels[i + 2] = newValue.b
    }
  }

  /// Fills the rectangle [x0, x1) x [y0, y1), clipped to the picture.
  public mutating func fill(x0: Int, y0: Int, x1: Int, y1: Int, with colour: RGB) {
    let left = max(0, x0)
    let right = min(width, x1)
    let top = max(0, y0)
    let bottom = min(height, y1)
    guard left < right, top < bottom else { return }
    let w = width
    pixels.withUnsafeMutableBufferPointer { p in
      for y in top..<bottom {
        var i = (y * w + left) * 3
        for _ in left..<right {
          p[i] = colour.r
          p[i + 1] = colour.g
          p[i + 2] = colour.b
          i += 3
        }
      }
    }
  }

  /// The mean colour of the (2r+1)x(2r+1) square around (x, y), clipped to the picture.
  public func average(x: Int, y: Int, radius r: Int) -> RGB {
    var sum = (0, 0, 0)
    var n = 0
    for yy in max(0, y - r)...min(height - 1, y + r) {
      for xx in max(0, x - r)...min(width - 1, x + r) {
        let c = self[xx, yy]
        sum.0 += Int(c.r)
        sum.1 += Int(c.g)
        sum.2 += Int(c.b)
        n += 1
      }
    }
    guard n > 0 else { return RGB(0, 0, 0) }
    return RGB(UInt8(sum.0 / n), UInt8(sum.1 / n), UInt8(sum.2 / n))
  }

  /// The picture turned and/or mirrored, moving whole pixels (no resampling).
  public func transformed(_ transform: ImageTransform) -> RGBImage {
    if transform == .identity { return self }
    let (ow, oh) = transform.outputSize(width: width, height: height)
    // The destination index is linear in the source coordinates, so three mapped points give
    // the start and the per-column and per-row steps; the loop is then pointer arithmetic.
    func index(_ x: Int, _ y: Int) -> Int {
      let p = transform.map(x: x, y: y, width: width, height: height)
      return p.y * ow + p.x
    }
    let origin = index(0, 0)
    let stepX = width > 1 ? index(1, 0) - origin : 0
    let stepY = height > 1 ? index(0, 1) - origin : 0
    var out = [UInt8](repeating: 0, count: pixels.count)
    let (w, h) = (width, height)
    pixels.withUnsafeBufferPointer { src in
      out.withUnsafeMutableBufferPointer { dst in
        guard let s = src.baseAddress, let d = dst.baseAddress else { return }
        for y in 0..<h {
          var from = s + y * w * 3
          var to = origin + y * stepY
          for _ in 0..<w {
            let t = d + to * 3
            t[0] = from[0]
            t[1] = from[1]
            t[2] = from[2]
            from += 3
            to += stepX
          }
        }
      }
    }
    return RGBImage(width: ow, height: oh, pixels: out)
  }

  /// The part [x, x+w) x [y, y+h) of the picture.
  public func cropped(x: Int, y: Int, width w: Int, height h: Int) -> RGBImage {
    precondition(x >= 0 && y >= 0 && w > 0 && h > 0 && x + w <= width && y + h <= height)
    var out = [UInt8](repeating: 0, count: w * h * 3)
    for row in 0..<h {
      let from = ((y + row) * width + x) * 3
      out.replaceSubrange(row * w * 3..<(row + 1) * w * 3, with: pixels[from..<from + w * 3])
    }
    return RGBImage(width: w, height: h, pixels: out)
  }
}

/// An 8-bit RGB colour.
public struct RGB: Hashable, Sendable, CustomStringConvertible {
  /// Red.
  public var r: UInt8
  /// Green.
  public var g: UInt8
  /// Blue.
  public var b: UInt8

  /// Creates a colour.
  public init(_ r: UInt8, _ g: UInt8, _ b: UInt8) {
    self.r = r
    self.g = g
    self.b = b
  }

  /// `rgb(r,g,b)`.
  public var description: String { "rgb(\(r),\(g),\(b))" }

  /// Squared distance in RGB space.
  public func distanceSquared(to other: RGB) -> Int {
    let dr = Int(r) - Int(other.r)
    let dg = Int(g) - Int(other.g)
    let db = Int(b) - Int(other.b)
    return dr * dr + dg * dg + db * db
  }
}
