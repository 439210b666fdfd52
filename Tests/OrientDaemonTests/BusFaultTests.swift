import DBusKit
import Glibc
import JSON
import OrientWire
import SystemKit
import TestSupport
import TestThreads
import Testing

/// Faults from the bus side: the bus restarted under orientd, clients that misbehave, many
/// clients at once, callers without privileges. Figures are printed, not asserted on time.
@Suite(.ownThreads, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct BusFaultTests {
  /// dbus.service restarted: orientd loses the bus, puts the sensor back as it found it and
  /// exits 69; systemd (Restart=on-failure, InstallTests) starts it again, which this test does
  /// by hand, and the new one serves on the new bus.
  @Test func aRestartedBusEndsTheDaemonCleanlyAndANewOneServes() throws {
    let fixture = try DaemonFixture(devices: [Accel.parent] + Accel.buffered)
    let orientd = try Built.executable("orientd")
    let sysfs = fixture.testbed.root + Accel.buffered[0].syspath
    let attributes = [
      "buffer/enable", "buffer/length", "sampling_frequency", "trigger/current_trigger",
      "current_timestamp_clock", "scan_elements/in_accel_x_en", "scan_elements/in_accel_y_en",
      "scan_elements/in_accel_z_en", "scan_elements/in_timestamp_en",
    ]
    func settings() -> [String: String] {
      Dictionary(uniqueKeysWithValues: attributes.map { ($0, readFile("\(sysfs)/\($0)")) })
    }
    let found = settings()
    #expect(found["buffer/enable"] == "0\n" && found["sampling_frequency"] == "15.620000\n")

    // A client claims: the buffer runs, faster.
    let watch = try fixture.start([orientd, "--watch"])
    #expect(
      waitFor(timeout: 10) { readFile("\(sysfs)/buffer/enable") == "1\n" }, "\(fixture.log)")
    let sampling = settings()
    #expect(sampling["sampling_frequency"] == "31.260000\n", "\(sampling)")
    #expect(sampling["trigger/current_trigger"] == "bmc150_accel-dev0\n", "\(sampling)")

    try fixture.bus.restart()
    #expect(try fixture.testbed.waitForProgram(timeout: 10) == 69, "\(fixture.log)")
    #expect(fixture.log.contains("lost the connection to the bus"))
    #expect(settings() == found, "sysfs after exit 69: \(settings())\nlog:\n\(fixture.log)")

    // What systemd does next: start orientd again.
    try fixture.testbed.spawnAgain(
      program: [orientd, "-v"] + isolated([], in: fixture.bus),
      environment: fixture.bus.environment)
    #expect(
      waitFor(timeout: 15) {
        fixture.log.lines.filter { $0.contains("notice: serving ") }.count == 2
      }, "\(fixture.log)")
    #expect(try fixture.property("HasAccelerometer") == "b true")
    // The old watcher went with the old bus; a new client makes the new daemon sample.
    watch.killNow()
    let again = try fixture.start([orientd, "--watch"])
    #expect(waitFor(timeout: 10) { readFile("\(sysfs)/buffer/enable") == "1\n" })
    again.signal(SIGTERM)
    #expect(again.wait(timeout: 10) == 0)
    #expect(waitFor(timeout: 10) { settings() == found }, "\(settings())")
  }

  /// Clients that send what no library would: a 31 MB argument where none is taken, a 31 MB
  /// interface name, a message beyond the bus' limit, a thousand calls in one burst, and one
  /// that sends and never reads. Others are answered meanwhile; the daemon's memory stays put.
  @Test func misbehavingClientsLeaveOthersServedAndMemoryBounded() throws {
    let fixture = try DaemonFixture()
    let orientd = try Built.executable("orientd")
    let pid = fixture.testbed.programPID
    let script = "\(Built.packageRoot)/Tests/Fixtures/dbus/raw_client.py"
    func raw(_ mode: String, _ count: Int) throws -> String {
      let result = try fixture.client(
        ["/usr/bin/python3", script, fixture.bus.address, mode, "\(count)"], timeout: 60)
      #expect(result.status == 0, "\(mode) \(count): \(result.stderr)")
      return result.stdout.trimmingCharacters()
    }
    // Warm up (a claim, a reading, property reads) so that what is allocated once is there.
    #expect(try fixture.client([orientd, "--get"]).status == 0)
    #expect(waitFor(timeout: 10) { !fixture.isReadingSensor })
    let before = statusKilobytes(pid, "VmRSS")

    // It sends 20000 calls and reads nothing: the bus queues (or refuses) the answers for it.
    let deaf = try fixture.start(["/usr/bin/python3", script, fixture.bus.address, "deaf", "20000"])
    let invalid = "result org.freedesktop.DBus.Error.InvalidArgs"
    for (mode, size, expected) in [
      ("huge-claim", 31_000_000, invalid),
      // The signature matches: the decoder's 4 MiB bound refuses it.
      ("huge-get", 31_000_000, invalid),
      ("huge-get", 20, "result org.freedesktop.DBus.Error.UnknownInterface"),
      // Beyond the bus' 32 MiB max_message_size: the bus drops the sender, orientd sees nothing.
      ("huge-claim", 100_000_000, "result disconnected"),
    ] {
      #expect(try raw(mode, size) == expected, "\(mode) \(size)")
      print("after \(mode) \(size): orientd VmRSS \(statusKilobytes(pid, "VmRSS")) kB")
    }
    // A burst: every call answered, or refused by the bus past its per-connection limit of
    // pending replies; none lost.
    let burst = try raw("pipeline", 1000).split(separator: " ")
    #expect(burst.count >= 5 && burst[0] == "result", "\(burst)")
    let returns = burst.count > 2 ? Int(burst[2]) ?? 0 : 0
    let errors = burst.count > 4 ? Int(burst[4]) ?? 0 : 0
    #expect(returns + errors == 1000 && returns >= 100, "\(burst)")
    #expect(burst.dropFirst(5).allSatisfy { $0 == "org.freedesktop.DBus.Error.LimitsExceeded" })
    print("burst of 1000 GetAll: \(returns) answered, \(errors) refused by the bus")

    // Meanwhile another client is served, with a reading.
    let get = try fixture.client([orientd, "--get", "--json"])
    #expect(get.status == 0, "\(get.stderr)")
    #expect(try JSONValue(parsing: get.stdout)["orientation"]?.stringValue == "normal")
    #expect(waitFor(timeout: 10) { !fixture.isReadingSensor })
    let after = statusKilobytes(pid, "VmRSS")
    print(
      "orientd VmRSS \(before) kB before, \(after) kB after, peak \(statusKilobytes(pid, "VmHWM")) kB"
    )
    // 31 MB messages went through; none of them stays resident. (Not under a sanitizer: its
    // allocator keeps freed memory in quarantine.)
    if getenv("ASAN_OPTIONS") == nil && getenv("TSAN_OPTIONS") == nil {
      #expect(after - before < 4096, "VmRSS \(before) -> \(after) kB")
    }
    #expect(deaf.isRunning, "\(deaf.standardError)")
    deaf.killNow()
    #expect(fixture.testbed.programIsRunning)
    #expect(try fixture.property("HasAccelerometer") == "b true")
  }

  /// 200 clients claim and release at once, claim again and vanish (claims-bench, which
  /// scripts/bench/claims.sh runs with 1000): every call answered, sampling stopped, the
  /// daemon's descriptors back to what they were and no read while idle.
  @Test func twoHundredClientsClaimReleaseAndVanish() throws {
    let bus = try PrivateBus(limits: ["max_connections_per_user": 2048])
    let fixture = try DaemonFixture(bus: bus)
    let result = try fixture.client(
      [
        try Built.executable("claims-bench"), "--address", bus.address, "--clients", "200",
        "--json",
      ],
      timeout: 120)
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    print(result.stdout)
    let report = try JSONValue(parsing: result.stdout)
    func number(_ key: String) -> Double { report[key]?.numberValue ?? -1 }
    #expect(report["failures"]?.arrayValue?.isEmpty == true)
    #expect(report["sampled_while_claimed"] == .bool(true))
    #expect(number("sensor_files_after_release") == 0)
    #expect(number("sensor_files_after_vanish") == 0)
    #expect(number("fds_after") == number("fds_before"))
    #expect(number("idle_read_calls_per_second") == 0)
    #expect(!fixture.isReadingSensor)
    #expect(try fixture.property("HasAccelerometer") == "b true")
  }

  /// What an unprivileged user may do on the bus: read, introspect, ping, claim; not set a
  /// property (the bus refuses before orientd sees it), not reach another interface, not own
  /// the names. And nothing exported changes configuration or writes files.
  @Test func anUnprivilegedCallerCanOnlyReadAndClaim() throws {
    let bus = try PrivateBus()
    chmod(bus.directory.path, 0o755)
    chmod(bus.directory.file("bus.sock"), 0o777)
    let daemon = try sensorlessDaemon(bus)
    let nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    func call(_ service: String, _ path: String, _ method: String, _ arguments: [String] = [])
      throws -> (status: Int32, said: String)
    {
      let result = try ChildProcess.run(
        nobody + [
          "gdbus", "call", "--address", bus.address, "--dest", service, "--object-path", path,
          "--method", method,
        ] + arguments, outputDirectory: "/tmp")
      return (result.status, result.stdout + result.stderr)
    }
    let own = (Wire.orientdName, Wire.orientationPath.rawValue)
    let compat = (Wire.sensorProxyName, Wire.sensorProxyPath.rawValue)
    let compass = (Wire.sensorProxyName, Wire.compassPath.rawValue)
    let properties = "org.freedesktop.DBus.Properties"
    // Allowed: the answer comes from orientd (a result, or orientd's own error).
    for (target, method, arguments, outcome) in [
      (own, "\(properties).Get", [Wire.orientdName, "Orientation"], "<'undefined'>"),
      (own, "\(properties).GetAll", [Wire.orientdName], "'HasAccelerometer'"),
      (compat, "\(properties).GetAll", [Wire.sensorProxyName], "'HasAccelerometer'"),
      (own, "org.freedesktop.DBus.Introspectable.Introspect", [], "<node"),
      (compat, "org.freedesktop.DBus.Peer.Ping", [], "()"),
      (own, "\(Wire.orientdName).Claim", [], "()"),
      (own, "\(Wire.orientdName).GetReading", [], "NoAccelerometer"),
      (own, "\(Wire.orientdName).Release", [], "()"),
      (compat, "\(Wire.sensorProxyName).ClaimAccelerometer", [], "()"),
      (compat, "\(Wire.sensorProxyName).ReleaseAccelerometer", [], "()"),
      (compat, "\(Wire.sensorProxyName).ClaimLight", [], "()"),
      (compat, "\(Wire.sensorProxyName).ReleaseLight", [], "()"),
      (compat, "\(Wire.sensorProxyName).ClaimProximity", [], "()"),
      (compat, "\(Wire.sensorProxyName).ReleaseProximity", [], "()"),
      // The compass is for any user, as in iio-sensor-proxy 3.6+.
      (
        compass, "\(properties).Get", [Wire.compassInterface, "CompassHeading"],
        "<-1.0>"
      ),
      (compass, "\(properties).GetAll", [Wire.compassInterface], "'HasCompass'"),
      (compass, "org.freedesktop.DBus.Introspectable.Introspect", [], "ClaimCompass"),
      (compass, "\(Wire.compassInterface).ClaimCompass", [], "()"),
      (compass, "\(Wire.compassInterface).ReleaseCompass", [], "()"),
    ] {
      let result = try call(target.0, target.1, method, arguments)
      #expect(result.said.contains(outcome), "\(method): \(result.said)")
      #expect(!result.said.contains("AccessDenied"), "\(method): \(result.said)")
    }
    // Refused by the bus.
    for (target, method, arguments) in [
      (own, "\(properties).Set", [Wire.orientdName, "Orientation", "<'normal'>"]),
      (compat, "\(properties).Set", [Wire.sensorProxyName, "HasAccelerometer", "<true>"]),
      (own, "org.orientd.Nope.Frobnicate", []),
      (own, "org.freedesktop.DBus.ObjectManager.GetManagedObjects", []),
      (compass, "\(properties).Set", [Wire.compassInterface, "HasCompass", "<true>"]),
    ] {
      let result = try call(target.0, target.1, method, arguments)
      #expect(
        result.status != 0 && result.said.contains("AccessDenied"), "\(method): \(result.said)")
    }
    #expect(daemon.isRunning)

    // Everything exported (the served introspection equals these files: BusTests) is a read,
    // a claim or a release: no property is writable, no method takes a path or a setting;
    // the one argument taken is OpenStream's dictionary of numbers (rate, batch, latency).
    var methods: [String] = []
    for file in [
      "\(Wire.orientdName).xml", "\(Wire.sensorProxyName).xml",
      "\(Wire.compassInterface).xml", "\(Wire.postureInterface).xml",
      "\(Wire.motionInterface).xml",
    ] {
      let summary = IntrospectionSummary(readFile("\(Built.packageRoot)/dbus/\(file)"))
      for line in summary.lines {
        let words = line.split(separator: " ")
        if words.count >= 3, words[1] == "property" {
          #expect(words.last == "read", "\(file): \(line)")
        }
        if words.count == 3, words[1] == "method" { methods.append("\(words[2])") }
        if words.count >= 6, words[1] == "method", words[3] == "arg",
          !(words[2] == "OpenStream" && words[4] == "options" && words[5] == "a{sv}")
        {
          #expect(words.last == "out", "\(file): a method takes an argument: \(line)")
        }
      }
    }
    #expect(
      Set(methods)
        == [
          "Claim", "Release", "GetReading", "ClaimAccelerometer", "ReleaseAccelerometer",
          "ClaimLight", "ReleaseLight", "ClaimProximity", "ReleaseProximity", "ClaimCompass",
          "ReleaseCompass", "ClaimPosture", "ReleasePosture", "OpenStream",
        ], "\(methods)")
  }
}
