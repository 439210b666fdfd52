import Glibc
import OrientCore
import OrientWire
import TestSupport
import TestThreads
import Testing

/// Every claimer's snapshot stays true: a client that made its Gio.DBusProxy before claiming
/// (as mutter, gnome-settings-daemon, geoclue and phosh do) and then reads only the proxy's
/// cache holds the current value once its claim is answered, although the value changed while
/// it was not a claimer (changes go to claimers only). Both ways a claim is answered: at once,
/// because another client keeps the sensor running, and after the first reading, because the
/// client is the first claimer again (the reading equals what was last published, so no
/// change is announced). For every kind: the orientation on both APIs, the posture, light,
/// proximity and the compass. The client is Tests/Fixtures/dbus/cached_proxy.py; it waits
/// at most 10 s for the value in its cache. (The posture decides afresh on a first claim:
/// `undefined` first, then the posture, both sent to its claimers.)
@Suite(.ownThreads, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct SnapshotTests {
  /// What is claimed, and how the test changes it.
  enum Kind: String, CaseIterable, CustomStringConvertible {
    case accelerometer, orientation, posture, light, proximity, compass

    var description: String { rawValue }

    /// Bus name, object path, interface, claim method and the property followed.
    var target: (name: String, path: String, interface: String, claim: String, property: String) {
      let proxy = Wire.sensorProxyName
      switch self {
      case .accelerometer:
        return (
          proxy, Wire.sensorProxyPath.rawValue, proxy, "ClaimAccelerometer",
          "AccelerometerOrientation"
        )
      case .orientation:
        return (
          Wire.orientdName, Wire.orientationPath.rawValue, Wire.orientdName,
          "Claim", "Orientation"
        )
      case .posture:
        return (
          Wire.orientdName, PostureTests.path, PostureTests.interface, "ClaimPosture",
          "Posture"
        )
      case .light: return (proxy, Wire.sensorProxyPath.rawValue, proxy, "ClaimLight", "LightLevel")
      case .proximity:
        return (proxy, Wire.sensorProxyPath.rawValue, proxy, "ClaimProximity", "ProximityNear")
      case .compass:
        return (
          proxy, Wire.compassPath.rawValue, Wire.compassInterface,
          "ClaimCompass", "CompassHeading"
        )
      }
    }

    /// The two values the test sets in turn, as GLib.Variant.print and busctl show them.
    var values: [(variant: String, busctl: String)] {
      switch self {
      case .accelerometer, .orientation:
        [("'left-up'", "s \"left-up\""), ("'bottom-up'", "s \"bottom-up\"")]
      case .posture: [("'flat'", "s \"flat\""), ("'tent'", "s \"tent\"")]
      case .light: [("150.0", "d 150"), ("100.0", "d 100")]
      case .proximity: [("true", "b true"), ("false", "b false")]
      case .compass: [("180.0", "d 180"), ("270.0", "d 270")]
      }
    }
  }

  private static let pair = PostureTests.devices(.label)

  private func fixture(_ kind: Kind) throws -> DaemonFixture {
    switch kind {
    case .posture:
      let bus = try PrivateBus()
      let config = bus.directory.file("posture.conf")
      try writeFile(config, "[posture]\ntablet-mode-switch = off\n")
      let fixture = try DaemonFixture(
        ["--config", config], devices: [Accel.parent, Self.pair.base, Self.pair.display],
        bus: bus)
      try PostureTests.fold(fixture, Self.pair, angle: 110, pitch: 0)
      return fixture
    default:
      return try DaemonFixture(
        devices: [Accel.parent, Accel.polled] + EmulatedAmbient.light + EmulatedAmbient.proximity
          + [EmulatedAmbient.compass])
    }
  }

  /// Sets the emulated sensor to the test's `index`th value (in place, as the kernel does).
  private func change(_ kind: Kind, _ fixture: DaemonFixture, to index: Int) throws {
    switch kind {
    case .accelerometer, .orientation:
      try fixture.turn(index == 0 ? .leftUp : .bottomUp)
    case .posture:
      try PostureTests.fold(
        fixture, Self.pair, angle: index == 0 ? 180 : 300, pitch: index == 0 ? 0 : 60)
    case .light:
      try fixture.testbed.perform {
        $0.set(EmulatedAmbient.light[1], "in_illuminance_raw", index == 0 ? "290\n" : "190\n")
      }
    case .proximity:
      try fixture.testbed.perform {
        $0.set(EmulatedAmbient.proximity[1], "in_proximity_raw", index == 0 ? "256\n" : "0\n")
      }
    case .compass:
      try fixture.testbed.perform {
        $0.set(
          EmulatedAmbient.compass, "in_rot_from_north_magnetic_tilt_comp_raw",
          index == 0 ? "1800\n" : "2700\n")
      }
    }
  }

  /// Whether the daemon reads the sensor the kind needs (it does only while claimed).
  private func reads(_ kind: Kind, _ fixture: DaemonFixture) -> Bool {
    let attribute =
      switch kind {
      case .accelerometer, .orientation: "in_accel_x_raw"
      case .posture: "iio:device0/in_accel_x_raw"
      case .light: "in_illuminance_raw"
      case .proximity: "in_proximity_raw"
      case .compass: "in_rot_from_north_magnetic_tilt_comp_raw"
      }
    return fixture.testbed.openFiles().contains { $0.hasSuffix(attribute) }
  }

  /// `cached_proxy.py hold` (no `expected`) or `snapshot`, waiting for `expected` in its cache.
  private func client(
    _ fixture: DaemonFixture, _ kind: Kind, _ go: String, expecting expected: String? = nil
  ) throws -> ChildProcess {
    let t = kind.target
    return try fixture.start(
      [
        "/usr/bin/python3", "\(Built.packageRoot)/Tests/Fixtures/dbus/cached_proxy.py",
        expected == nil ? "hold" : "snapshot", fixture.bus.address, t.name, t.path, t.interface,
        t.claim,
      ] + (expected.map { [t.property, $0] } ?? []) + [go])
  }

  @Test(arguments: Kind.allCases)
  func aProxyMadeBeforeTheClaimHoldsTheCurrentValue(kind: Kind) throws {
    let fixture = try fixture(kind)
    let dir = fixture.bus.directory
    let t = kind.target
    func current() -> String {
      (try? fixture.property(t.property, service: t.name, path: t.path, interface: t.interface))
        ?? "?"
    }
    func lines(_ process: ChildProcess) -> String {
      "\(process.standardOutput)\(process.standardError)\n\(fixture.log)"
    }
    // Another client keeps the sensor running.
    let holder = try client(fixture, kind, dir.file("holder.go"))
    #expect(
      waitFor(timeout: 20) { holder.standardOutput.contains("claimed") }, "\(lines(holder))")

    // Answered at once: the value changed after the proxy's snapshot, before its claim.
    let first = try client(
      fixture, kind, dir.file("first.go"), expecting: kind.values[0].variant)
    #expect(waitFor(timeout: 15) { first.standardOutput.contains("before ") }, "\(lines(first))")
    try change(kind, fixture, to: 0)
    #expect(waitFor(timeout: 20) { current() == kind.values[0].busctl }, "\(current())")
    try writeFile(dir.file("first.go"), "")
    #expect(
      waitFor(timeout: 20) { first.standardOutput.contains("after ") }, "\(lines(first))")
    #expect(
      first.standardOutput.contains("after \(kind.values[0].variant)\n"), "\(lines(first))")

    // Answered after the first reading: the value changed while another client read it,
    // and is the same when this client's claim starts the sensor again.
    let second = try client(
      fixture, kind, dir.file("second.go"), expecting: kind.values[1].variant)
    #expect(
      waitFor(timeout: 15) { second.standardOutput.contains("before ") }, "\(lines(second))")
    try change(kind, fixture, to: 1)
    #expect(waitFor(timeout: 20) { current() == kind.values[1].busctl }, "\(current())")
    try writeFile(dir.file("holder.go"), "")
    try writeFile(dir.file("first.go.done"), "")
    #expect(waitFor(timeout: 20) { !reads(kind, fixture) }, "still read:\n\(fixture.log)")
    try writeFile(dir.file("second.go"), "")
    #expect(
      waitFor(timeout: 20) { second.standardOutput.contains("after ") }, "\(lines(second))")
    #expect(
      second.standardOutput.contains("after \(kind.values[1].variant)\n"), "\(lines(second))")
    try writeFile(dir.file("second.go.done"), "")
    for process in [holder, first, second] { _ = process.wait(timeout: 10) }
  }
}
