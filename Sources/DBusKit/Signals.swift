/// A match rule for signals (`AddMatch`), built from validated parts.
public struct DBusMatchRule: Hashable, Sendable {
  /// The sender: a unique name, or a well-known name whose current owner is followed.
  public var sender: String?
  /// The object path.
  public var path: DBusObjectPath?
  /// The interface.
  public var interface: String?
  /// The signal name.
  public var member: String?
  /// The first argument, which must be a string equal to this.
  public var arg0: String?

  /// Creates a rule for signals; `nil` parts match anything.
  public init(
    sender: String? = nil, path: DBusObjectPath? = nil, interface: String? = nil,
    member: String? = nil, arg0: String? = nil
  ) {
    self.sender = sender
    self.path = path
    self.interface = interface
    self.member = member
    self.arg0 = arg0
  }

  /// `NameOwnerChanged` of one name.
  static func nameOwnerChanged(arg0 name: String) -> DBusMatchRule {
    DBusMatchRule(
      sender: DBusConnection.busName, path: DBusConnection.busPath,
      interface: DBusConnection.busName, member: "NameOwnerChanged", arg0: name)
  }

  /// The rule text, e.g. `type='signal',sender='...',path='...'`.
  public var text: String {
    var parts = ["type='signal'"]
    if let sender { parts.append("sender=\(DBusMatchRule.quote(sender))") }
    if let path { parts.append("path=\(DBusMatchRule.quote(path.rawValue))") }
    if let interface { parts.append("interface=\(DBusMatchRule.quote(interface))") }
    if let member { parts.append("member=\(DBusMatchRule.quote(member))") }
    if let arg0 { parts.append("arg0=\(DBusMatchRule.quote(arg0))") }
    return parts.joined(separator: ",")
  }

  /// Checks each part.
  public func validate() throws(DBusError) {
    if let sender, !DBusNames.isValidBusName(sender) {
      throw DBusError(.invalidArgs, "invalid sender '\(sender)' in match rule")
    }
    if let interface, !DBusNames.isValidInterface(interface) {
      throw DBusError(.invalidArgs, "invalid interface '\(interface)' in match rule")
    }
    if let member, !DBusNames.isValidMember(member) {
      throw DBusError(.invalidArgs, "invalid member '\(member)' in match rule")
    }
    if let arg0, !DBusNames.isValidString(arg0) {
      throw DBusError(.invalidArgs, "arg0 of a match rule cannot contain NUL")
    }
  }

  /// Whether a signal matches, given the sender's resolved unique name.
  func matches(_ message: DBusMessage, resolvedSender: String?) -> Bool {
    guard message.kind == .signal else { return false }
    if let sender {
      let actual = message.sender
      if actual != sender, resolvedSender == nil || actual != resolvedSender { return false }
    }
    if let path, message.path != path.rawValue { return false }
    if let interface, message.interface != interface { return false }
    if let member, message.member != member { return false }
    if let arg0 {
      guard message.signature.hasPrefix("s"),
        (try? message.arguments())?.first?.stringValue == arg0
      else { return false }
    }
    return true
  }

  /// Quotes a value for a match rule: inside quotes only `'` is special, written `'\''`.
  static func quote(_ value: String) -> String {
    "'" + value.replacingAll("'", with: "'\\''") + "'"
  }
}

extension String {
  fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
    var out = ""
    for character in self {
      if character == target { out += replacement } else { out.append(character) }
    }
    return out
  }
}

/// A live signal subscription; cancelling or releasing it removes the match rule.
public final class DBusSubscription {
  /// The rule.
  public let rule: DBusMatchRule
  private let connection: DBusConnection
  private var handler: ((DBusMessage) -> Void)?
  private var ownerWatch: DBusNameWatch?

  init(
    connection: DBusConnection, rule: DBusMatchRule, handler: @escaping (DBusMessage) -> Void
  ) throws(DBusError) {
    self.connection = connection
    self.rule = rule
    self.handler = handler
    if let sender = rule.sender, !sender.hasPrefix(":"), sender != DBusConnection.busName {
      // Signals carry the owner's unique name: follow who owns the well-known one.
      ownerWatch = try connection.watchName(sender) { _ in }
    }
    connection.sendMatch("AddMatch", rule.text)
    connection.subscriptions[ObjectIdentifier(self)] = WeakRef(self)
  }

  deinit { cancel() }

  /// Stops delivery and removes the match rule (`RemoveMatch`). Idempotent.
  public func cancel() {
    guard handler != nil else { return }
    handler = nil
    ownerWatch?.cancel()
    ownerWatch = nil
    connection.sendMatch("RemoveMatch", rule.text)
    connection.subscriptions[ObjectIdentifier(self)] = nil
  }

  func deliver(_ message: DBusMessage) {
    guard let handler else { return }
    // Until the owner is known, trust the bus's own filtering by sender.
    let resolved = ownerWatch.map { $0.isKnown ? $0.owner : message.sender } ?? nil
    guard rule.matches(message, resolvedSender: resolved) else { return }
    handler(message)
  }
}

extension DBusConnection {
  /// Subscribes to signals matching `rule` (`AddMatch`); `handler` runs on the loop for each.
  ///
  /// Signals unicast to this connection are delivered too when they match.
  /// - Returns: the subscription; keep it as long as the signals are wanted.
  public func subscribe(_ rule: DBusMatchRule, _ handler: @escaping (DBusMessage) -> Void)
    throws(DBusError) -> DBusSubscription
  {
    try rule.validate()
    try requireOpen()
    return try DBusSubscription(connection: self, rule: rule, handler: handler)
  }

  /// Subscribes to `PropertiesChanged` of one interface on one object; `handler` gets the
  /// changed values (variants unwrapped) and the invalidated names.
  public func subscribePropertiesChanged(
    sender: String?, path: DBusObjectPath, interface: String,
    _ handler: @escaping (_ changed: [String: DBusValue], _ invalidated: [String]) -> Void
  ) throws(DBusError) -> DBusSubscription {
    let rule = DBusMatchRule(
      sender: sender, path: path, interface: DBusInterface.properties,
      member: "PropertiesChanged", arg0: interface)
    let limits = decodingLimits
    let logger = logger
    return try subscribe(rule) { message in
      guard
        let values = try? message.arguments(
          expecting: DBusSignature(trustedTypes: "sa{sv}as"), limits: limits),
        values.count == 3, let changed = values[1].stringKeyedDictionary,
        let invalidated = values[2].stringArray
      else {
        logger.debug("ignoring a malformed PropertiesChanged from \(message.sender ?? "?")")
        return
      }
      handler(changed, invalidated)
    }
  }

  func deliverToSubscriptions(_ message: DBusMessage) {
    guard !subscriptions.isEmpty else { return }
    for entry in Array(subscriptions.values) { entry.value?.deliver(message) }
  }
}
