import CDBus
import Glibc
import SystemKit

/// A file descriptor in a D-Bus message (type `h`, `DBUS_TYPE_UNIX_FD`), owned by this object
/// and closed when the last reference goes.
///
/// Sending duplicates it into the message (libdbus `dup`s what is appended), so the sender
/// keeps its own; a received one is a descriptor of this process (libdbus `dup`s it out of the
/// message, close-on-exec). `duplicated()` hands out an independent descriptor to keep, e.g. in
/// a `SystemKit.FileDescriptor`. Equality is identity: two objects are two descriptors.
public final class DBusFileDescriptor: Hashable, Sendable, CustomStringConvertible {
  /// The descriptor, valid while this object lives.
  public let rawValue: Int32

  /// Takes over `fd` (closed in `deinit`).
  public init(owning fd: Int32) {
    rawValue = fd
  }

  /// A descriptor of its own for `fd` (`fcntl(F_DUPFD_CLOEXEC)`); `fd` stays the caller's.
  ///
  /// - Throws: `SystemError` (e.g. `EBADF` for a descriptor that is not open).
  public convenience init(duplicating fd: Int32) throws(SystemError) {
    let copy = try retryingInterrupts("fcntl F_DUPFD_CLOEXEC") { fcntl(fd, F_DUPFD_CLOEXEC, 3) }
    self.init(owning: copy)
  }

  deinit { _ = Glibc.close(rawValue) }

  /// An independent descriptor for the same open file, owned by the returned object.
  ///
  /// - Throws: `SystemError` from `fcntl(F_DUPFD_CLOEXEC)`.
  public func duplicated() throws(SystemError) -> FileDescriptor {
    let fd = rawValue
    let copy = try retryingInterrupts("fcntl F_DUPFD_CLOEXEC") { fcntl(fd, F_DUPFD_CLOEXEC, 3) }
    return FileDescriptor(owning: copy, path: "fd received over D-Bus")
  }

  /// Identity.
  public static func == (a: DBusFileDescriptor, b: DBusFileDescriptor) -> Bool { a === b }

  /// Hashes the identity.
  public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

  /// `fd N`.
  public var description: String { "fd \(rawValue)" }
}

extension DBusConnection {
  /// Whether this connection passes file descriptors (`dbus_connection_can_send_type` with
  /// `h`): both ends negotiated `UNIX_FD` at authentication (a Unix socket with libdbus 1.4+
  /// or GDBus; never TCP).
  public var canPassFileDescriptors: Bool {
    !closed && dbus_connection_can_send_type(raw, Int32(UInt8(ascii: "h"))) != 0
  }

  /// Refuses a message carrying descriptors on a connection that cannot pass them: libdbus
  /// would drop such a message silently.
  func requireDescriptorSupport(_ message: DBusMessage) throws(DBusError) {
    guard dbus_message_contains_unix_fds(message.raw) != 0, !canPassFileDescriptors else { return }
    throw DBusError(
      .failed,
      "this connection cannot pass file descriptors (type 'h'): UNIX_FD was not negotiated"
        + " with \(address)")
  }
}
