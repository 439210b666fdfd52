/// The motion stream's wire format, version 1 (docs/motion.md, "The stream"): what a client
/// reads from the socket `org.orientd.Motion1.OpenStream` hands over.
///
/// The socket is `SOCK_SEQPACKET`: every packet is one **batch**, so a client wakes once per
/// batch. All integers and floats are little-endian.
///
/// ```
/// batch header, 16 bytes          record, 48 bytes (repeated `count` times)
///  0  magic "OMOT"                 0  u64 timestamp, ns, CLOCK_MONOTONIC
///  4  u16 version (1)              8  u32 sequence (+1 per record, wraps)
///  6  u16 header size (16)        12  u16 flags (MotionRecord.Flags)
///  8  u16 record size (48)        14  u16 reserved (0)
/// 10  u16 count (1...255)         16  f32 x 3: angular velocity, rad/s, display frame
/// 12  u32 reserved (0)            28  f32 x 4: rotation w, x, y, z (display to earth)
///                                 44  u32 reserved (0)
/// ```
///
/// Compatibility: a reader accepts any header and record size at least as large as version 1's
/// and reads the fields it knows from the start of each (later versions only append); it
/// refuses another magic, a version it does not know, sizes that do not add up.
public enum MotionStreamFormat {
  /// `"OMOT"`.
  public static let magic: [UInt8] = Array("OMOT".utf8)
  /// The version this code writes and reads.
  public static let version: UInt16 = 1
  /// Bytes in a version 1 batch header.
  public static let headerSize = 16
  /// Bytes in a version 1 record.
  public static let recordSize = 48
  /// The most records in one batch.
  public static let maxRecords = 255

  /// The size of a version 1 batch of `count` records.
  public static func packetSize(records count: Int) -> Int { headerSize + count * recordSize }
}

/// One sample of the motion stream.
public struct MotionRecord: Sendable, Equatable {
  /// What the record carries and how to read it.
  public struct Flags: OptionSet, Sendable, Hashable {
    /// The bits.
    public let rawValue: UInt16
    /// Flags from bits.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// `angularVelocity` holds a gyroscope reading.
    public static let angularVelocity = Flags(rawValue: 1 << 0)
    /// `rotation` holds a rotation.
    public static let rotation = Flags(rawValue: 1 << 1)
    /// The rotation's heading is absolute (magnetic north along the earth frame's y); without
    /// it the heading started wherever the device pointed.
    public static let absoluteHeading = Flags(rawValue: 1 << 2)
    /// The rotation comes from the sensor itself (a HID device-rotation sensor), not from
    /// orientd's fusion.
    public static let hardwareRotation = Flags(rawValue: 1 << 3)
    /// The fusion counts the device as resting.
    public static let resting = Flags(rawValue: 1 << 4)
    /// The stream restarted before this record (the sensor was restarted or replaced): the
    /// previous record is not its neighbour in time.
    public static let discontinuity = Flags(rawValue: 1 << 5)
  }

  /// `CLOCK_MONOTONIC` nanoseconds of the reading.
  public var timestamp: UInt64
  /// Counts records in the stream; a gap means records this client did not get.
  public var sequence: UInt32
  /// What is valid.
  public var flags: Flags
  /// Angular velocity, rad/s, display frame (x right, y up, z out of the screen).
  public var angularVelocity: (x: Float, y: Float, z: Float)
  /// The rotation from the display frame to the earth frame (x east, y north, z up).
  public var rotation: (w: Float, x: Float, y: Float, z: Float)

  /// Creates a record.
  public init(
    timestamp: UInt64, sequence: UInt32, flags: Flags,
    angularVelocity: (x: Float, y: Float, z: Float) = (0, 0, 0),
    rotation: (w: Float, x: Float, y: Float, z: Float) = (1, 0, 0, 0)
  ) {
    self.timestamp = timestamp
    self.sequence = sequence
    self.flags = flags
    self.angularVelocity = angularVelocity
    self.rotation = rotation
  }

  /// A record from the daemon's values (rad/s and a rotation in `Double`s).
  public init(
    timestamp: UInt64, sequence: UInt32, angularVelocity: Vector3?, rotation: Quaternion?,
    flags extra: Flags = []
  ) {
    var flags = extra
    if angularVelocity != nil { flags.insert(.angularVelocity) }
    if rotation != nil { flags.insert(.rotation) }
    let w = angularVelocity ?? .zero
    let q = rotation ?? .identity
    self.init(
      timestamp: timestamp, sequence: sequence, flags: flags,
      angularVelocity: (Float(w.x), Float(w.y), Float(w.z)),
      rotation: (Float(q.w), Float(q.x), Float(q.y), Float(q.z)))
  }

  /// Equal when every field has the same bits (NaN equals NaN with the same payload).
  public static func == (a: MotionRecord, b: MotionRecord) -> Bool {
    a.timestamp == b.timestamp && a.sequence == b.sequence && a.flags == b.flags
      && a.angularVelocity.x.bitPattern == b.angularVelocity.x.bitPattern
      && a.angularVelocity.y.bitPattern == b.angularVelocity.y.bitPattern
      && a.angularVelocity.z.bitPattern == b.angularVelocity.z.bitPattern
      && a.rotation.w.bitPattern == b.rotation.w.bitPattern
      && a.rotation.x.bitPattern == b.rotation.x.bitPattern
      && a.rotation.y.bitPattern == b.rotation.y.bitPattern
      && a.rotation.z.bitPattern == b.rotation.z.bitPattern
  }
}

/// Collects records into one batch packet without allocating per record: the packet buffer is
/// sized for `capacity` records once.
public struct MotionBatchEncoder: Sendable {
  /// Records per batch at most.
  public let capacity: Int
  /// Records in the batch being built.
  public private(set) var count = 0
  private var bytes: [UInt8]

  /// An encoder for batches of up to `capacity` records (clamped to 1...255).
  public init(capacity: Int) {
    self.capacity = max(1, min(MotionStreamFormat.maxRecords, capacity))
    bytes = [UInt8](
      repeating: 0, count: MotionStreamFormat.packetSize(records: self.capacity))
  }

  /// Whether the batch has `capacity` records.
  public var isFull: Bool { count == capacity }
  /// Whether it has none.
  public var isEmpty: Bool { count == 0 }

  /// Adds a record; returns false (and adds nothing) when the batch is full.
  @discardableResult
  public mutating func append(_ record: MotionRecord) -> Bool {
    guard count < capacity else { return false }
    let offset = MotionStreamFormat.packetSize(records: count)
    count += 1
    bytes.withUnsafeMutableBytes { raw in
      var w = ByteWriter(raw, offset)
      w.u64(record.timestamp)
      w.u32(record.sequence)
      w.u16(record.flags.rawValue)
      w.u16(0)
      w.f32(record.angularVelocity.x)
      w.f32(record.angularVelocity.y)
      w.f32(record.angularVelocity.z)
      w.f32(record.rotation.w)
      w.f32(record.rotation.x)
      w.f32(record.rotation.y)
      w.f32(record.rotation.z)
      w.u32(0)
    }
    return true
  }

  /// Calls `body` with the finished packet (header and records) and starts a new batch.
  /// Nothing is called for an empty batch.
  public mutating func finish<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
    guard count > 0 else { return nil }
    let size = MotionStreamFormat.packetSize(records: count)
    let records = UInt16(count)
    bytes.withUnsafeMutableBytes { raw in
      var w = ByteWriter(raw, 0)
      for b in MotionStreamFormat.magic { w.u8(b) }
      w.u16(MotionStreamFormat.version)
      w.u16(UInt16(MotionStreamFormat.headerSize))
      w.u16(UInt16(MotionStreamFormat.recordSize))
      w.u16(records)
      w.u32(0)
    }
    count = 0
    return try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[0..<size])) }
  }

  /// The finished packet as an array (one allocation per batch), and a new batch started.
  public mutating func finish() -> [UInt8]? {
    finish { Array($0) }
  }
}

/// A malformed batch: what is wrong with it.
public struct MotionStreamError: Error, CustomStringConvertible, Sendable, Equatable {
  /// Why the packet was refused.
  public var reason: String
  /// The reason.
  public var description: String { reason }
}

/// A decoded batch.
public struct MotionBatch: Sendable, Equatable {
  /// The version the writer used.
  public var version: UInt16
  /// The records, in order.
  public var records: [MotionRecord]
}

/// Reads batch packets (pure; any bytes are safe: the fuzz target `motion-stream` checks it).
public enum MotionBatchDecoder {
  /// Checks the header and returns the record count, the header size and the record size.
  public static func header(_ packet: UnsafeRawBufferPointer) throws(MotionStreamError)
    -> (count: Int, headerSize: Int, recordSize: Int, version: UInt16)
  {
    func fail(_ why: String) -> MotionStreamError { MotionStreamError(reason: why) }
    guard packet.count >= MotionStreamFormat.headerSize else {
      throw fail("\(packet.count) bytes are too short for a batch header (16)")
    }
    var r = ByteReader(packet, 0)
    let magic = [r.u8(), r.u8(), r.u8(), r.u8()]
    guard magic == MotionStreamFormat.magic else {
      throw fail("not a motion stream batch (magic \(magic.map { String($0, radix: 16) }))")
    }
    let version = r.u16()
    guard version == MotionStreamFormat.version else {
      throw fail("batch version \(version); this reader knows version 1")
    }
    let headerSize = Int(r.u16())
    let recordSize = Int(r.u16())
    let count = Int(r.u16())
    guard headerSize >= MotionStreamFormat.headerSize else {
      throw fail("header size \(headerSize) is below 16")
    }
    guard recordSize >= MotionStreamFormat.recordSize else {
      throw fail("record size \(recordSize) is below 48")
    }
    guard count >= 1 else { throw fail("a batch without records") }
    guard packet.count == headerSize + count * recordSize else {
      throw fail(
        "\(packet.count) bytes, but the header says \(headerSize) + \(count) x \(recordSize)")
    }
    return (count, headerSize, recordSize, version)
  }

  /// Calls `body` with each record of a packet, allocating nothing.
  ///
  /// - Throws: `MotionStreamError` (before any record is handed on) when the header is wrong.
  public static func forEach(
    in packet: UnsafeRawBufferPointer, _ body: (MotionRecord) throws -> Void
  ) throws {
    let h = try header(packet)
    for i in 0..<h.count {
      var r = ByteReader(packet, h.headerSize + i * h.recordSize)
      let timestamp = r.u64()
      let sequence = r.u32()
      let flags = MotionRecord.Flags(rawValue: r.u16())
      _ = r.u16()
      let w = (x: r.f32(), y: r.f32(), z: r.f32())
      let q = (w: r.f32(), x: r.f32(), y: r.f32(), z: r.f32())
      try body(
        MotionRecord(
          timestamp: timestamp, sequence: sequence, flags: flags, angularVelocity: w, rotation: q))
    }
  }

  /// Decodes a whole packet.
  ///
  /// - Throws: `MotionStreamError` saying what is wrong.
  public static func decode(_ packet: UnsafeRawBufferPointer) throws(MotionStreamError)
    -> MotionBatch
  {
    let h = try header(packet)
    var records: [MotionRecord] = []
    records.reserveCapacity(h.count)
    do {
      try forEach(in: packet) { records.append($0) }
    } catch {
      throw MotionStreamError(reason: "\(error)")
    }
    return MotionBatch(version: h.version, records: records)
  }

  /// Decodes a packet held in an array.
  public static func decode(_ packet: [UInt8]) throws(MotionStreamError) -> MotionBatch {
    let result = packet.withUnsafeBytes { raw in
      Result { () throws(MotionStreamError) in try decode(raw) }
    }
    return try result.get()
  }
}

/// Little-endian stores at increasing offsets (bounds are the callers' sizes).
private struct ByteWriter {
  let raw: UnsafeMutableRawBufferPointer
  var offset: Int
  init(_ raw: UnsafeMutableRawBufferPointer, _ offset: Int) {
    self.raw = raw
    self.offset = offset
  }
  mutating func u8(_ v: UInt8) {
    raw[offset] = v
    offset += 1
  }
  mutating func u16(_ v: UInt16) {
    raw.storeBytes(of: v.littleEndian, toByteOffset: offset, as: UInt16.self)
    offset += 2
  }
  mutating func u32(_ v: UInt32) {
    raw.storeBytes(of: v.littleEndian, toByteOffset: offset, as: UInt32.self)
    offset += 4
  }
  mutating func u64(_ v: UInt64) {
    raw.storeBytes(of: v.littleEndian, toByteOffset: offset, as: UInt64.self)
    offset += 8
  }
  mutating func f32(_ v: Float) { u32(v.bitPattern) }
}

/// Little-endian loads at increasing offsets (unaligned-safe).
private struct ByteReader {
  let raw: UnsafeRawBufferPointer
  var offset: Int
  init(_ raw: UnsafeRawBufferPointer, _ offset: Int) {
    self.raw = raw
    self.offset = offset
  }
  mutating func u8() -> UInt8 {
    defer { offset += 1 }
    return raw[offset]
  }
  mutating func u16() -> UInt16 {
    defer { offset += 2 }
    return UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
  }
  mutating func u32() -> UInt32 {
    defer { offset += 4 }
    return UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
  }
  mutating func u64() -> UInt64 {
    defer { offset += 8 }
    return UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
  }
  mutating func f32() -> Float { Float(bitPattern: u32()) }
}
