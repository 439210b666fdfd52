import Imaging
import JPEGKit
import TestThreads
import Testing

@Suite(.ownThreads) struct YUVEncodingTests {
  /// YCbCr planes from a YUYV frame encode to a 4:2:0 JPEG that decodes to the picture, also
  /// after turning the planes.
  @Test(arguments: [PixelFormat.yuyv, .nv12])
  func planesEncodeToThePicture(_ format: PixelFormat) throws {
    let picture = TestPattern.render(width: 640, height: 360)
    let planes = try #require(try RawFrame(packing: picture, as: format).yuvPlanes())
    let encoder = try JPEGEncoder()
    let decoder = try JPEGDecoder()
    for t in [ImageTransform.identity, ImageTransform(quarterTurns: 1), .mirror] {
      let jpeg = try encoder.encode(planes.transformed(t), quality: 90)
      let info = try decoder.header(jpeg)
      let size = t.outputSize(width: 640, height: 360)
      #expect(info == JPEGInfo(width: size.width, height: size.height, subsampling: .s420))
      let image = try decoder.decode(jpeg)
      #expect(PatternProbe.probe(image).transform == t, "\(format) \(t)")
      // Colours survive the limited-to-full range step: the red corner is red.
      let red = image.transformed(t.inverse).average(x: 20, y: 20, radius: 4)
      #expect(red.distanceSquared(to: TestPattern.Palette.red) < 20 * 20, "\(red)")
    }
  }

  @Test func oddPlaneLayoutsAreRefused() throws {
    let planes = YUVPlanes(width: 16, height: 16, chromaWidth: 5, chromaHeight: 8)
    #expect(throws: JPEGError.self) { try JPEGEncoder().encode(planes, quality: 90) }
  }
}
