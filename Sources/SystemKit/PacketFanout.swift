import Glibc

/// Sends every packet to several clients, each over its own non-blocking `SOCK_SEQPACKET`
/// socket, so that a slow client or one that vanished never holds up the others
/// (docs/motion.md, "Fan-out").
///
/// Each client has a bounded queue of packets the socket did not take at once. A packet is
/// tried at once while the queue is empty; otherwise it joins the queue, which is written
/// when the socket becomes writable (the only time the loop watches for writability, so a
/// client keeping up costs no extra wakeup). A full queue drops its **oldest** packet (the
/// reader learns of the gap from the records' sequence numbers); a client that has lost
/// `disconnectAfterDrops` packets in a row without taking one is disconnected as too slow. A
/// client whose end is closed (hang-up, `EPIPE`, `ECONNRESET`) is removed at once. Either way
/// `onDeparture` says who left and why. Everything runs on the `EventLoop`: no thread, no lock.
public final class PacketFanout {
  /// How much a slow client may fall behind.
  public struct Policy: Sendable, Equatable {
    /// Packets kept per client beyond what its socket holds.
    public var queueLimit: Int
    /// Consecutive packets dropped (none taken in between) after which the client is
    /// disconnected; `nil`: never.
    public var disconnectAfterDrops: Int?
    /// `SO_SNDBUF` of the sending end, bytes (`nil`: the system default, about 200 KiB); it
    /// bounds how much the kernel buffers before the queue starts.
    public var sendBufferSize: Int?

    /// The defaults: 16 packets, disconnected after 256 dropped in a row, 16 KiB buffer.
    public init(
      queueLimit: Int = 16, disconnectAfterDrops: Int? = 256, sendBufferSize: Int? = 16384
    ) {
      self.queueLimit = queueLimit
      self.disconnectAfterDrops = disconnectAfterDrops
      self.sendBufferSize = sendBufferSize
    }
  }

  /// A client, as `add` returned it.
  public struct ClientID: Hashable, Sendable, CustomStringConvertible {
    /// A number unique within this fan-out.
    public let rawValue: Int
    /// `client N`.
    public var description: String { "client \(rawValue)" }
  }

  /// Why a client left.
  public enum Departure: Equatable, Sendable {
    /// Its end was closed or reset (`EPOLLHUP`, `EPIPE`, `ECONNRESET`).
    case vanished
    /// It dropped `disconnectAfterDrops` packets in a row.
    case tooSlow
    /// Sending failed otherwise.
    case failed(Errno)
  }

  /// What happened to one client's packets.
  public struct Counters: Sendable, Equatable {
    /// Packets its socket took.
    public var sent = 0
    /// Packets dropped from its full queue.
    public var dropped = 0
    /// Packets waiting in its queue now.
    public var queued = 0
    /// Times the loop woke because its socket became writable.
    public var writableWakeups = 0
  }

  private final class Client {
    let fd: FileDescriptor
    var watch: EventLoop.Watch?
    var queue: [[UInt8]] = []
    var head = 0
    var counters = Counters()
    var droppedInARow = 0
    var watchingWritable = false

    init(fd: FileDescriptor) { self.fd = fd }

    var pending: Int { queue.count - head }
  }

  /// The policy every client gets.
  public let policy: Policy
  /// Called on the loop when a client leaves (after its socket is closed).
  public var onDeparture: ((ClientID, Departure) -> Void)?
  private let loop: EventLoop
  private var clients: [Int: Client] = [:]
  private var nextID = 1

  /// A fan-out on `loop` with `policy`.
  public init(loop: EventLoop, policy: Policy = Policy()) {
    self.loop = loop
    self.policy = policy
  }

  /// A connected `AF_UNIX`/`SOCK_SEQPACKET` pair (`socketpair(2)`, close-on-exec): keep the
  /// first end (give it to `add`), hand the second to the client.
  public static func socketPair() throws(SystemError) -> (FileDescriptor, FileDescriptor) {
    var fds: [Int32] = [-1, -1]
    let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    _ = try retryingInterrupts("socketpair") { socketpair(AF_UNIX, type, 0, &fds) }
    return (
      FileDescriptor(owning: fds[0], path: "motion stream"),
      FileDescriptor(owning: fds[1], path: "motion stream (client end)")
    )
  }

  /// Starts sending to the socket `fd` (the fan-out owns it from now on): makes it
  /// non-blocking, shuts its reading side (the stream is one-way), applies the send buffer
  /// size and watches it for hang-up.
  ///
  /// - Throws: `SystemError` from `fcntl`, `setsockopt` or `epoll_ctl`.
  public func add(_ fd: FileDescriptor) throws(SystemError) -> ClientID {
    let raw = fd.rawValue
    let flags = try retryingInterrupts("fcntl", path: fd.path) { fcntl(raw, F_GETFL) }
    _ = try retryingInterrupts("fcntl", path: fd.path) { fcntl(raw, F_SETFL, flags | O_NONBLOCK) }
    if var size = policy.sendBufferSize.map(Int32.init) {
      _ = try retryingInterrupts("setsockopt SO_SNDBUF", path: fd.path) {
        setsockopt(raw, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
      }
    }
    _ = shutdown(raw, Int32(SHUT_RD))
    let id = ClientID(rawValue: nextID)
    nextID += 1
    let client = Client(fd: fd)
    client.watch = try loop.watch(raw, for: []) { [weak self] events in
      self?.handle(id, events)
    }
    clients[id.rawValue] = client
    return id
  }

  /// Stops sending to a client and closes its socket (no `onDeparture`).
  public func remove(_ id: ClientID) {
    guard let client = clients.removeValue(forKey: id.rawValue) else { return }
    client.watch?.cancel()
    client.fd.close()
  }

  /// Removes every client.
  public func removeAll() {
    for key in Array(clients.keys) { remove(ClientID(rawValue: key)) }
  }

  /// The clients now.
  public var clientIDs: [ClientID] { clients.keys.sorted().map { ClientID(rawValue: $0) } }

  /// One client's counters, or `nil` if it is not (or no longer) a client.
  public func counters(of id: ClientID) -> Counters? {
    guard let c = clients[id.rawValue] else { return nil }
    var counters = c.counters
    counters.queued = c.pending
    return counters
  }

  /// Sends `packet` to every client (tried at once, else queued).
  public func send(_ packet: [UInt8]) {
    for (key, client) in clients {
      deliver(packet, to: client, id: ClientID(rawValue: key))
    }
  }

  private func deliver(_ packet: [UInt8], to client: Client, id: ClientID) {
    if client.pending == 0 {
      switch write(packet, to: client) {
      case .sent: return
      case .wouldBlock: break
      case .gone(let departure):
        depart(id, departure)
        return
      }
    }
    client.queue.append(packet)
    if client.pending > policy.queueLimit {
      client.head += 1
      client.counters.dropped += 1
      client.droppedInARow += 1
      if let limit = policy.disconnectAfterDrops, client.droppedInARow >= limit {
        depart(id, .tooSlow)
        return
      }
    }
    compact(client)
    watchWritable(client, true)
  }

  private enum WriteResult {
    case sent
    case wouldBlock
    case gone(Departure)
  }

  private func write(_ packet: [UInt8], to client: Client) -> WriteResult {
    let raw = client.fd.rawValue
    while true {
      let n = packet.withUnsafeBytes {
        Glibc.send(raw, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
      }
      if n >= 0 {
        client.counters.sent += 1
        client.droppedInARow = 0
        return .sent
      }
      switch errno {
      case EINTR: continue
      case EAGAIN, ENOBUFS: return .wouldBlock
      case EPIPE, ECONNRESET, ECONNREFUSED, ENOTCONN: return .gone(.vanished)
      default: return .gone(.failed(Errno(rawValue: errno)))
      }
    }
  }

  private func handle(_ id: ClientID, _ events: EventLoop.Events) {
    guard let client = clients[id.rawValue] else { return }
    if events.contains(.writable) {
      client.counters.writableWakeups += 1
      while client.pending > 0 {
        switch write(client.queue[client.head], to: client) {
        case .sent:
          client.head += 1
        case .wouldBlock:
          compact(client)
          return
        case .gone(let departure):
          depart(id, departure)
          return
        }
      }
      compact(client)
      watchWritable(client, false)
    }
    if events.contains(.hangup) || events.contains(.error) {
      depart(id, .vanished)
    }
  }

  private func compact(_ client: Client) {
    if client.head > 0, client.head * 2 >= client.queue.count {
      client.queue.removeFirst(client.head)
      client.head = 0
    }
  }

  private func watchWritable(_ client: Client, _ on: Bool) {
    guard client.watchingWritable != on else { return }
    client.watchingWritable = on
    try? client.watch?.update(on ? .writable : [])
  }

  private func depart(_ id: ClientID, _ why: Departure) {
    guard clients[id.rawValue] != nil else { return }
    remove(id)
    onDeparture?(id, why)
  }
}
