import Imaging
import JPEGKit
import TestSupport
import TestThreads
import Testing

func patternJPEG(
  width: Int, height: Int, subsampling: ChromaSubsampling = .s420, quality: Int = 90
) throws -> [UInt8] {
  try JPEGEncoder().encode(
    TestPattern.render(width: width, height: height), quality: quality, subsampling: subsampling)
}

@Suite(.ownThreads) struct TurboJPEGTests {
  @Test func encodeDecodeKeepsSizeAndPattern() throws {
    let jpeg = try patternJPEG(width: 640, height: 480)
    let decoder = try JPEGDecoder()
    let info = try decoder.header(jpeg)
    #expect(info == JPEGInfo(width: 640, height: 480, subsampling: .s420))
    let image = try decoder.decode(jpeg)
    #expect(PatternProbe.probe(image).transform == .identity)
  }

  @Test(arguments: ImageTransform.allCases)
  func losslessTransformsMoveThePattern(_ t: ImageTransform) throws {
    let jpeg = try patternJPEG(width: 640, height: 480)
    let out = try LosslessJPEG.transform(jpeg, t, edges: .exact)
    let image = try JPEGDecoder().decode(out)
    #expect((image.width, image.height) == t.outputSize(width: 640, height: 480))
    #expect(PatternProbe.probe(image).transform == t)
  }

  /// `isExact` must agree with what TurboJPEG's TJXOPT_PERFECT accepts.
  @Test(arguments: ImageTransform.allCases)
  func exactnessPredictionMatchesTurboJPEG(_ t: ImageTransform) throws {
    for (w, h, s) in [
      (1922, 1082, ChromaSubsampling.s420), (1920, 1080, .s420), (1922, 1080, .s444),
      (648, 488, .s422),
    ] {
      let jpeg = try patternJPEG(width: w, height: h, subsampling: s)
      let predicted = LosslessJPEG.isExact(t, width: w, height: h, subsampling: s)
      let worked = (try? LosslessJPEG.transform(jpeg, t, edges: .exact)) != nil
      #expect(predicted == worked, "\(t) at \(w)x\(h) \(s)")
    }
  }

  @Test(arguments: ImageTransform.allCases)
  func trimmingGivesThePredictedSize(_ t: ImageTransform) throws {
    let jpeg = try patternJPEG(width: 1922, height: 1082)
    let out = try LosslessJPEG.transform(jpeg, t, edges: .trim)
    let info = try JPEGDecoder().header(out)
    let expected = LosslessJPEG.trimmedSize(t, width: 1922, height: 1082, subsampling: .s420)
    #expect((info.width, info.height) == expected)
    #expect(PatternProbe.probe(try JPEGDecoder().decode(out)).transform == t)
  }

  @Test func damagedDataIsAnError() throws {
    let jpeg = try patternJPEG(width: 320, height: 240)
    let truncated = Array(jpeg.prefix(jpeg.count / 2))
    #expect(throws: JPEGError.self) { try JPEGDecoder().decode(truncated) }
    #expect(throws: JPEGError.self) {
      try LosslessJPEG.transform(truncated, ImageTransform(quarterTurns: 1), edges: .exact)
    }
    #expect(throws: JPEGError.self) { try JPEGDecoder().header(Array("not a jpeg".utf8)) }
    #expect(!JPEGSegments.endsWithEOI(truncated))
    #expect(JPEGSegments.endsWithEOI(jpeg + [0, 0]))
  }
}

@Suite(.ownThreads) struct EXIFTests {
  static let sample = EXIFMetadata(
    orientation: 6, dateTimeOriginal: "2024:05:06 07:08:09", subSecTimeOriginal: "042",
    offsetTimeOriginal: "+02:00", pixelWidth: 720, pixelHeight: 1280, make: "Acme",
    model: "Front Camera: Acme", software: "orientcam test")

  @Test func buildAndReadBack() throws {
    let jpeg = try patternJPEG(width: 320, height: 240)
    let tagged = try JPEGSegments.replacingEXIF(in: jpeg, with: try EXIF.segment(Self.sample))
    #expect(EXIF.read(fromJPEG: tagged) == Self.sample)
    // Still the same picture.
    #expect(try JPEGDecoder().decode(tagged) == (try JPEGDecoder().decode(jpeg)))
  }

  @Test func noOrientationTagWhenNil() throws {
    var metadata = Self.sample
    metadata.orientation = nil
    let jpeg = try JPEGSegments.replacingEXIF(
      in: try patternJPEG(width: 64, height: 48), with: try EXIF.segment(metadata))
    #expect(EXIF.read(fromJPEG: jpeg)?.orientation == nil)
    #expect(EXIF.read(fromJPEG: jpeg)?.make == "Acme")
  }

  @Test func segmentGoesAfterJFIFAndReplacesTheOldOne() throws {
    let jpeg = try patternJPEG(width: 64, height: 48)
    let once = try JPEGSegments.replacingEXIF(in: jpeg, with: try EXIF.segment(Self.sample))
    var second = Self.sample
    second.orientation = 3
    let twice = try JPEGSegments.replacingEXIF(in: once, with: try EXIF.segment(second))
    let (segments, _) = try JPEGSegments.header(twice)
    #expect(segments.first?.marker == 0xE0)  // JFIF first, as TurboJPEG wrote it
    #expect(segments.filter { JPEGSegments.isEXIF($0, in: twice) }.count == 1)
    #expect(JPEGSegments.isEXIF(segments[1], in: twice))
    #expect(EXIF.read(fromJPEG: twice)?.orientation == 3)
  }

  @Test func captureTimeFields() {
    var metadata = EXIFMetadata()
    // 2021-03-04 05:06:07.089 UTC; the local zone of the test machine may differ, so check
    // the shape and the sub-seconds only.
    metadata.setCaptureTime(realtimeNanoseconds: 1_614_834_367_089_000_000)
    #expect(metadata.subSecTimeOriginal == "089")
    #expect(metadata.dateTimeOriginal?.count == 19)
    let offset = metadata.offsetTimeOriginal ?? ""
    #expect(offset.count == 6 && (offset.hasPrefix("+") || offset.hasPrefix("-")))
  }

  /// An outside reader agrees: exiftran (libexif-based, but its own program) dumps the tags.
  @Test func exiftranReadsTheTags() throws {
    let dir = try TemporaryDirectory("exif")
    let jpeg = try JPEGSegments.replacingEXIF(
      in: try patternJPEG(width: 64, height: 48), with: try EXIF.segment(Self.sample))
    try writeFile(dir.file("a.jpg"), jpeg)
    let result = try ChildProcess.run(
      ["exiftran", "-d", dir.file("a.jpg")], outputDirectory: dir.path)
    #expect(result.status == 0)
    #expect(result.stdout.contains("Right-top"))  // Orientation 6
    #expect(result.stdout.contains("Front Camera: Acme"))
    #expect(result.stdout.contains("+02:00"))
    #expect(result.stdout.contains("2024:05:06 07:08:09"))
  }
}

@Suite(.ownThreads) struct HuffmanTableTests {
  /// MJPEG cameras often omit DHT; an identity transform writes the standard tables back.
  @Test func framesWithoutTablesAreCompleted() throws {
    let jpeg = try patternJPEG(width: 320, height: 240)
    let (segments, _) = try JPEGSegments.header(jpeg)
    var stripped = jpeg
    for segment in segments.reversed() where segment.marker == 0xC4 {
      stripped.removeSubrange(segment.range)
    }
    #expect(JPEGSegments.hasHuffmanTables(jpeg))
    #expect(!JPEGSegments.hasHuffmanTables(stripped))
    let fixed = try LosslessJPEG.transform(stripped, .identity, edges: .exact)
    #expect(JPEGSegments.hasHuffmanTables(fixed))
    #expect(PatternProbe.probe(try JPEGDecoder().decode(fixed)).transform == .identity)
  }
}

/// Inputs fuzz/targets/jpeg-file.swift found; each is also in fuzz/corpus/jpeg-file.
@Suite(.ownThreads) struct JPEGFuzzRegressionTests {
  /// The same file with the frame header (SOFn) claiming `width` x `height`.
  func claiming(width: Int, height: Int, in jpeg: [UInt8]) throws -> [UInt8] {
    let (segments, _) = try JPEGSegments.header(jpeg)
    let sof = try #require(segments.first { (0xC0...0xC2).contains($0.marker) })
    var patched = jpeg
    let p = sof.payload.lowerBound  // precision, height (2 bytes), width (2 bytes)
    patched[p + 1] = UInt8(height >> 8)
    patched[p + 2] = UInt8(height & 0xFF)
    patched[p + 3] = UInt8(width >> 8)
    patched[p + 4] = UInt8(width & 0xFF)
    return patched
  }

  /// A 223-byte file claiming 63747x65289 pixels made `decode` allocate 12.5 GB before
  /// TurboJPEG looked at the data (orientcam died re-encoding it); it is refused now, as is a
  /// lossless turn of it, before anything is allocated.
  @Test func hugeClaimedSizeIsRefusedBeforeAllocating() throws {
    let jpeg = try claiming(width: 63747, height: 65289, in: try patternJPEG(width: 32, height: 16))
    #expect(try JPEGDecoder().header(jpeg).width == 63747)
    #expect {
      _ = try JPEGDecoder().decode(jpeg)
    } throws: { error in
      (error as? JPEGError)?.message.contains("63747x65289 pixels, more than") == true
    }
    #expect(throws: JPEGError.self) {
      try LosslessJPEG.transform(jpeg, ImageTransform(quarterTurns: 1), edges: .trim)
    }
  }

  /// A tables-only stream (SOI, DQT, EOI: the "abbreviated" form MJPEG streams use for their
  /// tables) passes `tjDecompressHeader3` with a size of 0x0; decoding and turning it are refused
  /// with that reason rather than left to whatever libjpeg makes of it.
  @Test func tablesOnlyStreamIsRefused() throws {
    let jpeg = try patternJPEG(width: 32, height: 16)
    let (segments, _) = try JPEGSegments.header(jpeg)
    let dqt = try #require(segments.first { $0.marker == 0xDB })
    let tablesOnly = [0xFF, 0xD8] + Array(jpeg[dqt.range]) + [0xFF, 0xD9]
    #expect(try JPEGDecoder().header(tablesOnly) == JPEGInfo(width: 0, height: 0, subsampling: nil))
    #expect {
      _ = try JPEGDecoder().decode(tablesOnly)
    } throws: { error in
      (error as? JPEGError)?.message.contains("no picture size") == true
    }
    #expect {
      _ = try LosslessJPEG.transform(tablesOnly, .identity, edges: .exact)
    } throws: { error in
      (error as? JPEGError)?.message.contains("no picture size") == true
    }
  }

  /// The limit itself still lets a real picture through.
  @Test func picturesUpToTheLimitStillWork() throws {
    let jpeg = try patternJPEG(width: 64, height: 48)
    #expect(try JPEGDecoder().decode(jpeg).width == 64)
    #expect(JPEGLimits.maxPixels >= 16384 * 16384)
  }
}
