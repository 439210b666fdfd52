import Capture
import Imaging
import OrientCore
import TestThreads
import Testing
import V4L2Kit

@Suite(.ownThreads) struct RotationPlanTests {
  @Test func deviceTurnedClockwiseTurnsTheCaptureClockwise() {
    #expect(RotationPlan(orientation: .leftUp).correction == ImageTransform(quarterTurns: 1))
    #expect(RotationPlan(orientation: .rightUp).correction == ImageTransform(quarterTurns: 3))
    #expect(RotationPlan(orientation: .bottomUp).correction == ImageTransform(quarterTurns: 2))
    #expect(RotationPlan(orientation: .undefined).correction == .identity)
  }

  @Test func mountingAddsAndMirrorComesLast() {
    let plan = RotationPlan(orientation: .leftUp, sensorRotation: 90, mirror: true)
    // A front camera held left-up is turned back by 270; 270 + 90 = 0, then a mirror of the
    // upright picture.
    #expect(plan.correction == .mirror)
    let rear = RotationPlan(orientation: .leftUp, sensorRotation: 270)
    #expect(rear.correction == .identity)  // 90 + 270
    let turned = RotationPlan(orientation: .leftUp, sensorRotation: 0, mirror: true)
    // Turn 270 then mirror: a point's path must equal applying the two in turn.
    let image = numbered(width: 4, height: 3)
    #expect(
      image.transformed(turned.correction)
        == image.transformed(ImageTransform(quarterTurns: 3)).transformed(.mirror))
  }

  /// A front camera, worked out from the geometry rather than from the code under test.
  ///
  /// Its sensor looks at the user, so its image x axis (the camera's own right, looking out)
  /// points at the device's left edge as the user sees it, and its image up at the device's top
  /// edge. Held left-up (turned clockwise by 90 as the user sees it), the left edge points up:
  /// the scene's up lands on the image's +x, i.e. the camera sees the scene turned clockwise
  /// by 90, where a rear camera sees it turned counter-clockwise. In general the frame is the
  /// upright picture turned clockwise by r. Made upright, the front photo is also mirrored, as
  /// the user saw it in the preview: the pattern must come out exactly mirrored, in every
  /// orientation and with the pixels turned or only tagged.
  @Test(arguments: Orientation.defined, [RotateMode.both, .exif])
  func frontCameraComesOutMirroredUpright(_ orientation: Orientation, _ mode: RotateMode) {
    let upright = TestPattern.render(width: 96, height: 64)
    let r = orientation.clockwiseRotation ?? 0
    let frontFrame = upright.transformed(ImageTransform(quarterTurns: r / 90))
    let plan = RotationPlan(orientation: orientation, mirror: true, mode: mode)
    let shown = plan.pixelTransform().then(
      plan.exifOrientation().flatMap { ImageTransform(exifOrientation: $0) } ?? .identity)
    let photo = frontFrame.transformed(shown)
    #expect(PatternProbe.probe(photo).transform == .mirror, "\(orientation) \(mode)")
    // The same frame treated as a rear camera's comes out turned (except normal, bottom-up).
    let rear = frontFrame.transformed(RotationPlan(orientation: orientation).correction)
    #expect((PatternProbe.probe(rear).transform == .identity) == (r % 180 == 0))
  }

  @Test(arguments: Orientation.defined)
  func modes(_ orientation: Orientation) {
    let t = ImageTransform(quarterTurns: (orientation.clockwiseRotation ?? 0) / 90)
    func plan(_ mode: RotateMode) -> RotationPlan {
      RotationPlan(orientation: orientation, mode: mode)
    }
    #expect(plan(.both).pixelTransform() == t)
    #expect(plan(.both).exifOrientation() == 1)
    #expect(plan(.pixels).pixelTransform() == t)
    #expect(plan(.pixels).exifOrientation() == nil)
    #expect(plan(.exif).pixelTransform() == .identity)
    #expect(plan(.exif).exifOrientation() == t.exifOrientation)
    #expect(plan(.none).pixelTransform() == .identity)
    #expect(plan(.none).exifOrientation() == nil)
  }

  /// A file already tagged "rotate 90 to view" is shown that way first: never turned twice.
  @Test func storedOrientationIsHonouredOnce() {
    let stored = ImageTransform(quarterTurns: 1)
    let both = RotationPlan(orientation: .normal, mode: .both)
    #expect(both.pixelTransform(stored: stored) == stored)
    #expect(both.exifOrientation(stored: stored) == 1)
    let exif = RotationPlan(orientation: .leftUp, mode: .exif)
    #expect(exif.exifOrientation(stored: stored) == ImageTransform(quarterTurns: 2).exifOrientation)
    #expect(RotationPlan(orientation: .leftUp, mode: .none).exifOrientation(stored: stored) == 6)
  }
}

@Suite(.ownThreads) struct OutputTemplateTests {
  // 2021-03-04 05:06:07 UTC; strftime uses local time, so tests set no zone-dependent fields
  // except through the same local conversion.
  let time: Int64 = 1_614_834_367_000_000_000

  @Test func fields() throws {
    let t = try OutputTemplate("shots/{orientation}-{n}.jpg")
    #expect(t.hasCounter)
    #expect(
      t.expand(counter: 7, orientation: .leftUp, realtimeNanoseconds: time) == "shots/left-up-7.jpg"
    )
  }

  @Test func strftimeAndEscapes() throws {
    let t = try OutputTemplate("%Y/{{x}}%%-{n}")
    let out = t.expand(counter: 2, orientation: .normal, realtimeNanoseconds: time)
    #expect(out.hasSuffix("/{x}%-2"))
    #expect(out.hasPrefix("2021/") || out.hasPrefix("2020/"))  // any time zone
    #expect(!(try OutputTemplate("plain.jpg")).hasCounter)
  }

  @Test func badTemplates() {
    for bad in ["", "a/{x}.jpg", "a{n.jpg", "a}b.jpg", "dir/"] {
      #expect(throws: CaptureError.self, "\(bad)") { try OutputTemplate(bad) }
    }
  }
}

@Suite(.ownThreads) struct WatchLineParserTests {
  @Test func latestLineWins() {
    var parser = WatchLineParser(label: "stdin")
    parser.feed(
      Array(
        """
        {"time":1.0,"orientation":"normal","rotation":0,"tilt":"vertical"}
        {"time":2.0,"orientation":"left-up","rotation":90,"tilt":"vertical"}
        {"time":3.0,"orientation":"bottom-up","rotation":180,"tilt":"vertical"}

        """.utf8))
    #expect(parser.latest?.orientation == .bottomUp)
    #expect(parser.latest?.line == 3)
    #expect(parser.warnings.isEmpty)
  }

  @Test func partialLinesWaitForTheirNewline() {
    var parser = WatchLineParser(label: "stdin")
    parser.feed(Array(#"{"orientation":"left-"#.utf8))
    #expect(parser.latest == nil)
    parser.feed(Array("up\"}\n".utf8))
    #expect(parser.latest?.orientation == .leftUp)
    parser.feed(Array(#"{"orientation":"right-up"}"#.utf8))
    parser.finish()
    #expect(parser.latest?.orientation == .rightUp)
  }

  @Test func malformedLinesAreSkippedWithAWarning() {
    var parser = WatchLineParser(label: "w.log")
    parser.feed(
      Array(
        """
        {"orientation":"left-up"}
        garbage
        {"orientation":"sideways"}
        [1,2]
        {"tilt":"vertical"}
        {"orientation":"undefined"}

        """.utf8))
    #expect(parser.latest?.orientation == .leftUp)
    #expect(parser.warnings.count == 4)
    #expect(parser.warnings[0].hasPrefix("w.log:2: not JSON"))
    #expect(parser.warnings[1].contains("unknown orientation \"sideways\""))
    #expect(parser.sawUndefined)
  }

  @Test func rotationAloneIsEnough() {
    var parser = WatchLineParser(label: "stdin")
    parser.parse(#"{"rotation":270}"#)
    #expect(parser.latest?.orientation == .rightUp)
  }
}

/// A small picture whose every pixel is different.
func numbered(width: Int, height: Int) -> RGBImage {
  var image = RGBImage(width: width, height: height)
  for y in 0..<height {
    for x in 0..<width { image[x, y] = RGB(UInt8(x), UInt8(y), 7) }
  }
  return image
}

/// Inputs fuzz/targets/watch-lines.swift found; each is also in fuzz/corpus/watch-lines.
@Suite(.ownThreads) struct WatchLineParserFuzzRegressionTests {
  /// A whole but huge "rotation" trapped converting to Int (`{"rotation":1e77}`).
  @Test(arguments: ["1e300", "-1e300", "999999999999999999999999999999506", "9.3e18", "90.5"])
  func hugeOrFractionalRotationIsSkippedWithAWarning(number: String) {
    var parser = WatchLineParser(label: "stdin")
    parser.feed(Array("{\"rotation\":\(number)}\n{\"rotation\":-90}\n".utf8))
    #expect(parser.latest?.orientation == .rightUp)
    #expect(parser.latest?.line == 2)
    #expect(parser.warnings.count == 1)
    #expect(parser.warnings.first?.hasPrefix("stdin:1: ") == true)
  }
}

@Suite(.ownThreads) struct WatchLineParserBoundsTests {
  /// A stream without newlines (the wrong file, /dev/zero) kept every byte in memory; an
  /// over-long line is now dropped as it arrives and skipped with one warning.
  @Test func overlongLinesAreDroppedWithAWarning() {
    var parser = WatchLineParser(label: "stdin")
    let chunk = [UInt8](repeating: 0x20, count: 4096)
    for _ in 0..<64 { parser.feed(chunk) }  // 256 KiB without a newline
    parser.feed(Array("\n{\"orientation\":\"left-up\"}\n".utf8))
    parser.feed([UInt8](repeating: 0x41, count: WatchLineParser.maxLineLength + 1))
    parser.finish()
    #expect(parser.lineCount == 3)
    #expect(parser.latest?.orientation == .leftUp)
    #expect(parser.latest?.line == 2)
    #expect(parser.warnings.count == 2)
    #expect(parser.warnings.first?.hasPrefix("stdin:1: line longer than") == true)
    #expect(parser.warnings.last?.hasPrefix("stdin:3: line longer than") == true)
  }

  /// A line of exactly the limit is still parsed.
  @Test func aLineAtTheLimitIsKept() {
    var parser = WatchLineParser(label: "stdin")
    let json = Array("{\"orientation\":\"right-up\"}".utf8)
    let padding = [UInt8](repeating: 0x20, count: WatchLineParser.maxLineLength - json.count)
    parser.feed(json + padding + [0x0A])
    #expect(parser.latest?.orientation == .rightUp)
    #expect(parser.warnings.isEmpty)
  }
}
