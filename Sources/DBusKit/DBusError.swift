import CDBus

/// A D-Bus error: a dotted error name and a human-readable message.
///
/// Every throwing function in DBusKit throws this type. Errors a remote peer sent arrive with
/// the peer's name (`org.freedesktop.DBus.Error.ServiceUnknown`, ...); errors DBusKit raises
/// itself use the standard names below, so an object server can send them back unchanged.
/// Wraps the C `DBusError` struct's `name`/`message` pair.
public struct DBusError: Error, Equatable, Hashable, CustomStringConvertible, Sendable {
  /// A D-Bus error name such as `org.freedesktop.DBus.Error.InvalidArgs`.
  public struct Name: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The dotted name.
    public var rawValue: String
    /// Wraps a dotted error name (validated only when it is sent).
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Wraps a dotted error name (validated only when it is sent).
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// The dotted name.
    public var description: String { rawValue }

    /// `org.freedesktop.DBus.Error.Failed` (`DBUS_ERROR_FAILED`): a generic failure.
    public static let failed = Name("org.freedesktop.DBus.Error.Failed")
    /// `org.freedesktop.DBus.Error.NoMemory` (`DBUS_ERROR_NO_MEMORY`).
    public static let noMemory = Name("org.freedesktop.DBus.Error.NoMemory")
    /// `org.freedesktop.DBus.Error.ServiceUnknown`: no owner for the destination name.
    public static let serviceUnknown = Name("org.freedesktop.DBus.Error.ServiceUnknown")
    /// `org.freedesktop.DBus.Error.NameHasNoOwner`.
    public static let nameHasNoOwner = Name("org.freedesktop.DBus.Error.NameHasNoOwner")
    /// `org.freedesktop.DBus.Error.NoReply`: no answer in time (or the call was dropped).
    public static let noReply = Name("org.freedesktop.DBus.Error.NoReply")
    /// `org.freedesktop.DBus.Error.Timeout`.
    public static let timeout = Name("org.freedesktop.DBus.Error.Timeout")
    /// `org.freedesktop.DBus.Error.Disconnected`: the connection is closed.
    public static let disconnected = Name("org.freedesktop.DBus.Error.Disconnected")
    /// `org.freedesktop.DBus.Error.NoServer`: cannot connect to the address.
    public static let noServer = Name("org.freedesktop.DBus.Error.NoServer")
    /// `org.freedesktop.DBus.Error.BadAddress`: the address string is malformed.
    public static let badAddress = Name("org.freedesktop.DBus.Error.BadAddress")
    /// `org.freedesktop.DBus.Error.AccessDenied`.
    public static let accessDenied = Name("org.freedesktop.DBus.Error.AccessDenied")
    /// `org.freedesktop.DBus.Error.LimitsExceeded`.
    public static let limitsExceeded = Name("org.freedesktop.DBus.Error.LimitsExceeded")
    /// `org.freedesktop.DBus.Error.InvalidArgs`: wrong signature or bad argument values.
    public static let invalidArgs = Name("org.freedesktop.DBus.Error.InvalidArgs")
    /// `org.freedesktop.DBus.Error.InvalidSignature`.
    public static let invalidSignature = Name("org.freedesktop.DBus.Error.InvalidSignature")
    /// `org.freedesktop.DBus.Error.UnknownMethod`: no such member on the object.
    public static let unknownMethod = Name("org.freedesktop.DBus.Error.UnknownMethod")
    /// `org.freedesktop.DBus.Error.UnknownObject`: nothing exported at the path.
    public static let unknownObject = Name("org.freedesktop.DBus.Error.UnknownObject")
    /// `org.freedesktop.DBus.Error.UnknownInterface`: the object lacks the interface.
    public static let unknownInterface = Name("org.freedesktop.DBus.Error.UnknownInterface")
    /// `org.freedesktop.DBus.Error.UnknownProperty`.
    public static let unknownProperty = Name("org.freedesktop.DBus.Error.UnknownProperty")
    /// `org.freedesktop.DBus.Error.PropertyReadOnly`: `Set` on a read-only property.
    public static let propertyReadOnly = Name("org.freedesktop.DBus.Error.PropertyReadOnly")
    /// `org.freedesktop.DBus.Error.NotSupported`.
    public static let notSupported = Name("org.freedesktop.DBus.Error.NotSupported")
  }

  /// The error name.
  public var name: Name
  /// The human-readable message (may be empty).
  public var message: String

  /// Creates an error.
  public init(_ name: Name, _ message: String) {
    self.name = name
    self.message = message
  }

  /// `"name: message"`.
  public var description: String { message.isEmpty ? name.rawValue : "\(name): \(message)" }

  /// Reads and frees a C `DBusError` if it is set.
  ///
  /// - Returns: the error, or `nil` if `dbus_error_is_set` is false.
  static func take(_ error: inout CDBus.DBusError) -> DBusError? {
    guard dbus_error_is_set(&error) != 0 else { return nil }
    let name = error.name.map { String(cString: $0) } ?? Name.failed.rawValue
    let message = error.message.map { String(cString: $0) } ?? ""
    dbus_error_free(&error)
    return DBusError(Name(name), message)
  }

  /// Runs `body` with an initialised C `DBusError`, turning a set error into a thrown one.
  static func check<T>(_ body: (inout CDBus.DBusError) -> T) throws(DBusError) -> T {
    var error = CDBus.DBusError()
    dbus_error_init(&error)
    let result = body(&error)
    if let thrown = take(&error) { throw thrown }
    return result
  }

  /// The error for an allocation failure inside libdbus.
  static func outOfMemory(_ what: String) -> DBusError {
    DBusError(.noMemory, "out of memory while \(what)")
  }
}
