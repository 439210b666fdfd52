import DBusKit
import Glibc
import JSON
import SystemKit
import TestSupport
import TestThreads
import Testing

/// The object server seen by real clients: busctl, gdbus, dbus-send, and DBusKit connections.
@Suite(.ownThreads) struct ServerTests {
  @Test func busctlRoundTripsEveryBasicType() throws {
    let service = try TestService()
    let result = try runClient(
      [
        "busctl", "--address=\(service.bus.address)", "call", "--", service.connection.uniqueName,
        testPath.rawValue, testInterfaceName, "EchoBasics", "ybnqiuxtdsog",
        "255", "true", "-2", "3", "-4", "5", "-6", "7", "0.5", "hello world", "/a/b", "a{sv}",
      ], bus: service.bus, loop: service.loop)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      result.stdout
        == "ybnqiuxtdsog 255 true -2 3 -4 5 -6 7 0.5 \"hello world\" \"/a/b\" \"a{sv}\"\n")
  }

  @Test func gdbusRoundTripsContainersAndVariants() throws {
    let service = try TestService()
    func gdbus(_ method: String, _ arguments: String...) throws -> String {
      let result = try runClient(
        [
          "gdbus", "call", "--address", service.bus.address, "--dest",
          service.connection.uniqueName, "--object-path", testPath.rawValue, "--method",
          "\(testInterfaceName).\(method)",
        ] + arguments, bus: service.bus, loop: service.loop)
      #expect(result.status == 0, "\(result.stderr)")
      return result.stdout
    }
    #expect(
      try gdbus("EchoDict", "{'a': <int32 1>, 'b': <'x'>, 'c': <[1.5, 2.5]>}")
        == "({'a': <1>, 'b': <'x'>, 'c': <[1.5, 2.5]>}, uint32 3)\n")
    #expect(
      try gdbus("ReverseStructs", "[('a', 1), ('b', 2)]") == "([('b', 2), ('a', 1)],)\n")
    #expect(try gdbus("Echo", "<(uint16 4, <@a{sv} {}>)>") == "(<(uint16 4, <@a{sv} {}>)>,)\n")
    #expect(try gdbus("Add", "40", "2") == "(42,)\n")
  }

  @Test func dbusKitClientRoundTripsNestedValues() throws {
    let service = try TestService()
    let client = try service.client()
    for value in CodecTests.nested {
      let reply = try waitForResult(service.loop) { done in
        client.call(
          destination: service.connection.uniqueName, path: testPath,
          interface: testInterfaceName, member: "Echo", arguments: [.variant(value)], reply: done)
      }
      #expect(try reply.get() == [.variant(value)])
    }
    // The blocking form, with the service answering from the same loop, needs the service on
    // another connection serviced while blocking: not possible in one thread, so it is used
    // against the bus driver only.
    let id = try client.callBlocking(
      destination: "org.freedesktop.DBus", path: .fixture("/org/freedesktop/DBus"),
      interface: "org.freedesktop.DBus", member: "GetId")
    #expect(id.first?.stringValue?.count == 32)
  }

  @Test func propertiesGetGetAllAndSet() throws {
    let service = try TestService()
    let bus = service.bus
    let address = "--address=\(bus.address)"
    let name = service.connection.uniqueName
    let get = try runClient(
      ["busctl", address, "get-property", name, testPath.rawValue, testInterfaceName, "Count"],
      bus: bus, loop: service.loop)
    #expect(get.stdout == "u 7\n", "\(get.stderr)")

    let set = try runClient(
      [
        "busctl", address, "set-property", name, testPath.rawValue, testInterfaceName, "Label",
        "s", "changed",
      ], bus: bus, loop: service.loop)
    #expect(set.status == 0, "\(set.stderr)")
    #expect(service.label == "changed")
    #expect(service.setterCalls.first?.1.hasPrefix(":") == true)

    let all = try runClient(
      [
        "gdbus", "call", "--address", bus.address, "--dest", name, "--object-path",
        testPath.rawValue, "--method", "org.freedesktop.DBus.Properties.GetAll",
        testInterfaceName,
      ], bus: bus, loop: service.loop)
    #expect(
      all.stdout
        == "({'Count': <uint32 7>, 'Label': <'changed'>, 'Flags': <['a', 'b']>, "
        + "'Version': <'1.0'>},)\n", "\(all.stderr)")
  }

  @Test func propertiesChangedCarriesOnlyTheChangedKeys() throws {
    let service = try TestService()
    let watcher = try service.client()
    var seen: [([String: DBusValue], [String])] = []
    let subscription = try watcher.subscribePropertiesChanged(
      sender: service.connection.uniqueName, path: testPath, interface: testInterfaceName
    ) { changed, invalidated in seen.append((changed, invalidated)) }
    // Let AddMatch reach the bus before emitting (it is ordered on the watcher's connection,
    // not the service's): a round trip on the watcher's connection guarantees it.
    _ = try watcher.nameOwner("org.freedesktop.DBus")

    service.count = 8
    try service.connection.emitPropertiesChanged(
      path: testPath, interface: testInterfaceName, names: ["Count"])
    try service.connection.emitPropertiesChanged(
      path: testPath, interface: testInterfaceName, names: ["Flags", "Version"])
    try pump(service.loop) { seen.count >= 2 }
    try #require(seen.count == 2)
    #expect(seen[0].0 == ["Count": .uint32(8)])
    #expect(seen[0].1 == [])
    #expect(seen[1].0 == [:])
    #expect(seen[1].1 == ["Flags"])

    // Set through the Properties interface from another process: the setter emits.
    let set = try runClient(
      [
        "busctl", "--address=\(service.bus.address)", "set-property",
        service.connection.uniqueName, testPath.rawValue, testInterfaceName, "Label", "s", "new",
      ], bus: service.bus, loop: service.loop)
    #expect(set.status == 0, "\(set.stderr)")
    try pump(service.loop) { seen.count >= 3 }
    #expect(seen.last?.0 == ["Label": .string("new")])
    subscription.cancel()
  }

  @Test func propertiesChangedSeenByBusctlMonitor() throws {
    let service = try TestService()
    let monitor = try ChildProcess(
      [
        "busctl", "--address=\(service.bus.address)", "monitor", "--json=short",
        "--match=interface=org.freedesktop.DBus.Properties",
      ], environment: service.bus.environment, outputDirectory: service.bus.directory.path)
    // busctl monitor becomes a monitor asynchronously: emit until it reports one.
    var output = ""
    let seen = try pump(service.loop, timeout: 10) {
      service.count += 1
      try? service.connection.emitPropertiesChanged(
        path: testPath, interface: testInterfaceName, names: ["Count"])
      usleep(20_000)
      output = monitor.standardOutput
      return output.contains("PropertiesChanged")
    }
    monitor.killNow()
    #expect(seen, "busctl monitor saw: \(output)\n\(monitor.standardError)")
    let line = output.split(separator: "\n").first { $0.contains("PropertiesChanged") } ?? ""
    // The signal's body (sa{sv}as): the interface, the changed values, the invalidated names.
    let body = try JSONValue(parsing: String(line))["payload"]?["data"]?.arrayValue ?? []
    #expect(body.first?.stringValue == testInterfaceName, "\(line)")
    #expect(body.dropFirst().first?.objectValue?.map(\.0) == ["Count"], "\(line)")
  }

  @Test func unicastSignalsReachOnlyTheNamedClient() throws {
    let service = try TestService()
    let chosen = try service.client()
    let other = try service.client()
    var chosenSeen: [[String: DBusValue]] = []
    var otherSeen: [[String: DBusValue]] = []
    var otherMarkers = 0
    let s1 = try chosen.subscribePropertiesChanged(
      sender: nil, path: testPath, interface: testInterfaceName
    ) { changed, _ in chosenSeen.append(changed) }
    let s2 = try other.subscribePropertiesChanged(
      sender: nil, path: testPath, interface: testInterfaceName
    ) { changed, _ in otherSeen.append(changed) }
    let s3 = try other.subscribe(DBusMatchRule(interface: testInterfaceName, member: "Ping")) {
      _ in otherMarkers += 1
    }
    _ = try chosen.nameOwner("org.freedesktop.DBus")
    _ = try other.nameOwner("org.freedesktop.DBus")

    try service.connection.emitPropertiesChanged(
      path: testPath, interface: testInterfaceName, names: ["Count"],
      destinations: [chosen.uniqueName])
    // A broadcast after it: once `other` has the broadcast, it would have had the unicast.
    try service.connection.emitSignal(
      path: testPath, interface: testInterfaceName, name: "Ping", arguments: ["marker"])
    try pump(service.loop) { chosenSeen.count == 1 && otherMarkers == 1 }
    #expect(chosenSeen == [["Count": .uint32(7)]])
    #expect(otherSeen.isEmpty)
    #expect(otherMarkers == 1)
    _ = (s1, s2, s3)
  }

  @Test func deferredRepliesAnswerLater() throws {
    let service = try TestService()
    let client = try service.client()
    var answers: [String] = []
    for tag in 1...3 {
      client.call(
        destination: service.connection.uniqueName, path: testPath,
        interface: testInterfaceName, member: "Deferred", arguments: [.uint32(UInt32(tag))]
      ) { result in answers.append((try? result.get().first?.stringValue) ?? "error") }
    }
    try pump(service.loop) { service.held.count == 3 }
    try pump(service.loop, for: 0.05)
    #expect(answers.isEmpty)
    #expect(service.connection.statistics.openInvocations == 3)
    service.answerDeferred()
    try pump(service.loop) { answers.count == 3 }
    #expect(answers == ["late 1", "late 2", "late 3"])
    #expect(service.connection.statistics.openInvocations == 0)

    // busctl waits for a deferred answer too.
    let timer = try service.loop.makeTimer { service.answerDeferred() }
    try timer.schedule(after: .milliseconds(100))
    let result = try runClient(
      [
        "busctl", "--address=\(service.bus.address)", "call", service.connection.uniqueName,
        testPath.rawValue, testInterfaceName, "Deferred", "u", "9",
      ], bus: service.bus, loop: service.loop)
    #expect(result.stdout == "s \"late 9\"\n", "\(result.stderr)")
  }

  @Test func droppedInvocationGetsAnErrorReply() throws {
    let service = try TestService()
    let result = try runClient(
      [
        "gdbus", "call", "--address", service.bus.address, "--dest",
        service.connection.uniqueName, "--object-path", testPath.rawValue, "--method",
        "\(testInterfaceName).Drop", "--timeout", "20",
      ], bus: service.bus, loop: service.loop)
    #expect(result.status != 0)
    #expect(result.stderr.contains("org.freedesktop.DBus.Error.NoReply"), "\(result.stderr)")
    #expect(result.stderr.contains("dropped"))
    #expect(service.connection.statistics.openInvocations == 0)
  }

  static let errorCases: [(String, String?, String, [DBusValue], DBusError.Name)] = [
    ("/org/orientd/Nothing", testInterfaceName, "Add", [], .unknownObject),
    ("/org/orientd/Nothing", nil, "Add", [], .unknownObject),
    ("/org/orientd", testInterfaceName, "Add", [], .unknownObject),
    ("/org/orientd", nil, "Add", [], .unknownObject),
    ("/org/orientd/Nothing", "org.freedesktop.DBus.Peer", "Nope", [], .unknownMethod),
    ("/org/orientd/Test1", "org.orientd.Missing", "Add", [], .unknownInterface),
    ("/org/orientd/Test1", testInterfaceName, "Missing", [], .unknownMethod),
    ("/org/orientd/Test1", nil, "Missing", [], .unknownMethod),
    ("/org/orientd/Test1", testInterfaceName, "Add", ["one", "two"], .invalidArgs),
    ("/org/orientd/Test1", testInterfaceName, "Add", [.int32(1)], .invalidArgs),
    (
      "/org/orientd/Test1", "org.freedesktop.DBus.Properties", "Get",
      [.string(testInterfaceName), "Nope"], .unknownProperty
    ),
    (
      "/org/orientd/Test1", "org.freedesktop.DBus.Properties", "Get",
      ["org.orientd.Missing", "Count"], .unknownInterface
    ),
    (
      "/org/orientd/Test1", "org.freedesktop.DBus.Properties", "Set",
      [.string(testInterfaceName), "Count", .variant(.uint32(1))], .propertyReadOnly
    ),
    (
      "/org/orientd/Test1", "org.freedesktop.DBus.Properties", "Set",
      [.string(testInterfaceName), "Label", .variant(.uint32(1))], .invalidArgs
    ),
    (
      "/org/orientd/Test1", "org.freedesktop.DBus.Properties", "Set",
      [.string(testInterfaceName), "Label", .variant("")], .invalidArgs
    ),
    ("/org/orientd/Test1", testInterfaceName, "Fail", [], .init("org.orientd.Test1.Error.Custom")),
    ("/org/orientd/Test1", testInterfaceName, "WrongReply", [], .failed),
  ]

  @Test func badCallsGetTheStandardErrors() throws {
    let service = try TestService()
    let client = try service.client()
    for (path, interface, member, arguments, expected) in Self.errorCases {
      let message = try DBusMessage.methodCall(
        destination: service.connection.uniqueName, path: .fixture(path), interface: interface,
        member: member, arguments: arguments)
      let result = try waitForResult(service.loop) { done in client.call(message, reply: done) }
      #expect(throws: DBusError.self, "\(path) \(interface ?? "-") \(member)") {
        _ = try result.get()
      }
      if case .failure(let error) = result {
        #expect(error.name == expected, "\(path) \(member): \(error)")
      }
    }
    // And the service is still fine.
    let sum = try waitForResult(service.loop) { done in
      client.call(
        destination: service.connection.uniqueName, path: testPath,
        interface: testInterfaceName, member: "Add", arguments: [.int32(2), .int32(3)],
        reply: done)
    }
    #expect(try sum.get() == [.int32(5)])
  }

  @Test func dbusSendShowsTheErrorNames() throws {
    let service = try TestService()
    func send(_ arguments: [String]) throws -> String {
      let result = try runClient(
        ["dbus-send", "--bus=\(service.bus.address)", "--print-reply"] + arguments,
        bus: service.bus, loop: service.loop)
      return result.stderr
    }
    let name = "--dest=\(service.connection.uniqueName)"
    #expect(
      try send([name, "/nowhere", "org.orientd.Test1.Add"]).contains(
        "org.freedesktop.DBus.Error.UnknownObject"))
    #expect(
      try send([name, testPath.rawValue, "org.orientd.Test1.Add", "string:x"]).contains(
        "org.freedesktop.DBus.Error.InvalidArgs"))
    #expect(
      try send([name, testPath.rawValue, "org.orientd.Test1.Nope"]).contains(
        "org.freedesktop.DBus.Error.UnknownMethod"))
  }

  @Test func introspectionParsesWithGdbusAndBusctl() throws {
    let service = try TestService()
    let name = service.connection.uniqueName
    let gdbus = try runClient(
      [
        "gdbus", "introspect", "--address", service.bus.address, "--dest", name,
        "--object-path", testPath.rawValue,
      ], bus: service.bus, loop: service.loop)
    #expect(gdbus.status == 0, "\(gdbus.stderr)")
    #expect(gdbus.stdout.contains("interface org.orientd.Test1 {"))
    #expect(gdbus.stdout.contains("Add(in  i a,"))
    #expect(gdbus.stdout.contains("readonly u Count = 7;"))
    #expect(gdbus.stdout.contains("readwrite s Label = 'initial';"))
    #expect(gdbus.stdout.contains("node child {"))
    #expect(gdbus.stdout.contains("interface org.freedesktop.DBus.Peer {"))

    let busctl = try runClient(
      ["busctl", "--address=\(service.bus.address)", "introspect", name, testPath.rawValue],
      bus: service.bus, loop: service.loop)
    #expect(busctl.status == 0, "\(busctl.stderr)")
    #expect(busctl.stdout.contains(".EchoDict"))
    #expect(busctl.stdout.contains("a{sv}"))

    let tree = try runClient(
      ["busctl", "--address=\(service.bus.address)", "tree", "--list", name],
      bus: service.bus, loop: service.loop)
    #expect(
      tree.stdout == "/\n/org\n/org/orientd\n/org/orientd/Test1\n/org/orientd/Test1/child\n",
      "\(tree.stderr)")

    // The served document is the generated one plus the standard interfaces and children.
    let client = try service.client()
    let served = try waitForResult(service.loop) { done in
      client.call(
        destination: name, path: testPath, interface: "org.freedesktop.DBus.Introspectable",
        member: "Introspect", reply: done)
    }
    let xml = try served.get().first?.stringValue ?? ""
    let own = DBusIntrospection.xml(for: service.makeInterface(), indent: "  ")
    #expect(xml.hasPrefix(DBusIntrospection.doctype + "\n<node>\n" + own))
    #expect(xml.hasSuffix("  <node name=\"child\"/>\n</node>\n"))
  }

  @Test func peerInterfaceAnswers() throws {
    let service = try TestService()
    let address = "--address=\(service.bus.address)"
    let name = service.connection.uniqueName
    let ping = try runClient(
      ["busctl", address, "call", name, "/", "org.freedesktop.DBus.Peer", "Ping"],
      bus: service.bus, loop: service.loop)
    #expect(ping.status == 0, "\(ping.stderr)")
    let id = try runClient(
      ["busctl", address, "call", name, "/", "org.freedesktop.DBus.Peer", "GetMachineId"],
      bus: service.bus, loop: service.loop)
    #expect(id.stdout.hasPrefix("s \""), "\(id.stderr)")
    // Without an interface name, DBusKit answers (libdbus only handles the named form).
    let client = try service.client()
    let bare = try DBusMessage.methodCall(
      destination: name, path: testPath, interface: nil, member: "GetMachineId")
    let reply = try waitForResult(service.loop) { done in client.call(bare, reply: done) }
    #expect(try reply.get().arguments().first?.stringValue?.count == 32)
  }

  @Test func credentialsOfTheCaller() throws {
    let service = try TestService()
    let result = try runClient(
      [
        "busctl", "--address=\(service.bus.address)", "call", service.connection.uniqueName,
        testPath.rawValue, testInterfaceName, "WhoAmI",
      ], bus: service.bus, loop: service.loop)
    #expect(result.stdout == "u \(getuid())\n", "\(result.stderr)")
  }
}

/// Inputs a hostile or broken client might send, and callbacks that tear things down.
@Suite(.ownThreads) struct RobustnessTests {
  @Test func oversizedAndOverdeepArgumentsAreRefused() throws {
    let service = try TestService()
    let client = try service.client()
    func echo(_ value: DBusValue) throws -> Result<[DBusValue], DBusError> {
      try waitForResult(service.loop) { done in
        client.call(
          destination: service.connection.uniqueName, path: testPath,
          interface: testInterfaceName, member: "Echo", arguments: [.variant(value)],
          reply: done)
      }
    }
    let many = DBusValue.array(element: .byte, (0..<200_000).map { .byte(UInt8($0 & 0xff)) })
    let deep = (0..<40).reduce(DBusValue.int32(1)) { inner, _ in .variant(inner) }
    let wide = DBusValue.strings((0..<2000).map { _ in String(repeating: "x", count: 4000) })
    for value in [many, deep, wide] {
      let result = try echo(value)
      guard case .failure(let error) = result else {
        Issue.record("accepted \(value.typeSignature)")
        continue
      }
      #expect(error.name == .invalidArgs, "\(error)")
      print("refused \(value.typeSignature): \(error.message)")
    }
    #expect(try echo(.int32(5)).get() == [.variant(.int32(5))])
    #expect(service.connection.statistics.openInvocations == 0)
  }

  @Test func closingConnectionsFromInsideCallbacksIsSafe() throws {
    let service = try TestService()
    var client: DBusConnection? = try service.client()
    var replied = false
    client?.call(
      destination: service.connection.uniqueName, path: testPath, interface: testInterfaceName,
      member: "Add", arguments: [.int32(1), .int32(2)]
    ) { _ in
      replied = true
      client = nil  // the last reference, dropped inside its own dispatch
    }
    try pump(service.loop) { replied }
    #expect(client == nil)

    // A service that closes its connection while answering a call.
    let bus = service.bus
    let loop = service.loop
    let server = try DBusConnection(bus: .address(bus.address), loop: loop)
    try server.export(
      [
        DBusInterface(
          "org.orientd.Closer1",
          methods: [
            DBusMethod(
              "Close",
              deferred: { [unowned server] (invocation) throws(DBusError) in
                invocation.reply()
                server.close()
              })
          ])
      ], at: .fixture("/closer"))
    let caller = try service.client()
    let result = try waitForResult(loop) { done in
      caller.call(
        destination: server.uniqueName, path: .fixture("/closer"),
        interface: "org.orientd.Closer1", member: "Close", reply: done)
    }
    _ = result  // the reply may or may not have been flushed before the close
    #expect(!server.isConnected)
    try pump(loop, for: 0.05)
  }
}
