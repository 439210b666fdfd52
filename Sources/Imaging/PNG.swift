/// A small PNG writer (8-bit RGB or RGBA), so `orientcam layout --render` and the preview tests
/// can produce pictures a person (or an image viewer) can open without an image library.
///
/// The pixels are compressed with DEFLATE's fixed Huffman codes and a simple LZ77 match finder
/// (one candidate per 3-byte hash). That is far from optimal, but overlays and test frames are
/// mostly flat colour, which this shrinks 20-100 times. PNG (ISO/IEC 15948), zlib (RFC 1950)
/// and DEFLATE (RFC 1951) are followed exactly, so any decoder reads the files.
public enum PNG {
  /// Encodes an RGB picture.
  public static func encode(_ image: RGBImage) -> [UInt8] {
    encode(width: image.width, height: image.height, channels: 3, pixels: image.pixels)
  }

  /// Encodes `width`x`height` pixels of 3 (RGB) or 4 (RGBA) bytes each, top row first.
  public static func encode(width: Int, height: Int, channels: Int, pixels: [UInt8]) -> [UInt8] {
    precondition(channels == 3 || channels == 4)
    precondition(pixels.count == width * height * channels)
    var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    var header: [UInt8] = []
    appendBigEndian(UInt32(width), to: &header)
    appendBigEndian(UInt32(height), to: &header)
    // Bit depth, colour type (RGB or RGBA), deflate, filter method 0, no interlace.
    header += [8, channels == 4 ? 6 : 2, 0, 0, 0]
    chunk("IHDR", header, into: &out)
    // Each row gets filter type 1 (Sub: the difference to the pixel on the left), which turns
    // flat colour runs into runs of zeros.
    let stride = width * channels
    var raw = [UInt8](repeating: 0, count: height * (stride + 1))
    pixels.withUnsafeBufferPointer { src in
      raw.withUnsafeMutableBufferPointer { dst in
        for y in 0..<height {
          let row = y * (stride + 1)
          let from = y * stride
          dst[row] = 1
          for i in 0..<stride {
            let left = i >= channels ? src[from + i - channels] : 0
            dst[row + 1 + i] = src[from + i] &- left
          }
        }
      }
    }
    chunk("IDAT", zlib(raw), into: &out)
    chunk("IEND", [], into: &out)
    return out
  }

  static func appendBigEndian(_ value: UInt32, to bytes: inout [UInt8]) {
    bytes += [
      UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF),
      UInt8(value & 0xFF),
    ]
  }

  static func chunk(_ type: String, _ data: [UInt8], into out: inout [UInt8]) {
    appendBigEndian(UInt32(data.count), to: &out)
    let typeBytes = Array(type.utf8)
    out += typeBytes
    out += data
    appendBigEndian(crc32(typeBytes + data), to: &out)
  }

  static let crcTable: [UInt32] = (0..<256).map { n -> UInt32 in
    var c = UInt32(n)
    for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    return c
  }

  /// CRC-32 as PNG chunks use it (ISO 3309).
  static func crc32(_ bytes: [UInt8]) -> UInt32 {
    var c: UInt32 = 0xFFFF_FFFF
    for byte in bytes { c = crcTable[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
    return c ^ 0xFFFF_FFFF
  }

  static func adler32(_ bytes: [UInt8]) -> UInt32 {
    var a: UInt32 = 1
    var b: UInt32 = 0
    var i = 0
    while i < bytes.count {
      // 5552 bytes keep the sums below 2^32 between reductions (zlib's NMAX).
      let end = min(bytes.count, i + 5552)
      while i < end {
        a += UInt32(bytes[i])
        b += a
        i += 1
      }
      a %= 65521
      b %= 65521
    }
    return (b << 16) | a
  }

  /// A zlib stream (RFC 1950) holding one fixed-Huffman DEFLATE block.
  static func zlib(_ data: [UInt8]) -> [UInt8] {
    var out: [UInt8] = [0x78, 0x01]  // deflate, 32 KiB window, no dictionary, check bits
    var bits = BitWriter()
    Deflate.fixedBlock(data, into: &bits)
    out += bits.finish()
    appendBigEndian(adler32(data), to: &out)
    return out
  }
}

/// Writes bits least significant first, as DEFLATE packs them.
struct BitWriter {
  private(set) var bytes: [UInt8] = []
  private var buffer: UInt64 = 0
  private var count = 0

  /// Appends the low `length` bits of `value`, least significant first.
  mutating func write(_ value: UInt32, _ length: Int) {
    buffer |= UInt64(value) << UInt64(count)
    count += length
    while count >= 8 {
      bytes.append(UInt8(buffer & 0xFF))
      buffer >>= 8
      count -= 8
    }
  }

  /// Appends a Huffman code, which DEFLATE stores most significant bit first.
  mutating func writeCode(_ code: UInt32, _ length: Int) {
    var reversed: UInt32 = 0
    for i in 0..<length where code & (1 << UInt32(i)) != 0 {
      reversed |= 1 << UInt32(length - 1 - i)
    }
    write(reversed, length)
  }

  /// Pads the last byte with zeros and returns everything.
  mutating func finish() -> [UInt8] {
    if count > 0 {
      bytes.append(UInt8(buffer & 0xFF))
      buffer = 0
      count = 0
    }
    return bytes
  }
}

/// DEFLATE compression with the fixed Huffman codes (RFC 1951, 3.2.6).
enum Deflate {
  /// Length codes 257...285: base length and extra bits.
  static let lengthBase: [Int] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
    131, 163, 195, 227, 258,
  ]
  static let lengthExtra: [Int] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
  ]
  /// Distance codes 0...29: base distance and extra bits.
  static let distanceBase: [Int] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
  ]
  static let distanceExtra: [Int] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
  ]

  static func writeLiteralOrLength(_ symbol: Int, into bits: inout BitWriter) {
    switch symbol {
    case 0...143: bits.writeCode(UInt32(0x30 + symbol), 8)
    case 144...255: bits.writeCode(UInt32(0x190 + symbol - 144), 9)
    case 256...279: bits.writeCode(UInt32(symbol - 256), 7)
    default: bits.writeCode(UInt32(0xC0 + symbol - 280), 8)
    }
  }

  static func writeMatch(length: Int, distance: Int, into bits: inout BitWriter) {
    var l = lengthBase.count - 1
    while lengthBase[l] > length { l -= 1 }
    writeLiteralOrLength(257 + l, into: &bits)
    if lengthExtra[l] > 0 { bits.write(UInt32(length - lengthBase[l]), lengthExtra[l]) }
    var d = distanceBase.count - 1
    while distanceBase[d] > distance { d -= 1 }
    bits.writeCode(UInt32(d), 5)
    if distanceExtra[d] > 0 { bits.write(UInt32(distance - distanceBase[d]), distanceExtra[d]) }
  }

  /// One final block with fixed codes: greedy LZ77 over a 32 KiB window.
  static func fixedBlock(_ data: [UInt8], into bits: inout BitWriter) {
    bits.write(1, 1)  // BFINAL
    bits.write(1, 2)  // BTYPE = 01, fixed Huffman
    let hashSize = 1 << 15
    var head = [Int](repeating: -1, count: hashSize)
    let n = data.count
    data.withUnsafeBufferPointer { p in
      func hash(_ i: Int) -> Int {
        (Int(p[i]) << 10 ^ Int(p[i + 1]) << 5 ^ Int(p[i + 2])) & (hashSize - 1)
      }
      var i = 0
      while i < n {
        var bestLength = 0
        var bestDistance = 0
        if i + 2 < n {
          let h = hash(i)
          let candidate = head[h]
          head[h] = i
          if candidate >= 0 && i - candidate <= 32768 {
            let limit = min(258, n - i)
            var length = 0
            while length < limit && p[candidate + length] == p[i + length] { length += 1 }
            if length >= 3 {
              bestLength = length
              bestDistance = i - candidate
            }
          }
        }
        if bestLength >= 3 {
          writeMatch(length: bestLength, distance: bestDistance, into: &bits)
          // Index the positions inside the match sparsely (every 4th) to stay fast on long
          // flat runs while still finding later matches.
          var j = i + 1
          while j < i + bestLength && j + 2 < n {
            head[hash(j)] = j
            j += 4
          }
          i += bestLength
        } else {
          writeLiteralOrLength(Int(p[i]), into: &bits)
          i += 1
        }
      }
    }
    writeLiteralOrLength(256, into: &bits)  // end of block
  }
}
