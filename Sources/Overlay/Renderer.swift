import Imaging

/// A picture with an alpha channel (8-bit RGBA, not premultiplied, top row first): what the
/// overlay is drawn into, then laid over a camera frame or handed to the preview window.
public struct RGBAImage: Equatable, Sendable {
  /// Width in pixels.
  public let width: Int
  /// Height in pixels.
  public let height: Int
  /// `width * height * 4` bytes.
  public var pixels: [UInt8]

  /// A picture filled with one colour (transparent by default).
  public init(width: Int, height: Int, fill: Colour = Colour(0, 0, 0, 0)) {
    self.width = max(0, width)
    self.height = max(0, height)
    var pixels = [UInt8](repeating: 0, count: self.width * self.height * 4)
    if fill.a != 0 || fill.r != 0 || fill.g != 0 || fill.b != 0 {
      for i in stride(from: 0, to: pixels.count, by: 4) {
        pixels[i] = fill.r
        pixels[i + 1] = fill.g
        pixels[i + 2] = fill.b
        pixels[i + 3] = fill.a
      }
    }
    self.pixels = pixels
  }

  /// The colour at (x, y).
  public subscript(x: Int, y: Int) -> Colour {
    let i = (y * width + x) * 4
    return Colour(pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3])
  }

  /// Lays `colour` over the pixel at (x, y) (Porter-Duff "over"); outside pixels are ignored.
  public mutating func blend(x: Int, y: Int, _ colour: Colour) {
    guard x >= 0, y >= 0, x < width, y < height, colour.a > 0 else { return }
    let i = (y * width + x) * 4
    if colour.a == 255 || pixels[i + 3] == 0 {
      pixels[i] = colour.r
      pixels[i + 1] = colour.g
      pixels[i + 2] = colour.b
      pixels[i + 3] = colour.a
      return
    }
    let sa = Int(colour.a)
    let da = Int(pixels[i + 3]) * (255 - sa) / 255
    let oa = sa + da
    func mix(_ s: UInt8, _ d: UInt8) -> UInt8 { UInt8((Int(s) * sa + Int(d) * da) / oa) }
    pixels[i] = mix(colour.r, pixels[i])
    pixels[i + 1] = mix(colour.g, pixels[i + 1])
    pixels[i + 2] = mix(colour.b, pixels[i + 2])
    pixels[i + 3] = UInt8(oa)
  }

  /// Lays `colour` over the rectangle [x0, x1) x [y0, y1), clipped.
  public mutating func fill(x0: Int, y0: Int, x1: Int, y1: Int, _ colour: Colour) {
    for y in max(0, y0)..<max(max(0, y0), min(height, y1)) {
      for x in max(0, x0)..<max(max(0, x0), min(width, x1)) { blend(x: x, y: y, colour) }
    }
  }

  /// The picture turned and/or mirrored (whole pixels).
  public func transformed(_ transform: ImageTransform) -> RGBAImage {
    guard transform != .identity, width > 0, height > 0 else { return self }
    let size = transform.outputSize(width: width, height: height)
    var out = RGBAImage(width: size.width, height: size.height)
    for y in 0..<height {
      for x in 0..<width {
        let p = transform.map(x: x, y: y, width: width, height: height)
        let from = (y * width + x) * 4
        let to = (p.y * size.width + p.x) * 4
        out.pixels[to] = pixels[from]
        out.pixels[to + 1] = pixels[from + 1]
        out.pixels[to + 2] = pixels[from + 2]
        out.pixels[to + 3] = pixels[from + 3]
      }
    }
    return out
  }

  /// Lays `other` over this picture with its top-left corner at (x, y), clipped.
  public mutating func draw(_ other: RGBAImage, atX x: Int, y: Int) {
    for row in 0..<other.height {
      let ty = y + row
      guard ty >= 0, ty < height else { continue }
      for col in 0..<other.width {
        let tx = x + col
        guard tx >= 0, tx < width else { continue }
        let i = (row * other.width + col) * 4
        blend(
          x: tx, y: ty,
          Colour(other.pixels[i], other.pixels[i + 1], other.pixels[i + 2], other.pixels[i + 3]))
      }
    }
  }

  /// Lays this picture over an RGB picture of the same size (for `--render` and tests).
  public func composite(onto image: inout RGBImage) {
    precondition(image.width == width && image.height == height)
    let source = pixels
    image.pixels.withUnsafeMutableBufferPointer { dst in
      source.withUnsafeBufferPointer { src in
        for p in 0..<(width * height) {
          let a = Int(src[p * 4 + 3])
          if a == 0 { continue }
          for c in 0..<3 {
            let s = Int(src[p * 4 + c])
            let d = Int(dst[p * 3 + c])
            dst[p * 3 + c] = UInt8((s * a + d * (255 - a)) / 255)
          }
        }
      }
    }
  }
}

/// What the overlay shows besides its layout: the session's current status text.
public struct OverlayState: Equatable, Sendable {
  /// The text in the status label (`nil`: the label is hidden).
  public var status: String?

  /// Creates a state.
  public init(status: String? = nil) {
    self.status = status
  }
}

/// Draws a laid-out overlay: each control upright in the user's view, turned by its rotation
/// into its box on the preview.
public enum OverlayRenderer {
  /// The whole overlay on a transparent picture of the preview's size.
  public static func render(_ layout: Layout, state: OverlayState = OverlayState()) -> RGBAImage {
    var canvas = RGBAImage(width: layout.width, height: layout.height)
    for placement in layout.placements {
      guard let upright = drawControl(placement, layout: layout, state: state) else { continue }
      let turned = upright.transformed(ImageTransform(quarterTurns: placement.rotation / 90))
      canvas.draw(turned, atX: placement.rect.x, y: placement.rect.y)
    }
    return canvas
  }

  /// One control as the user sees it (its view size, upright), or `nil` when it shows nothing
  /// (a status label with no status).
  public static func drawControl(_ placement: Placement, layout: Layout, state: OverlayState)
    -> RGBAImage?
  {
    let control = placement.control
    let w = placement.viewRect.width
    let h = placement.viewRect.height
    guard w > 0, h > 0 else { return nil }
    var text = control.text
    if control.kind == .label && control.isStatus {
      guard let status = state.status, !status.isEmpty else { return nil }
      text = status
    }
    var image = RGBAImage(width: w, height: h)
    let borderWidth = max(1, min(w, h) / 24)
    switch control.shape {
    case .rect:
      image.fill(x0: 0, y0: 0, x1: w, y1: h, control.fill)
      if let border = control.border {
        image.fill(x0: 0, y0: 0, x1: w, y1: borderWidth, border)
        image.fill(x0: 0, y0: h - borderWidth, x1: w, y1: h, border)
        image.fill(x0: 0, y0: 0, x1: borderWidth, y1: h, border)
        image.fill(x0: w - borderWidth, y0: 0, x1: w, y1: h, border)
      }
    case .circle:
      let rx = Double(w) / 2
      let ry = Double(h) / 2
      let inner = (rx - Double(borderWidth * 2), ry - Double(borderWidth * 2))
      for y in 0..<h {
        for x in 0..<w {
          let dx = Double(x) + 0.5 - rx
          let dy = Double(y) + 0.5 - ry
          guard (dx * dx) / (rx * rx) + (dy * dy) / (ry * ry) <= 1 else { continue }
          let isRing =
            control.border != nil
            && (inner.0 <= 0 || inner.1 <= 0
              || (dx * dx) / (inner.0 * inner.0) + (dy * dy) / (inner.1 * inner.1) > 1)
          image.blend(x: x, y: y, isRing ? (control.border ?? control.fill) : control.fill)
        }
      }
    case .brace:
      let t = max(2, min(w, h) / 6)
      let corner = viewAnchor(placement, layout: layout)
      let rows = corner.vertical < 0 ? (0, t) : (h - t, h)
      let columns = corner.horizontal < 0 ? (0, t) : (w - t, w)
      image.fill(x0: 0, y0: rows.0, x1: w, y1: rows.1, control.fill)
      image.fill(x0: columns.0, y0: 0, x1: columns.1, y1: h, control.fill)
    }
    if let text, !text.isEmpty {
      let padding = max(2, min(w, h) / 10)
      drawText(
        text, into: &image,
        box: Rect(
          x: padding, y: padding, width: w - 2 * padding,
          height: h - 2 * padding), colour: control.textColour)
    }
    return image
  }

  /// The anchor as the user sees it: for device-frame controls, the device corner turned into
  /// the user's view (a brace there still points into its corner).
  public static func viewAnchor(_ placement: Placement, layout: Layout) -> Control.Anchor {
    let anchor = placement.control.anchor
    guard placement.control.frame == .device else { return anchor }
    var (h, v) = (anchor.horizontal, anchor.vertical)
    // A clockwise quarter turn sends the direction (h, v) (y down) to (-v, h).
    for _ in 0..<(layout.deviceRotation / 90) { (h, v) = (-v, h) }
    return Control.Anchor.allCases.first { $0.horizontal == h && $0.vertical == v } ?? anchor
  }

  /// The text broken into lines at spaces so each fits `maxWidth` font pixels (a word longer
  /// than the line is cut).
  public static func wrap(_ text: String, maxWidth: Int) -> [Substring] {
    let perLine = max(1, (maxWidth + 1) / BitmapFont.advance)
    var lines: [Substring] = []
    for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
      var current: Substring = ""
      for word in paragraph.split(separator: " ") {
        var word = word
        while word.count > perLine {
          if !current.isEmpty {
            lines.append(current)
            current = ""
          }
          lines.append(word.prefix(perLine))
          word = word.dropFirst(perLine)
        }
        if current.isEmpty {
          current = word
        } else if current.count + 1 + word.count <= perLine {
          current = paragraph[current.startIndex..<word.endIndex]
        } else {
          lines.append(current)
          current = word
        }
      }
      lines.append(current)
    }
    return lines
  }

  /// Draws `text` centred in `box` at the largest whole-pixel scale at which it fits (wrapped
  /// at spaces); at scale 1 what does not fit is cut off.
  public static func drawText(
    _ text: String, into image: inout RGBAImage, box: Rect, colour: Colour
  ) {
    guard box.width > 0, box.height > 0 else { return }
    let maxScale = max(1, box.height / BitmapFont.lineHeight)
    var chosen = (scale: 1, lines: wrap(text, maxWidth: box.width))
    for scale in stride(from: maxScale, through: 1, by: -1) {
      let lines = wrap(text, maxWidth: box.width / scale)
      let height = (lines.count * BitmapFont.lineHeight - 2) * scale
      let widest = lines.map { BitmapFont.width(of: $0) }.max() ?? 0
      if height <= box.height && widest * scale <= box.width {
        chosen = (scale, lines)
        break
      }
    }
    let scale = chosen.scale
    let lines = chosen.lines
    let blockHeight = (lines.count * BitmapFont.lineHeight - 2) * scale
    var top = box.y + (box.height - blockHeight) / 2
    for line in lines {
      var left = box.x + (box.width - BitmapFont.width(of: line) * scale) / 2
      for c in line {
        for (row, bits) in BitmapFont.glyph(c).enumerated() {
          for col in 0..<BitmapFont.glyphWidth where bits & (16 >> UInt8(col)) != 0 {
            let x0 = left + col * scale
            let y0 = top + row * scale
            image.fill(
              x0: max(x0, box.x), y0: max(y0, box.y), x1: min(x0 + scale, box.maxX),
              y1: min(y0 + scale, box.maxY), colour)
          }
        }
        left += BitmapFont.advance * scale
      }
      top += BitmapFont.lineHeight * scale
    }
  }
}
