import Imaging
import Testing

/// A small picture whose every pixel is different, to follow pixels through transforms.
func numbered(width: Int, height: Int) -> RGBImage {
  var image = RGBImage(width: width, height: height)
  for y in 0..<height {
    for x in 0..<width { image[x, y] = RGB(UInt8(x), UInt8(y), 7) }
  }
  return image
}

@Suite struct ImageTransformTests {
  @Test func exifValuesRoundTripAndAreDistinct() {
    let values = ImageTransform.allCases.map(\.exifOrientation)
    #expect(Set(values) == Set(1...8))
    for t in ImageTransform.allCases {
      #expect(ImageTransform(exifOrientation: t.exifOrientation) == t)
    }
    #expect(ImageTransform(exifOrientation: 0) == nil)
    #expect(ImageTransform(exifOrientation: 9) == nil)
  }

  /// EXIF 2.32 defines each value by where the stored 0th row and column go when displayed.
  @Test func exifValuesMeanWhatTheSpecificationSays() {
    // 3x2 picture; where does the stored top-left pixel end up when displayed?
    let cases: [(Int, (Int, Int))] = [
      (1, (0, 0)), (2, (2, 0)), (3, (2, 1)), (4, (0, 1)),
      (5, (0, 0)), (6, (1, 0)), (7, (1, 2)), (8, (0, 2)),
    ]
    for (value, expected) in cases {
      let t = ImageTransform(exifOrientation: value)
      let p = t.map { $0.map(x: 0, y: 0, width: 3, height: 2) }
      #expect(p.map { [$0.x, $0.y] } == [expected.0, expected.1], "EXIF \(value)")
    }
  }

  @Test func rotationDirectionIsClockwise() {
    // Clockwise 90: the top-left corner goes to the top-right.
    let t = ImageTransform(quarterTurns: 1)
    #expect(t.map(x: 0, y: 0, width: 4, height: 3) == (2, 0))
    #expect(t.outputSize(width: 4, height: 3) == (3, 4))
    #expect(ImageTransform(clockwiseDegrees: -90) == ImageTransform(quarterTurns: 3))
    #expect(ImageTransform(clockwiseDegrees: 45) == nil)
  }

  @Test(arguments: ImageTransform.allCases)
  func inverseUndoes(_ t: ImageTransform) {
    #expect(t.then(t.inverse) == .identity)
    #expect(t.inverse.then(t) == .identity)
  }

  @Test(arguments: ImageTransform.allCases)
  func composingMatchesApplyingInTurn(_ first: ImageTransform) {
    let image = numbered(width: 5, height: 3)
    for second in ImageTransform.allCases {
      let stepwise = image.transformed(first).transformed(second)
      #expect(image.transformed(first.then(second)) == stepwise, "\(first) then \(second)")
    }
  }

  @Test(arguments: ImageTransform.allCases)
  func transformedMovesEveryPixelWhereMapSays(_ t: ImageTransform) {
    let image = numbered(width: 5, height: 3)
    let out = image.transformed(t)
    #expect((out.width, out.height) == t.outputSize(width: 5, height: 3))
    for y in 0..<3 {
      for x in 0..<5 {
        let p = t.map(x: x, y: y, width: 5, height: 3)
        #expect(out[p.x, p.y] == image[x, y])
      }
    }
  }
}

@Suite struct PixelFormatTests {
  @Test func fourCCSpellings() {
    #expect(PixelFormat.mjpeg.fourCC.description == "MJPG")
    #expect(PixelFormat.yuyv.fourCC == FourCC("YUYV"))
    #expect(PixelFormat.nv12.fourCC == FourCC("NV12"))
    #expect(PixelFormat.rgb24.fourCC == FourCC("RGB3"))
    #expect(PixelFormat(fourCC: FourCC("H264") ?? FourCC(rawValue: 0)) == nil)
    #expect(FourCC("toolong") == nil)
  }

  @Test(arguments: [PixelFormat.yuyv, .nv12, .rgb24, .bgr24])
  func packingAndUnpackingKeepsColours(_ format: PixelFormat) throws {
    let image = TestPattern.render(width: 96, height: 64)
    let raw = try RawFrame(packing: image, as: format)
    let back = raw.rgb()
    #expect(back.width == 96 && back.height == 64)
    // Chroma subsampling blurs edges; flat areas come back within rounding.
    let c = TestPattern.unit(width: 96, height: 64)
    for (x, y) in [(c / 2, c / 2), (95 - c / 2, c / 2), (48, 32), (c / 2, 63 - c / 2)] {
      #expect(back[x, y].distanceSquared(to: image[x, y]) < 6 * 6 * 3, "\(format) at \(x),\(y)")
    }
    if format == .rgb24 || format == .bgr24 { #expect(back == image) }
  }

  @Test func bgrSwapsChannels() throws {
    let image = RGBImage(width: 2, height: 1, fill: RGB(1, 2, 3))
    let raw = try RawFrame(packing: image, as: .bgr24)
    #expect(Array(raw.bytes.prefix(3)) == [3, 2, 1])
  }

  @Test func rowPaddingIsSkipped() throws {
    // A 2x2 YUYV frame with 8 bytes of padding per row, as drivers may deliver.
    let row: [UInt8] = [235, 128, 235, 128] + [UInt8](repeating: 0x55, count: 8)
    let frame = try RawFrame(format: .yuyv, width: 2, height: 2, bytesPerLine: 12, bytes: row + row)
    let rgb = frame.rgb()
    #expect(rgb[1, 1].distanceSquared(to: RGB(255, 255, 255)) < 9)
  }

  @Test func impossibleFramesAreRejected() {
    #expect(throws: FrameFormatError.self) {
      try RawFrame(format: .yuyv, width: 3, height: 2, bytes: [UInt8](repeating: 0, count: 12))
    }
    #expect(throws: FrameFormatError.self) {
      try RawFrame(format: .nv12, width: 4, height: 4, bytes: [UInt8](repeating: 0, count: 10))
    }
    #expect(throws: FrameFormatError.self) {
      try RawFrame(
        format: .rgb24, width: 4, height: 4, bytesPerLine: 5,
        bytes: [UInt8](repeating: 0, count: 100))
    }
    #expect(throws: FrameFormatError.self) {
      try RawFrame(format: .mjpeg, width: 4, height: 4, bytes: [0xFF, 0xD8])
    }
  }
}

@Suite struct TestPatternTests {
  static let sizes = [(1280, 720), (720, 1280), (1922, 1082), (96, 64), (641, 481)]

  @Test(arguments: ImageTransform.allCases)
  func probeRecognisesEveryTransform(_ t: ImageTransform) {
    for (w, h) in Self.sizes {
      let image = TestPattern.render(width: w, height: h, frameNumber: 12).transformed(t)
      let result = PatternProbe.probe(image)
      #expect(result.transform == t, "\(w)x\(h): \(result)")
    }
  }

  @Test func markerIsAtTheTopOnlyWhenUpright() {
    let upright = TestPattern.render(width: 640, height: 480)
    #expect(PatternProbe.probe(upright).markerEdge == "top")
    let turned = upright.transformed(ImageTransform(quarterTurns: 1))
    #expect(PatternProbe.probe(turned).markerEdge == "right")
  }

  @Test func somethingElseIsNotThePattern() {
    let grey = RGBImage(width: 320, height: 240, fill: RGB(128, 128, 128))
    #expect(PatternProbe.probe(grey).transform == nil)
  }

  @Test func frameNumbersDiffer() {
    let a = TestPattern.render(width: 320, height: 240, frameNumber: 1)
    let b = TestPattern.render(width: 320, height: 240, frameNumber: 2)
    #expect(a != b)
  }
}
