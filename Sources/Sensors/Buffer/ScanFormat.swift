import OrientCore
import TextFormats

/// The layout of one buffered IIO channel, parsed from `scan_elements/<channel>_type`.
///
/// The kernel writes it as `[be|le]:[s|u]bits/storagebits[Xrepeat]>>shift`, for example
/// `le:s12/16>>4` (a 12-bit signed value stored in 16 bits, shifted left by 4) or
/// `le:s64/64>>0` for the timestamp (Documentation/ABI/testing/sysfs-bus-iio,
/// `iio_show_fixed_type` in drivers/iio/industrialio-buffer.c).
public struct ScanElementType: Equatable, Hashable, Sendable, CustomStringConvertible {
  /// Byte order of the stored value.
  public enum Endianness: String, Sendable {
    /// Little endian (`le`).
    case little = "le"
    /// Big endian (`be`).
    case big = "be"
  }

  /// Byte order.
  public var endianness: Endianness
  /// Whether the value is two's complement signed (`s`) or unsigned (`u`).
  public var isSigned: Bool
  /// Significant bits (`realbits`), 1 ... `storageBits`.
  public var bits: Int
  /// Bits each value occupies in the record: 8, 16, 32 or 64.
  public var storageBits: Int
  /// How many values of this layout follow each other (`Xrepeat`, 1 when absent).
  public var repeatCount: Int
  /// How far the value is shifted left inside its storage (`>>shift` undoes it).
  public var shift: Int

  /// The largest `Xrepeat` accepted (the kernel stores it in a `u8`).
  public static let maxRepeat = 255

  /// Bytes one value occupies: `storageBits / 8`.
  public var storageBytes: Int { storageBits / 8 }

  /// Bytes the element occupies in a record: `storageBytes * repeatCount`.
  public var elementBytes: Int { storageBytes * repeatCount }

  /// Creates a type from its parts, checked like parsed text.
  public init(
    endianness: Endianness, isSigned: Bool, bits: Int, storageBits: Int, repeatCount: Int = 1,
    shift: Int = 0
  ) throws(ScanFormatError) {
    self.endianness = endianness
    self.isSigned = isSigned
    self.bits = bits
    self.storageBits = storageBits
    self.repeatCount = repeatCount
    self.shift = shift
    try validate(input: description)
  }

  /// Parses the kernel's text; a trailing newline and surrounding blanks are allowed.
  ///
  /// - Throws: `ScanFormatError` quoting the text and saying which part is wrong. Never traps,
  ///   whatever the input (inputs longer than 64 bytes are refused before parsing).
  public init(parsing input: String) throws(ScanFormatError) {
    let text = String(input[...].trimming(Padding.whitespaceAndNUL))
    guard text.utf8.count <= 64 else {
      throw ScanFormatError(input: String(text.prefix(64)), reason: "longer than 64 bytes")
    }
    var bytes = Array(text.utf8)[...]

    func fail(_ reason: String) -> ScanFormatError {
      ScanFormatError(input: text, reason: reason)
    }
    func take(_ literal: String) -> Bool {
      let l = Array(literal.utf8)
      guard bytes.starts(with: l) else { return false }
      bytes = bytes.dropFirst(l.count)
      return true
    }
    func number(_ what: String) throws(ScanFormatError) -> Int {
      var value = 0
      var digits = 0
      while let c = bytes.first, c >= 0x30, c <= 0x39 {
        guard digits < 4 else { throw fail("\(what) has too many digits") }
        value = value * 10 + Int(c - 0x30)
        digits += 1
        bytes = bytes.dropFirst()
      }
      guard digits > 0 else { throw fail("expected a number for \(what)") }
      return value
    }

    if take("le:") {
      endianness = .little
    } else if take("be:") {
      endianness = .big
    } else {
      throw fail("must start with 'le:' or 'be:'")
    }
    if take("s") {
      isSigned = true
    } else if take("u") {
      isSigned = false
    } else {
      throw fail("sign must be 's' or 'u'")
    }
    bits = try number("bits")
    guard take("/") else { throw fail("expected '/' after the bit count") }
    storageBits = try number("storage bits")
    repeatCount = 1
    if take("X") { repeatCount = try number("repeat") }
    guard take(">>") else { throw fail("expected '>>' before the shift") }
    shift = try number("shift")
    guard bytes.isEmpty else { throw fail("unexpected text after the shift") }
    try validate(input: text)
  }

  private func validate(input: String) throws(ScanFormatError) {
    guard [8, 16, 32, 64].contains(storageBits) else {
      throw ScanFormatError(
        input: input, reason: "storage bits \(storageBits) is not 8, 16, 32 or 64")
    }
    guard bits >= 1, bits <= storageBits else {
      throw ScanFormatError(
        input: input, reason: "bits \(bits) is not between 1 and the storage size \(storageBits)")
    }
    guard shift >= 0, shift + bits <= storageBits else {
      throw ScanFormatError(
        input: input,
        reason: "shift \(shift) + bits \(bits) exceeds the storage size \(storageBits)")
    }
    guard repeatCount >= 1, repeatCount <= ScanElementType.maxRepeat else {
      throw ScanFormatError(
        input: input, reason: "repeat \(repeatCount) is not between 1 and 255")
    }
  }

  /// The kernel's text form, e.g. `le:s12/16>>4` (`X<repeat>` only when above 1).
  public var description: String {
    let r = repeatCount > 1 ? "X\(repeatCount)" : ""
    return "\(endianness.rawValue):\(isSigned ? "s" : "u")\(bits)/\(storageBits)\(r)>>\(shift)"
  }

  /// Decodes one value from its storage bytes: byte order, `>> shift`, masking to `bits`, sign
  /// extension.
  ///
  /// - Parameter bytes: exactly `storageBytes` bytes; fewer or more return `nil`.
  /// - Returns: the value; an unsigned 64-bit value above `Int64.max` keeps its bit pattern.
  public func decode(_ bytes: some Collection<UInt8>) -> Int64? {
    guard bytes.count == storageBytes else { return nil }
    var raw: UInt64 = 0
    switch endianness {
    case .big:
      for b in bytes { raw = raw << 8 | UInt64(b) }
    case .little:
      for b in bytes.reversed() { raw = raw << 8 | UInt64(b) }
    }
    raw >>= UInt64(shift)
    if bits < 64 {
      raw &= (UInt64(1) << UInt64(bits)) - 1
      if isSigned, raw & (UInt64(1) << UInt64(bits - 1)) != 0 {
        raw |= ~((UInt64(1) << UInt64(bits)) - 1)
      }
    }
    return Int64(bitPattern: raw)
  }
}

/// A scan element type that could not be parsed or used, with the text and the reason.
public struct ScanFormatError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The text (or description) that was rejected.
  public var input: String
  /// What is wrong with it.
  public var reason: String

  /// Creates an error.
  public init(input: String, reason: String) {
    self.input = input
    self.reason = reason
  }

  /// `invalid scan element type "…": reason`.
  public var description: String { "invalid scan element type \"\(input)\": \(reason)" }
}

/// One enabled channel of a buffered scan: its name, scan index and type.
public struct ScanChannel: Equatable, Sendable {
  /// The channel name without `_en`/`_type`, e.g. `in_accel_x` or `in_timestamp`.
  public var name: String
  /// `scan_elements/<name>_index`: the channel's position in the record.
  public var index: Int
  /// `scan_elements/<name>_type`.
  public var type: ScanElementType

  /// Creates a channel description.
  public init(name: String, index: Int, type: ScanElementType) {
    self.name = name
    self.index = index
    self.type = type
  }
}

/// Where each enabled channel lives in a buffered scan record, following the kernel's rules.
///
/// Enabled channels appear in increasing scan index order, the timestamp (`in_timestamp`) last
/// whatever its index. Each element starts at an offset aligned to its size
/// (`storage bytes * repeat`), and the record is padded to a multiple of the largest element
/// (`iio_compute_scan_bytes` in drivers/iio/industrialio-buffer.c; the padding exists since
/// Linux 5.4). The kernel uses `ALIGN()`, which assumes power-of-two sizes; this reproduces its
/// arithmetic exactly, so an odd-sized repeated element is placed where the kernel puts it.
public struct ScanLayout: Equatable, Sendable {
  /// One channel and its byte offset in the record.
  public struct Element: Equatable, Sendable {
    /// The channel.
    public var channel: ScanChannel
    /// Byte offset of its first value.
    public var offset: Int
  }

  /// The channels in record order.
  public var elements: [Element]
  /// Bytes per record, padding included.
  public var recordSize: Int

  /// The name of the timestamp channel (`IIO_TIMESTAMP`, `in_timestamp_*` in sysfs).
  public static let timestampChannel = "in_timestamp"

  /// The largest record accepted (the kernel's own limit is far larger, but an accelerometer
  /// record is a few dozen bytes; this bounds buffers and fuzzing).
  public static let maxRecordSize = 4096

  /// Computes the layout of `channels` (any order; duplicate indexes are refused).
  ///
  /// - Throws: `ScanFormatError` for no channels, duplicate indexes, negative indexes, or a
  ///   record larger than `maxRecordSize`.
  public init(channels: [ScanChannel]) throws(ScanFormatError) {
    // The kernel walks the scan mask in index order and appends the timestamp after it.
    let sorted =
      channels.filter { $0.name != ScanLayout.timestampChannel }.sorted { $0.index < $1.index }
      + channels.filter { $0.name == ScanLayout.timestampChannel }
    guard !sorted.isEmpty else {
      throw ScanFormatError(input: "", reason: "no enabled channels")
    }
    var offset = 0
    var largest = 0
    var elements: [Element] = []
    var previous: Int?
    for channel in sorted {
      guard channel.index >= 0 else {
        throw ScanFormatError(
          input: channel.name, reason: "negative scan index \(channel.index)")
      }
      if let previous, previous == channel.index {
        throw ScanFormatError(
          input: channel.name, reason: "scan index \(channel.index) used by two channels")
      }
      previous = channel.index
      let length = channel.type.elementBytes
      largest = max(largest, length)
      offset = ScanLayout.kernelAlign(offset, length)
      elements.append(Element(channel: channel, offset: offset))
      offset += length
      guard offset <= ScanLayout.maxRecordSize else {
        throw ScanFormatError(
          input: channel.name, reason: "record larger than \(ScanLayout.maxRecordSize) bytes")
      }
    }
    recordSize = ScanLayout.kernelAlign(offset, largest)
    self.elements = elements
  }

  /// The kernel's `ALIGN(x, a)`: `(x + a - 1) & ~(a - 1)`.
  static func kernelAlign(_ x: Int, _ a: Int) -> Int {
    guard a > 0 else { return x }
    return (x + a - 1) & ~(a - 1)
  }

  /// The element for a channel name, if enabled.
  public func element(named name: String) -> Element? {
    elements.first { $0.channel.name == name }
  }

  /// Decodes the first value of `element` from one record.
  ///
  /// - Returns: `nil` if `record` is shorter than `recordSize` (never traps).
  public func value(of element: Element, in record: UnsafeRawBufferPointer) -> Int64? {
    values(of: element, in: record)?.first
  }

  /// Decodes every repeated value of `element` from one record.
  public func values(of element: Element, in record: UnsafeRawBufferPointer) -> [Int64]? {
    guard record.count >= recordSize else { return nil }
    let type = element.channel.type
    let size = type.storageBytes
    var out: [Int64] = []
    out.reserveCapacity(type.repeatCount)
    for i in 0..<type.repeatCount {
      let start = element.offset + i * size
      guard start >= 0, start + size <= record.count,
        let value = type.decode(record[start..<(start + size)])
      else { return nil }
      out.append(value)
    }
    return out
  }

  /// Decodes every channel of one record, in record order: the single entry point for fuzzing
  /// the record decoder.
  ///
  /// - Returns: `nil` if `record` is shorter than `recordSize` (never traps).
  public func decode(_ record: [UInt8]) -> [(name: String, values: [Int64])]? {
    record.withUnsafeBytes { raw in
      var out: [(name: String, values: [Int64])] = []
      for element in elements {
        guard let values = values(of: element, in: raw) else { return nil }
        out.append((element.channel.name, values))
      }
      return out
    }
  }

  /// Decodes the first value of `element` from a record held in an array.
  public func value(of element: Element, in record: [UInt8]) -> Int64? {
    record.withUnsafeBytes { value(of: element, in: $0) }
  }
}
