import CDBus
import Glibc
import OrientLog
import SystemKit

/// A private connection to a message bus (the C `DBusConnection`), driven by an `EventLoop`.
///
/// Opened with `dbus_connection_open_private` and registered with `Hello`, so a process (a test)
/// can hold several. libdbus's socket watches, timeouts and dispatching all run as callbacks on
/// the loop that was passed in: nothing here starts a thread, and everything must be used from
/// the loop's thread. The connection never calls `exit()` when the bus goes away
/// (`dbus_connection_set_exit_on_disconnect(FALSE)`); `onDisconnect` is called instead.
///
/// The same object is the object server (`export`), the client (`call`, `subscribe`) and the
/// bus-name owner (`requestName`). Handlers that capture the connection create a reference
/// cycle: call `close()` on shutdown, which breaks it.
public final class DBusConnection {
  /// Which bus to connect to.
  public enum Bus: Sendable, Equatable {
    /// `DBUS_SYSTEM_BUS_ADDRESS`, or `unix:path=/var/run/dbus/system_bus_socket` like libdbus.
    case system
    /// `DBUS_SESSION_BUS_ADDRESS`, or `$XDG_RUNTIME_DIR/bus` (no X11 autolaunch).
    case session
    /// An explicit address such as `unix:path=/tmp/bus.sock`.
    case address(String)
  }

  /// `DBUS_TIMEOUT_USE_DEFAULT`: libdbus's default reply timeout (25 s).
  public static let defaultTimeout: Int32 = -1

  let raw: OpaquePointer
  /// The loop that drives this connection.
  public let loop: EventLoop
  /// Where DBusKit logs handler mistakes (wrong reply types, double replies) and bus problems.
  public var logger: Logger
  /// The address that was connected to.
  public let address: String
  /// The unique name the bus assigned (`dbus_bus_get_unique_name`), e.g. `:1.42`.
  public let uniqueName: String
  /// Whether the connection is open; false after `close()` or once the bus went away.
  public private(set) var isConnected = true
  /// Called once when the bus goes away (the `org.freedesktop.DBus.Local.Disconnected`
  /// signal), not after `close()`.
  public var onDisconnect: (() -> Void)?
  /// Called when this connection becomes the owner of a well-known name (`NameAcquired`).
  public var onNameAcquired: ((String) -> Void)?
  /// Called when this connection loses a well-known name (`NameLost`), e.g. to a replacement.
  public var onNameLost: ((String) -> Void)?
  /// Bounds applied when decoding incoming method calls and replies.
  public var decodingLimits = DBusDecodingLimits.default

  private let watches: WatchSet
  private let timeouts: TimeoutSet
  private var filterInstalled = false
  private var dispatchPosted = false
  private var dispatching = false
  private(set) var closed = false

  // Registries; each must drain back to empty as clients come and go.
  var objects: [String: ExportedObject] = [:]
  var invocationCount = 0
  var pendingCalls: [ObjectIdentifier: DBusPendingCall] = [:]
  var subscriptions: [ObjectIdentifier: WeakRef<DBusSubscription>] = [:]
  var nameWatches: [String: [ObjectIdentifier: WeakRef<DBusNameWatch>]] = [:]
  var trackers: [ObjectIdentifier: WeakRef<DBusClientTracker>] = [:]

  /// Connects, registers with the bus (a blocking `Hello`) and attaches to `loop`.
  ///
  /// - Throws: `DBusError` saying which address failed and why (no daemon listening, bad
  ///   address, authentication refused), or `NoServer` for a session bus that is not there.
  public init(
    bus: Bus, loop: EventLoop, logger: Logger = Logger(label: "dbus")
  ) throws(DBusError) {
    let address = try DBusConnection.resolve(bus)
    let what = DBusConnection.describe(bus, address)
    guard DBusNames.hasNoNul(address) else {
      throw DBusError(.badAddress, "\(what): the address contains a NUL character")
    }
    let opened: OpaquePointer?
    do {
      opened = try DBusError.check { dbus_connection_open_private(address, &$0) }
    } catch {
      throw DBusError(error.name, "cannot connect to \(what): \(error.message)")
    }
    guard let opened else { throw DBusError(.noServer, "cannot connect to \(what)") }
    dbus_connection_set_exit_on_disconnect(opened, 0)
    do {
      _ = try DBusError.check { dbus_bus_register(opened, &$0) }
    } catch {
      dbus_connection_close(opened)
      dbus_connection_unref(opened)
      throw DBusError(error.name, "cannot register with \(what): \(error.message)")
    }
    guard let unique = dbus_bus_get_unique_name(opened) else {
      dbus_connection_close(opened)
      dbus_connection_unref(opened)
      throw DBusError(.failed, "\(what) assigned no unique name")
    }
    raw = opened
    self.loop = loop
    self.logger = logger
    self.address = address
    uniqueName = String(cString: unique)
    watches = WatchSet(loop: loop)
    timeouts = TimeoutSet(loop: loop)
    // From here on deinit runs if this throws, and closes the connection.
    try attach()
  }

  deinit {
    close()
    dbus_connection_unref(raw)
  }

  /// Closes the connection (`dbus_connection_close`) and detaches it from the loop.
  ///
  /// Outstanding calls are cancelled without calling their handlers; exported objects, names
  /// and match rules go away with the connection on the bus side. Idempotent.
  public func close() {
    guard !closed else { return }
    closed = true
    isConnected = false
    for call in pendingCalls.values { call.cancel() }
    pendingCalls = [:]
    dbus_connection_close(raw)
    if filterInstalled {
      filterInstalled = false
      dbus_connection_remove_filter(raw, messageFilter, Unmanaged.passUnretained(self).toOpaque())
    }
    dbus_connection_set_dispatch_status_function(raw, nil, nil, nil)
    dbus_connection_set_watch_functions(raw, nil, nil, nil, nil, nil)
    dbus_connection_set_timeout_functions(raw, nil, nil, nil, nil, nil)
    watches.invalidate()
    timeouts.invalidate()
  }

  // MARK: Loop integration

  private func attach() throws(DBusError) {
    let watchContext = Unmanaged.passRetained(watches).toOpaque()
    let watchesSet = dbus_connection_set_watch_functions(
      raw,
      { watch, data in
        guard let watch, let data else { return 0 }
        return Unmanaged<WatchSet>.fromOpaque(data).takeUnretainedValue().add(watch) ? 1 : 0
      },
      { watch, data in
        guard let watch, let data else { return }
        Unmanaged<WatchSet>.fromOpaque(data).takeUnretainedValue().remove(watch)
      },
      { watch, data in
        guard let watch, let data else { return }
        Unmanaged<WatchSet>.fromOpaque(data).takeUnretainedValue().toggled(watch)
      },
      watchContext,
      { data in
        guard let data else { return }
        let set = Unmanaged<WatchSet>.fromOpaque(data).takeRetainedValue()
        set.invalidate()
      })
    guard watchesSet != 0 else {
      // libdbus called the free function for our context already only if it stored it; it
      // does not store it on failure, so release it here.
      Unmanaged<WatchSet>.fromOpaque(watchContext).release()
      throw DBusError(.noMemory, "cannot watch the bus socket of \(address)")
    }
    let timeoutContext = Unmanaged.passRetained(timeouts).toOpaque()
    let timeoutsSet = dbus_connection_set_timeout_functions(
      raw,
      { timeout, data in
        guard let timeout, let data else { return 0 }
        return Unmanaged<TimeoutSet>.fromOpaque(data).takeUnretainedValue().add(timeout) ? 1 : 0
      },
      { timeout, data in
        guard let timeout, let data else { return }
        Unmanaged<TimeoutSet>.fromOpaque(data).takeUnretainedValue().remove(timeout)
      },
      { timeout, data in
        guard let timeout, let data else { return }
        Unmanaged<TimeoutSet>.fromOpaque(data).takeUnretainedValue().toggled(timeout)
      },
      timeoutContext,
      { data in
        guard let data else { return }
        Unmanaged<TimeoutSet>.fromOpaque(data).takeRetainedValue().invalidate()
      })
    guard timeoutsSet != 0 else {
      Unmanaged<TimeoutSet>.fromOpaque(timeoutContext).release()
      throw DBusError(.noMemory, "cannot create timers for \(address)")
    }
    // The dispatch status callback and the filter hold the connection weakly: libdbus keeps
    // them as long as the connection lives, and the connection must be able to deinit.
    let statusContext = Unmanaged.passRetained(WeakRef(self)).toOpaque()
    dbus_connection_set_dispatch_status_function(
      raw,
      { _, status, data in
        guard let data, status == DBUS_DISPATCH_DATA_REMAINS else { return }
        Unmanaged<WeakRef<DBusConnection>>.fromOpaque(data).takeUnretainedValue().value?
          .scheduleDispatch()
      },
      statusContext,
      { data in
        guard let data else { return }
        Unmanaged<WeakRef<DBusConnection>>.fromOpaque(data).release()
      })
    // The filter's data is the connection itself, unretained: the filter is removed in
    // close(), which deinit always calls.
    guard
      dbus_connection_add_filter(
        raw, messageFilter, Unmanaged.passUnretained(self).toOpaque(), nil) != 0
    else {
      throw DBusError(.noMemory, "cannot add a message filter to \(address)")
    }
    filterInstalled = true
    if dbus_connection_get_dispatch_status(raw) == DBUS_DISPATCH_DATA_REMAINS {
      scheduleDispatch()
    }
  }

  /// Posts one dispatch pass to the loop (coalesced).
  func scheduleDispatch() {
    guard !dispatchPosted, !closed else { return }
    dispatchPosted = true
    loop.post { [weak self] in self?.dispatchPending() }
  }

  /// `dbus_connection_dispatch` until the queue is empty.
  ///
  /// Never re-entered: libdbus's dispatch lock would deadlock if a handler ran the loop and it
  /// dispatched again; the outer pass drains what arrived meanwhile.
  private func dispatchPending() {
    dispatchPosted = false
    guard !closed, !dispatching else { return }
    dispatching = true
    defer { dispatching = false }
    withExtendedLifetime(self) {
      while !closed, dbus_connection_dispatch(raw) == DBUS_DISPATCH_DATA_REMAINS {}
    }
  }

  /// Every message that is not a reply to a pending call comes through here.
  func filter(_ rawMessage: OpaquePointer) -> DBusHandlerResult {
    let type = dbus_message_get_type(rawMessage)
    if type == DBUS_MESSAGE_TYPE_METHOD_CALL {
      handleMethodCall(DBusMessage(borrowing: rawMessage))
      return DBUS_HANDLER_RESULT_HANDLED
    }
    guard type == DBUS_MESSAGE_TYPE_SIGNAL else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    let message = DBusMessage(borrowing: rawMessage)
    if message.sender == nil, message.path == DBusMessage.localPath,
      message.interface == DBusMessage.localInterface, message.member == "Disconnected"
    {
      handleDisconnected()
      return DBUS_HANDLER_RESULT_HANDLED
    }
    if message.sender == DBusConnection.busName, message.interface == DBusConnection.busName {
      handleBusSignal(message)
    }
    deliverToSubscriptions(message)
    return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
  }

  private func handleDisconnected() {
    guard isConnected else { return }
    isConnected = false
    logger.warning("lost the connection to the bus at \(address)")
    // libdbus drops its pending calls on disconnect without notifying them: answer them here.
    let lost = DBusError(.disconnected, "lost the connection to the bus at \(address)")
    for call in Array(pendingCalls.values) { call.abort(lost) }
    onDisconnect?()
  }

  // MARK: Sending

  /// Sends a message without waiting for anything (`dbus_connection_send`).
  ///
  /// - Returns: the serial it was given.
  /// - Throws: `DBusError` (`Disconnected`) if the connection is closed.
  @discardableResult
  public func send(_ message: DBusMessage) throws(DBusError) -> UInt32 {
    try requireOpen()
    guard !message.isBroken else {
      throw DBusError(.failed, "message is unusable after a failed append")
    }
    try requireDescriptorSupport(message)
    var serial: UInt32 = 0
    guard dbus_connection_send(raw, message.raw, &serial) != 0 else {
      throw DBusError.outOfMemory("queueing a message")
    }
    message.markSent()
    return serial
  }

  /// Writes out everything queued (`dbus_connection_flush`); blocks. For command-line tools
  /// about to exit.
  public func flush() {
    guard !closed else { return }
    dbus_connection_flush(raw)
  }

  /// Sends a method call; `reply` runs on the loop with the reply or the error (an error reply,
  /// `NoReply` on timeout, `Disconnected`). Always asynchronous, even for immediate failures.
  ///
  /// - Parameter timeoutMilliseconds: `defaultTimeout` (25 s) or a positive number.
  /// - Returns: a handle that can cancel the call; dropping it does not cancel.
  @discardableResult
  public func call(
    _ message: DBusMessage, timeoutMilliseconds: Int32 = defaultTimeout,
    reply: @escaping (Result<DBusMessage, DBusError>) -> Void
  ) -> DBusPendingCall {
    let call = DBusPendingCall(connection: self, handler: reply)
    guard isConnected, !closed else {
      call.failLater(DBusError(.disconnected, "not connected to \(address)"))
      return call
    }
    guard message.kind == .methodCall, !message.isBroken else {
      call.failLater(DBusError(.failed, "only a complete method call can be sent with call()"))
      return call
    }
    do {
      try requireDescriptorSupport(message)
    } catch {
      call.failLater(error)
      return call
    }
    var pending: OpaquePointer?
    let timeout = timeoutMilliseconds < 0 ? -1 : timeoutMilliseconds
    guard dbus_connection_send_with_reply(raw, message.raw, &pending, timeout) != 0 else {
      call.failLater(DBusError.outOfMemory("sending a method call"))
      return call
    }
    message.markSent()
    guard let pending else {
      call.failLater(DBusError(.disconnected, "not connected to \(address)"))
      return call
    }
    guard call.start(pending) else {
      call.failLater(DBusError.outOfMemory("waiting for a reply"))
      return call
    }
    pendingCalls[ObjectIdentifier(call)] = call
    return call
  }

  /// Calls a method and decodes the reply's arguments (with `decodingLimits`).
  @discardableResult
  public func call(
    destination: String, path: DBusObjectPath, interface: String, member: String,
    arguments: [DBusValue] = [], timeoutMilliseconds: Int32 = defaultTimeout,
    reply: @escaping (Result<[DBusValue], DBusError>) -> Void
  ) -> DBusPendingCall {
    let message: DBusMessage
    do {
      message = try DBusMessage.methodCall(
        destination: destination, path: path, interface: interface, member: member,
        arguments: arguments)
    } catch {
      let call = DBusPendingCall(connection: self) { _ in }
      loop.post { reply(.failure(error)) }
      return call
    }
    let limits = decodingLimits
    return call(message, timeoutMilliseconds: timeoutMilliseconds) { result in
      reply(
        result.flatMap { (message) -> Result<[DBusValue], DBusError> in
          do throws(DBusError) { return .success(try message.arguments(limits: limits)) } catch {
            return .failure(error)
          }
        })
    }
  }

  /// Sends a method call and blocks until the reply arrives
  /// (`dbus_connection_send_with_reply_and_block`). For command-line tools and start-up;
  /// other messages received meanwhile are queued and dispatched by the loop later.
  ///
  /// - Throws: the error reply as a `DBusError`, `NoReply` on timeout, `Disconnected`.
  public func callBlocking(
    _ message: DBusMessage, timeoutMilliseconds: Int32 = defaultTimeout
  ) throws(DBusError) -> DBusMessage {
    try requireOpen()
    guard message.kind == .methodCall, !message.isBroken else {
      throw DBusError(.failed, "only a complete method call can be sent with callBlocking()")
    }
    try requireDescriptorSupport(message)
    let timeout = timeoutMilliseconds < 0 ? -1 : timeoutMilliseconds
    let reply = try DBusError.check {
      dbus_connection_send_with_reply_and_block(raw, message.raw, timeout, &$0)
    }
    message.markSent()
    guard let reply else { throw DBusError(.noReply, "no reply") }
    return DBusMessage(owning: reply, locked: true)
  }

  /// Calls a method, blocking, and decodes the reply's arguments.
  public func callBlocking(
    destination: String, path: DBusObjectPath, interface: String, member: String,
    arguments: [DBusValue] = [], timeoutMilliseconds: Int32 = defaultTimeout
  ) throws(DBusError) -> [DBusValue] {
    let message = try DBusMessage.methodCall(
      destination: destination, path: path, interface: interface, member: member,
      arguments: arguments)
    return try callBlocking(message, timeoutMilliseconds: timeoutMilliseconds)
      .arguments(limits: decodingLimits)
  }

  func requireOpen() throws(DBusError) {
    guard isConnected, !closed, dbus_connection_get_is_connected(raw) != 0 else {
      throw DBusError(.disconnected, "not connected to \(address)")
    }
  }

  // MARK: Diagnostics

  /// Sizes of the internal registries, which return to their idle values when clients are gone.
  public struct Statistics: Equatable, Sendable {
    /// Exported object paths.
    public var exportedObjects: Int
    /// Method invocations not yet answered.
    public var openInvocations: Int
    /// Outgoing calls waiting for a reply.
    public var pendingCalls: Int
    /// Live signal subscriptions.
    public var subscriptions: Int
    /// Names watched with `watchName`.
    public var watchedNames: Int
    /// libdbus timeouts armed (one per pending call).
    public var timeouts: Int
    /// epoll registrations for the socket.
    public var socketWatches: Int
  }

  /// The current registry sizes.
  public var statistics: Statistics {
    Statistics(
      exportedObjects: objects.count, openInvocations: invocationCount,
      pendingCalls: pendingCalls.count,
      subscriptions: subscriptions.values.filter { $0.value != nil }.count,
      watchedNames: nameWatches.count, timeouts: timeouts.count,
      socketWatches: watches.registrationCount)
  }

  // MARK: Addresses

  static let busName = "org.freedesktop.DBus"
  static let busPath = DBusObjectPath(trusted: "/org/freedesktop/DBus")

  /// The address libdbus would use for `bus`.
  public static func resolve(_ bus: Bus) throws(DBusError) -> String {
    switch bus {
    case .address(let address):
      return address
    case .system:
      if let value = environment("DBUS_SYSTEM_BUS_ADDRESS") { return value }
      return "unix:path=/var/run/dbus/system_bus_socket"
    case .session:
      if let value = environment("DBUS_SESSION_BUS_ADDRESS") { return value }
      if let runtime = environment("XDG_RUNTIME_DIR"), access("\(runtime)/bus", F_OK) == 0 {
        return "unix:path=\(runtime)/bus"
      }
      throw DBusError(
        .noServer,
        "no session bus: DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus does "
          + "not exist (start one with dbus-run-session, or use the system bus)")
    }
  }

  private static func environment(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    let text = String(cString: value)
    return text.isEmpty ? nil : text
  }

  private static func describe(_ bus: Bus, _ address: String) -> String {
    switch bus {
    case .system: return "the system bus at \(address) (DBUS_SYSTEM_BUS_ADDRESS)"
    case .session: return "the session bus at \(address) (DBUS_SESSION_BUS_ADDRESS)"
    case .address: return "the bus at \(address)"
    }
  }
}

/// The message filter (`DBusHandleMessageFunction`); `data` is the unretained connection.
private let messageFilter: DBusHandleMessageFunction = { _, message, data in
  guard let message, let data else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
  return Unmanaged<DBusConnection>.fromOpaque(data).takeUnretainedValue().filter(message)
}

/// A weak reference, for registries and callback contexts that must not keep objects alive.
final class WeakRef<T: AnyObject> {
  weak var value: T?
  init(_ value: T) { self.value = value }
}

/// An outgoing method call waiting for its reply (the C `DBusPendingCall`).
///
/// The connection keeps it until the reply, the timeout or `cancel()`; dropping this handle
/// does not cancel the call.
public final class DBusPendingCall {
  private weak var connection: DBusConnection?
  private var pending: OpaquePointer?
  private var handler: ((Result<DBusMessage, DBusError>) -> Void)?

  init(connection: DBusConnection, handler: @escaping (Result<DBusMessage, DBusError>) -> Void) {
    self.connection = connection
    self.handler = handler
  }

  deinit {
    if let pending { dbus_pending_call_unref(pending) }
  }

  /// Registers the notify callback (`dbus_pending_call_set_notify`), retaining this object
  /// until libdbus frees the pending call.
  func start(_ pending: OpaquePointer) -> Bool {
    self.pending = pending
    let context = Unmanaged.passRetained(self).toOpaque()
    let ok = dbus_pending_call_set_notify(
      pending,
      { _, data in
        guard let data else { return }
        Unmanaged<DBusPendingCall>.fromOpaque(data).takeUnretainedValue().complete()
      },
      context,
      { data in
        guard let data else { return }
        Unmanaged<DBusPendingCall>.fromOpaque(data).release()
      })
    guard ok != 0 else {
      Unmanaged<DBusPendingCall>.fromOpaque(context).release()
      dbus_pending_call_cancel(pending)
      dbus_pending_call_unref(pending)
      self.pending = nil
      return false
    }
    return true
  }

  /// The notify callback: takes the reply and runs the handler.
  private func complete() {
    guard let pending else { return }
    let reply = dbus_pending_call_steal_reply(pending)
    self.pending = nil
    // Not unreferenced inside libdbus's own notify call: later, from the loop.
    if let loop = connection?.loop {
      loop.post { dbus_pending_call_unref(pending) }
    } else {
      dbus_pending_call_unref(pending)
    }
    connection?.pendingCalls[ObjectIdentifier(self)] = nil
    guard let handler else { return }
    self.handler = nil
    guard let reply else {
      handler(.failure(DBusError(.noReply, "no reply")))
      return
    }
    let message = DBusMessage(owning: reply, locked: true)
    if let error = message.error {
      handler(.failure(error))
    } else {
      handler(.success(message))
    }
  }

  /// Stops waiting (`dbus_pending_call_cancel`); the handler will not run. Idempotent.
  public func cancel() {
    handler = nil
    connection?.pendingCalls[ObjectIdentifier(self)] = nil
    guard let pending else { return }
    self.pending = nil
    dbus_pending_call_cancel(pending)
    dbus_pending_call_unref(pending)
  }

  /// Cancels the C side and runs the handler with `error` now.
  func abort(_ error: DBusError) {
    let handler = self.handler
    cancel()
    handler?(.failure(error))
  }

  /// Reports `error` from the loop (never synchronously inside `call`).
  func failLater(_ error: DBusError) {
    guard let loop = connection?.loop else { return }
    loop.post { [self] in
      guard let handler else { return }
      self.handler = nil
      handler(.failure(error))
    }
  }
}
