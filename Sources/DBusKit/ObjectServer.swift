import CDBus

/// An object path with the interfaces exported there.
struct ExportedObject {
  var path: DBusObjectPath
  var interfaces: [DBusInterface]
  /// The values last published per interface and property (`DBusConnection.publish`).
  var published: [String: [String: DBusValue]] = [:]
}

/// One incoming method call, answered now or later.
///
/// Answer exactly once with `reply` or `fail`. If the last reference goes away without an
/// answer, the caller gets `org.freedesktop.DBus.Error.NoReply` right away instead of waiting
/// for its timeout. Calls sent with `NO_REPLY_EXPECTED` are run but never answered.
public final class DBusMethodInvocation {
  /// The call as received.
  public let message: DBusMessage
  /// Its arguments, already checked against the method's input signature.
  public let arguments: [DBusValue]
  /// The caller's unique name (empty on a peer-to-peer connection).
  public let sender: String
  /// The object path called.
  public let path: DBusObjectPath
  /// The interface the method belongs to.
  public let interface: String
  /// The method name.
  public let member: String
  /// Whether `reply` or `fail` was called.
  public private(set) var isAnswered = false
  private let outSignature: String
  private let connection: DBusConnection

  init(
    connection: DBusConnection, message: DBusMessage, arguments: [DBusValue],
    path: DBusObjectPath, interface: String, member: String, outSignature: String
  ) {
    self.connection = connection
    self.message = message
    self.arguments = arguments
    self.sender = message.sender ?? ""
    self.path = path
    self.interface = interface
    self.member = member
    self.outSignature = outSignature
    connection.invocationCount += 1
  }

  deinit {
    if !isAnswered {
      fail(
        DBusError(
          .noReply, "\(interface).\(member) on \(path) was dropped by the service without an answer"
        ))
    }
  }

  /// Sends the return values; they must match the method's output arguments, otherwise the
  /// caller gets `Failed` and the mistake is logged.
  public func reply(_ values: [DBusValue] = []) {
    guard begin("reply") else { return }
    let signature = values.map(\.typeSignature).joined()
    guard signature == outSignature else {
      connection.logger.error(
        "\(interface).\(member) replied '\(signature)' but declares '\(outSignature)'")
      send { () throws(DBusError) in
        try message.makeErrorReply(
          DBusError(.failed, "internal error: \(member) produced a reply of the wrong type"))
      }
      return
    }
    send { () throws(DBusError) in try message.makeReply(values) }
  }

  /// Sends an error reply.
  public func fail(_ error: DBusError) {
    guard begin("error") else { return }
    send { () throws(DBusError) in try message.makeErrorReply(error) }
  }

  /// Sends an error reply with this name and text.
  public func fail(_ name: DBusError.Name, _ text: String) { fail(DBusError(name, text)) }

  private func begin(_ what: String) -> Bool {
    guard !isAnswered else {
      connection.logger.warning("\(interface).\(member): second \(what) ignored")
      return false
    }
    isAnswered = true
    connection.invocationCount -= 1
    return message.expectsReply
  }

  private func send(_ build: () throws(DBusError) -> DBusMessage) {
    do {
      try connection.send(try build())
    } catch {
      if error.name == .disconnected {
        connection.logger.debug("\(interface).\(member): not answered, \(error.message)")
        return
      }
      connection.logger.error("\(interface).\(member): cannot send the reply: \(error)")
      // The reply itself was bad (e.g. a NUL in a string): still answer the caller.
      if let fallback = try? message.makeErrorReply(
        DBusError(.failed, "internal error: \(error.message)"))
      {
        _ = try? connection.send(fallback)
      }
    }
  }
}

extension DBusConnection {
  // MARK: Exporting

  /// Exports interfaces at `path`; their methods and properties answer from now on, and
  /// `Properties`, `Introspectable` and `Peer` are added.
  ///
  /// - Throws: `DBusError` (`InvalidArgs`) for an invalid description or a path already
  ///   exported (unexport it first).
  public func export(_ interfaces: [DBusInterface], at path: DBusObjectPath) throws(DBusError) {
    guard objects[path.rawValue] == nil else {
      throw DBusError(.invalidArgs, "an object is already exported at \(path)")
    }
    guard path.rawValue != DBusMessage.localPath else {
      throw DBusError(.invalidArgs, "\(path) is reserved")
    }
    var names = Set<String>()
    for interface in interfaces {
      try interface.validate()
      guard names.insert(interface.name).inserted else {
        throw DBusError(.invalidArgs, "interface \(interface.name) listed twice for \(path)")
      }
    }
    objects[path.rawValue] = ExportedObject(
      path: path, interfaces: interfaces.map { servingPublished($0, at: path) })
  }

  /// Removes the object at `path`; later calls get `UnknownObject`.
  public func unexport(_ path: DBusObjectPath) {
    objects[path.rawValue] = nil
  }

  // MARK: Emitting

  /// Emits a signal from `path`; with `destination` it is unicast to that unique name only.
  ///
  /// If the exported object declares the signal, the arguments must match its signature.
  /// - Throws: `DBusError` (`InvalidArgs` for a mismatch, `Disconnected`).
  public func emitSignal(
    path: DBusObjectPath, interface: String, name: String, arguments: [DBusValue] = [],
    destination: String? = nil
  ) throws(DBusError) {
    if let declared = objects[path.rawValue]?.interfaces.first(where: { $0.name == interface })?
      .signals.first(where: { $0.name == name })
    {
      let signature = arguments.map(\.typeSignature).joined()
      guard signature == declared.signature else {
        throw DBusError(
          .invalidArgs,
          "signal \(interface).\(name) declares '\(declared.signature)', got '\(signature)'")
      }
    }
    try send(
      DBusMessage.signal(
        path: path, interface: interface, member: name, arguments: arguments,
        destination: destination))
  }

  /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged` for the named properties only,
  /// reading their current values through the getters.
  ///
  /// Properties with `changeSignal == .invalidates` are listed as invalidated; `.const` and
  /// `.silent` ones are skipped. Nothing is sent if nothing remains.
  /// - Parameter destinations: `nil` broadcasts; otherwise one unicast signal per unique name
  ///   (iio-sensor-proxy 3.1+ sends only to clients that claimed).
  /// - Throws: `DBusError` (`UnknownObject`, `UnknownInterface`, `UnknownProperty`, a getter's
  ///   error, `Disconnected`).
  public func emitPropertiesChanged(
    path: DBusObjectPath, interface: String, names: [String], destinations: [String]? = nil
  ) throws(DBusError) {
    guard let object = objects[path.rawValue] else {
      throw DBusError(.unknownObject, "no object exported at \(path)")
    }
    guard let described = object.interfaces.first(where: { $0.name == interface }) else {
      throw DBusError(.unknownInterface, "\(path) does not export \(interface)")
    }
    var changed: [(String, DBusValue)] = []
    var invalidated: [String] = []
    for name in names {
      guard let property = described.property(name) else {
        throw DBusError(.unknownProperty, "\(interface) has no property \(name)")
      }
      switch property.changeSignal {
      case .emits:
        changed.append((name, try checkedValue(of: property, in: interface)))
      case .invalidates:
        invalidated.append(name)
      case .const, .silent:
        continue
      }
    }
    guard !changed.isEmpty || !invalidated.isEmpty else { return }
    let arguments: [DBusValue] = [
      .string(interface), .stringVariantDictionary(ordered: changed), .strings(invalidated),
    ]
    if let destinations {
      for destination in destinations {
        try send(
          DBusMessage.signal(
            path: path, interface: DBusInterface.properties, member: "PropertiesChanged",
            arguments: arguments, destination: destination))
      }
    } else {
      try send(
        DBusMessage.signal(
          path: path, interface: DBusInterface.properties, member: "PropertiesChanged",
          arguments: arguments))
    }
  }

  /// The introspection XML served at `path`: its interfaces, the standard ones and the child
  /// nodes, or `nil` if nothing is exported at or below it.
  public func introspectionXML(for path: DBusObjectPath) -> String? {
    let children = childNodes(of: path.rawValue)
    if let object = objects[path.rawValue] {
      return DBusIntrospection.document(
        interfaces: object.interfaces + standardInterfaces(for: path, hasObject: true),
        children: children)
    }
    guard !children.isEmpty else { return nil }
    return DBusIntrospection.document(
      interfaces: standardInterfaces(for: path, hasObject: false), children: children)
  }

  // MARK: Dispatching

  func handleMethodCall(_ message: DBusMessage) {
    guard let pathText = message.path, let member = message.member else { return }
    let path = DBusObjectPath(trusted: pathText)
    let requested = message.interface
    let object = objects[pathText]
    let candidates: [DBusInterface]
    if let object {
      candidates = object.interfaces + standardInterfaces(for: path, hasObject: true)
    } else if !childNodes(of: pathText).isEmpty {
      // A node above exported objects: introspectable (so tools can walk the tree) and Peer.
      candidates = standardInterfaces(for: path, hasObject: false)
    } else {
      // Peer is per connection: it answers on any path.
      candidates = [peerInterface()]
    }
    let noObject = DBusError(.unknownObject, "no object at path \(pathText)")
    let interface: DBusInterface
    let method: DBusMethod
    if let requested {
      guard let found = candidates.first(where: { $0.name == requested }) else {
        let error =
          object == nil
          ? noObject
          : DBusError(.unknownInterface, "object \(pathText) has no interface \(requested)")
        replyError(to: message, error)
        return
      }
      guard let found2 = found.method(member) else {
        let error =
          object == nil && requested != DBusInterface.peer
          ? noObject : DBusError(.unknownMethod, "interface \(requested) has no method \(member)")
        replyError(to: message, error)
        return
      }
      interface = found
      method = found2
    } else {
      guard let match = candidates.lazy.compactMap({ i in i.method(member).map { (i, $0) } }).first
      else {
        let error =
          object == nil
          ? noObject : DBusError(.unknownMethod, "object \(pathText) has no method \(member)")
        replyError(to: message, error)
        return
      }
      (interface, method) = match
    }
    let arguments: [DBusValue]
    do {
      let expected = try DBusSignature(method.inSignature)
      arguments = try message.arguments(expecting: expected, limits: decodingLimits)
    } catch {
      replyError(
        to: message,
        DBusError(error.name, "\(interface.name).\(member): \(error.message)"))
      return
    }
    let invocation = DBusMethodInvocation(
      connection: self, message: message, arguments: arguments, path: path,
      interface: interface.name, member: member, outSignature: method.outSignature)
    do {
      try method.handler(invocation)
    } catch {
      if invocation.isAnswered {
        logger.warning("\(interface.name).\(member) threw after answering: \(error)")
      } else {
        invocation.fail(error)
      }
    }
  }

  private func replyError(to message: DBusMessage, _ error: DBusError) {
    guard message.expectsReply else { return }
    do {
      try send(try message.makeErrorReply(error))
    } catch {
      logger.debug("cannot send an error reply: \(error)")
    }
  }

  /// Names of the direct children of `path` among the exported paths, sorted.
  func childNodes(of path: String) -> [String] {
    let prefix = path == "/" ? "/" : path + "/"
    var names = Set<String>()
    for key in objects.keys where key.hasPrefix(prefix) && key != path {
      let rest = key.dropFirst(prefix.count)
      if let first = rest.split(separator: "/").first { names.insert(String(first)) }
    }
    return names.sorted()
  }

  // MARK: Standard interfaces

  func standardInterfaces(for path: DBusObjectPath, hasObject: Bool) -> [DBusInterface] {
    var result: [DBusInterface] = []
    if hasObject { result.append(propertiesInterface(for: path)) }
    result.append(
      DBusInterface(
        DBusInterface.introspectable,
        methods: [
          DBusMethod("Introspect", out: [DBusArgument("xml_data", .string)]) {
            [weak self] (_) throws(DBusError) -> [DBusValue] in
            guard let xml = self?.introspectionXML(for: path) else {
              throw DBusError(.unknownObject, "no object at path \(path)")
            }
            return [.string(xml)]
          }
        ]))
    result.append(peerInterface())
    return result
  }

  /// libdbus answers Peer calls that name the interface itself; these answer the ones that
  /// do not, and describe Peer in introspection.
  func peerInterface() -> DBusInterface {
    DBusInterface(
      DBusInterface.peer,
      methods: [
        DBusMethod("Ping") { (_) throws(DBusError) -> [DBusValue] in [] },
        DBusMethod("GetMachineId", out: [DBusArgument("machine_uuid", .string)]) {
          (_) throws(DBusError) -> [DBusValue] in
          let id = try DBusError.check { dbus_try_get_local_machine_id(&$0) }
          guard let id else { throw DBusError(.failed, "no machine id") }
          defer { dbus_free(id) }
          return [.string(String(cString: id))]
        },
      ])
  }

  private func propertiesInterface(for path: DBusObjectPath) -> DBusInterface {
    DBusInterface(
      DBusInterface.properties,
      methods: [
        DBusMethod(
          "Get",
          in: [DBusArgument("interface_name", .string), DBusArgument("property_name", .string)],
          out: [DBusArgument("value", .variant)]
        ) { [weak self] (invocation) throws(DBusError) -> [DBusValue] in
          guard let self else { throw DBusError(.disconnected, "connection closed") }
          let (interface, property) = try self.lookUpProperty(invocation, path: path)
          guard property.isReadable, property.get != nil else {
            throw DBusError(
              .accessDenied, "property \(property.name) of \(interface.name) is write-only")
          }
          return [
            .variant(
              try self.checkedValue(of: property, in: interface.name, for: invocation.sender))
          ]
        },
        DBusMethod(
          "GetAll", in: [DBusArgument("interface_name", .string)],
          out: [DBusArgument("properties", .stringVariantDictionary)]
        ) { [weak self] (invocation) throws(DBusError) -> [DBusValue] in
          guard let self else { throw DBusError(.disconnected, "connection closed") }
          let name = invocation.arguments.first?.stringValue ?? ""
          let interfaces = try self.interfaces(named: name, at: path)
          var entries: [(String, DBusValue)] = []
          for interface in interfaces {
            for property in interface.properties where property.isReadable && property.get != nil {
              entries.append(
                (
                  property.name,
                  try self.checkedValue(of: property, in: interface.name, for: invocation.sender)
                ))
            }
          }
          return [.stringVariantDictionary(ordered: entries)]
        },
        DBusMethod(
          "Set",
          in: [
            DBusArgument("interface_name", .string), DBusArgument("property_name", .string),
            DBusArgument("value", .variant),
          ]
        ) { [weak self] (invocation) throws(DBusError) -> [DBusValue] in
          guard let self else { throw DBusError(.disconnected, "connection closed") }
          let (interface, property) = try self.lookUpProperty(invocation, path: path)
          guard property.isWritable, let set = property.set else {
            throw DBusError(
              interface.readOnlyPropertyError,
              "property \(property.name) of \(interface.name) is read-only")
          }
          guard invocation.arguments.count == 3, let value = invocation.arguments[2].variantValue
          else { throw DBusError(.invalidArgs, "Set needs (ssv)") }
          guard value.type == property.type else {
            throw DBusError(
              .invalidArgs,
              "property \(property.name) of \(interface.name) has type '\(property.type)', "
                + "not '\(value.typeSignature)'")
          }
          try set(value, invocation.sender)
          return []
        },
      ],
      signals: [
        DBusSignalDescription(
          "PropertiesChanged",
          arguments: [
            DBusArgument("interface_name", .string),
            DBusArgument("changed_properties", .stringVariantDictionary),
            DBusArgument("invalidated_properties", .array(.string)),
          ])
      ])
  }

  /// The exported interfaces called `name` at `path` (all of them for an empty name).
  private func interfaces(named name: String, at path: DBusObjectPath) throws(DBusError)
    -> [DBusInterface]
  {
    guard let object = objects[path.rawValue] else {
      throw DBusError(.unknownObject, "no object at path \(path)")
    }
    if name.isEmpty { return object.interfaces }
    if let interface = object.interfaces.first(where: { $0.name == name }) { return [interface] }
    if DBusInterface.standardNames.contains(name) { return [] }
    throw DBusError(.unknownInterface, "object \(path) has no interface \(name)")
  }

  private func lookUpProperty(_ invocation: DBusMethodInvocation, path: DBusObjectPath)
    throws(DBusError) -> (DBusInterface, DBusProperty)
  {
    let interfaceName = invocation.arguments.first?.stringValue ?? ""
    let propertyName = invocation.arguments.dropFirst().first?.stringValue ?? ""
    for interface in try interfaces(named: interfaceName, at: path) {
      if let property = interface.property(propertyName) { return (interface, property) }
    }
    let owner = interfaceName.isEmpty ? "object \(path)" : "interface \(interfaceName)"
    throw DBusError(.unknownProperty, "\(owner) has no property '\(propertyName)'")
  }

  /// Runs a getter (the per-caller one for `sender` when there is one; `get` for a signal,
  /// which goes to the recipients the publisher chose) and checks its value against the
  /// declared type.
  func checkedValue(of property: DBusProperty, in interface: String, for sender: String = "")
    throws(DBusError) -> DBusValue
  {
    guard let get = property.get else {
      throw DBusError(.accessDenied, "property \(property.name) of \(interface) is write-only")
    }
    let value: DBusValue
    if let perCaller = property.getForCaller, !sender.isEmpty {
      value = try perCaller(sender)
    } else {
      value = try get()
    }
    guard value.type == property.type else {
      logger.error(
        "getter of \(interface).\(property.name) returned '\(value.typeSignature)', "
          + "declared '\(property.type)'")
      throw DBusError(.failed, "internal error: property \(property.name) has the wrong type")
    }
    return value
  }
}
