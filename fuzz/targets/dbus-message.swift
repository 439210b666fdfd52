// D-Bus argument decoding, as orientd decodes what clients send and orientcam what orientd
// replies: `DBusKit.DBusMessage.decodeArguments(fromMessageBytes:expecting:limits:)` over a
// whole marshalled message (libdbus validates the wire format, DBusKit walks the body).
//
// Invariants: what decodes has the message's own signature; it re-encodes into a new message
// whose decoding is equal (NaN included); it respects the limits (tighter limits either refuse
// the message or give the same values); asking for one of orientd's API signatures succeeds
// exactly when the message has that signature.
//
// Seeds: `FUZZ_WRITE_SEEDS=DIR build-fuzz/bin/dbus-message` writes messages of orientd's API
// shapes (a{sv}, PropertiesChanged, (dddt), dddt, s, b, u, v, errors) into DIR and exits.
import DBusKit
import Glibc

private let apiSignatures = ["", "a{sv}", "sa{sv}as", "dddt", "(dddt)", "s", "b", "u", "ss", "v"]

/// libFuzzer's entry point: checks one input against the invariants above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDBusMessage(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = inputBytes(data, size)
  let values: [DBusValue]
  do {
    values = try DBusMessage.decodeArguments(fromMessageBytes: bytes)
  } catch {
    require(!error.message.isEmpty, "an error without a message")
    return 0
  }
  let signature = values.map(\.typeSignature).joined()
  require(count(values) <= DBusDecodingLimits.default.maxElements, "over the element limit")

  // Expected signatures.
  for expected in apiSignatures {
    guard let wanted = try? DBusSignature(expected) else {
      require(false, "the API signature \(expected) is invalid")
      return 0
    }
    let typed = try? DBusMessage.decodeArguments(fromMessageBytes: bytes, expecting: wanted)
    require((typed != nil) == (signature == expected), "expecting '\(expected)' for '\(signature)'")
    if let typed { require(same(typed, values), "typed decoding differs for '\(expected)'") }
  }

  // Tighter limits refuse or agree.
  let tight = DBusDecodingLimits(maxDepth: 3, maxElements: 16, maxBytes: 256)
  if let limited = try? DBusMessage.decodeArguments(fromMessageBytes: bytes, limits: tight) {
    require(same(limited, values), "tight limits changed the values")
    require(count(limited) <= tight.maxElements, "tight element limit exceeded")
  }

  // Re-encode what was decoded.
  do {
    let path = try DBusObjectPath("/org/orientd/Fuzz")
    let message = try DBusMessage.signal(
      path: path, interface: "org.orientd.Fuzz", member: "Again", arguments: values)
    require(message.signature == signature, "re-encoded signature \(message.signature)")
    let again = try DBusMessage.decodeArguments(fromMessageBytes: try message.marshalled())
    require(same(again, values), "re-encoded values decode differently")
  } catch {
    require(false, "decoded values cannot be sent again: \(error)")
  }
  return 0
}

/// Values counted the way the decoder's element limit counts them.
private func count(_ values: [DBusValue]) -> Int { values.reduce(0) { $0 + count($1) } }
private func count(_ value: DBusValue) -> Int {
  switch value {
  case .array(_, let items), .structure(let items): return 1 + count(items)
  case .dictionary(_, _, let entries):
    return 1 + entries.reduce(0) { $0 + count($1.key) + count($1.value) }
  case .variant(let inner): return 1 + count(inner)
  default: return 1
  }
}

/// Equality with NaN equal to NaN (a double read from the wire may be any bit pattern).
private func same(_ a: [DBusValue], _ b: [DBusValue]) -> Bool {
  a.count == b.count && zip(a, b).allSatisfy(same)
}
private func same(_ a: DBusValue, _ b: DBusValue) -> Bool {
  switch (a, b) {
  case (.double(let x), .double(let y)): return sameDouble(x, y)
  case (.array(let t, let x), .array(let u, let y)): return t == u && same(x, y)
  case (.structure(let x), .structure(let y)): return same(x, y)
  case (.variant(let x), .variant(let y)): return same(x, y)
  case (.dictionary(let k, let v, let x), .dictionary(let l, let w, let y)):
    return k == l && v == w && x.count == y.count
      && zip(x, y).allSatisfy { same($0.key, $1.key) && same($0.value, $1.value) }
  default: return a == b
  }
}

/// libFuzzer's start-up hook: writes the seed messages and exits when FUZZ_WRITE_SEEDS is set.
@_cdecl("LLVMFuzzerInitialize")
public func writeSeedsIfAsked(
  _ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> CInt {
  guard let dir = getenv("FUZZ_WRITE_SEEDS").map({ String(cString: $0) }) else { return 0 }
  do {
    for (name, message) in try seedMessages() {
      let bytes = try message.marshalled()
      guard let file = fopen("\(dir)/\(name)", "wb") else { fatalError("cannot write \(dir)") }
      _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
      fclose(file)
    }
  } catch {
    fatalError("seed: \(error)")
  }
  exit(0)
}

/// Messages shaped like orientd's and iio-sensor-proxy's API traffic.
private func seedMessages() throws -> [(String, DBusMessage)] {
  let path = try DBusObjectPath("/org/orientd/Orientation1")
  let proxyPath = try DBusObjectPath("/net/hadess/SensorProxy")
  let properties = "org.freedesktop.DBus.Properties"
  let sensor = DBusValue.stringVariantDictionary([
    "Name": .string("mxc4005"), "Device": .string("iio:device0"),
    "MountMatrix": .string("0, 1, 0; -1, 0, 0; 0, 0, 1"),
    "MountMatrixSource": .string("udev ACCEL_MOUNT_MATRIX"), "Location": .string("display"),
    "Mode": .string("buffered"), "Rate": .double(25),
    "Scale": .array(
      element: .double, [.double(0.009806), .double(0.009806), .double(0.009806)]),
  ])
  let changed = DBusValue.stringVariantDictionary([
    "Orientation": .string("left-up"), "Rotation": .uint32(90), "Tilt": .string("vertical"),
  ])
  let claim = try DBusMessage.methodCall(
    destination: "org.orientd.Orientation1", path: path, interface: "org.orientd.Orientation1",
    member: "Claim")
  // Replies answer a call as received (with its serial), as on a bus.
  let received = try DBusMessage(demarshalling: try claim.marshalled())
  return [
    ("claim-call", claim),
    (
      "get-all-call",
      try DBusMessage.methodCall(
        destination: "org.orientd.Orientation1", path: path, interface: properties,
        member: "GetAll", arguments: [.string("org.orientd.Orientation1")])
    ),
    (
      "get-call-ss",
      try DBusMessage.methodCall(
        destination: "net.hadess.SensorProxy", path: proxyPath, interface: properties,
        member: "Get", arguments: [.string("net.hadess.SensorProxy"), .string("HasAccelerometer")])
    ),
    (
      "get-all-reply-asv",
      try received.makeReply([
        .stringVariantDictionary([
          "HasAccelerometer": .boolean(true), "Orientation": .string("normal"),
          "Rotation": .uint32(0), "Tilt": .string("vertical"), "Sensor": sensor,
        ])
      ])
    ),
    (
      "properties-changed-sasvas",
      try DBusMessage.signal(
        path: path, interface: properties, member: "PropertiesChanged",
        arguments: [.string("org.orientd.Orientation1"), changed, .strings([])])
    ),
    (
      "properties-changed-proxy",
      try DBusMessage.signal(
        path: proxyPath, interface: properties, member: "PropertiesChanged",
        arguments: [
          .string("net.hadess.SensorProxy"),
          .stringVariantDictionary(["AccelerometerOrientation": .string("right-up")]),
          .strings(["AccelerometerTilt"]),
        ])
    ),
    (
      "get-reading-reply-dddt",
      try received.makeReply([.double(0.1), .double(-9.8), .double(0.2), .uint64(123_456_789)])
    ),
    (
      "reading-struct-dddt",
      try received.makeReply([.structure([.double(-9.81), .double(0), .double(0.3), .uint64(42)])])
    ),
    ("reply-s", try received.makeReply([.string("bottom-up")])),
    ("reply-b", try received.makeReply([.boolean(false)])),
    ("reply-u", try received.makeReply([.uint32(270)])),
    ("reply-v-s", try received.makeReply([.variant(.string("face-up"))])),
    (
      "error-reply",
      try received.makeErrorReply(
        DBusError(DBusError.Name("org.orientd.Orientation1.Error.NoSensor"), "no accelerometer"))
    ),
  ]
}
