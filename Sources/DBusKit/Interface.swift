/// A named, typed argument of a method or signal (`<arg name="..." type="..."/>`).
public struct DBusArgument: Hashable, Sendable {
  /// The name shown in introspection (may be empty).
  public var name: String
  /// The type.
  public var type: DBusType

  /// Creates an argument.
  public init(_ name: String, _ type: DBusType) {
    self.name = name
    self.type = type
  }
}

/// An introspection annotation (`<annotation name="..." value="..."/>`).
public struct DBusAnnotation: Hashable, Sendable {
  /// The annotation name, e.g. `org.freedesktop.DBus.Deprecated`.
  public var name: String
  /// Its value.
  public var value: String

  /// Creates an annotation.
  public init(_ name: String, _ value: String) {
    self.name = name
    self.value = value
  }
}

/// A method an exported object answers.
///
/// The handler gets a `DBusMethodInvocation` whose arguments were already checked against
/// `inArguments`. It answers now (return values or a thrown `DBusError`) or keeps the
/// invocation and answers later; an invocation dropped without an answer gets a `NoReply`
/// error automatically.
public struct DBusMethod {
  /// The member name.
  public var name: String
  /// Input arguments: their types form the signature calls must have.
  public var inArguments: [DBusArgument]
  /// Output arguments: replies are checked against them.
  public var outArguments: [DBusArgument]
  /// Introspection annotations.
  public var annotations: [DBusAnnotation]
  /// Called for each valid call.
  public var handler: (DBusMethodInvocation) throws(DBusError) -> Void

  /// A method whose handler decides when to answer (`invocation.reply`/`fail`).
  public init(
    _ name: String, in inArguments: [DBusArgument] = [], out outArguments: [DBusArgument] = [],
    annotations: [DBusAnnotation] = [],
    deferred handler: @escaping (DBusMethodInvocation) throws(DBusError) -> Void
  ) {
    self.name = name
    self.inArguments = inArguments
    self.outArguments = outArguments
    self.annotations = annotations
    self.handler = handler
  }

  /// A method answered with the handler's return values (or its thrown error).
  public init(
    _ name: String, in inArguments: [DBusArgument] = [], out outArguments: [DBusArgument] = [],
    annotations: [DBusAnnotation] = [],
    replying handler: @escaping (DBusMethodInvocation) throws(DBusError) -> [DBusValue]
  ) {
    self.init(
      name, in: inArguments, out: outArguments, annotations: annotations,
      deferred: { (invocation) throws(DBusError) in
        let values = try handler(invocation)
        invocation.reply(values)
      })
  }

  /// The input signature.
  public var inSignature: String { inArguments.map(\.type.signature).joined() }
  /// The output signature.
  public var outSignature: String { outArguments.map(\.type.signature).joined() }
}

/// A property of an exported object, read through `Properties.Get`/`GetAll` and written
/// through `Properties.Set`.
public struct DBusProperty {
  /// Who may read or write it (`access="read|write|readwrite"`).
  public enum Access: String, Sendable {
    /// Get/GetAll only.
    case read
    /// Set only.
    case write
    /// Both.
    case readwrite
  }

  /// How changes are announced (`org.freedesktop.DBus.Property.EmitsChangedSignal`).
  public enum ChangeSignal: String, Sendable {
    /// `PropertiesChanged` carries the new value (the default; no annotation is written).
    case emits = "true"
    /// `PropertiesChanged` lists it as invalidated, without a value.
    case invalidates
    /// The value never changes.
    case const
    /// Changes are not announced.
    case silent = "false"
  }

  /// The property name.
  public var name: String
  /// Its type; getters must return values of exactly this type.
  public var type: DBusType
  /// Read/write access.
  public var access: Access
  /// How changes are announced.
  public var changeSignal: ChangeSignal
  /// Introspection annotations besides `EmitsChangedSignal`.
  public var annotations: [DBusAnnotation]
  /// Returns the current value; may throw to refuse.
  public var get: (() throws(DBusError) -> DBusValue)?
  /// Returns the value for one caller (its unique name), when the value depends on who asks
  /// (values only a claimer may see); takes precedence over `get` for `Get` and `GetAll`.
  public var getForCaller: ((_ sender: String) throws(DBusError) -> DBusValue)?
  /// Stores a value of `type` (already checked); gets the caller's unique name for policy.
  public var set: ((DBusValue, _ sender: String) throws(DBusError) -> Void)?
  /// Served from the values given to `DBusConnection.publish` (see `published(_:)`).
  var isPublished = false

  /// A read-only property.
  public init(
    _ name: String, _ type: DBusType, changeSignal: ChangeSignal = .emits,
    annotations: [DBusAnnotation] = [], get: @escaping () throws(DBusError) -> DBusValue
  ) {
    self.name = name
    self.type = type
    self.access = .read
    self.changeSignal = changeSignal
    self.annotations = annotations
    self.get = get
    self.set = nil
  }

  /// A property with explicit access; `get` is required for `read`/`readwrite`, `set` for
  /// `write`/`readwrite` (a missing one answers `AccessDenied`).
  public init(
    _ name: String, _ type: DBusType, access: Access, changeSignal: ChangeSignal = .emits,
    annotations: [DBusAnnotation] = [], get: (() throws(DBusError) -> DBusValue)?,
    set: ((DBusValue, _ sender: String) throws(DBusError) -> Void)?
  ) {
    self.name = name
    self.type = type
    self.access = access
    self.changeSignal = changeSignal
    self.annotations = annotations
    self.get = get
    self.set = set
  }

  var isReadable: Bool { access != .write }
  var isWritable: Bool { access != .read }
}

/// A signal an interface declares (for introspection, and to check emitted arguments).
public struct DBusSignalDescription: Hashable, Sendable {
  /// The member name.
  public var name: String
  /// The arguments.
  public var arguments: [DBusArgument]
  /// Introspection annotations.
  public var annotations: [DBusAnnotation]

  /// Creates a signal description.
  public init(
    _ name: String, arguments: [DBusArgument] = [], annotations: [DBusAnnotation] = []
  ) {
    self.name = name
    self.arguments = arguments
    self.annotations = annotations
  }

  /// The signature.
  public var signature: String { arguments.map(\.type.signature).joined() }
}

/// An interface described in Swift: its methods, properties and signals, in the order they
/// appear in introspection.
public struct DBusInterface {
  /// The dotted interface name.
  public var name: String
  /// Methods.
  public var methods: [DBusMethod]
  /// Properties.
  public var properties: [DBusProperty]
  /// Signals.
  public var signals: [DBusSignalDescription]
  /// Interface annotations.
  public var annotations: [DBusAnnotation]
  /// The error `Properties.Set` returns for a read-only property: `PropertyReadOnly` by
  /// default; iio-sensor-proxy (GDBus) answers `InvalidArgs`, which compatibility may need.
  public var readOnlyPropertyError: DBusError.Name

  /// Creates an interface.
  public init(
    _ name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [],
    signals: [DBusSignalDescription] = [], annotations: [DBusAnnotation] = [],
    readOnlyPropertyError: DBusError.Name = .propertyReadOnly
  ) {
    self.name = name
    self.methods = methods
    self.properties = properties
    self.signals = signals
    self.annotations = annotations
    self.readOnlyPropertyError = readOnlyPropertyError
  }

  /// The method called `name`.
  public func method(_ name: String) -> DBusMethod? { methods.first { $0.name == name } }
  /// The property called `name`.
  public func property(_ name: String) -> DBusProperty? { properties.first { $0.name == name } }

  /// Checks names, types and uniqueness.
  ///
  /// - Throws: `DBusError` (`InvalidArgs`) naming the first problem.
  public func validate() throws(DBusError) {
    func fail(_ why: String) -> DBusError { DBusError(.invalidArgs, "interface \(name): \(why)") }
    guard DBusNames.isValidInterface(name) else { throw fail("invalid interface name") }
    guard !DBusInterface.standardNames.contains(name), name != DBusMessage.localInterface else {
      throw fail("the standard interfaces are provided by DBusKit")
    }
    var members = Set<String>()
    for method in methods {
      guard DBusNames.isValidMember(method.name) else {
        throw fail("invalid method name '\(method.name)'")
      }
      guard members.insert(method.name).inserted else {
        throw fail("duplicate member '\(method.name)'")
      }
      guard (try? DBusSignature(method.inSignature)) != nil,
        (try? DBusSignature(method.outSignature)) != nil
      else { throw fail("method \(method.name) has an invalid argument signature") }
    }
    var signalNames = Set<String>()
    for signal in signals {
      guard DBusNames.isValidMember(signal.name) else {
        throw fail("invalid signal name '\(signal.name)'")
      }
      guard signalNames.insert(signal.name).inserted else {
        throw fail("duplicate signal '\(signal.name)'")
      }
      guard (try? DBusSignature(signal.signature)) != nil else {
        throw fail("signal \(signal.name) has an invalid argument signature")
      }
    }
    var propertyNames = Set<String>()
    for property in properties {
      guard DBusNames.isValidMember(property.name) else {
        throw fail("invalid property name '\(property.name)'")
      }
      guard propertyNames.insert(property.name).inserted else {
        throw fail("duplicate property '\(property.name)'")
      }
      guard (try? DBusSignature(property.type.signature)) != nil else {
        throw fail("property \(property.name) has an invalid type")
      }
    }
  }

  static let properties = "org.freedesktop.DBus.Properties"
  static let introspectable = "org.freedesktop.DBus.Introspectable"
  static let peer = "org.freedesktop.DBus.Peer"
  static let standardNames: Set<String> = [properties, introspectable, peer]
}
