import DBusKit
import Glibc
import SystemKit
import TestSupport
import TestThreads
import Testing

/// Connections, names, clients coming and going, and the bus itself going away.
@Suite(.ownThreads) struct BusTests {
  @Test func connectingToNothingFailsWithTheAddress() throws {
    let loop = try EventLoop()
    #expect {
      _ = try DBusConnection(bus: .address("unix:path=/nonexistent/bus.sock"), loop: loop)
    } throws: { error in
      guard let error = error as? DBusError else { return false }
      return error.message.contains("/nonexistent/bus.sock")
    }
    #expect(throws: DBusError.self) {
      _ = try DBusConnection(bus: .address("no-such-transport:x=y"), loop: loop)
    }
  }

  @Test func systemBusAddressComesFromTheEnvironment() throws {
    let expected =
      getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) }.flatMap {
        $0.isEmpty ? nil : $0
      } ?? "unix:path=/var/run/dbus/system_bus_socket"
    #expect(try DBusConnection.resolve(.system) == expected)
    #expect(try DBusConnection.resolve(.address("unix:path=/x")) == "unix:path=/x")
  }

  @Test func uniqueNamesAndSeveralPrivateConnections() throws {
    let bus = try PrivateBus(openPolicy: true)
    let loop = try EventLoop()
    let a = try DBusConnection(bus: .address(bus.address), loop: loop)
    let b = try DBusConnection(bus: .address(bus.address), loop: loop)
    #expect(a.uniqueName.hasPrefix(":"))
    #expect(a.uniqueName != b.uniqueName)
    #expect(try a.nameOwner(b.uniqueName) == b.uniqueName)
    b.close()
    #expect(throws: DBusError.self) {
      try b.send(DBusMessage.signal(path: .root, interface: "a.b", member: "C"))
    }
    try pump(loop) { (try? a.nameOwner(b.uniqueName)) == .some(nil) }
    #expect(try a.nameOwner(b.uniqueName) == nil)
  }

  @Test func nameOwnershipResultsAndNameLost() throws {
    let bus = try PrivateBus(openPolicy: true)
    let loop = try EventLoop()
    let a = try DBusConnection(bus: .address(bus.address), loop: loop)
    let b = try DBusConnection(bus: .address(bus.address), loop: loop)
    let c = try DBusConnection(bus: .address(bus.address), loop: loop)
    var events: [String] = []
    for (label, connection) in [("a", a), ("b", b), ("c", c)] {
      connection.onNameAcquired = { events.append("\(label)+\($0)") }
      connection.onNameLost = { events.append("\(label)-\($0)") }
    }
    let name = "org.orientd.TestName"
    #expect(try a.requestName(name, flags: [.allowReplacement]) == .primaryOwner)
    #expect(try a.requestName(name, flags: [.allowReplacement]) == .alreadyOwner)
    #expect(try b.requestName(name, flags: [.doNotQueue]) == .exists)
    #expect(try b.requestName(name) == .inQueue)
    #expect(try c.requestName(name, flags: [.replaceExisting, .doNotQueue]) == .primaryOwner)
    func sequence(_ label: String) -> [String] { events.filter { $0.hasPrefix(label) } }
    try pump(loop) { sequence("a").count == 2 && sequence("c").count == 1 }
    // Each connection sees its own events in order; across connections the order is free.
    #expect(sequence("a") == ["a+\(name)", "a-\(name)"])
    #expect(sequence("c") == ["c+\(name)"])
    // a was replaced, so it went back to the head of the queue, before b.
    #expect(try c.releaseName(name) == .released)
    #expect(try c.releaseName(name) == .notOwner)
    try pump(loop) { sequence("a").count == 3 && sequence("c").count == 2 }
    #expect(sequence("a").last == "a+\(name)")
    #expect(sequence("c").last == "c-\(name)")
    #expect(try a.nameOwner(name) == a.uniqueName)
    #expect(try a.releaseName(name) == .released)
    try pump(loop) { sequence("b").count == 1 && sequence("a").count == 4 }
    #expect(sequence("b") == ["b+\(name)"])
    #expect(try a.nameOwner(name) == b.uniqueName)
    #expect(try a.releaseName("org.orientd.Unowned") == .nonExistent)
    #expect(throws: DBusError.self) { try a.requestName(":1.5") }
    #expect(throws: DBusError.self) { try a.requestName("no dots") }

    let async = try waitForResult(loop) { done in a.requestName("org.orientd.Other", reply: done) }
    #expect(try async.get() == .primaryOwner)
  }

  @Test func watchingANameSeesTheServiceAppearAndGo() throws {
    let bus = try PrivateBus(openPolicy: true)
    let loop = try EventLoop()
    let watcher = try DBusConnection(bus: .address(bus.address), loop: loop)
    var owners: [String?] = []
    let watch = try watcher.watchName("org.orientd.Appearing") { owners.append($0) }
    try pump(loop) { owners.count == 1 }
    #expect(owners == [nil])
    let service = try DBusConnection(bus: .address(bus.address), loop: loop)
    #expect(try service.requestName("org.orientd.Appearing") == .primaryOwner)
    try pump(loop) { owners.count == 2 }
    #expect(owners == [nil, service.uniqueName])
    service.close()
    try pump(loop) { owners.count == 3 }
    #expect(owners == [nil, service.uniqueName, nil])
    watch.cancel()
    #expect(watcher.statistics.watchedNames == 0)
  }

  @Test func pendingCallsTimeOutThroughTheLoop() throws {
    let service = try TestService()
    let client = try service.client()
    let start = monotonicSeconds()
    let result = try waitForResult(service.loop) { done in
      client.call(
        destination: service.connection.uniqueName, path: testPath,
        interface: testInterfaceName, member: "Deferred", arguments: [.uint32(1)],
        timeoutMilliseconds: 100, reply: done)
    }
    print("timeout reported after \(Int((monotonicSeconds() - start) * 1000)) ms (asked 100)")
    #expect(throws: DBusError.self) { try result.get() }
    if case .failure(let error) = result { #expect(error.name == .noReply) }
    #expect(client.statistics.pendingCalls == 0)
    try pump(service.loop) { client.statistics.timeouts == 0 }
    #expect(client.statistics.timeouts == 0)

    // A cancelled call never runs its handler.
    var ran = false
    let call = client.call(
      destination: service.connection.uniqueName, path: testPath, interface: testInterfaceName,
      member: "Add", arguments: [.int32(1), .int32(1)]
    ) { _ in ran = true }
    call.cancel()
    try pump(service.loop, for: 0.1)
    #expect(!ran)
    #expect(client.statistics.pendingCalls == 0)
  }

  /// One timer serves all pending calls and is armed at or before the earliest deadline
  /// (TimeoutSet): a later call added after an earlier one, and a call left when the earliest
  /// is answered (its deadline removed, the timer left early), still time out, in order.
  @Test func pendingCallsWithOverlappingTimeoutsEachTimeOut() throws {
    let service = try TestService()
    let client = try service.client()
    var failed: [String] = []
    func call(_ label: String, _ member: String, _ arguments: [DBusValue], timeout: Int32) {
      client.call(
        destination: service.connection.uniqueName, path: testPath,
        interface: testInterfaceName, member: member, arguments: arguments,
        timeoutMilliseconds: timeout
      ) { result in
        if case .failure(let error) = result, error.name == .noReply { failed.append(label) }
      }
    }
    // Answered at once: its timeout (the earliest) is removed before it is due.
    call("answered", "Add", [.int32(1), .int32(1)], timeout: 50)
    call("late", "Deferred", [.uint32(2)], timeout: 300)
    call("early", "Deferred", [.uint32(1)], timeout: 150)
    try pump(service.loop) { failed.count == 2 }
    #expect(failed == ["early", "late"])
    #expect(client.statistics.pendingCalls == 0)
    try pump(service.loop) { client.statistics.timeouts == 0 }
    #expect(client.statistics.timeouts == 0)
  }

  @Test func vanishingClientsAreNoticed() throws {
    let service = try TestService()
    var vanished: [String] = []
    let tracker = DBusClientTracker(connection: service.connection) { [unowned service] name in
      vanished.append(name)
      service.claims.remove(name)
    }
    service.tracker = tracker

    // A busctl process claims and exits.
    let result = try runClient(
      [
        "busctl", "--address=\(service.bus.address)", "call", service.connection.uniqueName,
        testPath.rawValue, testInterfaceName, "Claim",
      ], bus: service.bus, loop: service.loop)
    #expect(result.status == 0, "\(result.stderr)")
    try pump(service.loop) { vanished.count == 1 }
    #expect(vanished.count == 1)

    // A client that sends without waiting and is gone before the match rule is in place.
    let quick = try runClient(
      [
        "busctl", "--address=\(service.bus.address)", "call", "--expect-reply=no",
        service.connection.uniqueName, testPath.rawValue, testInterfaceName, "Claim",
      ], bus: service.bus, loop: service.loop)
    #expect(quick.status == 0, "\(quick.stderr)")
    try pump(service.loop) { vanished.count == 2 }
    #expect(vanished.count == 2)

    // A DBusKit connection that claims, stays, then closes.
    let client = try service.client()
    _ = try waitForResult(service.loop) { done in
      client.call(
        destination: service.connection.uniqueName, path: testPath,
        interface: testInterfaceName, member: "Claim", reply: done)
    }
    try pump(service.loop, for: 0.05)
    #expect(service.claims == [client.uniqueName])
    #expect(vanished.count == 2)
    client.close()
    try pump(service.loop) { vanished.count == 3 }
    #expect(vanished.last == client.uniqueName)
    #expect(service.claims.isEmpty)
    #expect(tracker.trackedNames.isEmpty)
    #expect(tracker.matchRuleCount == 0)
  }

  @Test func trackerSwitchesToOneSharedMatchBeyondItsLimit() throws {
    let service = try TestService()
    var vanished = Set<String>()
    let tracker = DBusClientTracker(connection: service.connection, perNameMatchLimit: 2) {
      vanished.insert($0)
    }
    var clients: [DBusConnection] = []
    for _ in 0..<5 {
      let client = try service.client()
      clients.append(client)
      tracker.track(client.uniqueName)
    }
    #expect(tracker.matchRuleCount == 3)
    try pump(service.loop, for: 0.05)
    #expect(vanished.isEmpty)
    let names = Set(clients.map(\.uniqueName))
    for client in clients { client.close() }
    clients = []
    try pump(service.loop) { vanished.count == 5 }
    #expect(vanished == names)
    #expect(tracker.matchRuleCount == 0)
  }

  @Test func killingTheBusReportsDisconnectWithoutCrashing() throws {
    let service = try TestService()
    let client = try service.client()
    var disconnects = 0
    service.connection.onDisconnect = { disconnects += 1 }
    var clientDisconnected = false
    client.onDisconnect = { clientDisconnected = true }
    var outstanding: Result<[DBusValue], DBusError>?
    client.call(
      destination: service.connection.uniqueName, path: testPath, interface: testInterfaceName,
      member: "Deferred", arguments: [.uint32(1)]
    ) { outstanding = $0 }
    try pump(service.loop) { service.held.count == 1 }

    service.bus.daemon.killNow()
    try pump(service.loop) { disconnects == 1 && clientDisconnected && outstanding != nil }
    #expect(disconnects == 1)
    #expect(!service.connection.isConnected)
    #expect(clientDisconnected)
    #expect(throws: DBusError.self) { try outstanding?.get() }
    // Answering the held invocation now is harmless, and new calls fail cleanly.
    service.answerDeferred()
    let late = try waitForResult(service.loop) { done in
      client.call(
        destination: service.connection.uniqueName, path: testPath,
        interface: testInterfaceName, member: "Add", arguments: [.int32(1), .int32(2)],
        reply: done)
    }
    if case .failure(let error) = late {
      #expect(error.name == .disconnected)
    } else {
      Issue.record("a call after the bus died succeeded")
    }
    #expect(throws: DBusError.self) {
      try service.connection.emitSignal(
        path: testPath, interface: testInterfaceName, name: "Ping", arguments: ["x"])
    }
    #expect(service.connection.statistics.socketWatches == 0)
    try pump(service.loop, for: 0.05)
    #expect(disconnects == 1)
  }

  /// A few hundred clients each claim, then vanish; every registry drains back to idle.
  @Test func loadOfClientsCallingAndVanishing() throws {
    let clientCount = 300
    let service = try TestService(limits: ["max_connections_per_user": 2048])
    var vanished = 0
    let tracker = DBusClientTracker(connection: service.connection) { [unowned service] name in
      vanished += 1
      service.claims.remove(name)
    }
    service.tracker = tracker
    let idle = service.connection.statistics
    let rssBefore = residentKilobytes()
    let start = monotonicSeconds()

    for round in 0..<2 {
      vanished = 0
      var clients: [DBusConnection] = []
      var answered = 0
      for _ in 0..<clientCount {
        let client = try service.client()
        clients.append(client)
        client.call(
          destination: service.connection.uniqueName, path: testPath,
          interface: testInterfaceName, member: "Claim"
        ) { result in if case .success = result { answered += 1 } }
      }
      try pump(service.loop, timeout: 30) { answered == clientCount }
      #expect(answered == clientCount)
      #expect(service.claims.count == clientCount)
      #expect(tracker.matchRuleCount == tracker.perNameMatchLimit + 1)
      clients.removeAll()  // closes every connection
      try pump(service.loop, timeout: 30) { vanished == clientCount }
      #expect(vanished == clientCount)
      print(
        "round \(round): \(clientCount) clients claimed and vanished, "
          + "\(Int((monotonicSeconds() - start) * 1000)) ms so far")
    }
    try pump(service.loop) { service.connection.statistics == idle }
    #expect(service.claims.isEmpty)
    #expect(tracker.trackedNames.isEmpty)
    #expect(tracker.matchRuleCount == 0)
    #expect(service.connection.statistics == idle)

    // The bus agrees: the service holds no match rules any more.
    let stats = try runClient(
      [
        "busctl", "--address=\(service.bus.address)", "call", "org.freedesktop.DBus",
        "/org/freedesktop/DBus", "org.freedesktop.DBus.Debug.Stats", "GetConnectionStats", "s",
        service.connection.uniqueName,
      ], bus: service.bus, loop: service.loop)
    if stats.status == 0 {
      #expect(stats.stdout.contains("\"MatchRules\" u 0"), "\(stats.stdout)")
    } else {
      print("bus statistics unavailable: \(stats.stderr)")
    }
    print("resident memory: \(rssBefore) kB before, \(residentKilobytes()) kB after")
  }
}

/// VmRSS of this process.
func residentKilobytes() -> Int {
  let status = readFile("/proc/self/status")
  for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
  }
  return 0
}

/// An idle connection must not wake the loop (the daemon's "zero wakeups when unclaimed").
@Suite(.ownThreads) struct IdleTests {
  @Test func idleConnectionSleeps() throws {
    let service = try TestService()
    let client = try service.client()
    _ = try waitForResult(service.loop) { done in
      client.call(
        destination: service.connection.uniqueName, path: testPath,
        interface: testInterfaceName, member: "Add", arguments: [.int32(1), .int32(2)],
        reply: done)
    }
    try pump(service.loop, for: 0.05)
    #expect(service.connection.statistics.timeouts == 0)
    #expect(client.statistics.timeouts == 0)
    // Count how often the loop returns in 300 ms with nothing to do; print, do not assert
    // on timing. Each runOnce returns at once if anything is ready.
    var wakeups = 0
    let deadline = monotonicSeconds() + 0.3
    while monotonicSeconds() < deadline {
      try service.loop.runOnce(timeoutMilliseconds: 100)
      wakeups += 1
    }
    print("idle: \(wakeups) loop returns in 300 ms with a 100 ms timeout (3-4 means asleep)")
    #expect(wakeups < 50)
  }
}
