import Glibc
import TestThreads
import Testing

@testable import SystemKit

/// The motion stream's fan-out over real `SOCK_SEQPACKET` socket pairs: a client that keeps up
/// gets every packet in order, a slow one and a vanished one never hold it up, and a client
/// wakes once per packet (docs/motion.md, "Fan-out").
@Suite(.ownThreads) struct PacketFanoutTests {
  /// The reading end of a client, counting its wakeups on the loop.
  final class Reader {
    let fd: FileDescriptor
    var packets: [[UInt8]] = []
    var wakeups = 0
    var watch: EventLoop.Watch?

    init(_ fd: FileDescriptor) { self.fd = fd }

    /// Reads whatever is there now (one packet per `recv`), without blocking.
    func drain() {
      var buffer = [UInt8](repeating: 0, count: 65536)
      while true {
        let n = buffer.withUnsafeMutableBytes {
          recv(fd.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
        }
        guard n > 0 else { return }
        packets.append(Array(buffer[0..<n]))
      }
    }

    /// Reads on the loop whenever the socket is readable.
    func follow(on loop: EventLoop) throws {
      watch = try loop.watch(fd.rawValue, for: .readable) { [unowned self] _ in
        wakeups += 1
        drain()
      }
    }

    /// The packet numbers received (each test packet starts with its number).
    var numbers: [Int] { packets.map { Int($0[0]) | Int($0[1]) << 8 } }
  }

  /// A packet of `size` bytes numbered `n`.
  static func packet(_ n: Int, size: Int = 496) -> [UInt8] {
    var p = [UInt8](repeating: 0xA5, count: size)
    p[0] = UInt8(n & 0xFF)
    p[1] = UInt8(n >> 8)
    return p
  }

  @Test func aSlowClientAndAVanishedOneNeverHoldUpTheOthers() throws {
    let loop = try EventLoop()
    let fanout = PacketFanout(
      loop: loop, policy: .init(queueLimit: 4, disconnectAfterDrops: 1000, sendBufferSize: 4096))
    var departures: [(PacketFanout.ClientID, PacketFanout.Departure)] = []
    fanout.onDeparture = { departures.append(($0, $1)) }
    var readers: [Reader] = []
    var ids: [PacketFanout.ClientID] = []
    for _ in 0..<3 {
      let (ours, theirs) = try PacketFanout.socketPair()
      ids.append(try fanout.add(ours))
      readers.append(Reader(theirs))
    }
    let (fast, slow, vanishing) = (readers[0], readers[1], readers[2])
    try fast.follow(on: loop)
    try vanishing.follow(on: loop)
    // 300 packets, a few per loop turn, as a sensor would produce them.
    for n in 0..<300 {
      fanout.send(Self.packet(n))
      if n == 100 { vanishing.fd.close() }  // the client process died
      try loop.runOnce(timeoutMilliseconds: 0)
    }
    try loop.run(until: { fast.packets.count == 300 }, timeout: .seconds(2))

    #expect(fast.numbers == Array(0..<300), "the client keeping up lost nothing")
    #expect(fanout.counters(of: ids[0])?.dropped == 0)
    // The vanished client was noticed and removed; it had read up to where it died.
    #expect(departures.contains { $0.0 == ids[2] && $0.1 == .vanished })
    #expect(fanout.counters(of: ids[2]) == nil)
    #expect(vanishing.numbers.count <= 101)
    // The slow one (never reads) has a full socket and a queue at its limit, oldest dropped.
    let counters = try #require(fanout.counters(of: ids[1]))
    #expect(counters.queued == 4)
    #expect(counters.dropped == 300 - counters.sent - counters.queued)
    #expect(counters.sent > 0 && counters.sent < 20, "the 4 KiB buffer took \(counters.sent)")
    // What it finally reads: the first packets the socket held, then the newest ones.
    slow.drain()
    let got = slow.numbers
    #expect(Array(got.prefix(counters.sent)) == Array(0..<counters.sent))
    #expect(got.count == counters.sent)  // the queue is still in the fan-out
    try loop.run(until: { (fanout.counters(of: ids[1])?.queued ?? 0) == 0 }, timeout: .seconds(1))
    slow.drain()
    #expect(Array(slow.numbers.suffix(4)) == [296, 297, 298, 299])
    #expect(fanout.clientIDs == [ids[0], ids[1]])
  }

  @Test func aClientThatNeverReadsIsDisconnectedAfterTooManyDrops() throws {
    let loop = try EventLoop()
    let fanout = PacketFanout(
      loop: loop, policy: .init(queueLimit: 2, disconnectAfterDrops: 50, sendBufferSize: 4096))
    var departures: [PacketFanout.Departure] = []
    fanout.onDeparture = { departures.append($1) }
    let (ours, theirs) = try PacketFanout.socketPair()
    let id = try fanout.add(ours)
    for n in 0..<200 { fanout.send(Self.packet(n)) }
    #expect(departures == [.tooSlow])
    #expect(fanout.counters(of: id) == nil)
    // Its end sees the stream end after what was buffered.
    let reader = Reader(theirs)
    reader.drain()
    #expect(!reader.packets.isEmpty)
    var byte: UInt8 = 0
    #expect(recv(theirs.rawValue, &byte, 1, Int32(MSG_DONTWAIT)) == 0, "end of stream")
  }

  @Test func aClientThatLeavesWhileIdleIsNoticedWithoutSendingAnything() throws {
    let loop = try EventLoop()
    let fanout = PacketFanout(loop: loop)
    var departed: PacketFanout.ClientID?
    fanout.onDeparture = { id, _ in departed = id }
    let (ours, theirs) = try PacketFanout.socketPair()
    let id = try fanout.add(ours)
    theirs.close()
    #expect(try loop.run(until: { departed != nil }, timeout: .seconds(1)))
    #expect(departed == id)
    #expect(fanout.clientIDs.isEmpty)
    #expect(loop.registrationCount == 0)
  }

  @Test func aClientWakesOncePerPacketAndTheFanoutNotAtAllWhileItKeepsUp() throws {
    // 100 samples a second for 0.5 s, sent in batches of 10: five packets, five wakeups per
    // client, whatever the number of clients.
    let loop = try EventLoop()
    let fanout = PacketFanout(loop: loop)
    var readers: [Reader] = []
    var ids: [PacketFanout.ClientID] = []
    for _ in 0..<3 {
      let (ours, theirs) = try PacketFanout.socketPair()
      ids.append(try fanout.add(ours))
      let reader = Reader(theirs)
      try reader.follow(on: loop)
      readers.append(reader)
    }
    var samples = 0
    let timer = try loop.makeTimer {
      samples += 1
      if samples % 10 == 0 { fanout.send(Self.packet(samples / 10)) }
    }
    try timer.schedule(after: .milliseconds(10), interval: .milliseconds(10))
    try loop.run(
      until: { samples >= 50 && readers.allSatisfy { $0.packets.count == 5 } },
      timeout: .seconds(5))
    timer.cancel()
    for (reader, id) in zip(readers, ids) {
      #expect(reader.numbers == [1, 2, 3, 4, 5])
      #expect(reader.wakeups == 5)
      #expect(fanout.counters(of: id)?.writableWakeups == 0)
    }
  }

  @Test func theClientsEndCannotWriteBack() throws {
    let loop = try EventLoop()
    let fanout = PacketFanout(loop: loop)
    let (ours, theirs) = try PacketFanout.socketPair()
    _ = try fanout.add(ours)
    var byte: UInt8 = 1
    let n = send(theirs.rawValue, &byte, 1, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
    #expect(n == -1 && errno == EPIPE, "a one-way stream")
  }
}
