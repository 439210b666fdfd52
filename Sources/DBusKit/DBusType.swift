import CDBus

/// A D-Bus type, as written in a signature (`y b n q i u x t d s o g h v a{..} (..)`).
///
/// Type codes are the ASCII letters of the D-Bus specification, the same values as the C
/// `DBUS_TYPE_*` macros (which Swift cannot import because they are casts).
public enum DBusType: Hashable, Sendable, CustomStringConvertible {
  /// `y`, `DBUS_TYPE_BYTE`.
  case byte
  /// `b`, `DBUS_TYPE_BOOLEAN`.
  case boolean
  /// `n`, `DBUS_TYPE_INT16`.
  case int16
  /// `q`, `DBUS_TYPE_UINT16`.
  case uint16
  /// `i`, `DBUS_TYPE_INT32`.
  case int32
  /// `u`, `DBUS_TYPE_UINT32`.
  case uint32
  /// `x`, `DBUS_TYPE_INT64`.
  case int64
  /// `t`, `DBUS_TYPE_UINT64`.
  case uint64
  /// `d`, `DBUS_TYPE_DOUBLE`.
  case double
  /// `s`, `DBUS_TYPE_STRING`.
  case string
  /// `o`, `DBUS_TYPE_OBJECT_PATH`.
  case objectPath
  /// `g`, `DBUS_TYPE_SIGNATURE`.
  case signature
  /// `h`, `DBUS_TYPE_UNIX_FD`: a file descriptor (`DBusValue.unixFD`).
  case unixFD
  /// `v`, `DBUS_TYPE_VARIANT`.
  case variant
  /// `a<element>`, `DBUS_TYPE_ARRAY`.
  indirect case array(DBusType)
  /// `a{<key><value>}`: an array of dict entries (`DBUS_TYPE_DICT_ENTRY`); the key is basic.
  indirect case dictionary(key: DBusType, value: DBusType)
  /// `(<fields>)`, `DBUS_TYPE_STRUCT`; at least one field.
  case structure([DBusType])

  /// `a{sv}`, the usual property map.
  ///
  /// Computed rather than stored: LeakSanitizer cannot see references inside tagged enum
  /// payloads of globals and would report them as leaks.
  public static var stringVariantDictionary: DBusType { .dictionary(key: .string, value: .variant) }

  /// The signature of this single complete type, e.g. `a{sv}`.
  public var signature: String {
    var out = ""
    write(to: &out)
    return out
  }

  /// The signature.
  public var description: String { signature }

  /// Whether the type is basic (fixed or string-like): allowed as a dictionary key.
  public var isBasic: Bool {
    switch self {
    case .variant, .array, .dictionary, .structure: return false
    default: return true
    }
  }

  /// The C type code (`DBUS_TYPE_*`) of the outermost type; dictionaries are arrays.
  public var typeCode: Int32 {
    let letter: Unicode.Scalar
    switch self {
    case .byte: letter = "y"
    case .boolean: letter = "b"
    case .int16: letter = "n"
    case .uint16: letter = "q"
    case .int32: letter = "i"
    case .uint32: letter = "u"
    case .int64: letter = "x"
    case .uint64: letter = "t"
    case .double: letter = "d"
    case .string: letter = "s"
    case .objectPath: letter = "o"
    case .signature: letter = "g"
    case .unixFD: letter = "h"
    case .variant: letter = "v"
    case .array, .dictionary: letter = "a"
    case .structure: letter = "r"
    }
    return Int32(letter.value)
  }

  func write(to out: inout String) {
    switch self {
    case .array(let element):
      out += "a"
      element.write(to: &out)
    case .dictionary(let key, let value):
      out += "a{"
      key.write(to: &out)
      value.write(to: &out)
      out += "}"
    case .structure(let fields):
      out += "("
      for field in fields { field.write(to: &out) }
      out += ")"
    default:
      out.unicodeScalars.append(Unicode.Scalar(UInt8(typeCode)))
    }
  }

  /// Parses exactly one complete type, e.g. `"a{sv}"`.
  ///
  /// - Throws: `DBusError` (`InvalidSignature`) if the text is not exactly one valid type.
  public init(_ signature: String) throws(DBusError) {
    let types = try DBusType.parse(signature)
    guard types.count == 1, let only = types.first else {
      throw DBusError(
        .invalidSignature, "'\(signature)' is \(types.count) types, expected exactly one")
    }
    self = only
  }

  /// Parses a signature (zero or more complete types) with the rules of the D-Bus
  /// specification: at most 255 bytes, arrays and structs each nested at most 32 deep, dict
  /// entries only directly inside arrays with a basic key, no empty structs.
  ///
  /// Pure Swift, so it is safe on any input (the fuzz targets call it).
  /// - Throws: `DBusError` (`InvalidSignature`) naming the offset of the problem.
  public static func parse(_ signature: String) throws(DBusError) -> [DBusType] {
    let bytes = Array(signature.utf8)
    guard bytes.count <= 255 else {
      throw DBusError(.invalidSignature, "signature is \(bytes.count) bytes, more than 255")
    }
    var parser = SignatureParser(bytes: bytes, text: signature)
    var types: [DBusType] = []
    while parser.index < bytes.count {
      types.append(try parser.parseOne(arrayDepth: 0, structDepth: 0))
    }
    return types
  }
}

/// A recursive-descent parser over signature bytes.
private struct SignatureParser {
  let bytes: [UInt8]
  let text: String
  var index = 0

  func fail(_ why: String) -> DBusError {
    DBusError(.invalidSignature, "invalid signature '\(text)' at offset \(index): \(why)")
  }

  mutating func parseOne(arrayDepth: Int, structDepth: Int) throws(DBusError) -> DBusType {
    guard index < bytes.count else { throw fail("incomplete type") }
    let code = bytes[index]
    index += 1
    switch Unicode.Scalar(code) {
    case "y": return .byte
    case "b": return .boolean
    case "n": return .int16
    case "q": return .uint16
    case "i": return .int32
    case "u": return .uint32
    case "x": return .int64
    case "t": return .uint64
    case "d": return .double
    case "s": return .string
    case "o": return .objectPath
    case "g": return .signature
    case "h": return .unixFD
    case "v": return .variant
    case "a":
      guard arrayDepth < 32 else { throw fail("arrays nested more than 32 deep") }
      if index < bytes.count, bytes[index] == UInt8(ascii: "{") {
        index += 1
        let key = try parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth + 1)
        guard key.isBasic else { throw fail("dictionary key must be a basic type") }
        let value = try parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth + 1)
        guard index < bytes.count, bytes[index] == UInt8(ascii: "}") else {
          throw fail("dictionary entry must have exactly two types and end with '}'")
        }
        index += 1
        return .dictionary(key: key, value: value)
      }
      return .array(try parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth))
    case "(":
      guard structDepth < 32 else { throw fail("structs nested more than 32 deep") }
      var fields: [DBusType] = []
      while true {
        guard index < bytes.count else { throw fail("unterminated struct") }
        if bytes[index] == UInt8(ascii: ")") {
          index += 1
          break
        }
        fields.append(try parseOne(arrayDepth: arrayDepth, structDepth: structDepth + 1))
      }
      guard !fields.isEmpty else { throw fail("empty struct") }
      return .structure(fields)
    default:
      index -= 1
      throw fail("unexpected character \(code < 0x80 ? "'\(Unicode.Scalar(code))'" : "\(code)")")
    }
  }
}

/// A validated D-Bus type signature (`DBUS_TYPE_SIGNATURE` values and message signatures).
public struct DBusSignature: Hashable, Sendable, CustomStringConvertible {
  /// The signature text.
  public let rawValue: String
  /// The complete types it lists.
  public let types: [DBusType]

  /// Validates `text` (pure Swift rules, then `dbus_signature_validate`).
  ///
  /// - Throws: `DBusError` (`InvalidSignature`).
  public init(_ text: String) throws(DBusError) {
    let types = try DBusType.parse(text)
    guard DBusNames.isValidSignature(text) else {
      throw DBusError(.invalidSignature, "invalid signature '\(text)'")
    }
    self.rawValue = text
    self.types = types
  }

  /// The signature of a sequence of types.
  ///
  /// - Throws: `DBusError` (`InvalidSignature`) if the result breaks a limit (length, depth).
  public init(_ types: [DBusType]) throws(DBusError) {
    try self.init(types.map(\.signature).joined())
  }

  /// The empty signature.
  public static let empty = DBusSignature(uncheckedEmpty: ())

  private init(uncheckedEmpty: Void) {
    rawValue = ""
    types = []
  }

  /// The text.
  public var description: String { rawValue }
}

/// A validated D-Bus object path (`/`, `/org/orientd/Orientation1`).
public struct DBusObjectPath: Hashable, Comparable, Sendable, CustomStringConvertible {
  /// The path text.
  public let rawValue: String

  /// Validates the path (`dbus_validate_path`).
  ///
  /// - Throws: `DBusError` (`InvalidArgs`) saying why the path is invalid.
  public init(_ text: String) throws(DBusError) {
    guard DBusNames.isValidPath(text) else {
      throw DBusError(
        .invalidArgs,
        "invalid object path '\(text)': it must start with '/', use only [A-Za-z0-9_] "
          + "between single slashes and not end with '/'")
    }
    rawValue = text
  }

  init(trusted text: String) { rawValue = text }

  /// The root path `/`.
  public static let root = DBusObjectPath(trusted: "/")

  /// The text.
  public var description: String { rawValue }

  /// Orders by text.
  public static func < (lhs: DBusObjectPath, rhs: DBusObjectPath) -> Bool {
    lhs.rawValue < rhs.rawValue
  }
}

/// Name checks done before handing strings to libdbus, whose argument checks abort the
/// process (`_dbus_warn_check_failed` is fatal in Debian's build).
public enum DBusNames {
  /// Whether `text` has no NUL byte (C strings would be cut there).
  static func hasNoNul(_ text: String) -> Bool { !text.utf8.contains(0) }

  /// `dbus_validate_path`.
  public static func isValidPath(_ text: String) -> Bool {
    hasNoNul(text) && dbus_validate_path(text, nil) != 0
  }

  /// `dbus_validate_interface`.
  public static func isValidInterface(_ text: String) -> Bool {
    hasNoNul(text) && dbus_validate_interface(text, nil) != 0
  }

  /// `dbus_validate_member`.
  public static func isValidMember(_ text: String) -> Bool {
    hasNoNul(text) && dbus_validate_member(text, nil) != 0
  }

  /// `dbus_validate_error_name`.
  public static func isValidErrorName(_ text: String) -> Bool {
    hasNoNul(text) && dbus_validate_error_name(text, nil) != 0
  }

  /// `dbus_validate_bus_name` (unique `:1.42` or well-known `org.orientd.Orientation1`).
  public static func isValidBusName(_ text: String) -> Bool {
    hasNoNul(text) && dbus_validate_bus_name(text, nil) != 0
  }

  /// A well-known (not unique) bus name that may be requested.
  public static func isValidWellKnownName(_ text: String) -> Bool {
    isValidBusName(text) && !text.hasPrefix(":")
  }

  /// `dbus_signature_validate`.
  public static func isValidSignature(_ text: String) -> Bool {
    hasNoNul(text) && dbus_signature_validate(text, nil) != 0
  }

  /// Valid D-Bus string content: UTF-8 (always, in Swift) without NUL (`dbus_validate_utf8`).
  public static func isValidString(_ text: String) -> Bool {
    hasNoNul(text) && dbus_validate_utf8(text, nil) != 0
  }
}
