import TestThreads
import Testing

@testable import Sensors

@Suite(.ownThreads) struct ScanElementTypeTests {
  @Test(
    arguments: [
      ("le:s16/32>>0", ScanElementType.Endianness.little, true, 16, 32, 1, 0),
      ("le:s12/16>>4\n", .little, true, 12, 16, 1, 4),
      ("be:u8/8>>0", .big, false, 8, 8, 1, 0),
      ("le:s64/64>>0", .little, true, 64, 64, 1, 0),
      ("be:s14/16>>2", .big, true, 14, 16, 1, 2),
      ("le:s16/16X4>>0", .little, true, 16, 16, 4, 0),
      ("  le:u10/16>>6  ", .little, false, 10, 16, 1, 6),
    ])
  func parsesKernelText(
    text: String, endianness: ScanElementType.Endianness, signed: Bool, bits: Int, storage: Int,
    repeatCount: Int, shift: Int
  ) throws {
    let type = try ScanElementType(parsing: text)
    #expect(type.endianness == endianness)
    #expect(type.isSigned == signed)
    #expect(type.bits == bits)
    #expect(type.storageBits == storage)
    #expect(type.repeatCount == repeatCount)
    #expect(type.shift == shift)
    // The description is the kernel's form again.
    #expect(try ScanElementType(parsing: type.description) == type)
  }

  @Test(
    arguments: [
      ("", "must start with"),
      ("xx:s16/32>>0", "must start with"),
      ("le:x16/32>>0", "sign"),
      ("le:s/32>>0", "number for bits"),
      ("le:s16-32>>0", "'/'"),
      ("le:s16/24>>0", "not 8, 16, 32 or 64"),
      ("le:s33/32>>0", "between 1 and the storage size"),
      ("le:s0/32>>0", "between 1 and the storage size"),
      ("le:s12/16>>5", "exceeds the storage size"),
      ("le:s16/16X0>>0", "repeat 0"),
      ("le:s16/16X999>>0", "repeat 999"),
      ("le:s16/32>0", "'>>'"),
      ("le:s16/32>>0 extra", "unexpected text"),
      ("le:s99999/32>>0", "too many digits"),
      ("le:s16/32>>", "number for shift"),
    ])
  func rejectsWithReason(text: String, reason: String) {
    do {
      _ = try ScanElementType(parsing: text)
      Issue.record("accepted \(text)")
    } catch {
      #expect(error.reason.contains(reason), "\(error)")
      #expect(error.description.contains("invalid scan element type"))
    }
  }

  @Test func refusesOverlongInput() {
    let long = "le:s16/32>>0" + String(repeating: " x", count: 100)
    #expect(throws: ScanFormatError.self) { try ScanElementType(parsing: long) }
  }

  @Test func decodesEndiannessSignExtensionAndShift() throws {
    let s16 = try ScanElementType(parsing: "le:s16/16>>0")
    #expect(s16.decode([0xFF, 0xFF]) == -1)
    #expect(s16.decode([0x00, 0x80]) == -32768)
    #expect(s16.decode([0x34, 0x12]) == 0x1234)
    let be16 = try ScanElementType(parsing: "be:s16/16>>0")
    #expect(be16.decode([0x12, 0x34]) == 0x1234)
    #expect(be16.decode([0xFF, 0xFE]) == -2)
    // 12 bits stored left-aligned in 16: -1 is 0xFFF0, +2047 is 0x7FF0; low bits are noise.
    let s12 = try ScanElementType(parsing: "le:s12/16>>4")
    #expect(s12.decode([0xF0, 0xFF]) == -1)
    #expect(s12.decode([0xF5, 0x7F]) == 2047)
    #expect(s12.decode([0x0F, 0x80]) == -2048)
    // Unsigned values are masked, never sign-extended.
    let u12 = try ScanElementType(parsing: "le:u12/16>>4")
    #expect(u12.decode([0xF0, 0xFF]) == 4095)
    // Bits above realbits+shift are masked away.
    let s10 = try ScanElementType(parsing: "be:s10/16>>0")
    #expect(s10.decode([0xFC, 0x01]) == 1)
    #expect(s10.decode([0x02, 0x00]) == -512)
    let s64 = try ScanElementType(parsing: "le:s64/64>>0")
    #expect(s64.decode([1, 0, 0, 0, 0, 0, 0, 0x80]) == Int64.min + 1)
    let u64 = try ScanElementType(parsing: "le:u64/64>>0")
    #expect(u64.decode([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == -1)  // bit pattern
    let s32 = try ScanElementType(parsing: "le:s24/32>>8")
    #expect(s32.decode([0x00, 0xFE, 0xFF, 0xFF]) == -2)
    // Wrong byte counts are refused, not read past.
    #expect(s16.decode([0x01]) == nil)
    #expect(s16.decode([0x01, 0x02, 0x03]) == nil)
  }
}

@Suite(.ownThreads) struct ScanLayoutTests {
  func channel(_ name: String, _ index: Int, _ type: String) throws -> ScanChannel {
    ScanChannel(name: name, index: index, type: try ScanElementType(parsing: type))
  }

  @Test func s16In32WithTimestamp() throws {
    let layout = try ScanLayout(channels: [
      channel("in_timestamp", 3, "le:s64/64>>0"),
      channel("in_accel_z", 2, "le:s16/32>>0"),
      channel("in_accel_x", 0, "le:s16/32>>0"),
      channel("in_accel_y", 1, "le:s16/32>>0"),
    ])
    #expect(
      layout.elements.map(\.channel.name) == [
        "in_accel_x", "in_accel_y", "in_accel_z", "in_timestamp",
      ])
    #expect(layout.elements.map(\.offset) == [0, 4, 8, 16])
    #expect(layout.recordSize == 24)
  }

  @Test func s12In16WithTimestampPadsToEight() throws {
    let layout = try ScanLayout(channels: [
      channel("in_accel_x", 0, "le:s12/16>>4"),
      channel("in_accel_y", 1, "le:s12/16>>4"),
      channel("in_accel_z", 2, "le:s12/16>>4"),
      channel("in_timestamp", 3, "le:s64/64>>0"),
    ])
    #expect(layout.elements.map(\.offset) == [0, 2, 4, 8])
    #expect(layout.recordSize == 16)
  }

  @Test func recordPaddedToLargestElement() throws {
    // u16, u16, u32, u16: the u32 is aligned to 4, the record padded to a multiple of 4 so that
    // the u32 of the next record is aligned too.
    let layout = try ScanLayout(channels: [
      channel("a", 0, "le:u16/16>>0"), channel("b", 1, "le:u16/16>>0"),
      channel("c", 2, "le:u32/32>>0"), channel("d", 3, "le:u16/16>>0"),
    ])
    #expect(layout.elements.map(\.offset) == [0, 2, 4, 8])
    #expect(layout.recordSize == 12)
    // A lone 8-bit channel before a 16-bit one.
    let small = try ScanLayout(channels: [
      channel("a", 0, "le:u8/8>>0"), channel("b", 1, "le:s16/16>>0"),
    ])
    #expect(small.elements.map(\.offset) == [0, 2])
    #expect(small.recordSize == 4)
  }

  @Test func timestampGoesLastWhateverItsIndex() throws {
    let layout = try ScanLayout(channels: [
      channel("in_timestamp", 0, "le:s64/64>>0"), channel("in_accel_x", 5, "le:s16/16>>0"),
    ])
    #expect(layout.elements.map(\.channel.name) == ["in_accel_x", "in_timestamp"])
    #expect(layout.elements.map(\.offset) == [0, 8])
    #expect(layout.recordSize == 16)
  }

  @Test func repeatedElementAlignsToItsWholeSize() throws {
    // A quaternion (4 x s16 = 8 bytes) after a u8: aligned to 8, like the kernel does.
    let layout = try ScanLayout(channels: [
      channel("a", 0, "le:u8/8>>0"), channel("rot", 1, "le:s16/16X4>>0"),
    ])
    #expect(layout.elements.map(\.offset) == [0, 8])
    #expect(layout.recordSize == 16)
    let record: [UInt8] = [7, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0xFF, 0xFF, 3, 0, 4, 0]
    let element = try #require(layout.element(named: "rot"))
    let values = record.withUnsafeBytes { layout.values(of: element, in: $0) }
    #expect(values == [1, -1, 3, 4])
  }

  @Test func decodesMixedEndiannessRecord() throws {
    let layout = try ScanLayout(channels: [
      channel("in_accel_x", 0, "be:s14/16>>2"),
      channel("in_accel_y", 1, "le:s16/16>>0"),
      channel("in_accel_z", 2, "le:u8/8>>0"),
    ])
    #expect(layout.recordSize == 6)
    // x = -3 as 14 bits shifted left by 2: 0xFFF4 big endian; y = 300; z = 200.
    let record: [UInt8] = [0xFF, 0xF4, 0x2C, 0x01, 200, 0]
    let x = try #require(layout.element(named: "in_accel_x"))
    let y = try #require(layout.element(named: "in_accel_y"))
    let z = try #require(layout.element(named: "in_accel_z"))
    #expect(layout.value(of: x, in: record) == -3)
    #expect(layout.value(of: y, in: record) == 300)
    #expect(layout.value(of: z, in: record) == 200)
    let all = try #require(layout.decode(record))
    #expect(all.map(\.name) == ["in_accel_x", "in_accel_y", "in_accel_z"])
    #expect(all.map(\.values) == [[-3], [300], [200]])
    #expect(layout.decode(Array(record.prefix(5))) == nil)
    // A short record is refused, not read past its end.
    #expect(layout.value(of: z, in: Array(record.prefix(4))) == nil)
  }

  @Test func refusesBadChannelSets() throws {
    #expect(throws: ScanFormatError.self) { try ScanLayout(channels: []) }
    #expect(throws: ScanFormatError.self) {
      try ScanLayout(channels: [
        channel("a", 1, "le:s16/16>>0"), channel("b", 1, "le:s16/16>>0"),
      ])
    }
    let huge = try (0..<600).map { try channel("c\($0)", $0, "le:s64/64>>0") }
    #expect(throws: ScanFormatError.self) { try ScanLayout(channels: huge) }
  }

  /// A small deterministic fuzz pass: random text and records never trap.
  @Test func neverTrapsOnArbitraryInput() throws {
    var rng = SplitMix(seed: 42)
    let alphabet = Array("lebsu:/X>0123456789 \n".utf8)
    let seeds = ["le:s12/16>>4", "be:u8/8>>0", "le:s64/64>>0", "le:s16/16X3>>0", "be:s24/32>>8"]
    var parsed = 0
    for _ in 0..<20_000 {
      // Mutate a valid type string: replace, insert or drop a few bytes.
      var bytes = Array(seeds[Int(rng.next() % UInt64(seeds.count))].utf8)
      for _ in 0..<Int(rng.next() % 3) {
        let position = Int(rng.next() % UInt64(bytes.count + 1))
        let byte =
          rng.next() % 4 == 0
          ? UInt8(truncatingIfNeeded: rng.next())
          : alphabet[Int(rng.next() % UInt64(alphabet.count))]
        switch rng.next() % 3 {
        case 0 where position < bytes.count: bytes[position] = byte
        case 1: bytes.insert(byte, at: position)
        default: if position < bytes.count { bytes.remove(at: position) }
        }
      }
      let text = String(decoding: bytes, as: UTF8.self)
      guard let type = try? ScanElementType(parsing: text) else { continue }
      parsed += 1
      let record = (0..<Int(rng.next() % 20)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
      if let layout = try? ScanLayout(channels: [ScanChannel(name: "x", index: 0, type: type)]),
        let element = layout.element(named: "x")
      {
        _ = layout.value(of: element, in: record)
      }
      _ = type.decode(record)
    }
    #expect(parsed > 0)
  }
}

/// A tiny deterministic generator for the fuzz-style tests (SplitMix64).
struct SplitMix {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
