import Imaging
import Testing

@Suite struct YUVPlaneTests {
  /// A rectangle painted into a packed frame shows up, in that colour, when the frame is read
  /// back; pixels outside keep theirs.
  @Test(arguments: [PixelFormat.yuyv, .nv12, .rgb24, .bgr24])
  func fillPaintsTheRectangle(_ format: PixelFormat) throws {
    var frame = try RawFrame(
      packing: RGBImage(width: 64, height: 48, fill: RGB(128, 128, 128)), as: format)
    frame.fill(x0: 10, y0: 8, x1: 30, y1: 20, with: RGB(10, 10, 10))
    frame.fill(x0: -5, y0: 40, x1: 4, y1: 60, with: RGB(250, 250, 250))
    let rgb = frame.rgb()
    for (x, y, want) in [
      (10, 8, RGB(10, 10, 10)), (29, 19, RGB(10, 10, 10)), (20, 14, RGB(10, 10, 10)),
      (30, 14, RGB(128, 128, 128)), (9, 8, RGB(128, 128, 128)), (0, 47, RGB(250, 250, 250)),
      (4, 47, RGB(128, 128, 128)),
    ] {
      #expect(rgb[x, y].distanceSquared(to: want) <= 12, "\(format) \(x),\(y): \(rgb[x, y])")
    }
  }

  /// The planes of YUYV and NV12 frames are 4:2:0 in JPEG's full range: a colour comes out as
  /// the YCbCr a JPEG encoder would make of the same RGB (within rounding).
  @Test(arguments: [PixelFormat.yuyv, .nv12])
  func planesAreFullRange420(_ format: PixelFormat) throws {
    for colour in [RGB(0, 0, 0), RGB(255, 255, 255), RGB(230, 20, 20), RGB(20, 20, 230)] {
      let frame = try RawFrame(packing: RGBImage(width: 8, height: 6, fill: colour), as: format)
      let planes = try #require(frame.yuvPlanes())
      #expect(planes.chromaWidth == 4 && planes.chromaHeight == 3)
      let (r, g, b) = (Double(colour.r), Double(colour.g), Double(colour.b))
      let y = 0.299 * r + 0.587 * g + 0.114 * b
      let cb = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b
      let cr = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b
      #expect(abs(Double(planes.y[0]) - y) <= 3, "\(colour): Y \(planes.y[0]) vs \(y)")
      #expect(abs(Double(planes.u[0]) - cb) <= 3, "\(colour): Cb \(planes.u[0]) vs \(cb)")
      #expect(abs(Double(planes.v[0]) - cr) <= 3, "\(colour): Cr \(planes.v[0]) vs \(cr)")
    }
    let rgb = try RawFrame(packing: RGBImage(width: 4, height: 4), as: .rgb24)
    #expect(rgb.yuvPlanes() == nil)
  }

  /// Odd heights keep their last luma row; its chroma comes from that row alone.
  @Test func oddHeightYUYV() throws {
    var image = RGBImage(width: 6, height: 5, fill: RGB(128, 128, 128))
    image.fill(x0: 0, y0: 4, x1: 6, y1: 5, with: RGB(250, 250, 250))
    let planes = try #require(try RawFrame(packing: image, as: .yuyv).yuvPlanes())
    #expect(planes.chromaHeight == 3)
    #expect(planes.y.count == 30 && planes.y[4 * 6] > 240 && planes.y[3 * 6] < 140)
  }

  /// Turning the planes moves every sample as turning the picture moves its pixels.
  @Test func planesTurnLikePictures() throws {
    var planes = YUVPlanes(width: 6, height: 4, chromaWidth: 3, chromaHeight: 2)
    for i in planes.y.indices { planes.y[i] = UInt8(i) }
    for i in planes.u.indices {
      planes.u[i] = UInt8(100 + i)
      planes.v[i] = UInt8(200 + i)
    }
    for t in ImageTransform.allCases {
      let turned = planes.transformed(t)
      let size = t.outputSize(width: 6, height: 4)
      #expect(turned.width == size.width && turned.height == size.height)
      let chroma = t.outputSize(width: 3, height: 2)
      #expect(turned.chromaWidth == chroma.width && turned.chromaHeight == chroma.height)
      for y in 0..<4 {
        for x in 0..<6 {
          let p = t.map(x: x, y: y, width: 6, height: 4)
          #expect(turned.y[p.y * size.width + p.x] == planes.y[y * 6 + x], "\(t)")
        }
      }
      for y in 0..<2 {
        for x in 0..<3 {
          let p = t.map(x: x, y: y, width: 3, height: 2)
          #expect(turned.u[p.y * chroma.width + p.x] == planes.u[y * 3 + x], "\(t)")
          #expect(turned.v[p.y * chroma.width + p.x] == planes.v[y * 3 + x], "\(t)")
        }
      }
    }
  }

  /// Larger than one 32x32 tile, so the tiled turn crosses tile edges in both directions.
  @Test func tiledTurnMatchesPixelTurn() {
    var planes = YUVPlanes(width: 70, height: 45, chromaWidth: 35, chromaHeight: 23)
    for i in planes.y.indices { planes.y[i] = UInt8(truncatingIfNeeded: i * 7) }
    let t = ImageTransform(quarterTurns: 1)
    let turned = planes.transformed(t)
    var same = true
    for y in 0..<45 {
      for x in 0..<70 {
        let p = t.map(x: x, y: y, width: 70, height: 45)
        if turned.y[p.y * 45 + p.x] != planes.y[y * 70 + x] { same = false }
      }
    }
    #expect(same)
  }

  /// The pattern without its number plus the number's cells is the pattern.
  @Test func numberCellsCompleteThePattern() {
    var image = TestPattern.renderWithoutNumber(width: 320, height: 240)
    let cells = TestPattern.numberCells(1234, width: 320, height: 240)
    #expect(!cells.isEmpty)
    for c in cells {
      image.fill(x0: c.x0, y0: c.y0, x1: c.x1, y1: c.y1, with: TestPattern.Palette.black)
    }
    #expect(image == TestPattern.render(width: 320, height: 240, frameNumber: 1234))
  }
}
