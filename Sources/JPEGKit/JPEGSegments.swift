/// The marker segments before a JPEG's image data, read and rewritten without touching the
/// compressed data (ITU T.81 B.1; EXIF 2.32 section 4.5.4 for APP1).
public enum JPEGSegments {
  /// One marker segment: `FF xx` plus, for all but SOI, a big-endian length and payload.
  public struct Segment: Equatable, Sendable {
    /// The marker byte after `FF` (`E1` for APP1, `DB` for DQT, ...).
    public var marker: UInt8
    /// Where the whole segment (from `FF`) lies in the file.
    public var range: Range<Int>
    /// Where the payload (after the length field) lies.
    public var payload: Range<Int>
  }

  /// The `Exif\0\0` header that starts an EXIF APP1 payload.
  public static let exifHeader: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]

  /// The segments from after SOI up to (not including) the first SOS.
  ///
  /// - Returns: the segments and the offset of the SOS marker.
  /// - Throws: `JPEGError` if the data does not start with SOI or a segment runs past the end.
  public static func header(_ jpeg: [UInt8]) throws(JPEGError) -> (segments: [Segment], sos: Int) {
    func fail(_ message: String) -> JPEGError {
      JPEGError(operation: "read JPEG markers", message: message)
    }
    guard jpeg.count >= 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else {
      throw fail("not a JPEG file (no SOI marker at the start)")
    }
    var segments: [Segment] = []
    var i = 2
    while true {
      guard i + 1 < jpeg.count else { throw fail("ends before the image data (no SOS marker)") }
      guard jpeg[i] == 0xFF else {
        throw fail("expected a marker at byte \(i), found 0x\(String(jpeg[i], radix: 16))")
      }
      // Any number of 0xFF fill bytes may precede a marker.
      var m = i + 1
      while m < jpeg.count && jpeg[m] == 0xFF { m += 1 }
      guard m + 2 < jpeg.count else { throw fail("ends inside a marker at byte \(i)") }
      let marker = jpeg[m]
      if marker == 0xDA { return (segments, i) }
      let length = Int(jpeg[m + 1]) << 8 | Int(jpeg[m + 2])
      guard length >= 2, m + 1 + length <= jpeg.count else {
        throw fail(
          "segment FF\(String(marker, radix: 16, uppercase: true)) at byte \(i) "
            + "runs past the end of the file")
      }
      let end = m + 1 + length
      segments.append(Segment(marker: marker, range: i..<end, payload: (m + 3)..<end))
      i = end
    }
  }

  /// Whether a segment is an EXIF APP1.
  public static func isEXIF(_ segment: Segment, in jpeg: [UInt8]) -> Bool {
    segment.marker == 0xE1 && segment.payload.count >= 6
      && Array(jpeg[segment.payload.lowerBound..<segment.payload.lowerBound + 6]) == exifHeader
  }

  /// The first EXIF APP1 payload (starting with `Exif\0\0`), if any.
  public static func exifPayload(_ jpeg: [UInt8]) -> ArraySlice<UInt8>? {
    guard let (segments, _) = try? header(jpeg) else { return nil }
    return segments.first { isEXIF($0, in: jpeg) }.map { jpeg[$0.payload] }
  }

  /// Whether the file carries Huffman tables (DHT) before its image data. Many MJPEG cameras
  /// leave them out and rely on the standard tables; such frames must be rewritten before they
  /// are stored as JPEG files.
  public static func hasHuffmanTables(_ jpeg: [UInt8]) -> Bool {
    guard let (segments, _) = try? header(jpeg) else { return false }
    return segments.contains { $0.marker == 0xC4 }
  }

  /// Whether the data ends with EOI (`FF D9`), allowing for zero padding after it as some
  /// drivers leave; a truncated file does not.
  public static func endsWithEOI(_ jpeg: [UInt8]) -> Bool {
    var end = jpeg.count
    while end > 0 && jpeg[end - 1] == 0 { end -= 1 }
    return end >= 2 && jpeg[end - 2] == 0xFF && jpeg[end - 1] == 0xD9
  }

  /// The file with every EXIF APP1 removed and `exif` (a complete APP1 segment from
  /// `EXIF.segment`) inserted right after SOI, or after a leading JFIF APP0 (where libjpeg
  /// based tools put it). Everything else, including the image data, is kept byte for byte.
  ///
  /// - Parameter exif: the new segment, or `nil` to only remove EXIF.
  /// - Throws: `JPEGError` if the marker structure is broken.
  public static func replacingEXIF(in jpeg: [UInt8], with exif: [UInt8]?) throws(JPEGError)
    -> [UInt8]
  {
    let (segments, sos) = try header(jpeg)
    var out: [UInt8] = []
    out.reserveCapacity(jpeg.count + (exif?.count ?? 0))
    out += [0xFF, 0xD8]
    var inserted = exif == nil
    for (index, segment) in segments.enumerated() {
      let isJFIF =
        segment.marker == 0xE0 && segment.payload.count >= 5
        && Array(jpeg[segment.payload.lowerBound..<segment.payload.lowerBound + 5]) == [
          0x4A, 0x46, 0x49, 0x46, 0,
        ]
      if !inserted && !(index == 0 && isJFIF), let exif {
        out += exif
        inserted = true
      }
      if isEXIF(segment, in: jpeg) { continue }
      out += jpeg[segment.range]
    }
    if !inserted, let exif { out += exif }
    out += jpeg[sos...]
    return out
  }
}
