// D-Bus type signatures: `DBusKit.DBusType.parse` (pure Swift, used on every message body and
// variant) checked against libdbus's own `dbus_signature_validate`.
//
// Invariants: the Swift parser and libdbus accept exactly the same signatures; an accepted
// signature is written back byte for byte by its types, and `DBusSignature` agrees with it.
import CDBus
import DBusKit

/// libFuzzer's entry point: checks one input against the invariants above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDBusSignature(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = inputBytes(data, size)
  guard !bytes.contains(0) else { return 0 }  // C strings end at NUL; DBusNames refuses them
  let text = String(decoding: bytes, as: UTF8.self)
  let swift = try? DBusType.parse(text)
  let libdbus = dbus_signature_validate(text, nil) != 0
  require(
    (swift != nil) == libdbus,
    "DBusType.parse \(swift == nil ? "refuses" : "accepts") \(text.debugDescription), libdbus "
      + (libdbus ? "accepts" : "refuses"))
  guard let types = swift else { return 0 }
  require(types.map(\.signature).joined() == text, "types write back differently: \(text)")
  let signature = try? DBusSignature(text)
  require(signature?.types == types, "DBusSignature disagrees on \(text)")
  if types.count == 1 { require((try? DBusType(text)) == types[0], "DBusType(_:) on \(text)") }
  return 0
}
