import DBusKit
import Glibc
import JSON
import OrientClient
import OrientCore
import OrientWire
import SystemKit
import TestSupport
import TestThreads
import Testing

/// The client against stand-in services on a private bus with the project's own policy, and
/// orientcam's `--orientation auto` through it.
@Suite(.ownThreads) struct OrientClientTests {
  /// Claims and waits for the answer.
  func claim(_ client: OrientClient, _ loop: EventLoop) throws -> Result<
    OrientState, OrientClientError
  > {
    var outcome: Result<OrientState, OrientClientError>?
    client.claim { outcome = $0 }
    try pump(loop) { outcome != nil }
    return try #require(outcome)
  }

  @Test func claimsReadsFollowsAndReleases() throws {
    let bus = try PrivateBus()
    let loop = try EventLoop()
    let service = try FakeService(bus: bus, loop: loop)
    service.orientation = .rightUp
    let client = try OrientClient(bus: .address(bus.address), loop: loop, logger: quietLogger)
    defer { client.connection.close() }
    let state = try claim(client, loop).get()
    #expect(state.service == .orientd)
    #expect(state.hasAccelerometer && state.orientation == .rightUp && state.rotation == 270)
    #expect(state.tilt == .vertical)
    #expect(state.sensor["device"] == .string("iio:device0"))
    #expect(service.claims == [client.connection.uniqueName])

    var changes: [(OrientState, OrientState.Fields)] = []
    client.onChange = { changes.append(($0, $1)) }
    try service.turn(.leftUp, tilt: .tiltedUp)
    try pump(loop) { !changes.isEmpty }
    #expect(changes.first?.0.orientation == .leftUp && changes.first?.0.rotation == 90)
    #expect(changes.first?.0.tilt == .tiltedUp)
    #expect(changes.first?.1 == [.orientation, .tilt])

    var reading: Result<GravityReading, OrientClientError>?
    client.gravity { reading = $0 }
    try pump(loop) { reading != nil }
    #expect(
      try reading?.get()
        == GravityReading(x: 0.5, y: -9.7, z: 0.25, timestampMicroseconds: 123_456))

    var released = false
    client.release { _ in released = true }
    try pump(loop) { released }
    #expect(service.claims.isEmpty && service.releaseCalls == 1)
    #expect(!client.isClaimed)
    // No longer following: a change after the release is not reported.
    changes = []
    try service.turn(.bottomUp)
    try pump(loop, timeout: 0.3) { false }
    #expect(changes.isEmpty)
  }

  @Test func fallsBackToSensorProxy() throws {
    let bus = try PrivateBus()
    let loop = try EventLoop()
    let proxy = try FakeService(bus: bus, loop: loop, sensorProxy: true)
    proxy.orientation = .bottomUp
    proxy.tilt = .faceUp
    let client = try OrientClient(bus: .address(bus.address), loop: loop, logger: quietLogger)
    defer { client.connection.close() }
    let state = try claim(client, loop).get()
    #expect(state.service == .sensorProxy)
    #expect(state.orientation == .bottomUp && state.tilt == .faceUp && state.sensor.isEmpty)
    #expect(proxy.claims == [client.connection.uniqueName])
    var seen: Orientation?
    client.onChange = { state, _ in seen = state.orientation }
    try proxy.turn(.normal)
    try pump(loop) { seen != nil }
    #expect(seen == .normal)
  }

  @Test func typedErrors() throws {
    let bus = try PrivateBus()
    let loop = try EventLoop()
    let client = try OrientClient(bus: .address(bus.address), loop: loop, logger: quietLogger)
    defer { client.connection.close() }
    // Nobody there.
    let missing = try claim(client, loop)
    guard case .failure(let error) = missing else {
      Issue.record("claimed with no service: \(missing)")
      return
    }
    #expect(error.kind == .serviceMissing)
    #expect(error.message.contains(Wire.orientdName))
    #expect(error.message.contains(Wire.sensorProxyName))
    // A refusal is access denied, not "missing".
    let service = try FakeService(bus: bus, loop: loop)
    service.claimError = DBusError(.accessDenied, "not you")
    let denied = try claim(client, loop)
    guard case .failure(let deniedError) = denied else {
      Issue.record("claim was not refused: \(denied)")
      return
    }
    #expect(deniedError.kind == .accessDenied)
    // No bus at all.
    #expect {
      _ = try OrientClient(
        bus: .address("unix:path=\(bus.directory.path)/none.sock"), loop: loop,
        logger: quietLogger)
    } throws: { ($0 as? OrientClientError)?.kind == .noBus }
  }

  @Test func serviceLostAndWaitingForItAgain() throws {
    let bus = try PrivateBus()
    let loop = try EventLoop()
    let client = try OrientClient(bus: .address(bus.address), loop: loop, logger: quietLogger)
    defer { client.connection.close() }
    var found: [OrientService] = []
    var wait = try client.waitForService { found.append($0) }
    try pump(loop, timeout: 0.3) { false }
    #expect(found.isEmpty)
    var service: FakeService? = try FakeService(bus: bus, loop: loop)
    try pump(loop) { !found.isEmpty }
    #expect(found == [.orientd])
    _ = try claim(client, loop).get()

    var lost: [OrientService] = []
    client.onServiceLost = { lost.append($0) }
    service?.connection.close()
    service = nil
    try pump(loop) { !lost.isEmpty }
    #expect(lost == [.orientd] && !client.isClaimed)

    // Only iio-sensor-proxy comes back: that is what the wait reports.
    found = []
    wait = try client.waitForService { found.append($0) }
    let proxy = try FakeService(bus: bus, loop: loop, sensorProxy: true)
    try pump(loop) { !found.isEmpty }
    #expect(found == [.sensorProxy])
    wait.cancel()
    _ = proxy
  }

  // MARK: orientcam --orientation auto

  @Test func orientcamAutoClaimsOnlyForTheCapture() throws {
    let bus = try PrivateBus()
    let loop = try EventLoop()
    let service = try FakeService(bus: bus, loop: loop)
    service.orientation = .leftUp
    let dir = try TemporaryDirectory("cam-auto")
    let result = try runWhileServing(
      [
        try Built.executable("orientcam"), "capture", "--source", "pattern", "--json", "-o",
        dir.file("{orientation}.jpg"),
      ], environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address], loop: loop,
      directory: dir.path)
    #expect(result.status == 0, "\(result.stderr)")
    let report = try JSONValue(parsing: result.stdout)
    #expect(report["orientation"]?.stringValue == "left-up")
    #expect(report["orientation_source"]?.stringValue == "orientd")
    #expect(report["width"]?.numberValue == 720)
    // Claimed once, released explicitly (not just by disconnecting).
    #expect(service.claimCalls == 1 && service.releaseCalls == 1 && service.claims.isEmpty)
  }

  @Test func orientcamAutoWithIioSensorProxyAndWithoutSensor() throws {
    let bus = try PrivateBus()
    let loop = try EventLoop()
    let proxy = try FakeService(bus: bus, loop: loop, sensorProxy: true)
    proxy.orientation = .rightUp
    let dir = try TemporaryDirectory("cam-auto")
    let environment = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address]
    let ok = try runWhileServing(
      [
        try Built.executable("orientcam"), "capture", "--source", "pattern", "--json", "-o",
        dir.file("a.jpg"),
      ], environment: environment, loop: loop, directory: dir.path)
    #expect(ok.status == 0, "\(ok.stderr)")
    #expect(
      try JSONValue(parsing: ok.stdout)["orientation_source"]?.stringValue == "iio-sensor-proxy")
    #expect(try JSONValue(parsing: ok.stdout)["orientation"]?.stringValue == "right-up")

    proxy.hasAccelerometer = false
    let refused = try runWhileServing(
      [
        try Built.executable("orientcam"), "capture", "--source", "pattern", "-o",
        dir.file("b.jpg"),
      ],
      environment: environment, loop: loop, directory: dir.path)
    #expect(refused.status == 69)
    #expect(refused.stderr.contains("has no accelerometer"), "\(refused.stderr)")
    #expect(access(dir.file("b.jpg"), F_OK) != 0)
    // Every claim ends: a client that exits is released when the bus says it left, which the
    // service may hear only after the program has exited.
    #expect(try pump(loop, until: { proxy.claims.isEmpty }), "\(proxy.claims)")
  }
}

/// `AmbientFollower` gives back what it claimed when one of its claims is refused: the claim
/// answered before the refusal, and the one answered after it.
@Suite(.ownThreads) struct AmbientFollowerTests {
  /// `net.hadess.SensorProxy` with light and proximity claims, one of them refused.
  final class AmbientService {
    let connection: DBusConnection
    var claims = Set<String>()
    var releases: [String] = []

    init(bus: PrivateBus, loop: EventLoop, refused: String) throws {
      connection = try DBusConnection(bus: .address(bus.address), loop: loop, logger: quietLogger)
      var methods: [DBusMethod] = []
      for kind in ["Light", "Proximity"] {
        methods.append(
          DBusMethod("Claim\(kind)") { [unowned self] (call) throws(DBusError) -> [DBusValue] in
            if kind == refused { throw DBusError(.accessDenied, "Not Authorized") }
            self.claims.insert(kind)
            return []
          })
        methods.append(
          DBusMethod("Release\(kind)") { [unowned self] (_) throws(DBusError) -> [DBusValue] in
            self.releases.append(kind)
            self.claims.remove(kind)
            return []
          })
      }
      let properties = [
        DBusProperty("HasAmbientLight", .boolean) { .boolean(true) },
        DBusProperty("HasProximity", .boolean) { .boolean(true) },
      ]
      try connection.export(
        [DBusInterface(Wire.sensorProxyName, methods: methods, properties: properties)],
        at: try DBusObjectPath(Wire.sensorProxyPath.rawValue))
      guard
        try connection.requestName(Wire.sensorProxyName, flags: [.doNotQueue])
          == .primaryOwner
      else { throw TestFailure("cannot own \(Wire.sensorProxyName)") }
    }

    deinit { connection.close() }
  }

  /// Light is answered first (claims are sent in kind order): refusing proximity must release
  /// the light claim already held; refusing light must release proximity's, answered after.
  @Test(arguments: ["Proximity", "Light"])
  func aRefusedClaimGivesTheOthersBack(refused: String) throws {
    let bus = try PrivateBus()
    let loop = try EventLoop()
    let service = try AmbientService(bus: bus, loop: loop, refused: refused)
    let connection = try DBusConnection(
      bus: .address(bus.address), loop: loop, logger: quietLogger)
    defer { connection.close() }
    let follower = AmbientFollower(
      connection: connection, kinds: [.light, .proximity], logger: quietLogger)
    var failure: OrientClientError?
    follower.onFailure = { failure = $0 }
    follower.start()
    try pump(loop) { failure != nil }
    #expect(failure?.kind == .accessDenied, "\(String(describing: failure))")
    let granted = refused == "Light" ? "Proximity" : "Light"
    #expect(
      try pump(loop) { service.releases == [granted] && service.claims.isEmpty },
      "claims \(service.claims), releases \(service.releases)")
    follower.stop()
    try pump(loop, timeout: 0.3) { false }
    #expect(service.releases == [granted], "nothing released twice")
  }
}
