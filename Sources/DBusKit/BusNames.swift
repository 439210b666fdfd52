import CDBus

/// Flags for `RequestName` (`DBUS_NAME_FLAG_*`).
public struct DBusRequestNameFlags: OptionSet, Sendable {
  /// The C bits.
  public let rawValue: UInt32
  /// Creates flags from C bits.
  public init(rawValue: UInt32) { self.rawValue = rawValue }
  /// `DBUS_NAME_FLAG_ALLOW_REPLACEMENT`: another connection may take the name over.
  public static let allowReplacement = DBusRequestNameFlags(
    rawValue: UInt32(DBUS_NAME_FLAG_ALLOW_REPLACEMENT))
  /// `DBUS_NAME_FLAG_REPLACE_EXISTING`: take it over if the owner allows replacement.
  public static let replaceExisting = DBusRequestNameFlags(
    rawValue: UInt32(DBUS_NAME_FLAG_REPLACE_EXISTING))
  /// `DBUS_NAME_FLAG_DO_NOT_QUEUE`: fail with `exists` instead of waiting in the queue.
  public static let doNotQueue = DBusRequestNameFlags(rawValue: UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE))
}

/// The answer to `RequestName` (`DBUS_REQUEST_NAME_REPLY_*`).
public enum DBusRequestNameReply: UInt32, Sendable {
  /// `DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER`.
  case primaryOwner = 1
  /// `DBUS_REQUEST_NAME_REPLY_IN_QUEUE`: `NameAcquired` follows when the owner leaves.
  case inQueue = 2
  /// `DBUS_REQUEST_NAME_REPLY_EXISTS`: owned by someone else and not queued.
  case exists = 3
  /// `DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER`.
  case alreadyOwner = 4
}

/// The answer to `ReleaseName` (`DBUS_RELEASE_NAME_REPLY_*`).
public enum DBusReleaseNameReply: UInt32, Sendable {
  /// `DBUS_RELEASE_NAME_REPLY_RELEASED`.
  case released = 1
  /// `DBUS_RELEASE_NAME_REPLY_NON_EXISTENT`.
  case nonExistent = 2
  /// `DBUS_RELEASE_NAME_REPLY_NOT_OWNER`.
  case notOwner = 3
}

extension DBusConnection {
  // MARK: Name ownership

  /// Asks the bus for a well-known name (`RequestName`), blocking until it answers.
  ///
  /// `onNameAcquired`/`onNameLost` report later changes (a queued request succeeding, a
  /// replacement taking the name away).
  /// - Throws: `DBusError` (`InvalidArgs` for a bad name, `AccessDenied` when the bus policy
  ///   forbids owning it, `Disconnected`).
  public func requestName(_ name: String, flags: DBusRequestNameFlags = []) throws(DBusError)
    -> DBusRequestNameReply
  {
    try DBusConnection.requireWellKnown(name)
    let reply = try busCallBlocking("RequestName", [.string(name), .uint32(flags.rawValue)])
    guard let code = reply.first?.uint32Value, let result = DBusRequestNameReply(rawValue: code)
    else { throw DBusError(.failed, "unexpected RequestName reply \(reply)") }
    return result
  }

  /// Asks the bus for a well-known name without blocking; `reply` runs on the loop.
  public func requestName(
    _ name: String, flags: DBusRequestNameFlags = [],
    reply: @escaping (Result<DBusRequestNameReply, DBusError>) -> Void
  ) {
    do {
      try DBusConnection.requireWellKnown(name)
    } catch {
      loop.post { reply(.failure(error)) }
      return
    }
    busCall("RequestName", [.string(name), .uint32(flags.rawValue)]) { result in
      reply(
        result.flatMap { values in
          guard let code = values.first?.uint32Value,
            let answer = DBusRequestNameReply(rawValue: code)
          else { return .failure(DBusError(.failed, "unexpected RequestName reply \(values)")) }
          return .success(answer)
        })
    }
  }

  /// Gives a well-known name up (`ReleaseName`), blocking.
  public func releaseName(_ name: String) throws(DBusError) -> DBusReleaseNameReply {
    try DBusConnection.requireWellKnown(name)
    let reply = try busCallBlocking("ReleaseName", [.string(name)])
    guard let code = reply.first?.uint32Value, let result = DBusReleaseNameReply(rawValue: code)
    else { throw DBusError(.failed, "unexpected ReleaseName reply \(reply)") }
    return result
  }

  /// The unique name owning `name`, or `nil` if nobody does (`GetNameOwner`), blocking.
  public func nameOwner(_ name: String) throws(DBusError) -> String? {
    try DBusMessage.requireBusName(name)
    do {
      return try busCallBlocking("GetNameOwner", [.string(name)]).first?.stringValue
    } catch {
      if error.name == .nameHasNoOwner { return nil }
      throw error
    }
  }

  // MARK: Credentials

  /// The Unix user id of the process owning `name` (`GetConnectionUnixUser`), for policy
  /// decisions; `reply` runs on the loop.
  public func unixUser(of name: String, reply: @escaping (Result<UInt32, DBusError>) -> Void) {
    busUInt32("GetConnectionUnixUser", name, reply)
  }

  /// The Unix user id of the process owning `name`, blocking.
  public func unixUser(of name: String) throws(DBusError) -> UInt32 {
    try DBusMessage.requireBusName(name)
    guard
      let uid = try busCallBlocking("GetConnectionUnixUser", [.string(name)]).first?
        .uint32Value
    else { throw DBusError(.failed, "unexpected GetConnectionUnixUser reply") }
    return uid
  }

  private func busUInt32(
    _ member: String, _ name: String, _ reply: @escaping (Result<UInt32, DBusError>) -> Void
  ) {
    guard DBusNames.isValidBusName(name) else {
      loop.post { reply(.failure(DBusError(.invalidArgs, "invalid bus name '\(name)'"))) }
      return
    }
    busCall(member, [.string(name)]) { result in
      reply(
        result.flatMap { values in
          guard let value = values.first?.uint32Value else {
            return .failure(DBusError(.failed, "unexpected \(member) reply"))
          }
          return .success(value)
        })
    }
  }

  // MARK: Bus driver plumbing

  /// Calls a method of `org.freedesktop.DBus` asynchronously.
  @discardableResult
  func busCall(
    _ member: String, _ arguments: [DBusValue],
    reply: @escaping (Result<[DBusValue], DBusError>) -> Void
  ) -> DBusPendingCall {
    call(
      destination: DBusConnection.busName, path: DBusConnection.busPath,
      interface: DBusConnection.busName, member: member, arguments: arguments, reply: reply)
  }

  func busCallBlocking(_ member: String, _ arguments: [DBusValue]) throws(DBusError)
    -> [DBusValue]
  {
    try callBlocking(
      destination: DBusConnection.busName, path: DBusConnection.busPath,
      interface: DBusConnection.busName, member: member, arguments: arguments)
  }

  /// Sends `AddMatch`/`RemoveMatch` without asking for a reply: the bus applies match changes
  /// in order with the messages that follow, so no round trip is needed.
  func sendMatch(_ member: String, _ rule: String) {
    do {
      let message = try DBusMessage.methodCall(
        destination: DBusConnection.busName, path: DBusConnection.busPath,
        interface: DBusConnection.busName, member: member, arguments: [.string(rule)])
      try message.setNoReply()
      try send(message)
    } catch {
      if isConnected { logger.warning("\(member) \(rule) failed: \(error)") }
    }
  }

  static func requireWellKnown(_ name: String) throws(DBusError) {
    guard DBusNames.isValidWellKnownName(name) else {
      throw DBusError(
        .invalidArgs,
        "invalid bus name '\(name)': use a dotted name such as org.orientd.Orientation1")
    }
  }

  /// Signals from the bus driver itself (sender `org.freedesktop.DBus`, which only the bus
  /// can use, so clients cannot fake a vanished name).
  func handleBusSignal(_ message: DBusMessage) {
    guard let member = message.member else { return }
    switch member {
    case "NameOwnerChanged":
      guard let values = try? message.arguments(expecting: DBusConnection.nameOwnerChanged),
        values.count == 3, let name = values[0].stringValue, let old = values[1].stringValue,
        let new = values[2].stringValue
      else { return }
      if let watches = nameWatches[name] {
        for watch in watches.values { watch.value?.ownerChanged(new.isEmpty ? nil : new) }
      }
      for tracker in trackers.values { tracker.value?.nameOwnerChanged(name, old: old, new: new) }
    case "NameAcquired", "NameLost":
      guard message.destination == uniqueName,
        let name = (try? message.arguments(expecting: DBusConnection.oneString))?.first?
          .stringValue,
        !name.hasPrefix(":")
      else { return }
      if member == "NameAcquired" { onNameAcquired?(name) } else { onNameLost?(name) }
    default:
      return
    }
  }

  private static let nameOwnerChanged = DBusSignature(trustedTypes: "sss")
  private static let oneString = DBusSignature(trustedTypes: "s")

  // MARK: Watching names

  /// Watches who owns `name`: `handler` gets the current owner (a unique name, or `nil`) soon
  /// after, and every change until the watch is cancelled or released. Use it to wait for a
  /// service to appear.
  public func watchName(_ name: String, _ handler: @escaping (String?) -> Void)
    throws(DBusError) -> DBusNameWatch
  {
    try DBusMessage.requireBusName(name)
    try requireOpen()
    return DBusNameWatch(connection: self, name: name, handler: handler)
  }
}

extension DBusSignature {
  /// For constant signatures known to be valid.
  init(trustedTypes text: String) {
    self = (try? DBusSignature(text)) ?? .empty
  }
}

/// Follows the owner of one bus name (`NameOwnerChanged` with `arg0`, plus `GetNameOwner`).
public final class DBusNameWatch {
  /// The watched name.
  public let name: String
  /// The last owner reported (`nil`: none, or not known yet).
  public private(set) var owner: String?
  private let connection: DBusConnection
  private var handler: ((String?) -> Void)?
  private var reported = false
  private let rule: String

  init(connection: DBusConnection, name: String, handler: @escaping (String?) -> Void) {
    self.connection = connection
    self.name = name
    self.handler = handler
    rule = DBusMatchRule.nameOwnerChanged(arg0: name).text
    connection.sendMatch("AddMatch", rule)
    connection.nameWatches[name, default: [:]][ObjectIdentifier(self)] = WeakRef(self)
    connection.busCall("GetNameOwner", [.string(name)]) { [weak self] result in
      switch result {
      case .success(let values): self?.initialOwner(values.first?.stringValue)
      case .failure(let error) where error.name == .nameHasNoOwner: self?.initialOwner(nil)
      case .failure(let error):
        self?.connection.logger.debug("GetNameOwner \(name): \(error)")
      }
    }
  }

  deinit { cancel() }

  /// Whether the handler has been told the owner at least once.
  public var isKnown: Bool { reported }

  /// Stops watching (`RemoveMatch`). Idempotent.
  public func cancel() {
    guard handler != nil else { return }
    handler = nil
    connection.sendMatch("RemoveMatch", rule)
    connection.nameWatches[name]?[ObjectIdentifier(self)] = nil
    if connection.nameWatches[name]?.isEmpty == true { connection.nameWatches[name] = nil }
  }

  private func initialOwner(_ value: String?) {
    // A NameOwnerChanged that arrived first is newer than nothing, but the GetNameOwner
    // answer reflects the state after it: the bus handles our messages in order.
    update(value)
  }

  func ownerChanged(_ value: String?) { update(value) }

  private func update(_ value: String?) {
    guard let handler else { return }
    if reported && value == owner { return }
    owner = value
    reported = true
    handler(value)
  }
}

/// Notices when clients (unique bus names) disconnect, so a server can drop their claims.
///
/// Up to `perNameMatchLimit` names each get their own `NameOwnerChanged` match with `arg0`;
/// beyond that one shared match for every vanishing name is added instead, because the system
/// bus allows only 512 match rules per connection by default. Every tracked name is checked
/// with `NameHasOwner` after its match is in place, so a client that disconnected before that
/// is noticed too. Tracking a name is idempotent; a vanished name is untracked before
/// `onVanished` runs.
public final class DBusClientTracker {
  /// The connection watched through.
  public let connection: DBusConnection
  /// How many names get an individual match rule before switching to the shared one.
  public let perNameMatchLimit: Int
  /// Called once for each tracked name that disappears from the bus.
  public var onVanished: (String) -> Void
  /// The names being tracked.
  public private(set) var trackedNames = Set<String>()
  private var perNameMatches = Set<String>()
  private var sharedMatch = false

  /// Creates a tracker.
  public init(
    connection: DBusConnection, perNameMatchLimit: Int = 64,
    onVanished: @escaping (String) -> Void
  ) {
    self.connection = connection
    self.perNameMatchLimit = perNameMatchLimit
    self.onVanished = onVanished
    connection.trackers[ObjectIdentifier(self)] = WeakRef(self)
  }

  deinit {
    for name in perNameMatches {
      connection.sendMatch("RemoveMatch", DBusMatchRule.nameOwnerChanged(arg0: name).text)
    }
    if sharedMatch { connection.sendMatch("RemoveMatch", DBusClientTracker.sharedRule) }
    connection.trackers[ObjectIdentifier(self)] = nil
  }

  /// Match rules this tracker holds on the bus (for tests: returns to 0 when idle).
  public var matchRuleCount: Int { perNameMatches.count + (sharedMatch ? 1 : 0) }

  /// Starts tracking `name` (usually `invocation.sender`).
  public func track(_ name: String) {
    guard DBusNames.isValidBusName(name), trackedNames.insert(name).inserted else { return }
    if !sharedMatch && perNameMatches.count < perNameMatchLimit {
      perNameMatches.insert(name)
      connection.sendMatch("AddMatch", DBusMatchRule.nameOwnerChanged(arg0: name).text)
    } else if !sharedMatch {
      sharedMatch = true
      connection.sendMatch("AddMatch", DBusClientTracker.sharedRule)
    }
    connection.busCall("NameHasOwner", [.string(name)]) { [weak self] result in
      guard case .success(let values) = result, values.first?.boolValue == false else { return }
      self?.vanished(name)
    }
  }

  /// Stops tracking `name` and drops its match rule (and the shared one when nothing is
  /// tracked any more).
  public func untrack(_ name: String) {
    guard trackedNames.remove(name) != nil else { return }
    if perNameMatches.remove(name) != nil {
      connection.sendMatch("RemoveMatch", DBusMatchRule.nameOwnerChanged(arg0: name).text)
    }
    if sharedMatch && trackedNames.isEmpty {
      sharedMatch = false
      connection.sendMatch("RemoveMatch", DBusClientTracker.sharedRule)
    }
  }

  func nameOwnerChanged(_ name: String, old: String, new: String) {
    guard new.isEmpty else { return }
    vanished(name)
  }

  private func vanished(_ name: String) {
    guard trackedNames.contains(name) else { return }
    untrack(name)
    onVanished(name)
  }

  /// Every name losing its owner (the new owner, `arg2`, is empty).
  static let sharedRule =
    "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
    + "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg2=''"
}
