import DBusKit
import Glibc
import JSON
import OrientCore
import OrientWire
import SystemKit
import TestSupport
import TestThreads
import Testing

/// Runs the loop in short slices until `condition` holds or `timeout` seconds pass.
@discardableResult
func pump(_ loop: EventLoop, timeout: Double = 10, until condition: () -> Bool) throws -> Bool {
  let deadline = monotonicSeconds() + timeout
  while !condition() {
    if monotonicSeconds() > deadline { return false }
    try loop.runOnce(timeoutMilliseconds: 5)
  }
  return true
}

/// Claims: sampling only while claimed, clients that vanish, the first claim's fresh answer,
/// a sensor that goes and comes back.
@Suite(.ownThreads, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct ClaimTests {
  @Test func killedAndVanishedClientsAreReleasedAndSamplingStops() throws {
    let fixture = try DaemonFixture()
    // Idle: nothing of the sensor is open.
    #expect(!fixture.isReadingSensor)
    let watch = try fixture.start([try Built.executable("orientd"), "--watch"])
    #expect(waitFor(timeout: 10) { watch.standardOutput.contains("normal (rotation 0") })
    #expect(fixture.isReadingSensor)
    watch.signal(SIGKILL)
    #expect(waitFor(timeout: 10) { !fixture.isReadingSensor }, "\(fixture.log)")

    // A client that claims and exits at once (gdbus) is released as well.
    let gdbus = try fixture.client([
      "gdbus", "call", "--address", fixture.bus.address, "--dest", Wire.sensorProxyName,
      "--object-path", Wire.sensorProxyPath.rawValue, "--method",
      "\(Wire.sensorProxyName).ClaimAccelerometer",
    ])
    #expect(gdbus.status == 0 && gdbus.stdout.trimmingCharacters() == "()", "\(gdbus.stderr)")
    #expect(waitFor(timeout: 10) { !fixture.isReadingSensor })

    // Many clients claim at once through both APIs, claim twice, release some, then vanish.
    let loop = try EventLoop()
    let clients = try (0..<40).map { _ in
      try DBusConnection(bus: .address(fixture.bus.address), loop: loop)
    }
    var answers = 0
    var failures: [String] = []
    func call(_ client: DBusConnection, _ index: Int, claim: Bool) {
      let own = index.isMultiple(of: 2)
      let name = own ? Wire.orientdName : Wire.sensorProxyName
      let member =
        own
        ? (claim ? "Claim" : "Release") : (claim ? "ClaimAccelerometer" : "ReleaseAccelerometer")
      client.call(
        destination: name,
        path: try! DBusObjectPath(
          own ? Wire.orientationPath.rawValue : Wire.sensorProxyPath.rawValue),
        interface: name, member: member
      ) { result in
        answers += 1
        if case .failure(let error) = result { failures.append("\(error)") }
      }
    }
    for (index, client) in clients.enumerated() {
      call(client, index, claim: true)
      call(client, index, claim: true)
    }
    try pump(loop) { answers == 80 }
    #expect(answers == 80 && failures.isEmpty, "\(failures)")
    #expect(fixture.isReadingSensor)
    answers = 0
    for (index, client) in clients.enumerated() where index < 20 {
      call(client, index, claim: false)
    }
    try pump(loop) { answers == 20 }
    #expect(fixture.isReadingSensor, "20 clients still hold claims")
    for client in clients { client.close() }
    #expect(waitFor(timeout: 10) { !fixture.isReadingSensor }, "\(fixture.log)")
    // The daemon still answers.
    #expect(try fixture.property("HasAccelerometer") == "b true")
  }

  /// A client that claims while the sensor already runs gets the current state with its
  /// reply, even though nothing changes at that moment.
  @Test func aLateClaimerGetsTheCurrentState() throws {
    let fixture = try DaemonFixture()
    let watch = try fixture.start([try Built.executable("orientd"), "--watch"])
    try fixture.turn(.rightUp)
    #expect(waitFor(timeout: 10) { watch.standardOutput.contains("right-up") })
    let loop = try EventLoop()
    let client = try DBusConnection(bus: .address(fixture.bus.address), loop: loop)
    defer { client.close() }
    var seen: [String: DBusValue] = [:]
    let subscription = try client.subscribePropertiesChanged(
      sender: Wire.sensorProxyName, path: try DBusObjectPath(Wire.sensorProxyPath.rawValue),
      interface: Wire.sensorProxyName
    ) { changed, _ in seen.merge(changed) { $1 } }
    var answered = false
    var order: [String] = []
    client.call(
      destination: Wire.sensorProxyName, path: try DBusObjectPath(Wire.sensorProxyPath.rawValue),
      interface: Wire.sensorProxyName, member: "ClaimAccelerometer"
    ) { _ in
      answered = true
      order.append(seen.isEmpty ? "reply first" : "state, then reply")
    }
    try pump(loop) { answered }
    #expect(order == ["state, then reply"])
    #expect(seen["AccelerometerOrientation"] == .string("right-up"))
    #expect(seen["HasAccelerometer"] == .boolean(true))
    subscription.cancel()
  }

  @Test func theFirstClaimIsAnsweredWithAFreshReading() throws {
    let fixture = try DaemonFixture()
    let orientd = try Built.executable("orientd")
    func get() throws -> JSONValue {
      let result = try fixture.client([orientd, "--get", "--json"])
      #expect(result.status == 0, "\(result.stderr)")
      return try JSONValue(parsing: result.stdout)
    }
    #expect(try get()["orientation"]?.stringValue == "normal")
    // Turned while nobody claimed, to 52 degrees: past the 45 degree boundary but inside
    // the hysteresis band, where a running detector would have kept "normal". A new claim
    // starts afresh and commits what the sensor reads now before the claim is answered.
    try fixture.set(Accel.raw(degrees: 52))
    #expect(try get()["orientation"]?.stringValue == "left-up")
    try fixture.turn(.bottomUp)
    let value = try get()
    #expect(value["orientation"]?.stringValue == "bottom-up")
    #expect(value["service"]?.stringValue == Wire.orientdName)
    let gravity = value["gravity"]?.arrayValue?.compactMap(\.numberValue) ?? []
    #expect(gravity.count == 3 && abs(gravity[1] - 9.80665) < 0.01, "\(value)")

    // A sensor that gives nothing usable (all zero) cannot hold a claim forever: the reply
    // comes after the bound, with the last known state.
    try fixture.set((0, 0, 0))
    #expect(try get()["orientation"]?.stringValue == "bottom-up")
    #expect(fixture.log.contains("no usable reading within 1.5 s"))
  }

  @Test func sensorGoneAndBack() throws {
    let fixture = try DaemonFixture()
    let watch = try fixture.start([try Built.executable("orientd"), "--watch", "--json"])
    #expect(
      waitFor(timeout: 10) {
        watch.standardOutput.jsonLines.contains { $0["orientation"]?.stringValue == "normal" }
      })
    try fixture.testbed.perform { $0.unplug(fixture.device) }
    #expect(
      waitFor(timeout: 10) {
        watch.standardOutput.jsonLines.last.map(isUndefinedWithoutSensor) == true
      }, "\(watch.standardOutput)\n\(fixture.log)")
    #expect(try fixture.property("Sensor") == "a{sv} 0")
    #expect(!fixture.isReadingSensor)
    // It comes back (upright): the claim is still there, so sampling resumes by itself.
    try fixture.testbed.perform { $0.hotplug([fixture.device]) }
    #expect(
      waitFor(timeout: 10) {
        watch.standardOutput.jsonLines.last.map { isSensed($0, .normal) } == true
      }, "\(watch.standardOutput)\n\(fixture.log)")
    #expect(fixture.isReadingSensor)
    #expect(try fixture.property("Sensor").contains("\"device\" s \"iio:device0\""))
    watch.signal(SIGINT)
    #expect(watch.wait(timeout: 10) == 0)
    #expect(waitFor(timeout: 10) { !fixture.isReadingSensor })
  }

  @Test func clientsThatHaveNotClaimedHearASensorArriveAndLeave() throws {
    // mutter and KDE claim only once HasAccelerometer is true; orientd keeps its bus name when
    // the sensor goes, so the change must reach clients that hold no claim.
    let fixture = try DaemonFixture()
    try fixture.testbed.perform { $0.unplug(fixture.device) }
    #expect(waitFor(timeout: 10) { (try? fixture.property("HasAccelerometer")) == "b false" })
    let monitor = try fixture.start([
      "gdbus", "monitor", "--system", "--dest", Wire.sensorProxyName, "--object-path",
      Wire.sensorProxyPath.rawValue,
    ])
    #expect(waitFor(timeout: 10) { monitor.standardOutput.contains("Monitoring signals") })
    try fixture.testbed.perform { $0.hotplug([fixture.device]) }
    #expect(
      waitFor(timeout: 10) { monitor.standardOutput.contains("'HasAccelerometer': <true>") },
      "\(monitor.standardOutput)\n\(fixture.log)")
  }
}
