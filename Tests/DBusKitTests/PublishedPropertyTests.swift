import DBusKit
import SystemKit
import TestThreads
import Testing

/// A typed property set for `publish`.
private enum Gauge: String, DBusPropertyName {
  case present = "Present"
  case level = "Level"
  case unit = "Unit"

  static let interface = "org.orientd.Gauge1"

  var type: DBusType {
    switch self {
    case .present: .boolean
    case .level: .uint32
    case .unit: .string
    }
  }

  var sentWith: [Gauge] { self == .unit ? [.present] : [] }
  var isBroadcastOnChange: Bool { self == .present }
}

/// `DBusConnection.publish`: the object server keeps the last values and announces changes.
@Suite(.ownThreads) struct PublishedPropertyTests {
  @Test func publishAnnouncesOnlyChangesAndServesTheValues() throws {
    let service = try TestService()
    let path = DBusObjectPath.fixture("/org/orientd/Gauge1")
    try service.connection.export(
      [DBusInterface(Gauge.interface, properties: Gauge.allCases.map(DBusProperty.published))],
      at: path)
    let watcher = try service.client()
    var seen: [[String: DBusValue]] = []
    let subscription = try watcher.subscribePropertiesChanged(
      sender: service.connection.uniqueName, path: path, interface: Gauge.interface
    ) { changed, _ in seen.append(changed) }
    _ = try watcher.nameOwner("org.freedesktop.DBus")

    var present = false
    var level: UInt32 = 1
    func value(_ name: Gauge) -> DBusValue {
      switch name {
      case .present: .boolean(present)
      case .level: .uint32(level)
      case .unit: .string("%")
      }
    }
    let first = try service.connection.publish(at: path, to: [watcher.uniqueName], value)
    #expect(first.isEmpty, "the first publication only records")
    let unchanged = try service.connection.publish(at: path, to: [watcher.uniqueName], value)
    #expect(unchanged.isEmpty)
    level = 5
    #expect(try service.connection.publish(at: path, to: [watcher.uniqueName], value) == [.level])
    // Recorded even when nobody is told; Unit travels with Present, which is broadcast.
    level = 6
    #expect(try service.connection.publish(at: path, to: [], value) == [.level])
    present = true
    let both = try service.connection.publish(at: path, to: [], value)
    #expect(both == [.present, .unit])
    try #require(try pump(service.loop) { seen.count >= 2 })
    #expect(seen[0] == ["Level": .uint32(5)])
    #expect(seen[1] == ["Present": .boolean(true), "Unit": .string("%")])

    let all = try runClient(
      [
        "gdbus", "call", "--address", service.bus.address, "--dest",
        service.connection.uniqueName, "--object-path", path.rawValue, "--method",
        "org.freedesktop.DBus.Properties.GetAll", Gauge.interface,
      ], bus: service.bus, loop: service.loop)
    #expect(all.status == 0, "\(all.stderr)")
    #expect(all.stdout == "({'Present': <true>, 'Level': <uint32 6>, 'Unit': <'%'>},)\n")
    subscription.cancel()
  }

  @Test func publishRefusesAValueOfTheWrongType() throws {
    let service = try TestService()
    let path = DBusObjectPath.fixture("/org/orientd/Gauge1")
    try service.connection.export(
      [DBusInterface(Gauge.interface, properties: Gauge.allCases.map(DBusProperty.published))],
      at: path)
    #expect(throws: DBusError.self) {
      try service.connection.publish(at: path) { (_: Gauge) in .string("wrong") }
    }
    #expect(throws: DBusError.self) {
      try service.connection.publish(at: testPath) { (_: Gauge) in .boolean(true) }
    }
  }
}
