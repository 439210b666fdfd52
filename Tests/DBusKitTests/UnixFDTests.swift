import DBusKit
import Glibc
import SystemKit
import TestSupport
import TestThreads
import Testing

/// File descriptors over D-Bus (type `h`, `DBUS_TYPE_UNIX_FD`) on a private bus: how
/// org.orientd.Motion1.OpenStream hands a client its stream socket (docs/motion.md).
@Suite(.ownThreads) struct UnixFDTests {
  static let path = DBusObjectPath.fixture("/org/orientd/Streams1")
  static let interface = "org.orientd.Streams1"

  /// A service with `Open() -> h` (a fresh socket pair: keeps one end, hands over the other)
  /// and `Write(h fd, s text)` (writes `text` into the descriptor it was given).
  final class StreamService {
    let connection: DBusConnection
    var kept: [FileDescriptor] = []

    init(bus: PrivateBus, loop: EventLoop) throws {
      connection = try DBusConnection(bus: .address(bus.address), loop: loop)
      try connection.export(
        [
          DBusInterface(
            UnixFDTests.interface,
            methods: [
              DBusMethod(
                "Open", out: [DBusArgument("stream", .unixFD)],
                replying: { [unowned self] (_) throws(DBusError) -> [DBusValue] in
                  let (ours, theirs): (FileDescriptor, FileDescriptor)
                  do {
                    (ours, theirs) = try PacketFanout.socketPair()
                  } catch {
                    throw DBusError(.failed, "\(error)")
                  }
                  self.kept.append(ours)
                  // The reply carries a duplicate of their end; ours closes after the reply.
                  do {
                    return [.unixFD(try DBusFileDescriptor(duplicating: theirs.rawValue))]
                  } catch {
                    throw DBusError(.failed, "\(error)")
                  }
                }),
              DBusMethod(
                "Write", in: [DBusArgument("fd", .unixFD), DBusArgument("text", .string)],
                replying: { (invocation) throws(DBusError) -> [DBusValue] in
                  guard let fd = invocation.arguments[0].fileDescriptorValue,
                    let text = invocation.arguments[1].stringValue
                  else { throw DBusError(.invalidArgs, "fd and text") }
                  let n = Glibc.write(fd.rawValue, text, text.utf8.count)
                  guard n == text.utf8.count else {
                    throw DBusError(.failed, "write: \(Errno.current)")
                  }
                  return []
                }),
            ])
        ], at: UnixFDTests.path)
    }

    deinit { connection.close() }
  }

  @Test func aServiceHandsOverASocketAndTheCallerReadsWhatItSends() throws {
    let bus = try PrivateBus(openPolicy: true)
    let loop = try EventLoop()
    let service = try StreamService(bus: bus, loop: loop)
    let client = try DBusConnection(bus: .address(bus.address), loop: loop)
    defer { client.close() }
    #expect(client.canPassFileDescriptors, "a Unix socket bus negotiates UNIX_FD")
    let reply = try waitForResult(loop) { done in
      client.call(
        destination: service.connection.uniqueName, path: Self.path,
        interface: Self.interface, member: "Open", reply: done)
    }
    let values = try reply.get()
    let received = try #require(values.first?.fileDescriptorValue)
    let ours = try #require(service.kept.first)
    #expect(received.rawValue != ours.rawValue)
    // A packet written by the service arrives on the client's end, and back the other way.
    let packet: [UInt8] = Array("OMOT batch".utf8)
    #expect(send(ours.rawValue, packet, packet.count, 0) == packet.count)
    var buffer = [UInt8](repeating: 0, count: 64)
    let n = recv(received.rawValue, &buffer, buffer.count, Int32(MSG_DONTWAIT))
    #expect(n == packet.count)
    #expect(Array(buffer.prefix(max(0, n))) == packet)
    // The client may keep a descriptor of its own beyond the message value.
    let kept = try received.duplicated()
    #expect(kept.rawValue != received.rawValue)
  }

  @Test func aDescriptorSentAsAnArgumentReachesTheService() throws {
    let bus = try PrivateBus(openPolicy: true)
    let loop = try EventLoop()
    let service = try StreamService(bus: bus, loop: loop)
    let client = try DBusConnection(bus: .address(bus.address), loop: loop)
    defer { client.close() }
    var fds: [Int32] = [-1, -1]
    let piped = pipe(&fds)
    #expect(piped == 0)
    let reader = FileDescriptor(owning: fds[0], path: "pipe")
    let writer = try DBusFileDescriptor(duplicating: fds[1])
    _ = Glibc.close(fds[1])
    let result = try waitForResult(loop) { done in
      client.call(
        destination: service.connection.uniqueName, path: Self.path,
        interface: Self.interface, member: "Write",
        arguments: [.unixFD(writer), .string("through the bus")], reply: done)
    }
    _ = try result.get()
    var buffer = [UInt8](repeating: 0, count: 64)
    let n = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) } ?? 0
    #expect(String(decoding: buffer.prefix(n), as: UTF8.self) == "through the bus")
  }

  @Test func descriptorsDoNotLeakOverManyCalls() throws {
    // Other tests open and close descriptors meanwhile, so the sockets are followed by their
    // inodes (unique while they exist), not by a count of descriptors.
    let bus = try PrivateBus(openPolicy: true)
    let loop = try EventLoop()
    let service = try StreamService(bus: bus, loop: loop)
    let client = try DBusConnection(bus: .address(bus.address), loop: loop)
    defer { client.close() }
    let destination = service.connection.uniqueName
    var sockets = Set<String>()
    for _ in 0..<50 {
      let reply = try waitForResult(loop) { done in
        client.call(
          destination: destination, path: Self.path, interface: Self.interface, member: "Open",
          reply: done)
      }
      let received = try #require(try reply.get().first?.fileDescriptorValue)
      let ours = try #require(service.kept.last)
      sockets.insert(try Self.socketName(received.rawValue))
      sockets.insert(try Self.socketName(ours.rawValue))
    }
    #expect(sockets.count == 100)
    service.kept.removeAll()
    // The received descriptors went with their replies' values: none of the 100 sockets is
    // open in this process any more.
    let open = Self.openSockets()
    #expect(sockets.isDisjoint(with: open), "\(sockets.intersection(open).count) still open")
  }

  /// `socket:[inode]`, as /proc/self/fd shows the socket behind `fd`.
  static func socketName(_ fd: Int32) throws -> String {
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw TestFailure("fstat \(fd): \(Errno.current)") }
    return "socket:[\(info.st_ino)]"
  }

  /// What every descriptor of this process that is a socket shows in /proc/self/fd.
  static func openSockets() -> Set<String> {
    guard let dir = opendir("/proc/self/fd") else { return [] }
    defer { closedir(dir) }
    var names = Set<String>()
    var target = [CChar](repeating: 0, count: 256)
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) {
        String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
      }
      let n = readlink("/proc/self/fd/\(name)", &target, target.count - 1)
      guard n > 0 else { continue }
      let link = String(decoding: target.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
      if link.hasPrefix("socket:") { names.insert(link) }
    }
    return names
  }
}
