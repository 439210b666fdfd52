// Buffered scan records: `Sensors.ScanLayout(channels:)` places the enabled channels the
// way the kernel does, and `ScanLayout.decode` (the single decoding entry point) reads a record.
//
// Input: byte 0 = channel count (1...8); per channel 4 bytes: scan index, flags (bit 0 big
// endian, bit 1 signed, bits 2-3 storage 8/16/32/64, bit 4 timestamp, bits 5-7 repeat), bits,
// shift; the type goes through `ScanElementType(parsing:)` as its kernel text. The rest of the
// input is the record.
//
// Invariants: elements come in scan index order with the timestamp last, each at the kernel's
// aligned offset, without overlapping, inside the record; a record shorter than `recordSize`
// decodes to nil, a full one to every channel's `repeat` values, each inside its type's range;
// and a value written into its field (with noise in the bits outside the field) decodes back.
import Sensors

/// libFuzzer's entry point: checks one input against the invariants above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzScanRecord(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = inputBytes(data, size)
  guard let first = bytes.first else { return 0 }
  let count = Int(first % 8) + 1
  guard bytes.count >= 1 + count * 4 else { return 0 }
  var channels: [ScanChannel] = []
  for c in 0..<count {
    let p = 1 + c * 4
    let flags = bytes[p + 1]
    let storage = [8, 16, 32, 64][Int(flags >> 2) & 3]
    let bits = Int(bytes[p + 2]) % storage + 1
    let shift = Int(bytes[p + 3]) % (storage - bits + 1)
    let repeatCount = [1, 1, 1, 1, 2, 3, 4, 255][Int(flags >> 5)]
    let text =
      "\(flags & 1 == 1 ? "be" : "le"):\(flags & 2 == 2 ? "s" : "u")\(bits)/\(storage)"
      + "\(repeatCount > 1 ? "X\(repeatCount)" : "")>>\(shift)"
    guard let type = try? ScanElementType(parsing: text) else {
      require(false, "the parser refuses the valid type \(text)")
      return 0
    }
    let name = flags & 16 == 16 ? ScanLayout.timestampChannel : "in_accel_\(c)"
    channels.append(ScanChannel(name: name, index: Int(bytes[p]), type: type))
  }
  let record = Array(bytes[(1 + count * 4)...])
  guard let layout = try? ScanLayout(channels: channels) else { return 0 }

  // Placement.
  require(layout.elements.count == channels.count, "lost channels")
  var end = 0
  var sawTimestamp = false
  var previousIndex = -1
  for element in layout.elements {
    let length = element.channel.type.elementBytes
    let isTimestamp = element.channel.name == ScanLayout.timestampChannel
    if isTimestamp {
      sawTimestamp = true
    } else {
      require(!sawTimestamp, "a channel after the timestamp")
      require(element.channel.index > previousIndex, "channels out of scan index order")
      previousIndex = element.channel.index
    }
    let aligned = (end + length - 1) & ~(length - 1)  // the kernel's ALIGN()
    require(
      element.offset == aligned, "\(element.channel.name) at \(element.offset), not \(aligned)")
    require(element.offset >= end, "\(element.channel.name) overlaps the previous element")
    end = element.offset + length
  }
  require(layout.recordSize >= end, "record size \(layout.recordSize) cuts the last element")

  // Decoding.
  let decoded = layout.decode(record)
  if record.count < layout.recordSize {
    require(decoded == nil, "a short record decoded")
  } else {
    guard let decoded else {
      require(false, "a full record of \(record.count) bytes did not decode")
      return 0
    }
    require(decoded.count == layout.elements.count, "decoded \(decoded.count) channels")
    for (element, item) in zip(layout.elements, decoded) {
      require(item.name == element.channel.name, "names out of order")
      require(item.values.count == element.channel.type.repeatCount, "repeat count")
      for value in item.values { require(inRange(value, element.channel.type), "\(value) range") }
    }
  }

  // Write chosen values into a record full of noise and read them back.
  var noisy = [UInt8](repeating: 0, count: layout.recordSize)
  for i in noisy.indices { noisy[i] = record.isEmpty ? 0xA5 : record[i % record.count] }
  var expected: [[Int64]] = []
  var seed = UInt64(truncatingIfNeeded: bytes.count) &* 0x9E37_79B9_7F4A_7C15
  for element in layout.elements {
    let type = element.channel.type
    var values: [Int64] = []
    for r in 0..<type.repeatCount {
      seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      let value = truncated(Int64(bitPattern: seed), type)
      write(value, type, into: &noisy, at: element.offset + r * type.storageBytes)
      values.append(value)
    }
    expected.append(values)
  }
  guard let readBack = layout.decode(noisy) else {
    require(false, "a record of exactly recordSize did not decode")
    return 0
  }
  for (item, values) in zip(readBack, expected) {
    require(item.values == values, "\(item.name): wrote \(values), read \(item.values)")
  }
  return 0
}

/// The field mask of `bits` bits.
private func mask(_ bits: Int) -> UInt64 { bits >= 64 ? ~0 : (UInt64(1) << bits) - 1 }

/// `value` as the type can hold it: masked and, for signed types, sign-extended.
private func truncated(_ value: Int64, _ type: ScanElementType) -> Int64 {
  var raw = UInt64(bitPattern: value) & mask(type.bits)
  if type.isSigned, type.bits < 64, raw & (UInt64(1) << (type.bits - 1)) != 0 {
    raw |= ~mask(type.bits)
  }
  return Int64(bitPattern: raw)
}

private func inRange(_ value: Int64, _ type: ScanElementType) -> Bool {
  guard type.bits < 64 else { return true }
  if type.isSigned {
    let bound = Int64(1) << (type.bits - 1)
    return value >= -bound && value < bound
  }
  return value >= 0 && value <= Int64(mask(type.bits))
}

/// Stores `value` in its field (shifted, in the type's byte order), keeping the other bits.
private func write(_ value: Int64, _ type: ScanElementType, into record: inout [UInt8], at: Int) {
  let n = type.storageBytes
  var stored: UInt64 = 0
  for i in 0..<n {
    let byte = UInt64(record[type.endianness == .little ? at + i : at + n - 1 - i])
    stored |= byte << (8 * UInt64(i))
  }
  let field = mask(type.bits) << UInt64(type.shift)
  stored = (stored & ~field) | ((UInt64(bitPattern: value) << UInt64(type.shift)) & field)
  for i in 0..<n {
    let byte = UInt8(truncatingIfNeeded: stored >> (8 * UInt64(i)))
    record[type.endianness == .little ? at + i : at + n - 1 - i] = byte
  }
}
