import CExif
import Glibc

/// The EXIF fields orientcam writes and reads back.
public struct EXIFMetadata: Equatable, Sendable {
  /// Orientation (0x0112, 1...8); `nil` writes no tag (viewers then assume 1).
  public var orientation: Int?
  /// DateTimeOriginal (0x9003) as `YYYY:MM:DD HH:MM:SS`, local time.
  public var dateTimeOriginal: String?
  /// SubSecTimeOriginal (0x9291), digits of the fraction of a second, e.g. `"042"`.
  public var subSecTimeOriginal: String?
  /// OffsetTimeOriginal (0x9011): the local time's offset from UTC, `+HH:MM`.
  public var offsetTimeOriginal: String?
  /// PixelXDimension (0xA002).
  public var pixelWidth: Int?
  /// PixelYDimension (0xA003).
  public var pixelHeight: Int?
  /// Make (0x010F).
  public var make: String?
  /// Model (0x0110).
  public var model: String?
  /// Software (0x0131).
  public var software: String?

  /// Creates metadata; every field is optional.
  public init(
    orientation: Int? = nil, dateTimeOriginal: String? = nil, subSecTimeOriginal: String? = nil,
    offsetTimeOriginal: String? = nil, pixelWidth: Int? = nil, pixelHeight: Int? = nil,
    make: String? = nil, model: String? = nil, software: String? = nil
  ) {
    self.orientation = orientation
    self.dateTimeOriginal = dateTimeOriginal
    self.subSecTimeOriginal = subSecTimeOriginal
    self.offsetTimeOriginal = offsetTimeOriginal
    self.pixelWidth = pixelWidth
    self.pixelHeight = pixelHeight
    self.make = make
    self.model = model
    self.software = software
  }

  /// Fills the three date fields from a `CLOCK_REALTIME` time in nanoseconds, in the local
  /// time zone (`localtime_r(3)`; the offset comes from `tm_gmtoff`).
  public mutating func setCaptureTime(realtimeNanoseconds ns: Int64) {
    var seconds = time_t(ns / 1_000_000_000)
    let millis = Int((ns % 1_000_000_000) / 1_000_000)
    var parts = tm()
    localtime_r(&seconds, &parts)
    func pad(_ v: Int, _ width: Int) -> String {
      let s = String(v)
      return String(repeating: "0", count: max(0, width - s.count)) + s
    }
    dateTimeOriginal =
      "\(pad(Int(parts.tm_year) + 1900, 4)):\(pad(Int(parts.tm_mon) + 1, 2)):"
      + "\(pad(Int(parts.tm_mday), 2)) \(pad(Int(parts.tm_hour), 2)):"
      + "\(pad(Int(parts.tm_min), 2)):\(pad(Int(parts.tm_sec), 2))"
    subSecTimeOriginal = pad(millis, 3)
    let offset = Int(parts.tm_gmtoff)
    let sign = offset < 0 ? "-" : "+"
    offsetTimeOriginal = "\(sign)\(pad(abs(offset) / 3600, 2)):\(pad(abs(offset) % 3600 / 60, 2))"
  }
}

/// Builds and reads EXIF blocks with libexif (`exif_data_new`, `exif_data_save_data`,
/// `exif_data_new_from_data`). libexif does not write JPEG files: `JPEGSegments` places the
/// block.
public enum EXIF {
  /// A complete APP1 segment (`FF E1`, length, `Exif\0\0`, TIFF data) holding `metadata` plus
  /// the fields the EXIF specification requires (`exif_data_fix`), little-endian, ExifVersion
  /// 0232 (the version that defines OffsetTimeOriginal).
  ///
  /// - Throws: `JPEGError` if libexif fails or the block exceeds the 64 KiB segment limit.
  public static func segment(_ metadata: EXIFMetadata) throws(JPEGError) -> [UInt8] {
    guard let data = exif_data_new() else {
      throw JPEGError(operation: "build EXIF", message: "exif_data_new failed (out of memory)")
    }
    defer { exif_data_unref(data) }
    exif_data_set_option(data, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
    exif_data_set_data_type(data, EXIF_DATA_TYPE_COMPRESSED)
    exif_data_set_byte_order(data, EXIF_BYTE_ORDER_INTEL)
    exif_data_fix(data)
    let order = exif_data_get_byte_order(data)
    let ifd0 = data.pointee.ifd.0
    let exifIFD = data.pointee.ifd.2

    func set(_ content: UnsafeMutablePointer<ExifContent>?, _ tag: ExifTag, _ value: Value?) {
      guard let content else { return }
      if let old = exif_content_get_entry(content, tag) { exif_content_remove_entry(content, old) }
      guard let value else { return }
      guard let mem = exif_mem_new_default() else { return }
      defer { exif_mem_unref(mem) }
      guard let entry = exif_entry_new_mem(mem) else { return }
      defer { exif_entry_unref(entry) }
      let bytes: [UInt8]
      let format: ExifFormat
      let components: Int
      switch value {
      case .ascii(let text):
        bytes = Array(text.utf8) + [0]
        format = EXIF_FORMAT_ASCII
        components = bytes.count
      case .undefined(let raw):
        bytes = raw
        format = EXIF_FORMAT_UNDEFINED
        components = raw.count
      case .short(let v):
        var b: [UInt8] = [0, 0]
        exif_set_short(&b, order, ExifShort(truncatingIfNeeded: v))
        bytes = b
        format = EXIF_FORMAT_SHORT
        components = 1
      case .long(let v):
        var b: [UInt8] = [0, 0, 0, 0]
        exif_set_long(&b, order, ExifLong(truncatingIfNeeded: v))
        bytes = b
        format = EXIF_FORMAT_LONG
        components = 1
      }
      guard let storage = exif_mem_alloc(mem, ExifLong(bytes.count)) else { return }
      bytes.withUnsafeBytes { raw in
        if let base = raw.baseAddress { storage.copyMemory(from: base, byteCount: raw.count) }
      }
      entry.pointee.tag = tag
      entry.pointee.format = format
      entry.pointee.components = UInt(components)
      entry.pointee.data = storage.assumingMemoryBound(to: UInt8.self)
      entry.pointee.size = UInt32(bytes.count)
      exif_content_add_entry(content, entry)
    }

    set(ifd0, EXIF_TAG_ORIENTATION, metadata.orientation.map { .short($0) })
    set(ifd0, EXIF_TAG_MAKE, metadata.make.map { .ascii($0) })
    set(ifd0, EXIF_TAG_MODEL, metadata.model.map { .ascii($0) })
    set(ifd0, EXIF_TAG_SOFTWARE, metadata.software.map { .ascii($0) })
    set(ifd0, EXIF_TAG_DATE_TIME, metadata.dateTimeOriginal.map { .ascii($0) })
    set(exifIFD, EXIF_TAG_EXIF_VERSION, .undefined(Array("0232".utf8)))
    set(exifIFD, EXIF_TAG_DATE_TIME_ORIGINAL, metadata.dateTimeOriginal.map { .ascii($0) })
    set(exifIFD, EXIF_TAG_DATE_TIME_DIGITIZED, metadata.dateTimeOriginal.map { .ascii($0) })
    set(exifIFD, EXIF_TAG_SUB_SEC_TIME_ORIGINAL, metadata.subSecTimeOriginal.map { .ascii($0) })
    set(exifIFD, EXIF_TAG_OFFSET_TIME_ORIGINAL, metadata.offsetTimeOriginal.map { .ascii($0) })
    set(exifIFD, EXIF_TAG_COLOR_SPACE, .short(1))  // sRGB, as JPEG encoders assume
    set(exifIFD, EXIF_TAG_PIXEL_X_DIMENSION, metadata.pixelWidth.map { .long($0) })
    set(exifIFD, EXIF_TAG_PIXEL_Y_DIMENSION, metadata.pixelHeight.map { .long($0) })

    var buffer: UnsafeMutablePointer<UInt8>? = nil
    var size: UInt32 = 0
    exif_data_save_data(data, &buffer, &size)
    guard let buffer, size > 0 else {
      throw JPEGError(operation: "build EXIF", message: "exif_data_save_data produced nothing")
    }
    defer { free(buffer) }
    let length = Int(size) + 2
    guard length <= 0xFFFF else {
      throw JPEGError(
        operation: "build EXIF", message: "EXIF block of \(size) bytes exceeds 64 KiB")
    }
    return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)]
      + Array(UnsafeBufferPointer(start: buffer, count: Int(size)))
  }

  /// The EXIF fields of a JPEG file, or `nil` if it has no readable EXIF APP1.
  public static func read(fromJPEG jpeg: [UInt8]) -> EXIFMetadata? {
    guard let payload = JPEGSegments.exifPayload(jpeg) else { return nil }
    return read(payload: Array(payload))
  }

  /// The fields of an APP1 payload starting with `Exif\0\0`.
  public static func read(payload: [UInt8]) -> EXIFMetadata? {
    let loaded = payload.withUnsafeBufferPointer { p in
      exif_data_new_from_data(p.baseAddress, UInt32(p.count))
    }
    guard let data = loaded else { return nil }
    defer { exif_data_unref(data) }
    let order = exif_data_get_byte_order(data)
    let contents = [data.pointee.ifd.0, data.pointee.ifd.2]

    func entry(_ tag: ExifTag) -> UnsafeMutablePointer<ExifEntry>? {
      for content in contents {
        if let content, let e = exif_content_get_entry(content, tag) { return e }
      }
      return nil
    }
    func integer(_ tag: ExifTag) -> Int? {
      guard let e = entry(tag), let bytes = e.pointee.data else { return nil }
      switch e.pointee.format {
      case EXIF_FORMAT_SHORT where e.pointee.size >= 2: return Int(exif_get_short(bytes, order))
      case EXIF_FORMAT_LONG where e.pointee.size >= 4: return Int(exif_get_long(bytes, order))
      default: return nil
      }
    }
    func text(_ tag: ExifTag) -> String? {
      guard let e = entry(tag), let bytes = e.pointee.data, e.pointee.format == EXIF_FORMAT_ASCII
      else { return nil }
      let raw = UnsafeBufferPointer(start: bytes, count: Int(e.pointee.size))
      return String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
    return EXIFMetadata(
      orientation: integer(EXIF_TAG_ORIENTATION),
      dateTimeOriginal: text(EXIF_TAG_DATE_TIME_ORIGINAL),
      subSecTimeOriginal: text(EXIF_TAG_SUB_SEC_TIME_ORIGINAL),
      offsetTimeOriginal: text(EXIF_TAG_OFFSET_TIME_ORIGINAL),
      pixelWidth: integer(EXIF_TAG_PIXEL_X_DIMENSION),
      pixelHeight: integer(EXIF_TAG_PIXEL_Y_DIMENSION),
      make: text(EXIF_TAG_MAKE), model: text(EXIF_TAG_MODEL), software: text(EXIF_TAG_SOFTWARE))
  }

  private enum Value {
    case ascii(String)
    case undefined([UInt8])
    case short(Int)
    case long(Int)
  }
}
