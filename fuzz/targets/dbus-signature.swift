// D-Bus type signatures: `DBusKit.DBusType.parse` (pure Swift, used on every message body and
// variant) checked against libdbus's own `dbus_signature_validate`.
//
// Invariants: the Swift parser accepts nothing libdbus refuses, and refuses what libdbus
// accepts only for nesting deeper than 32 (see below); an accepted signature is written back
// byte for byte by its types, and `DBusSignature` agrees with it.
import CDBus
import DBusKit

/// libFuzzer's entry point: checks one input against the invariants above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDBusSignature(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = inputBytes(data, size)
  guard !bytes.contains(0) else { return 0 }  // C strings end at NUL; DBusNames refuses them
  let text = String(decoding: bytes, as: UTF8.self)
  let libdbus = dbus_signature_validate(text, nil) != 0
  let types: [DBusType]
  do {
    types = try DBusType.parse(text)
  } catch {
    // The one known difference: libdbus's validator counts array depth only over runs of 'a'
    // and '(' / '{' (a basic type resets it), so it accepts "a(da(da(d..." nested 33 deep;
    // DBusType.parse counts real nesting, as the specification describes the limit.
    require(
      !libdbus || error.message.contains("nested more than 32 deep"),
      "DBusType.parse refuses \(text.debugDescription) (\(error.message)), libdbus accepts it")
    return 0
  }
  require(libdbus, "DBusType.parse accepts \(text.debugDescription), libdbus refuses it")
  require(types.map(\.signature).joined() == text, "types write back differently: \(text)")
  let signature = try? DBusSignature(text)
  require(signature?.types == types, "DBusSignature disagrees on \(text)")
  if types.count == 1 { require((try? DBusType(text)) == types[0], "DBusType(_:) on \(text)") }
  return 0
}
