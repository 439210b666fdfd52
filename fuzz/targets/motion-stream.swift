// The motion stream's batch packets as a client reads them from the socket
// org.orientd.Motion1.OpenStream hands over, and motion trace lines as `orientd replay` reads
// them: `OrientCore.MotionBatchDecoder` and `MotionTraceParser` (docs/motion.md).
//
// The first input byte picks the parser: even, the batch decoder on the rest; odd, the trace
// parser on the rest's lines.
//
// Invariants, batches: an accepted packet's size is the header size plus count x record size,
// with count 1...65535; forEach hands on exactly count records, the same as decode; the
// records encoded again (version 1 sizes) decode to the very same records (bit patterns,
// NaN included), and when the packet itself had version 1 sizes the bytes come back
// identical but for the reserved fields; a refused packet says why, and forEach refuses it
// before handing on any record. Traces: errors name a line that was handed in; readings have
// finite values and a sensor's times never decrease; rotations are unit quaternions; every
// reading written back with MotionTraceWriter parses to the same reading.
import OrientCore

/// libFuzzer's entry point: checks one input against the invariants above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMotionStream(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = inputBytes(data, size)
  guard let selector = bytes.first else { return 0 }
  let rest = Array(bytes.dropFirst())
  if selector & 1 == 0 {
    checkBatch(rest)
  } else {
    checkTrace(rest)
  }
  return 0
}

private func checkBatch(_ packet: [UInt8]) {
  let batch: MotionBatch
  do {
    batch = try MotionBatchDecoder.decode(packet)
  } catch {
    require(!error.reason.isEmpty, "a refusal without a reason")
    var handed = 0
    let refused = packet.withUnsafeBytes { raw in
      (try? MotionBatchDecoder.forEach(in: raw) { _ in handed += 1 }) == nil
    }
    require(refused && handed == 0, "forEach accepted what decode refused, or handed on records")
    return
  }
  let header = packet.withUnsafeBytes { try? MotionBatchDecoder.header($0) }
  guard let header else {
    require(false, "decode accepted a packet whose header is refused")
    return
  }
  require(
    packet.count == header.headerSize + header.count * header.recordSize,
    "size \(packet.count) does not add up")
  require(
    batch.records.count == header.count, "\(batch.records.count) records, header \(header.count)")
  var again: [MotionRecord] = []
  packet.withUnsafeBytes { raw in
    try? MotionBatchDecoder.forEach(in: raw) { again.append($0) }
  }
  require(again == batch.records, "forEach and decode disagree")
  // Encode again in batches of at most 255 records.
  var encoder = MotionBatchEncoder(capacity: 255)
  var reencoded: [MotionRecord] = []
  var first: [UInt8]?
  for record in batch.records {
    if encoder.isFull, let p = encoder.finish() {
      first = first ?? p
      reencoded += (try? MotionBatchDecoder.decode(p).records) ?? []
    }
    require(encoder.append(record), "append refused a record to a batch not full")
  }
  if let p = encoder.finish() {
    first = first ?? p
    reencoded += (try? MotionBatchDecoder.decode(p).records) ?? []
  }
  require(reencoded == batch.records, "re-encoded records decode differently")
  if header.headerSize == 16, header.recordSize == 48, header.count <= 255, let p = first {
    var expected = packet
    for i in 12..<16 { expected[i] = 0 }  // the reserved header field is written as 0
    for r in 0..<header.count {
      let o = 16 + r * 48
      for i in [14, 15, 44, 45, 46, 47] { expected[o + i] = 0 }
    }
    require(p == expected, "a version 1 packet does not come back byte for byte")
  }
}

private func checkTrace(_ bytes: [UInt8]) {
  var parser = MotionTraceParser(source: "fuzz")
  var lines = 0
  var last: [String: Double] = [:]
  for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
    lines += 1
    let event: MotionTraceEvent?
    do {
      event = try parser.parse(line: line)
    } catch {
      require(error.line == lines, "error on line \(error.line), handed \(lines)")
      require(error.source == "fuzz" && !error.reason.isEmpty, "odd error \(error)")
      return
    }
    guard let event else { continue }
    let kind: String
    var values: [Double]
    switch event {
    case .acceleration(let part, let s):
      kind = part == .base ? "base" : "accel"
      values = [s.acceleration.x, s.acceleration.y, s.acceleration.z]
    case .gyro(_, let v):
      kind = "gyro"
      values = [v.x, v.y, v.z]
    case .magneticField(_, let v):
      kind = "magn"
      values = [v.x, v.y, v.z]
    case .rotation(_, let q):
      kind = "rotation"
      values = [q.w, q.x, q.y, q.z]
      require(abs(q.norm - 1) < 1e-9, "rotation \(q) is not a unit quaternion")
    }
    values.append(event.time)
    require(values.allSatisfy(\.isFinite), "a non-finite value in \(event)")
    require(event.time >= last[kind, default: -.infinity], "\(kind) time went back")
    last[kind] = event.time
    var writer = MotionTraceParser(source: "again")
    let text = MotionTraceWriter.line(event)
    let back = try? writer.parse(line: Array(text.utf8.dropLast()))
    require(back == event, "\(text) parses to \(String(describing: back)), not \(event)")
  }
}
