/// The built-in test picture: its content says which way is up, so a decoded photo shows
/// whether it was turned and mirrored correctly.
///
/// Layout, in units of `c = min(width, height) / 6`, on a mid-grey background:
/// - four corner squares of side `c`: top-left red, top-right green, bottom-left blue,
///   bottom-right yellow (all eight turns and mirrors give different corner orders);
/// - the up-marker: a white square of side `c` centred on the top edge holding a black
///   triangle that points up;
/// - colour bars (white, yellow, cyan, green, magenta, red, blue) across the middle;
/// - the frame number in large digits below the bars.
///
/// `PatternProbe` recognises the picture after any of the eight transforms.
public enum TestPattern {
  /// The corner and marker colours, exactly as drawn.
  public enum Palette {
    /// Background.
    public static let grey = RGB(128, 128, 128)
    /// Top-left corner.
    public static let red = RGB(230, 20, 20)
    /// Top-right corner.
    public static let green = RGB(20, 200, 20)
    /// Bottom-left corner.
    public static let blue = RGB(20, 20, 230)
    /// Bottom-right corner.
    public static let yellow = RGB(240, 230, 20)
    /// Marker square.
    public static let white = RGB(250, 250, 250)
    /// Marker arrow.
    public static let black = RGB(10, 10, 10)
  }

  /// The unit of the layout for a picture of this size.
  public static func unit(width: Int, height: Int) -> Int { max(1, min(width, height) / 6) }

  /// Draws the pattern upright at `width`x`height` showing `frameNumber`.
  public static func render(width: Int, height: Int, frameNumber: Int = 0) -> RGBImage {
    var image = renderWithoutNumber(width: width, height: height)
    for cell in numberCells(frameNumber, width: width, height: height) {
      image.fill(x0: cell.x0, y0: cell.y0, x1: cell.x1, y1: cell.y1, with: Palette.black)
    }
    return image
  }

  /// The black cells of the frame number's digits, upright: what `render` adds to
  /// `renderWithoutNumber` (on plain background), so a source can draw a new number into a
  /// frame it keeps.
  public static func numberCells(_ number: Int, width: Int, height: Int) -> [(
    x0: Int, y0: Int, x1: Int, y1: Int
  )] {
    let c = unit(width: width, height: height)
    let text = Array(String(max(0, number)).utf8).map { Int($0) - 48 }
    let cell = max(1, (c * 3 / 4) / 5)
    let advance = cell * 4
    let top = height - c * 2
    var x = width / 2 - (text.count * advance - cell) / 2
    var cells: [(x0: Int, y0: Int, x1: Int, y1: Int)] = []
    for digit in text {
      for (row, bits) in digits[digit].enumerated() {
        for col in 0..<3 where bits & (4 >> UInt8(col)) != 0 {
          cells.append(
            (x + col * cell, top + row * cell, x + (col + 1) * cell, top + (row + 1) * cell))
        }
      }
      x += advance
    }
    return cells
  }

  /// The pattern without its frame number.
  public static func renderWithoutNumber(width: Int, height: Int) -> RGBImage {
    var image = RGBImage(width: width, height: height, fill: Palette.grey)
    let c = unit(width: width, height: height)

    // Colour bars, inset from the sides so that the edge midpoints stay background.
    let bars: [RGB] = [
      RGB(235, 235, 235), RGB(235, 235, 16), RGB(16, 235, 235), RGB(16, 235, 16),
      RGB(235, 16, 235), RGB(235, 16, 16), RGB(16, 16, 235),
    ]
    let barTop = c * 3 / 2
    let barBottom = max(barTop + 1, height - c * 5 / 2)
    let barLeft = c * 3 / 2
    let barWidth = max(1, (width - 2 * barLeft) / bars.count)
    for (i, colour) in bars.enumerated() {
      let x0 = barLeft + i * barWidth
      image.fill(x0: x0, y0: barTop, x1: x0 + barWidth, y1: barBottom, with: colour)
    }

    // The frame number goes between the bars and the bottom corners (`numberCells`).

    // Corners last so nothing overdraws them.
    image.fill(x0: 0, y0: 0, x1: c, y1: c, with: Palette.red)
    image.fill(x0: width - c, y0: 0, x1: width, y1: c, with: Palette.green)
    image.fill(x0: 0, y0: height - c, x1: c, y1: height, with: Palette.blue)
    image.fill(x0: width - c, y0: height - c, x1: width, y1: height, with: Palette.yellow)

    // The up-marker: a white square on the top edge with a black triangle pointing up.
    let mx = width / 2 - c / 2
    image.fill(x0: mx, y0: 0, x1: mx + c, y1: c, with: Palette.white)
    let apex = Double(c) * 0.08
    let base = Double(c) * 0.92
    for y in 0..<c {
      let fy = Double(y) + 0.5
      guard fy >= apex, fy <= base else { continue }
      let half = (fy - apex) / (base - apex) * Double(c) * 0.42
      let x0 = Int((Double(c) / 2 - half).rounded())
      let x1 = Int((Double(c) / 2 + half).rounded())
      image.fill(x0: mx + x0, y0: y, x1: mx + x1, y1: y + 1, with: Palette.black)
    }
    return image
  }

  /// 3x5 bitmaps of the digits 0-9, one row per 3-bit number (most significant bit left).
  static let digits: [[UInt8]] = [
    [7, 5, 5, 5, 7], [2, 6, 2, 2, 7], [7, 1, 7, 4, 7], [7, 1, 7, 1, 7], [5, 5, 7, 1, 1],
    [7, 4, 7, 1, 7], [7, 4, 7, 5, 7], [7, 1, 1, 1, 1], [7, 5, 7, 5, 7], [7, 5, 7, 1, 7],
  ]
}

/// Finds out how a picture relates to the upright `TestPattern`, by sampling its corners, the
/// up-marker and the background at the edge midpoints.
public enum PatternProbe {
  /// The named colours a sample is classified into.
  public enum Colour: String, Sendable, CaseIterable {
    /// Top-left corner colour.
    case red
    /// Top-right corner colour.
    case green
    /// Bottom-left corner colour.
    case blue
    /// Bottom-right corner colour.
    case yellow
    /// Marker square.
    case white
    /// Marker arrow.
    case black
    /// Background.
    case grey
    /// None of the above.
    case other

    var reference: RGB? {
      switch self {
      case .red: return TestPattern.Palette.red
      case .green: return TestPattern.Palette.green
      case .blue: return TestPattern.Palette.blue
      case .yellow: return TestPattern.Palette.yellow
      case .white: return TestPattern.Palette.white
      case .black: return TestPattern.Palette.black
      case .grey: return TestPattern.Palette.grey
      case .other: return nil
      }
    }

    /// The nearest named colour, or `other` if none is close (JPEG noise is allowed for).
    public static func classify(_ c: RGB) -> Colour {
      var best = Colour.other
      var bestDistance = Int.max
      for colour in allCases {
        guard let ref = colour.reference else { continue }
        let d = c.distanceSquared(to: ref)
        if d < bestDistance {
          best = colour
          bestDistance = d
        }
      }
      return bestDistance <= 60 * 60 ? best : .other
    }
  }

  /// A point of the upright pattern, as fractions of the unit `c` from an anchor, and the
  /// colour expected there.
  struct Sample {
    enum Anchor { case topLeft, topRight, bottomLeft, bottomRight, topCentre, leftMiddle }
    var anchor: Anchor
    var dx: Double
    var dy: Double
    var colour: Colour
  }

  static let samples: [Sample] = [
    Sample(anchor: .topLeft, dx: 0.5, dy: 0.5, colour: .red),
    Sample(anchor: .topRight, dx: -0.5, dy: 0.5, colour: .green),
    Sample(anchor: .bottomLeft, dx: 0.5, dy: -0.5, colour: .blue),
    Sample(anchor: .bottomRight, dx: -0.5, dy: -0.5, colour: .yellow),
    // The marker: arrow body near its top and bottom, white beside the apex.
    Sample(anchor: .topCentre, dx: 0, dy: 0.4, colour: .black),
    Sample(anchor: .topCentre, dx: 0, dy: 0.8, colour: .black),
    Sample(anchor: .topCentre, dx: -0.25, dy: 0.8, colour: .black),
    Sample(anchor: .topCentre, dx: -0.35, dy: 0.2, colour: .white),
    Sample(anchor: .topCentre, dx: 0.35, dy: 0.2, colour: .white),
    // Background where the marker would be on the other edges.
    Sample(anchor: .leftMiddle, dx: 0.5, dy: 0, colour: .grey),
  ]

  /// What the probe saw.
  public struct Result: Sendable, CustomStringConvertible {
    /// The transform that turns the upright pattern into the picture, or `nil` if none fits.
    public var transform: ImageTransform?
    /// The colours seen at the four corners of the picture (top-left, top-right, bottom-left,
    /// bottom-right), for messages.
    public var corners: [Colour]
    /// The edge of the picture the up-marker is on (`top`, `right`, `bottom`, `left`), if found.
    public var markerEdge: String?

    /// A one-line summary for test failures and `orientcam inspect`.
    public var description: String {
      let t = transform.map { "\($0)" } ?? "no match"
      let corners = corners.map(\.rawValue).joined(separator: "/")
      return "pattern transform: \(t); marker on \(markerEdge ?? "no edge"); corners \(corners)"
    }
  }

  /// Tries all eight transforms of the pattern against `image`.
  public static func probe(_ image: RGBImage) -> Result {
    let fits = ImageTransform.allCases.filter { matches(image, as: $0) }
    let (w, h) = (image.width, image.height)
    let c = TestPattern.unit(width: w, height: h)
    let r = max(0, c / 8)
    let corners = [
      (c / 2, c / 2), (w - 1 - c / 2, c / 2), (c / 2, h - 1 - c / 2),
      (w - 1 - c / 2, h - 1 - c / 2),
    ]
    .map { Colour.classify(image.average(x: $0.0, y: $0.1, radius: r)) }
    let edges: [(String, Int, Int)] = [
      ("top", w / 2, c * 4 / 10), ("right", w - 1 - c * 4 / 10, h / 2),
      ("bottom", w / 2, h - 1 - c * 4 / 10), ("left", c * 4 / 10, h / 2),
    ]
    let edge = edges.first {
      Colour.classify(image.average(x: $0.1, y: $0.2, radius: r)) == .black
    }?.0
    return Result(transform: fits.count == 1 ? fits[0] : nil, corners: corners, markerEdge: edge)
  }

  /// Whether `image` looks like the pattern after `transform`.
  public static func matches(_ image: RGBImage, as transform: ImageTransform) -> Bool {
    // The size the upright pattern had before the transform.
    let (pw, ph) = transform.inverse.outputSize(width: image.width, height: image.height)
    let c = Double(TestPattern.unit(width: pw, height: ph))
    let radius = max(0, Int(c / 25))
    for sample in samples {
      var x: Double
      var y: Double
      switch sample.anchor {
      case .topLeft: (x, y) = (0, 0)
      case .topRight: (x, y) = (Double(pw), 0)
      case .bottomLeft: (x, y) = (0, Double(ph))
      case .bottomRight: (x, y) = (Double(pw), Double(ph))
      case .topCentre: (x, y) = (Double(pw / 2), 0)
      case .leftMiddle: (x, y) = (0, Double(ph) / 2)
      }
      let px = min(pw - 1, max(0, Int(x + sample.dx * c)))
      let py = min(ph - 1, max(0, Int(y + sample.dy * c)))
      let p = transform.map(x: px, y: py, width: pw, height: ph)
      let seen = Colour.classify(image.average(x: p.x, y: p.y, radius: radius))
      if seen != sample.colour { return false }
    }
    return true
  }
}
