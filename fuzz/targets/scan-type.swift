// Scan element types as the kernel writes them in `scan_elements/*_type`
// (`le:s12/16>>4`, `be:u16/16X3>>0`): `Sensors.ScanElementType(parsing:)` and `decode`.
//
// Invariants: an accepted type is one the kernel can describe (storage 8/16/32/64, 1 <= bits
// <= storage, shift + bits <= storage, repeat 1...255); its text re-parses to the same type and
// is a fixed point; decoding any storage-sized bytes yields a value inside the type's range
// (the bytes after the first line of the input are decoded), and a wrong byte count yields nil.
import Sensors

/// libFuzzer's entry point: checks one input against the invariants above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzScanType(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = inputBytes(data, size)
  let split = bytes.firstIndex(of: 0x0A) ?? bytes.count
  let text = String(decoding: bytes[..<split], as: UTF8.self)
  let payload = Array(bytes[min(split + 1, bytes.count)...])
  let type: ScanElementType
  do {
    type = try ScanElementType(parsing: text)
  } catch {
    require(!error.reason.isEmpty && error.input.utf8.count <= 256, "odd error \(error)")
    return 0
  }
  require([8, 16, 32, 64].contains(type.storageBits), "storage \(type.storageBits) accepted")
  require(type.bits >= 1 && type.bits <= type.storageBits, "bits \(type.bits) accepted")
  require(type.shift >= 0 && type.shift + type.bits <= type.storageBits, "shift \(type.shift)")
  require((1...255).contains(type.repeatCount), "repeat \(type.repeatCount) accepted")
  require(type.elementBytes == type.storageBytes * type.repeatCount, "element size")
  let canonical = type.description
  require((try? ScanElementType(parsing: canonical)) == type, "\(canonical) does not re-parse")
  require((try? ScanElementType(parsing: canonical + "\n")) == type, "newline changes \(canonical)")
  let rebuilt = try? ScanElementType(
    endianness: type.endianness, isSigned: type.isSigned, bits: type.bits,
    storageBits: type.storageBits, repeatCount: type.repeatCount, shift: type.shift)
  require(rebuilt == type, "the memberwise init refuses \(canonical)")

  // Decode every storage-sized window of the payload.
  let n = type.storageBytes
  var start = 0
  while start + n <= payload.count {
    guard let value = type.decode(payload[start..<start + n]) else {
      require(false, "decode refused \(n) bytes for \(canonical)")
      return 0
    }
    if type.isSigned {
      let bound = Int64(1) << (type.bits - 1)  // bits <= 64; for 64 this is Int64.min
      if type.bits < 64 {
        require(value >= -bound && value < bound, "\(value) outside \(canonical)")
      }
    } else if type.bits < 64 {
      // Compared as UInt64: 1 << 63 does not fit an Int64 (u63 holds up to Int64.max).
      let largest = (UInt64(1) << UInt64(type.bits)) - 1
      require(value >= 0 && UInt64(value) <= largest, "\(value) outside \(canonical)")
    }
    start += n
  }
  require(type.decode(payload.prefix(n - 1)) == nil, "decode accepted too few bytes")
  require(type.decode([UInt8](repeating: 0, count: n + 1)) == nil, "decode accepted too many bytes")
  return 0
}
