import Testing

@testable import OrientCore

/// The motion stream's wire format (docs/motion.md, "The stream") and the motion trace format
/// (`orientd record --motion`, `orientd replay`).
@Suite struct MotionStreamTests {
  static let records = [
    MotionRecord(
      timestamp: 1_000_000_000, sequence: 7, angularVelocity: Vector3(0.5, -0.25, 3),
      rotation: Quaternion(w: 0.5, x: 0.5, y: -0.5, z: 0.5), flags: [.absoluteHeading]),
    MotionRecord(
      timestamp: 1_010_000_000, sequence: 8, angularVelocity: Vector3(0, 0, -1), rotation: nil),
    MotionRecord(
      timestamp: UInt64.max, sequence: UInt32.max, angularVelocity: nil,
      rotation: .identity, flags: [.hardwareRotation, .discontinuity]),
  ]

  @Test func aBatchDecodesToTheRecordsEncoded() throws {
    var encoder = MotionBatchEncoder(capacity: 4)
    for r in Self.records {
      let added = encoder.append(r)
      #expect(added)
    }
    #expect(!encoder.isFull)
    let finished = encoder.finish()
    let packet = try #require(finished)
    #expect(packet.count == 16 + 3 * 48)
    #expect(encoder.isEmpty)
    let again = encoder.finish()
    #expect(again == nil)  // nothing is sent for an empty batch
    let batch = try MotionBatchDecoder.decode(packet)
    #expect(batch.version == 1)
    #expect(batch.records == Self.records)
    #expect(batch.records[0].flags == [.angularVelocity, .rotation, .absoluteHeading])
    #expect(batch.records[1].flags == [.angularVelocity])
    #expect(batch.records[2].flags == [.rotation, .hardwareRotation, .discontinuity])
  }

  @Test func theBytesAreWhereTheDocumentationSays() throws {
    // A client in another language reads these offsets (docs/motion.md).
    var encoder = MotionBatchEncoder(capacity: 2)
    encoder.append(Self.records[0])
    let finished = encoder.finish()
    let p = try #require(finished)
    func u16(_ o: Int) -> Int { Int(p[o]) | Int(p[o + 1]) << 8 }
    func u32(_ o: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(p[o + $1]) << (8 * $1) } }
    func u64(_ o: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(p[o + $1]) << (8 * $1) } }
    func f32(_ o: Int) -> Float { Float(bitPattern: u32(o)) }
    #expect(Array(p[0..<4]) == Array("OMOT".utf8))
    #expect(u16(4) == 1 && u16(6) == 16 && u16(8) == 48 && u16(10) == 1 && u32(12) == 0)
    let r = 16
    #expect(u64(r) == 1_000_000_000)
    #expect(u32(r + 8) == 7)
    #expect(u16(r + 12) == 0b111)  // angular velocity, rotation, absolute heading
    #expect((f32(r + 16), f32(r + 20), f32(r + 24)) == (0.5, -0.25, 3))
    #expect((f32(r + 28), f32(r + 32), f32(r + 36), f32(r + 40)) == (0.5, 0.5, -0.5, 0.5))
    #expect(u32(r + 44) == 0)
  }

  @Test func aFullBatchTakesNoMoreRecords() {
    var encoder = MotionBatchEncoder(capacity: 2)
    let first = encoder.append(Self.records[0])
    let second = encoder.append(Self.records[1])
    #expect(first && second)
    #expect(encoder.isFull)
    let third = encoder.append(Self.records[2])
    #expect(!third)
    #expect(encoder.count == 2)
    #expect(MotionBatchEncoder(capacity: 1000).capacity == 255)
    #expect(MotionBatchEncoder(capacity: 0).capacity == 1)
  }

  static func packet(
    magic: String = "OMOT", version: UInt16 = 1, header: Int = 16, record: Int = 48,
    count: Int = 1, extra: Int = 0
  ) -> [UInt8] {
    var p = Array(magic.utf8)
    for v in [version, UInt16(header), UInt16(record), UInt16(count)] {
      p += [UInt8(v & 0xFF), UInt8(v >> 8)]
    }
    p += [0, 0, 0, 0]
    p += [UInt8](repeating: 0, count: header - 16 + count * record + extra)
    return p
  }

  @Test(arguments: [
    (packet(magic: "OMOX"), "not a motion stream batch"),
    (packet(version: 2), "batch version 2; this reader knows version 1"),
    (packet(header: 12), "header size 12 is below 16"),
    (packet(record: 40), "record size 40 is below 48"),
    (packet(count: 0), "a batch without records"),
    (packet(extra: 1), "65 bytes, but the header says 16 + 1 x 48"),
    (Array(packet().prefix(10)), "10 bytes are too short for a batch header (16)"),
  ])
  func aMalformedBatchIsRefusedSayingWhy(bytes: [UInt8], reason: String) {
    do {
      _ = try MotionBatchDecoder.decode(bytes)
      Issue.record("accepted")
    } catch {
      #expect(error.reason.hasPrefix(reason), "\(error)")
    }
  }

  @Test func aLaterVersionsLargerHeaderAndRecordsAreReadByTheirKnownFields() throws {
    // A version 1 writer's record, inside a batch with 8 more header and record bytes.
    var p = Self.packet(header: 24, record: 56, count: 1)
    var encoder = MotionBatchEncoder(capacity: 1)
    encoder.append(Self.records[0])
    let finished = encoder.finish()
    let v1 = try #require(finished)
    p.replaceSubrange(24..<(24 + 48), with: v1[16..<64])
    let batch = try MotionBatchDecoder.decode(p)
    #expect(batch.records == [Self.records[0]])
  }

  // MARK: - Traces

  @Test func everyReadingOfAMotionTraceReadsBackAsWritten() throws {
    let events: [MotionTraceEvent] = [
      .acceleration(.lid, Sample(time: 0.01, 0.12, -9.79, 0.31)),
      .gyro(time: 0.01, Vector3(0.0012, -0.0004, 0.0301)),
      .magneticField(time: 0.02, Vector3(21.5, -3.25, -44.1)),
      .rotation(time: 0.02, Quaternion(axis: Vector3(1, 0, 0), angle: 1.2)),
      .acceleration(.base, Sample(time: 0.015, 0, 0, -9.81)),
    ]
    var text = MotionTraceWriter.header
    for e in events { text += MotionTraceWriter.line(e) }
    var parser = MotionTraceParser(source: "t.csv")
    var read: [MotionTraceEvent] = []
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      if let e = try parser.parse(line: Array(line.utf8)) { read.append(e) }
    }
    #expect(read == events)
    #expect(text.hasPrefix("# orientd motion trace\nt,sensor,values\n0.01,accel,0.12,-9.79,0.31\n"))
  }

  @Test(arguments: [
    ("0.1,gyro,1,2", "t.csv:2: a gyro line has 3 values after the sensor, found 2"),
    ("0.1,compass,1,2,3", "t.csv:2: sensor 'compass' is not one of accel, display, lid, base"),
    ("0.1,1,2,3", "t.csv:2: a t,x,y,z line: a motion trace names the sensor"),
    ("0.1,rotation,0,0,0,0", "t.csv:2: rotation [0.0, 0.0, 0.0, 0.0] is not a unit quaternion"),
    ("0.1,magn,1,nan,3", "t.csv:2: y 'nan' is not a finite number"),
    ("0.1,gyro,1,2,3\n0.05,gyro,1,2,3", "t.csv:3: gyro time 0.05 is before its previous"),
  ])
  func aBadTraceLineIsAnErrorNamingTheLine(body: String, message: String) {
    var parser = MotionTraceParser(source: "t.csv")
    do {
      for line in ("t,sensor,values\n" + body).split(separator: "\n") {
        _ = try parser.parse(line: Array(line.utf8))
      }
      Issue.record("accepted")
    } catch {
      #expect(error.description.hasPrefix(message), "\(error)")
    }
  }

  @Test func aWrittenRotationReadsBackBitForBit() throws {
    // Found by the motion-stream fuzz target: normalising an already normalised quaternion
    // again changed its last bits, so a recorded rotation did not replay as recorded.
    var parser = MotionTraceParser(source: "t.csv")
    let first = try parser.parse(line: Array("0.02,rotation,0.7042,0.7071,0,0".utf8))
    let event = try #require(first)
    var again = MotionTraceParser(source: "again")
    let text = MotionTraceWriter.line(event)
    let second = try again.parse(line: Array(text.utf8.dropLast()))
    #expect(second == event, "\(text)")
  }

  @Test func twoSensorsMayInterleaveSlightlyOutOfOrder() throws {
    var parser = MotionTraceParser(source: "t.csv")
    for line in ["0.02,gyro,0,0,0", "0.015,accel,0,-9.8,0", "0.03,gyro,0,0,1"] {
      #expect(try parser.parse(line: Array(line.utf8)) != nil)
    }
  }
}
