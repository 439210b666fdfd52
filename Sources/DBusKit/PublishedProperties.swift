/// The properties of one interface as a type: one case per property, so a misspelt name is a
/// compile error, and the rules for announcing changes live with the property they concern.
///
/// The cases' declaration order is the order of the properties in introspection and in
/// `PropertiesChanged`. Serve them with `DBusProperty.published(_:)` and give their values
/// with `DBusConnection.publish(at:to:_:)`, which keeps the last values and announces only
/// what changed.
public protocol DBusPropertyName: RawRepresentable, CaseIterable, Hashable, Sendable
where RawValue == String {
  /// The dotted name of the interface the properties belong to.
  static var interface: String { get }
  /// The property's type; published values must have exactly this type.
  var type: DBusType { get }
  /// Properties whose announcement always carries this one too, changed or not
  /// (compatibility: a client may expect two properties in one signal). None by default.
  var sentWith: [Self] { get }
  /// Whether an announcement carrying this property goes to everyone even when `publish` is
  /// given recipients. False by default.
  var isBroadcastOnChange: Bool { get }
}

extension DBusPropertyName {
  /// None.
  public var sentWith: [Self] { [] }
  /// False.
  public var isBroadcastOnChange: Bool { false }

  /// The properties a change from `old` to `new` announces, in declaration order: those
  /// whose values differ, and those sent with any of them.
  public static func announced(from old: [Self: DBusValue], to new: [Self: DBusValue]) -> [Self] {
    let changed = Set(allCases.filter { old[$0] != new[$0] })
    return allCases.filter { name in
      changed.contains(name) || name.sentWith.contains { changed.contains($0) }
    }
  }
}

extension DBusProperty {
  /// A read-only property that answers with the value last given to
  /// `DBusConnection.publish(at:to:_:)` for the object it is exported at.
  public static func published<Name: DBusPropertyName>(_ name: Name) -> DBusProperty {
    var property = DBusProperty(
      name.rawValue, name.type, access: .read, get: nil, set: nil)
    property.isPublished = true
    return property
  }
}

extension DBusConnection {
  /// Publishes the values of all `Name` properties at `path`: `Get` and `GetAll` answer them
  /// from now on, and one `PropertiesChanged` carries those that differ from the values
  /// published before (see `DBusPropertyName.announced(from:to:)`).
  ///
  /// The first publication after `export` only records the values: nobody could have read
  /// others. Values are recorded even when nobody is told.
  /// - Parameters:
  ///   - recipients: unique names to unicast to; `nil` broadcasts. An announcement carrying a
  ///     property with `isBroadcastOnChange` is broadcast regardless.
  ///   - value: the current value of each property.
  /// - Returns: the properties announced (empty when nothing changed).
  /// - Throws: `DBusError` (`UnknownObject`/`UnknownInterface` when `Name.interface` is not
  ///   exported at `path`, `Failed` for a value of the wrong type, `Disconnected`).
  @discardableResult
  public func publish<Name: DBusPropertyName>(
    at path: DBusObjectPath, to recipients: [String]? = nil, _ value: (Name) -> DBusValue
  ) throws(DBusError) -> [Name] {
    guard let object = objects[path.rawValue] else {
      throw DBusError(.unknownObject, "no object exported at \(path)")
    }
    guard object.interfaces.contains(where: { $0.name == Name.interface }) else {
      throw DBusError(.unknownInterface, "\(path) does not export \(Name.interface)")
    }
    var new: [Name: DBusValue] = [:]
    for name in Name.allCases {
      let current = value(name)
      guard current.type == name.type else {
        throw DBusError(
          .failed,
          "internal error: \(Name.interface).\(name.rawValue) published as "
            + "'\(current.typeSignature)', declared '\(name.type)'")
      }
      new[name] = current
    }
    let old = object.published[Name.interface]
    objects[path.rawValue]?.published[Name.interface] = Dictionary(
      uniqueKeysWithValues: new.map { ($0.key.rawValue, $0.value) })
    guard let old else { return [] }
    var previous: [Name: DBusValue] = [:]
    for name in Name.allCases { previous[name] = old[name.rawValue] }
    let announced = Name.announced(from: previous, to: new)
    guard !announced.isEmpty else { return [] }
    let destinations = announced.contains { $0.isBroadcastOnChange } ? nil : recipients
    if destinations?.isEmpty != true {
      try emitPropertiesChanged(announced, at: path, destinations: destinations)
    }
    return announced
  }

  /// Emits `PropertiesChanged` for `names` with their current values, changed or not (see
  /// `emitPropertiesChanged(path:interface:names:destinations:)`).
  public func emitPropertiesChanged<Name: DBusPropertyName>(
    _ names: [Name], at path: DBusObjectPath, destinations: [String]? = nil
  ) throws(DBusError) {
    // A closure, not `\.rawValue`: in this generic function the key path is instantiated
    // (swift_getKeyPath) on every call, a quarter of each claim's snapshot (perf).
    try emitPropertiesChanged(
      path: path, interface: Name.interface, names: names.map { $0.rawValue },
      destinations: destinations)
  }

  /// `interface` with the getters of its published properties reading the values recorded
  /// for `path`.
  func servingPublished(_ interface: DBusInterface, at path: DBusObjectPath) -> DBusInterface {
    var served = interface
    let interfaceName = interface.name
    served.properties = interface.properties.map { property in
      guard property.isPublished else { return property }
      var reading = property
      let name = property.name
      reading.get = { [weak self] () throws(DBusError) -> DBusValue in
        guard let value = self?.objects[path.rawValue]?.published[interfaceName]?[name] else {
          throw DBusError(
            .failed, "property \(name) of \(interfaceName) has no published value yet")
        }
        return value
      }
      return reading
    }
    return served
  }
}
