import Glibc
import OrientCore
import OrientSim
import SystemKit

// The stream section: a 100 Hz producer on an EventLoop (a timerfd standing for the sensor)
// encodes each sample as a MotionRecord, sends batches through PacketFanout over real
// SOCK_SEQPACKET socket pairs, and 1 or 3 client threads block in recv(2). Measured: the time
// from a record's timestamp to its decoding in the client (so it includes the wait for the
// batch to fill), the clients' and the producer's wakeups per second, the producer's CPU time.

/// One client thread's findings (written by the thread, read after it is joined).
final class StreamClient: @unchecked Sendable {
  let fd: FileDescriptor
  var latencies: [Double] = []
  var wakeups = 0
  var gaps = 0

  init(fd: FileDescriptor) { self.fd = fd }
}

func nowNanoseconds() -> UInt64 {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// The client thread: blocks in recv until the stream ends.
func streamClientMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
  guard let context else { return nil }
  let client = Unmanaged<StreamClient>.fromOpaque(context).takeUnretainedValue()
  var buffer = [UInt8](repeating: 0, count: 65536)
  var expected: UInt32?
  while true {
    let n = buffer.withUnsafeMutableBytes { recv(client.fd.rawValue, $0.baseAddress, $0.count, 0) }
    if n < 0 && errno == EINTR { continue }
    guard n > 0 else { break }
    let now = nowNanoseconds()
    client.wakeups += 1
    try? buffer.withUnsafeBytes { raw in
      try MotionBatchDecoder.forEach(in: UnsafeRawBufferPointer(rebasing: raw[0..<n])) { r in
        client.latencies.append(Double(now &- r.timestamp) / 1e6)
        if let e = expected, r.sequence != e { client.gaps += 1 }
        expected = r.sequence &+ 1
      }
    }
  }
  return nil
}

/// CPU seconds this process has used (user + system).
func processCPU() -> Double {
  var usage = rusage()
  getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
  return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

/// One configuration: `clients` readers, batches of `batch` records, 100 Hz for `seconds`.
func runStream(clients count: Int, batch: Int, seconds: Double) throws -> String {
  let loop = try EventLoop()
  let fanout = PacketFanout(loop: loop)
  var clients: [StreamClient] = []
  var threads: [pthread_t] = []
  for _ in 0..<count {
    let (ours, theirs) = try PacketFanout.socketPair()
    _ = try fanout.add(ours)
    let client = StreamClient(fd: theirs)
    clients.append(client)
    var thread = pthread_t()
    let context = Unmanaged.passUnretained(client).toOpaque()
    guard pthread_create(&thread, nil, streamClientMain, context) == 0 else {
      return "cannot start a client thread"
    }
    threads.append(thread)
  }
  var encoder = MotionBatchEncoder(capacity: batch)
  var sequence: UInt32 = 0
  var ticks = 0
  let total = Int(seconds * 100)
  var fusion = MotionFusion()
  let timer = try loop.makeTimer {
    ticks += 1
    let t = nowNanoseconds()
    let time = Double(t) / 1e9
    fusion.update(time: time, gyro: Vector3(0.01, 0, 0), acceleration: Vector3(0, -9.8, 0))
    encoder.append(
      MotionRecord(
        timestamp: t, sequence: sequence, angularVelocity: fusion.angularVelocity,
        rotation: fusion.rotation))
    sequence &+= 1
    if encoder.isFull, let packet = encoder.finish() { fanout.send(packet) }
  }
  let cpuBefore = processCPU()
  let start = nowNanoseconds()
  try timer.schedule(after: .milliseconds(10), interval: .milliseconds(10))
  try loop.run(until: { ticks >= total }, timeout: .seconds(Int64(seconds) + 5))
  timer.cancel()
  let elapsed = Double(nowNanoseconds() - start) / 1e9
  let cpu = processCPU() - cpuBefore
  // The producer's wakeups: one per timer tick, plus the writable wakeups of slow clients.
  var producerWakeups = ticks
  for id in fanout.clientIDs { producerWakeups += fanout.counters(of: id)?.writableWakeups ?? 0 }
  fanout.removeAll()  // the clients see the end of the stream
  for thread in threads { pthread_join(thread, nil) }
  let latencies = clients.flatMap(\.latencies)
  let wakeups = Double(clients.map(\.wakeups).reduce(0, +)) / Double(count) / elapsed
  let received = clients.map(\.latencies.count).min() ?? 0
  let gaps = clients.map(\.gaps).reduce(0, +)
  func ms(_ p: Double) -> String {
    guard !latencies.isEmpty else { return "-" }
    let sorted = latencies.sorted()
    return fixed(sorted[min(sorted.count - 1, Int(p / 100 * Double(sorted.count)))], 2)
  }
  return pad("\(count)", 8) + pad("\(batch)", 7) + pad(ms(50), 9) + pad(ms(95), 9)
    + pad(ms(99), 9) + pad(fixed(wakeups, 1), 12)
    + pad(fixed(Double(producerWakeups) / elapsed, 1), 12)
    + pad(fixed(cpu / elapsed * 100, 2), 9) + pad("\(received)/\(ticks)", 12) + pad("\(gaps)", 6)
}

func streamSection(seconds: Double) {
  print(
    "\n== stream: 100 Hz records through PacketFanout to client threads (\(fixed(seconds, 0)) s each)"
  )
  print("latency = record timestamp to decoded in the client, ms (includes filling the batch);")
  print("wakeups/s: each client's returns from recv, and the producer's (timer + writable);")
  print("cpu% = the whole process (producer, fusion, encoder and the client threads)")
  print(
    pad("clients", 8) + pad("batch", 7) + pad("p50", 9) + pad("p95", 9) + pad("p99", 9)
      + pad("client/s", 12) + pad("producer/s", 12) + pad("cpu%", 9) + pad("records", 12)
      + pad("gaps", 6))
  for (clients, batch) in [(1, 1), (3, 1), (1, 10), (3, 10)] {
    do {
      print(try runStream(clients: clients, batch: batch, seconds: seconds))
    } catch {
      print("stream: \(error)")
    }
  }
}
