/// A D-Bus value of any type, as written to or read from a message.
///
/// Containers carry their element types so that empty arrays and dictionaries still have a
/// signature. Dictionaries keep the wire order of their entries.
public enum DBusValue: Hashable, Sendable, CustomStringConvertible {
  /// `y`.
  case byte(UInt8)
  /// `b`.
  case boolean(Bool)
  /// `n`.
  case int16(Int16)
  /// `q`.
  case uint16(UInt16)
  /// `i`.
  case int32(Int32)
  /// `u`.
  case uint32(UInt32)
  /// `x`.
  case int64(Int64)
  /// `t`.
  case uint64(UInt64)
  /// `d`.
  case double(Double)
  /// `s`: UTF-8 without NUL characters (checked when written).
  case string(String)
  /// `o`.
  case objectPath(DBusObjectPath)
  /// `g`.
  case signature(DBusSignature)
  /// `h`: a file descriptor (`DBUS_TYPE_UNIX_FD`); see `DBusFileDescriptor` for ownership.
  case unixFD(DBusFileDescriptor)
  /// `a<element>`: every element must have type `element` (checked when written).
  case array(element: DBusType, [DBusValue])
  /// `a{<key><value>}`.
  case dictionary(key: DBusType, value: DBusType, [DBusDictEntry])
  /// `(...)`: at least one field.
  case structure([DBusValue])
  /// `v`: a value carrying its own type.
  indirect case variant(DBusValue)

  /// The type of this value (`.array(element)` for arrays, `.variant` for variants).
  public var type: DBusType {
    switch self {
    case .byte: return .byte
    case .boolean: return .boolean
    case .int16: return .int16
    case .uint16: return .uint16
    case .int32: return .int32
    case .uint32: return .uint32
    case .int64: return .int64
    case .uint64: return .uint64
    case .double: return .double
    case .string: return .string
    case .objectPath: return .objectPath
    case .signature: return .signature
    case .unixFD: return .unixFD
    case .array(let element, _): return .array(element)
    case .dictionary(let key, let value, _): return .dictionary(key: key, value: value)
    case .structure(let fields): return .structure(fields.map(\.type))
    case .variant: return .variant
    }
  }

  /// The value's signature, e.g. `a{sv}`.
  public var typeSignature: String { type.signature }

  // MARK: Building

  /// An `a{sv}` dictionary from a Swift dictionary, entries sorted by key so the wire form is
  /// deterministic. Values are wrapped in variants.
  public static func stringVariantDictionary(_ entries: [String: DBusValue]) -> DBusValue {
    .dictionary(
      key: .string, value: .variant,
      entries.sorted { $0.key < $1.key }.map {
        DBusDictEntry(key: .string($0.key), value: .variant($0.value))
      })
  }

  /// An `a{sv}` dictionary keeping the given order.
  public static func stringVariantDictionary(ordered entries: [(String, DBusValue)]) -> DBusValue {
    .dictionary(
      key: .string, value: .variant,
      entries.map { DBusDictEntry(key: .string($0.0), value: .variant($0.1)) })
  }

  /// An `as` array.
  public static func strings(_ values: [String]) -> DBusValue {
    .array(element: .string, values.map { .string($0) })
  }

  // MARK: Reading

  /// The string of a `.string` value.
  public var stringValue: String? {
    if case .string(let v) = self { return v }
    return nil
  }

  /// The value of a `.boolean`.
  public var boolValue: Bool? {
    if case .boolean(let v) = self { return v }
    return nil
  }

  /// The value of a `.byte`.
  public var byteValue: UInt8? {
    if case .byte(let v) = self { return v }
    return nil
  }

  /// The value of an `.int32`.
  public var int32Value: Int32? {
    if case .int32(let v) = self { return v }
    return nil
  }

  /// The value of a `.uint32`.
  public var uint32Value: UInt32? {
    if case .uint32(let v) = self { return v }
    return nil
  }

  /// The value of an `.int64`.
  public var int64Value: Int64? {
    if case .int64(let v) = self { return v }
    return nil
  }

  /// The value of a `.uint64`.
  public var uint64Value: UInt64? {
    if case .uint64(let v) = self { return v }
    return nil
  }

  /// The value of a `.double`.
  public var doubleValue: Double? {
    if case .double(let v) = self { return v }
    return nil
  }

  /// The path of an `.objectPath`.
  public var objectPathValue: DBusObjectPath? {
    if case .objectPath(let v) = self { return v }
    return nil
  }

  /// The descriptor of a `.unixFD`.
  public var fileDescriptorValue: DBusFileDescriptor? {
    if case .unixFD(let v) = self { return v }
    return nil
  }

  /// The content of a `.variant`.
  public var variantValue: DBusValue? {
    if case .variant(let v) = self { return v }
    return nil
  }

  /// The elements of an `.array`.
  public var arrayElements: [DBusValue]? {
    if case .array(_, let v) = self { return v }
    return nil
  }

  /// The fields of a `.structure`.
  public var structureFields: [DBusValue]? {
    if case .structure(let v) = self { return v }
    return nil
  }

  /// The entries of a `.dictionary`.
  public var dictionaryEntries: [DBusDictEntry]? {
    if case .dictionary(_, _, let v) = self { return v }
    return nil
  }

  /// An `a{s?}` dictionary as a Swift dictionary, variants unwrapped (the last of duplicate
  /// keys wins); `nil` for other values.
  public var stringKeyedDictionary: [String: DBusValue]? {
    guard case .dictionary(.string, _, let entries) = self else { return nil }
    var result: [String: DBusValue] = [:]
    for entry in entries {
      guard let key = entry.key.stringValue else { return nil }
      result[key] = entry.value.variantValue ?? entry.value
    }
    return result
  }

  /// An `as` array as Swift strings.
  public var stringArray: [String]? {
    guard case .array(.string, let values) = self else { return nil }
    return values.compactMap(\.stringValue)
  }

  /// The value in busctl-like notation, for logs and test messages.
  public var description: String {
    switch self {
    case .byte(let v): return "\(v)"
    case .boolean(let v): return v ? "true" : "false"
    case .int16(let v): return "\(v)"
    case .uint16(let v): return "\(v)"
    case .int32(let v): return "\(v)"
    case .uint32(let v): return "\(v)"
    case .int64(let v): return "\(v)"
    case .uint64(let v): return "\(v)"
    case .double(let v): return "\(v)"
    case .string(let v): return "\"\(v)\""
    case .objectPath(let v): return v.rawValue
    case .signature(let v): return "<\(v.rawValue)>"
    case .unixFD(let v): return v.description
    case .array(_, let v): return "[" + v.map(\.description).joined(separator: ", ") + "]"
    case .dictionary(_, _, let v):
      return "{" + v.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
    case .structure(let v): return "(" + v.map(\.description).joined(separator: ", ") + ")"
    case .variant(let v): return "<\(v.typeSignature)> \(v)"
    }
  }
}

/// One entry of a D-Bus dictionary (`DBUS_TYPE_DICT_ENTRY`).
public struct DBusDictEntry: Hashable, Sendable {
  /// The key (a basic type).
  public var key: DBusValue
  /// The value.
  public var value: DBusValue

  /// Creates an entry.
  public init(key: DBusValue, value: DBusValue) {
    self.key = key
    self.value = value
  }
}

extension DBusValue: ExpressibleByStringLiteral {
  /// A `.string`.
  public init(stringLiteral value: String) { self = .string(value) }
}

extension DBusValue: ExpressibleByBooleanLiteral {
  /// A `.boolean`.
  public init(booleanLiteral value: Bool) { self = .boolean(value) }
}

extension DBusValue: ExpressibleByFloatLiteral {
  /// A `.double`.
  public init(floatLiteral value: Double) { self = .double(value) }
}
