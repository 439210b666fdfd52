import CDBus
import Glibc

/// Bounds on decoding a message body, so a hostile peer cannot make the decoder use unbounded
/// memory or stack.
public struct DBusDecodingLimits: Sendable, Equatable {
  /// Deepest container nesting (arrays, dict entries, structs and variants each count one).
  public var maxDepth: Int
  /// Most values decoded from one message, counting every element of every container.
  public var maxElements: Int
  /// Most payload bytes decoded from one message (string bytes plus fixed-size values).
  public var maxBytes: Int

  /// Creates limits.
  public init(maxDepth: Int = 32, maxElements: Int = 100_000, maxBytes: Int = 4 << 20) {
    self.maxDepth = maxDepth
    self.maxElements = maxElements
    self.maxBytes = maxBytes
  }

  /// Depth 32, 100 000 values, 4 MiB.
  public static let `default` = DBusDecodingLimits()
}

/// The C type code of a letter, as `dbus_message_iter_get_arg_type` returns it.
private func code(_ letter: Unicode.Scalar) -> Int32 { Int32(letter.value) }

/// Writes `DBusValue`s with the iterator API after checking them.
enum MessageWriter {
  /// Containers deeper than this are refused: the bus rejects bodies nested more than 64 deep
  /// and disconnects the sender.
  static let maxWriteDepth = 64

  /// Checks what libdbus would otherwise abort on, or the bus would reject.
  static func validate(_ value: DBusValue, argument: Int, depth: Int) throws(DBusError) {
    func fail(_ why: String) -> DBusError {
      DBusError(.invalidArgs, "argument \(argument + 1): \(why)")
    }
    guard depth <= maxWriteDepth else { throw fail("nested more than \(maxWriteDepth) deep") }
    switch value {
    case .string(let text):
      guard DBusNames.isValidString(text) else { throw fail("string contains a NUL character") }
    case .array(let element, let elements):
      for item in elements {
        guard item.type == element else {
          throw fail("array of '\(element)' holds a '\(item.typeSignature)' value")
        }
        try validate(item, argument: argument, depth: depth + 1)
      }
    case .dictionary(let keyType, let valueType, let entries):
      guard keyType.isBasic else { throw fail("dictionary key type '\(keyType)' is not basic") }
      for entry in entries {
        guard entry.key.type == keyType, entry.value.type == valueType else {
          throw fail(
            "dictionary of '{\(keyType)\(valueType)}' holds an entry "
              + "'{\(entry.key.typeSignature)\(entry.value.typeSignature)}'")
        }
        try validate(entry.key, argument: argument, depth: depth + 2)
        try validate(entry.value, argument: argument, depth: depth + 2)
      }
    case .structure(let fields):
      guard !fields.isEmpty else { throw fail("empty struct") }
      for field in fields { try validate(field, argument: argument, depth: depth + 1) }
    case .variant(let inner):
      // A basic type's one-letter signature is always valid: only containers are parsed
      // (every property in a PropertiesChanged is a variant).
      let isContainer: Bool
      switch inner {
      case .variant, .array, .dictionary, .structure: isContainer = true
      default: isContainer = false
      }
      guard !isContainer || (try? DBusSignature(inner.typeSignature)) != nil else {
        throw fail("variant content type '\(inner.typeSignature)' is not a valid signature")
      }
      try validate(inner, argument: argument, depth: depth + 1)
    default:
      break
    }
  }

  /// Appends one (validated) value.
  static func write(_ value: DBusValue, into iter: inout DBusMessageIter) throws(DBusError) {
    let ok: Bool
    switch value {
    case .byte(var v): ok = dbus_message_iter_append_basic(&iter, code("y"), &v) != 0
    case .boolean(let b):
      var v: dbus_bool_t = b ? 1 : 0
      ok = dbus_message_iter_append_basic(&iter, code("b"), &v) != 0
    case .int16(var v): ok = dbus_message_iter_append_basic(&iter, code("n"), &v) != 0
    case .uint16(var v): ok = dbus_message_iter_append_basic(&iter, code("q"), &v) != 0
    case .int32(var v): ok = dbus_message_iter_append_basic(&iter, code("i"), &v) != 0
    case .uint32(var v): ok = dbus_message_iter_append_basic(&iter, code("u"), &v) != 0
    case .int64(var v): ok = dbus_message_iter_append_basic(&iter, code("x"), &v) != 0
    case .uint64(var v): ok = dbus_message_iter_append_basic(&iter, code("t"), &v) != 0
    case .double(var v): ok = dbus_message_iter_append_basic(&iter, code("d"), &v) != 0
    case .string(let text): ok = appendString(text, code("s"), &iter)
    case .objectPath(let path): ok = appendString(path.rawValue, code("o"), &iter)
    case .signature(let sig): ok = appendString(sig.rawValue, code("g"), &iter)
    case .unixFD(let fd):
      // libdbus dups the descriptor into the message; ours stays open.
      var v = fd.rawValue
      ok = dbus_message_iter_append_basic(&iter, code("h"), &v) != 0
    case .array(let element, let elements):
      try container(code("a"), element.signature, &iter) { (sub) throws(DBusError) in
        for item in elements { try write(item, into: &sub) }
      }
      return
    case .dictionary(let keyType, let valueType, let entries):
      let entrySignature = "{\(keyType.signature)\(valueType.signature)}"
      try container(code("a"), entrySignature, &iter) { (sub) throws(DBusError) in
        for entry in entries {
          try container(code("e"), nil, &sub) { (pair) throws(DBusError) in
            try write(entry.key, into: &pair)
            try write(entry.value, into: &pair)
          }
        }
      }
      return
    case .structure(let fields):
      try container(code("r"), nil, &iter) { (sub) throws(DBusError) in
        for field in fields { try write(field, into: &sub) }
      }
      return
    case .variant(let inner):
      try container(code("v"), inner.typeSignature, &iter) { (sub) throws(DBusError) in
        try write(inner, into: &sub)
      }
      return
    }
    guard ok else { throw DBusError.outOfMemory("appending an argument") }
  }

  private static func appendString(_ text: String, _ type: Int32, _ iter: inout DBusMessageIter)
    -> Bool
  {
    text.withCString { pointer in
      var p: UnsafePointer<CChar>? = pointer
      return dbus_message_iter_append_basic(&iter, type, &p) != 0
    }
  }

  /// Opens a container, fills it, closes it; abandons it if anything fails.
  private static func container(
    _ type: Int32, _ contained: String?, _ iter: inout DBusMessageIter,
    _ body: (inout DBusMessageIter) throws(DBusError) -> Void
  ) throws(DBusError) {
    var sub = DBusMessageIter()  // all zero: DBUS_MESSAGE_ITER_INIT_CLOSED
    let opened: Bool
    if let contained {
      opened =
        contained.withCString { dbus_message_iter_open_container(&iter, type, $0, &sub) }
        != 0
    } else {
      opened = dbus_message_iter_open_container(&iter, type, nil, &sub) != 0
    }
    guard opened else {
      dbus_message_iter_abandon_container_if_open(&iter, &sub)
      throw DBusError.outOfMemory("opening a container")
    }
    do {
      try body(&sub)
    } catch {
      dbus_message_iter_abandon_container_if_open(&iter, &sub)
      throw error
    }
    guard dbus_message_iter_close_container(&iter, &sub) != 0 else {
      dbus_message_iter_abandon_container_if_open(&iter, &sub)
      throw DBusError.outOfMemory("closing a container")
    }
  }
}

/// Reads a message body into `DBusValue`s, guided by the parsed signature and bounded by
/// `DBusDecodingLimits`.
struct MessageReader {
  let limits: DBusDecodingLimits
  private var elements = 0
  private var bytes = 0
  private var argument = 0

  init(limits: DBusDecodingLimits) { self.limits = limits }

  private func fail(_ why: String) -> DBusError {
    DBusError(.invalidArgs, "argument \(argument + 1): \(why)")
  }

  mutating func readAll(_ message: OpaquePointer, types: [DBusType]) throws(DBusError)
    -> [DBusValue]
  {
    var iter = DBusMessageIter()
    guard dbus_message_iter_init(message, &iter) != 0 else {
      guard types.isEmpty else { throw fail("missing") }
      return []
    }
    var values: [DBusValue] = []
    values.reserveCapacity(types.count)
    for (index, type) in types.enumerated() {
      argument = index
      if index > 0 {
        guard dbus_message_iter_next(&iter) != 0 else { throw fail("missing") }
      }
      values.append(try read(&iter, type, depth: 0))
    }
    return values
  }

  private mutating func count(_ size: Int) throws(DBusError) {
    elements += 1
    bytes += size
    guard elements <= limits.maxElements else {
      throw fail("more than \(limits.maxElements) values in one message")
    }
    guard bytes <= limits.maxBytes else {
      throw fail("more than \(limits.maxBytes) bytes of values in one message")
    }
  }

  private mutating func read(_ iter: inout DBusMessageIter, _ type: DBusType, depth: Int)
    throws(DBusError) -> DBusValue
  {
    let actual = dbus_message_iter_get_arg_type(&iter)
    let expected = type.typeCode
    guard actual == expected else {
      throw fail("expected type code \(expected) for '\(type)', found \(actual)")
    }
    switch type {
    case .byte:
      var v: UInt8 = 0
      dbus_message_iter_get_basic(&iter, &v)
      try count(1)
      return .byte(v)
    case .boolean:
      var v: dbus_bool_t = 0
      dbus_message_iter_get_basic(&iter, &v)
      try count(4)
      return .boolean(v != 0)
    case .int16:
      var v: Int16 = 0
      dbus_message_iter_get_basic(&iter, &v)
      try count(2)
      return .int16(v)
    case .uint16:
      var v: UInt16 = 0
      dbus_message_iter_get_basic(&iter, &v)
      try count(2)
      return .uint16(v)
    case .int32:
      var v: Int32 = 0
      dbus_message_iter_get_basic(&iter, &v)
      try count(4)
      return .int32(v)
    case .uint32:
      var v: UInt32 = 0
      dbus_message_iter_get_basic(&iter, &v)
      try count(4)
      return .uint32(v)
    case .int64:
      var v: Int64 = 0
      dbus_message_iter_get_basic(&iter, &v)
      try count(8)
      return .int64(v)
    case .uint64:
      var v: UInt64 = 0
      dbus_message_iter_get_basic(&iter, &v)
      try count(8)
      return .uint64(v)
    case .double:
      var v: Double = 0
      dbus_message_iter_get_basic(&iter, &v)
      try count(8)
      return .double(v)
    case .string:
      let text = try readString(&iter)
      return .string(text)
    case .objectPath:
      let text = try readString(&iter)
      return .objectPath(DBusObjectPath(trusted: text))
    case .signature:
      let text = try readString(&iter)
      do {
        return .signature(try DBusSignature(text))
      } catch {
        throw fail("invalid signature value: \(error.message)")
      }
    case .unixFD:
      // libdbus dups the descriptor out of the message (close-on-exec): ours to close. A
      // message whose index points past its descriptors (or that lost them: a demarshalled
      // one) reads -1.
      var v: Int32 = -1
      dbus_message_iter_get_basic(&iter, &v)
      try count(4)
      guard v >= 0 else { throw fail("file descriptor missing from the message") }
      return .unixFD(DBusFileDescriptor(owning: v))
    case .variant:
      guard depth < limits.maxDepth else { throw deep() }
      try count(0)
      var sub = DBusMessageIter()
      dbus_message_iter_recurse(&iter, &sub)
      guard let signature = iteratorSignature(&sub), let inner = try? DBusType(signature) else {
        throw fail("variant with an invalid content signature")
      }
      return .variant(try read(&sub, inner, depth: depth + 1))
    case .array(let element):
      guard depth < limits.maxDepth else { throw deep() }
      try count(0)
      var sub = DBusMessageIter()
      dbus_message_iter_recurse(&iter, &sub)
      var items: [DBusValue] = []
      while dbus_message_iter_get_arg_type(&sub) != 0 {  // DBUS_TYPE_INVALID
        items.append(try read(&sub, element, depth: depth + 1))
        dbus_message_iter_next(&sub)
      }
      return .array(element: element, items)
    case .dictionary(let keyType, let valueType):
      guard depth + 1 < limits.maxDepth else { throw deep() }
      try count(0)
      var sub = DBusMessageIter()
      dbus_message_iter_recurse(&iter, &sub)
      var entries: [DBusDictEntry] = []
      while dbus_message_iter_get_arg_type(&sub) == code("e") {
        var pair = DBusMessageIter()
        dbus_message_iter_recurse(&sub, &pair)
        let key = try read(&pair, keyType, depth: depth + 2)
        guard dbus_message_iter_next(&pair) != 0 else { throw fail("dict entry without value") }
        let value = try read(&pair, valueType, depth: depth + 2)
        entries.append(DBusDictEntry(key: key, value: value))
        dbus_message_iter_next(&sub)
      }
      return .dictionary(key: keyType, value: valueType, entries)
    case .structure(let fieldTypes):
      guard depth < limits.maxDepth else { throw deep() }
      try count(0)
      var sub = DBusMessageIter()
      dbus_message_iter_recurse(&iter, &sub)
      var fields: [DBusValue] = []
      for (index, fieldType) in fieldTypes.enumerated() {
        if index > 0 {
          guard dbus_message_iter_next(&sub) != 0 else { throw fail("struct field missing") }
        }
        fields.append(try read(&sub, fieldType, depth: depth + 1))
      }
      return .structure(fields)
    }
  }

  private func deep() -> DBusError {
    fail("containers nested more than \(limits.maxDepth) deep")
  }

  private mutating func readString(_ iter: inout DBusMessageIter) throws(DBusError) -> String {
    var pointer: UnsafePointer<CChar>?
    dbus_message_iter_get_basic(&iter, &pointer)
    guard let pointer else { throw fail("missing string") }
    try count(strlen(pointer) + 1)
    return String(cString: pointer)
  }

  /// `dbus_message_iter_get_signature`, freed with `dbus_free`.
  private func iteratorSignature(_ iter: inout DBusMessageIter) -> String? {
    guard let raw = dbus_message_iter_get_signature(&iter) else { return nil }
    defer { dbus_free(raw) }
    return String(cString: raw)
  }
}
