import DBusKit
import Glibc
import SystemKit
import TestSupport

/// Runs the loop in short slices until `condition` holds or `timeout` seconds pass.
///
/// Short slices because some conditions (a child process exiting) do not wake the loop.
@discardableResult
func pump(_ loop: EventLoop, timeout: Double = 10, until condition: () -> Bool) throws -> Bool {
  let deadline = monotonicSeconds() + timeout
  while !condition() {
    if monotonicSeconds() > deadline { return false }
    try loop.runOnce(timeoutMilliseconds: 5)
  }
  return true
}

/// Runs the loop for `seconds` (to let messages that should NOT arrive have their chance).
func pump(_ loop: EventLoop, for seconds: Double) throws {
  let deadline = monotonicSeconds() + seconds
  while monotonicSeconds() < deadline { try loop.runOnce(timeoutMilliseconds: 5) }
}

/// Runs a command line client against `bus` while the loop keeps serving.
func runClient(
  _ arguments: [String], bus: PrivateBus, loop: EventLoop, timeout: Double = 15
) throws -> (status: Int32, stdout: String, stderr: String) {
  let child = try ChildProcess(
    arguments, environment: bus.environment, outputDirectory: bus.directory.path)
  guard try pump(loop, timeout: timeout, until: { !child.isRunning }) else {
    child.killNow()
    throw TestFailure("timed out: \(child.commandLine)\n\(child.standardError)")
  }
  return (child.exitCode ?? -1, child.standardOutput, child.standardError)
}

/// Waits for an asynchronous result delivered through the loop.
func waitForResult<T>(
  _ loop: EventLoop, timeout: Double = 10, _ start: (@escaping (T) -> Void) -> Void
) throws -> T {
  var result: T?
  start { result = $0 }
  guard try pump(loop, timeout: timeout, until: { result != nil }), let result else {
    throw TestFailure("no result within \(timeout) s")
  }
  return result
}

extension DBusSignature {
  /// A literal signature known to be valid.
  static func fixture(_ text: String) -> DBusSignature {
    guard let signature = try? DBusSignature(text) else { fatalError("bad fixture \(text)") }
    return signature
  }
}

let testPath = DBusObjectPath.fixture("/org/orientd/Test1")
let testInterfaceName = "org.orientd.Test1"

extension DBusObjectPath {
  /// A literal path known to be valid.
  static func fixture(_ text: String) -> DBusObjectPath {
    guard let path = try? DBusObjectPath(text) else { fatalError("bad fixture path \(text)") }
    return path
  }
}

/// A service exporting `org.orientd.Test1` at `/org/orientd/Test1` on a private bus, with
/// methods and properties covering the object server's features.
final class TestService {
  let bus: PrivateBus
  let loop: EventLoop
  let connection: DBusConnection
  var count: UInt32 = 7
  var label = "initial"
  var setterCalls: [(String, String)] = []
  /// Invocations kept by `Deferred` until `answerDeferred()`.
  var held: [DBusMethodInvocation] = []
  var claims = Set<String>()
  var tracker: DBusClientTracker?

  init(bus: PrivateBus? = nil, loop: EventLoop? = nil, limits: [String: Int] = [:]) throws {
    self.bus = try bus ?? PrivateBus(openPolicy: true, limits: limits)
    self.loop = try loop ?? EventLoop()
    connection = try DBusConnection(bus: .address(self.bus.address), loop: self.loop)
    try connection.export([makeInterface()], at: testPath)
    try connection.export(
      [
        DBusInterface(
          "org.orientd.Child1", properties: [DBusProperty("Id", .uint32) { .uint32(2) }])
      ], at: .fixture("/org/orientd/Test1/child"))
  }

  deinit { connection.close() }

  /// A fresh client connection on the same bus and loop.
  func client() throws -> DBusConnection {
    try DBusConnection(bus: .address(bus.address), loop: loop)
  }

  func answerDeferred() {
    for invocation in held {
      invocation.reply([.string("late \(invocation.arguments.first?.uint32Value ?? 0)")])
    }
    held = []
  }

  func makeInterface() -> DBusInterface {
    let basics: [DBusType] = [
      .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .string,
      .objectPath, .signature,
    ]
    return DBusInterface(
      testInterfaceName,
      methods: [
        DBusMethod(
          "Add", in: [DBusArgument("a", .int32), DBusArgument("b", .int32)],
          out: [DBusArgument("sum", .int32)],
          replying: { (invocation) throws(DBusError) -> [DBusValue] in
            let a = invocation.arguments[0].int32Value ?? 0
            let b = invocation.arguments[1].int32Value ?? 0
            return [.int32(a &+ b)]
          }),
        DBusMethod(
          "EchoBasics", in: basics.enumerated().map { DBusArgument("in\($0.offset)", $0.element) },
          out: basics.enumerated().map { DBusArgument("out\($0.offset)", $0.element) },
          replying: { (invocation) throws(DBusError) -> [DBusValue] in invocation.arguments }),
        DBusMethod(
          "Echo", in: [DBusArgument("value", .variant)], out: [DBusArgument("value", .variant)],
          replying: { (invocation) throws(DBusError) -> [DBusValue] in invocation.arguments }),
        DBusMethod(
          "EchoDict", in: [DBusArgument("map", .stringVariantDictionary)],
          out: [DBusArgument("map", .stringVariantDictionary), DBusArgument("count", .uint32)],
          replying: { (invocation) throws(DBusError) -> [DBusValue] in
            let entries = invocation.arguments[0].dictionaryEntries ?? []
            return [invocation.arguments[0], .uint32(UInt32(entries.count))]
          }),
        DBusMethod(
          "ReverseStructs", in: [DBusArgument("items", .array(.structure([.string, .int32])))],
          out: [DBusArgument("items", .array(.structure([.string, .int32])))],
          replying: { (invocation) throws(DBusError) -> [DBusValue] in
            let items = invocation.arguments[0].arrayElements ?? []
            return [.array(element: .structure([.string, .int32]), items.reversed())]
          }),
        DBusMethod(
          "Deferred", in: [DBusArgument("tag", .uint32)], out: [DBusArgument("answer", .string)],
          deferred: { [unowned self] (invocation) throws(DBusError) in
            self.held.append(invocation)
          }),
        DBusMethod(
          "Drop", out: [DBusArgument("never", .string)],
          deferred: { (_) throws(DBusError) in }),
        DBusMethod(
          "Fail",
          replying: { (_) throws(DBusError) -> [DBusValue] in
            throw DBusError(.init("org.orientd.Test1.Error.Custom"), "asked to fail")
          }),
        DBusMethod(
          "WrongReply", out: [DBusArgument("n", .uint32)],
          replying: { (_) throws(DBusError) -> [DBusValue] in [.string("not a u")] }),
        DBusMethod(
          "Claim",
          replying: { [unowned self] (invocation) throws(DBusError) -> [DBusValue] in
            self.claims.insert(invocation.sender)
            self.tracker?.track(invocation.sender)
            return []
          }),
        DBusMethod(
          "WhoAmI", out: [DBusArgument("uid", .uint32)],
          deferred: { [unowned self] (invocation) throws(DBusError) in
            self.connection.unixUser(of: invocation.sender) { result in
              switch result {
              case .success(let uid): invocation.reply([.uint32(uid)])
              case .failure(let error): invocation.fail(error)
              }
            }
          }),
      ],
      properties: [
        DBusProperty("Count", .uint32) { [unowned self] in .uint32(self.count) },
        DBusProperty(
          "Label", .string, access: .readwrite,
          get: { [unowned self] in .string(self.label) },
          set: { [unowned self] (value, sender) throws(DBusError) in
            guard let text = value.stringValue, !text.isEmpty else {
              throw DBusError(.invalidArgs, "Label cannot be empty")
            }
            self.label = text
            self.setterCalls.append((text, sender))
            try self.connection.emitPropertiesChanged(
              path: testPath, interface: testInterfaceName, names: ["Label"])
          }),
        DBusProperty("Flags", .array(.string), changeSignal: .invalidates) {
          .strings(["a", "b"])
        },
        DBusProperty("Version", .string, changeSignal: .const) { "1.0" },
      ],
      signals: [
        DBusSignalDescription("Ping", arguments: [DBusArgument("text", .string)])
      ])
  }
}
