import CDBus

/// A D-Bus message (the C `DBusMessage`), owned by this object and unreferenced in `deinit`.
///
/// Messages are built with `methodCall`/`signal`/`makeReply`/`makeErrorReply` and filled with
/// `append`; received ones are read with `arguments(limits:)`. Every string handed to libdbus is
/// validated first: libdbus aborts the process on invalid arguments.
public final class DBusMessage {
  /// The message type (`dbus_message_get_type`).
  public enum Kind: Sendable, Equatable {
    /// `DBUS_MESSAGE_TYPE_METHOD_CALL`.
    case methodCall
    /// `DBUS_MESSAGE_TYPE_METHOD_RETURN`.
    case methodReturn
    /// `DBUS_MESSAGE_TYPE_ERROR`.
    case error
    /// `DBUS_MESSAGE_TYPE_SIGNAL`.
    case signal
    /// A type this library does not know (the specification says to ignore those).
    case other(Int32)
  }

  let raw: OpaquePointer
  /// Received, demarshalled and sent messages are locked: libdbus aborts on changing them.
  private(set) var isLocked: Bool
  /// Set when appending failed half-way; such a message is never sent.
  private(set) var isBroken = false

  /// Takes over one reference to `raw`.
  init(owning raw: OpaquePointer, locked: Bool) {
    self.raw = raw
    self.isLocked = locked
  }

  /// Adds a reference to a message libdbus lends us (a filter argument).
  convenience init(borrowing raw: OpaquePointer) {
    dbus_message_ref(raw)
    self.init(owning: raw, locked: true)
  }

  deinit { dbus_message_unref(raw) }

  // MARK: Creating

  /// A method call (`dbus_message_new_method_call`) with its arguments.
  ///
  /// - Parameters:
  ///   - destination: a bus name, or `nil` on a peer-to-peer connection.
  ///   - interface: optional; without it the receiver picks the first member of that name.
  /// - Throws: `DBusError` (`InvalidArgs`) for an invalid name or argument.
  public static func methodCall(
    destination: String?, path: DBusObjectPath, interface: String?, member: String,
    arguments: [DBusValue] = []
  ) throws(DBusError) -> DBusMessage {
    if let destination { try requireBusName(destination) }
    if let interface { try requireInterface(interface) }
    try requireMember(member)
    guard
      let raw = dbus_message_new_method_call(destination, path.rawValue, interface, member)
    else { throw DBusError.outOfMemory("creating a method call") }
    let message = DBusMessage(owning: raw, locked: false)
    try message.append(arguments)
    return message
  }

  /// A signal (`dbus_message_new_signal`) with its arguments.
  ///
  /// - Parameter destination: a unique name for a unicast signal, `nil` to broadcast.
  /// - Throws: `DBusError` (`InvalidArgs`) for an invalid name or argument.
  public static func signal(
    path: DBusObjectPath, interface: String, member: String, arguments: [DBusValue] = [],
    destination: String? = nil
  ) throws(DBusError) -> DBusMessage {
    guard path.rawValue != localPath else {
      throw DBusError(.invalidArgs, "signals may not use the reserved path \(localPath)")
    }
    try requireInterface(interface)
    try requireMember(member)
    guard let raw = dbus_message_new_signal(path.rawValue, interface, member) else {
      throw DBusError.outOfMemory("creating a signal")
    }
    let message = DBusMessage(owning: raw, locked: false)
    if let destination { try message.setDestination(destination) }
    try message.append(arguments)
    return message
  }

  /// A method return for this call (`dbus_message_new_method_return`) with `arguments`.
  ///
  /// - Throws: `DBusError` if this is not a method call that was sent or received, or an
  ///   argument is invalid.
  public func makeReply(_ arguments: [DBusValue] = []) throws(DBusError) -> DBusMessage {
    try requireRepliable()
    guard let reply = dbus_message_new_method_return(raw) else {
      throw DBusError.outOfMemory("creating a method return")
    }
    let message = DBusMessage(owning: reply, locked: false)
    try message.append(arguments)
    return message
  }

  /// An error reply to this call (`dbus_message_new_error`).
  ///
  /// An invalid error name is replaced by `org.freedesktop.DBus.Error.Failed` (the original
  /// name goes into the text) rather than handed to libdbus, which would abort.
  public func makeErrorReply(_ error: DBusError) throws(DBusError) -> DBusMessage {
    try requireRepliable()
    var name = error.name.rawValue
    var text = error.message
    if !DBusNames.isValidErrorName(name) {
      text = "\(name): \(text)"
      name = DBusError.Name.failed.rawValue
    }
    text = String(text.unicodeScalars.map { $0 == "\0" ? "\u{FFFD}" : $0 }.map(Character.init))
    guard let reply = dbus_message_new_error(raw, name, text) else {
      throw DBusError.outOfMemory("creating an error reply")
    }
    return DBusMessage(owning: reply, locked: false)
  }

  /// Parses a marshalled message (`dbus_message_demarshal`), as written by `marshalled()`.
  ///
  /// libdbus validates the header and the whole body, so any byte string is safe here.
  /// - Throws: `DBusError` (`InvalidArgs`) saying why the bytes are not a message.
  public convenience init(demarshalling bytes: [UInt8]) throws(DBusError) {
    guard bytes.count >= 16 else {
      throw DBusError(.invalidArgs, "\(bytes.count) bytes are too short for a D-Bus message")
    }
    guard bytes.count <= 1 << 27 else {
      throw DBusError(.invalidArgs, "\(bytes.count) bytes exceed the 128 MiB message limit")
    }
    let raw = try DBusError.check { error in
      bytes.withUnsafeBufferPointer { buffer in
        buffer.withMemoryRebound(to: CChar.self) {
          dbus_message_demarshal($0.baseAddress, Int32($0.count), &error)
        }
      }
    }
    guard let raw else { throw DBusError(.invalidArgs, "not a D-Bus message") }
    self.init(owning: raw, locked: true)
  }

  /// The message in wire format (`dbus_message_marshal`), e.g. for fuzzing corpora.
  ///
  /// A message that was never sent gets serial 1 first, since a serial of 0 is invalid on the
  /// wire.
  public func marshalled() throws(DBusError) -> [UInt8] {
    if dbus_message_get_serial(raw) == 0 && !isLocked { dbus_message_set_serial(raw, 1) }
    var data: UnsafeMutablePointer<CChar>?
    var length: Int32 = 0
    guard dbus_message_marshal(raw, &data, &length) != 0, let data else {
      throw DBusError.outOfMemory("marshalling a message")
    }
    defer { dbus_free(data) }
    return data.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
      Array(UnsafeBufferPointer(start: $0, count: Int(length)))
    }
  }

  // MARK: Header fields

  /// The message type.
  public var kind: Kind {
    let type = dbus_message_get_type(raw)
    switch type {
    case DBUS_MESSAGE_TYPE_METHOD_CALL: return .methodCall
    case DBUS_MESSAGE_TYPE_METHOD_RETURN: return .methodReturn
    case DBUS_MESSAGE_TYPE_ERROR: return .error
    case DBUS_MESSAGE_TYPE_SIGNAL: return .signal
    default: return .other(type)
    }
  }

  /// The object path (`dbus_message_get_path`).
  public var path: String? { dbus_message_get_path(raw).map { String(cString: $0) } }
  /// The interface (`dbus_message_get_interface`).
  public var interface: String? { dbus_message_get_interface(raw).map { String(cString: $0) } }
  /// The member (`dbus_message_get_member`).
  public var member: String? { dbus_message_get_member(raw).map { String(cString: $0) } }
  /// The error name of an error message (`dbus_message_get_error_name`).
  public var errorName: String? {
    dbus_message_get_error_name(raw).map { String(cString: $0) }
  }
  /// The sender's unique name, set by the bus (`dbus_message_get_sender`).
  public var sender: String? { dbus_message_get_sender(raw).map { String(cString: $0) } }
  /// The destination (`dbus_message_get_destination`).
  public var destination: String? {
    dbus_message_get_destination(raw).map { String(cString: $0) }
  }
  /// The body's signature (`dbus_message_get_signature`).
  public var signature: String {
    dbus_message_get_signature(raw).map { String(cString: $0) } ?? ""
  }
  /// The serial, 0 until sent (`dbus_message_get_serial`).
  public var serial: UInt32 { dbus_message_get_serial(raw) }
  /// The serial this message replies to (`dbus_message_get_reply_serial`).
  public var replySerial: UInt32 { dbus_message_get_reply_serial(raw) }
  /// Whether the sender wants a reply (`!dbus_message_get_no_reply`).
  public var expectsReply: Bool { dbus_message_get_no_reply(raw) == 0 }

  /// Asks the receiver not to reply (`dbus_message_set_no_reply`).
  public func setNoReply(_ noReply: Bool = true) throws(DBusError) {
    try requireUnlocked()
    dbus_message_set_no_reply(raw, noReply ? 1 : 0)
  }

  /// Sets the destination (`dbus_message_set_destination`), e.g. for a unicast signal.
  public func setDestination(_ name: String) throws(DBusError) {
    try requireUnlocked()
    try DBusMessage.requireBusName(name)
    guard dbus_message_set_destination(raw, name) != 0 else {
      throw DBusError.outOfMemory("setting a destination")
    }
  }

  /// For an error message, the error it carries (name and first string argument).
  public var error: DBusError? {
    guard kind == .error else { return nil }
    let text = (try? arguments(limits: .default))?.first?.stringValue ?? ""
    return DBusError(DBusError.Name(errorName ?? DBusError.Name.failed.rawValue), text)
  }

  // MARK: Body

  /// Appends arguments through the iterator API (`dbus_message_iter_append_basic`,
  /// `dbus_message_iter_open_container`).
  ///
  /// Every value is checked first (container element types, string content, nesting depth,
  /// total signature), so libdbus never sees an argument it would abort on.
  /// - Throws: `DBusError` (`InvalidArgs`) naming the bad argument.
  public func append(_ values: [DBusValue]) throws(DBusError) {
    guard !values.isEmpty else { return }
    try requireUnlocked()
    guard !isBroken else { throw DBusError(.failed, "message is unusable after a failed append") }
    for (index, value) in values.enumerated() {
      try MessageWriter.validate(value, argument: index, depth: 0)
    }
    let combined = signature + values.map(\.typeSignature).joined()
    guard (try? DBusSignature(combined)) != nil else {
      throw DBusError(
        .invalidArgs, "the arguments' signature '\(combined)' is not valid (too long or deep)")
    }
    var iter = DBusMessageIter()
    dbus_message_iter_init_append(raw, &iter)
    for value in values {
      do {
        try MessageWriter.write(value, into: &iter)
      } catch {
        isBroken = true
        throw error
      }
    }
  }

  /// Decodes all arguments within `limits`.
  ///
  /// - Throws: `DBusError` (`InvalidArgs`) naming the argument and the limit exceeded.
  public func arguments(limits: DBusDecodingLimits = .default) throws(DBusError) -> [DBusValue] {
    let types = try DBusType.parse(signature)
    var reader = MessageReader(limits: limits)
    return try reader.readAll(raw, types: types)
  }

  /// Decodes all arguments after checking that the body's signature is `expected`.
  ///
  /// - Throws: `DBusError` (`InvalidArgs`) for another signature or an exceeded limit.
  public func arguments(expecting expected: DBusSignature, limits: DBusDecodingLimits = .default)
    throws(DBusError) -> [DBusValue]
  {
    let actual = signature
    guard actual == expected.rawValue else {
      throw DBusError(
        .invalidArgs, "expected arguments of signature '\(expected)', got '\(actual)'")
    }
    var reader = MessageReader(limits: limits)
    return try reader.readAll(raw, types: expected.types)
  }

  /// Decodes the arguments of a marshalled message: the entry point for fuzzing the decoder.
  ///
  /// - Parameters:
  ///   - bytes: a whole message in wire format.
  ///   - expected: the signature the body must have, or `nil` to accept any.
  /// - Throws: `DBusError` (`InvalidArgs`) for bytes that are not a message, a different
  ///   signature, or a value beyond `limits`; never traps.
  public static func decodeArguments(
    fromMessageBytes bytes: [UInt8], expecting expected: DBusSignature? = nil,
    limits: DBusDecodingLimits = .default
  ) throws(DBusError) -> [DBusValue] {
    let message = try DBusMessage(demarshalling: bytes)
    if let expected { return try message.arguments(expecting: expected, limits: limits) }
    return try message.arguments(limits: limits)
  }

  func markSent() { isLocked = true }

  // MARK: Checks

  static let localPath = "/org/freedesktop/DBus/Local"
  static let localInterface = "org.freedesktop.DBus.Local"

  /// A reply needs a method call with a serial: libdbus aborts the process
  /// (`dbus_message_set_reply_serial`: "reply_serial != 0") for a call that was never sent.
  private func requireRepliable() throws(DBusError) {
    guard kind == .methodCall else {
      throw DBusError(.failed, "only method calls can be replied to")
    }
    guard serial != 0 else {
      throw DBusError(.failed, "the method call was never sent or received, so it has no serial")
    }
  }

  private func requireUnlocked() throws(DBusError) {
    guard !isLocked else {
      throw DBusError(.failed, "message was already sent or received and cannot be changed")
    }
  }

  static func requireBusName(_ name: String) throws(DBusError) {
    guard DBusNames.isValidBusName(name) else {
      throw DBusError(.invalidArgs, "invalid bus name '\(name)'")
    }
  }

  static func requireInterface(_ name: String) throws(DBusError) {
    guard DBusNames.isValidInterface(name) else {
      throw DBusError(.invalidArgs, "invalid interface name '\(name)'")
    }
    guard name != localInterface else {
      throw DBusError(.invalidArgs, "the interface \(localInterface) is reserved")
    }
  }

  static func requireMember(_ name: String) throws(DBusError) {
    guard DBusNames.isValidMember(name) else {
      throw DBusError(.invalidArgs, "invalid member name '\(name)'")
    }
  }
}
