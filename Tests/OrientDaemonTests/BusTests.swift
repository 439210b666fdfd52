import DBusKit
import Glibc
import JSON
import OrientWire
import SystemKit
import TestSupport
import TestThreads
import Testing

/// The daemon's bus side without a sensor: introspection against dbus/*.xml, standard errors,
/// the policy, names taken by others, --no-compat, clients without a service, shutdown.
@Suite(.ownThreads, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct BusTests {
  @Test func servedIntrospectionMatchesTheXMLFiles() throws {
    let bus = try PrivateBus()
    let daemon = try sensorlessDaemon(bus)
    for (path, file) in [
      (Wire.orientationPath.rawValue, "\(Wire.orientdName).xml"),
      (Wire.sensorProxyPath.rawValue, "\(Wire.sensorProxyName).xml"),
      (Wire.compassPath.rawValue, "\(Wire.compassInterface).xml"),
      (Wire.posturePath.rawValue, "\(Wire.postureInterface).xml"),
      (Wire.motionPath.rawValue, "\(Wire.motionInterface).xml"),
    ] {
      let service = path.hasPrefix("/org") ? Wire.orientdName : Wire.sensorProxyName
      let served = try ChildProcess.run(
        [
          "gdbus", "introspect", "--xml", "--address", bus.address, "--dest", service,
          "--object-path", path,
        ], outputDirectory: bus.directory.path)
      #expect(served.status == 0, "\(served.stderr)")
      let expected = IntrospectionSummary(readFile("\(Built.packageRoot)/dbus/\(file)"))
      let actual = IntrospectionSummary(served.stdout).withoutStandardInterfaces
      #expect(!expected.lines.isEmpty)
      #expect(
        actual == expected, "\(path): served\n\(actual.lines)\nfile \(file)\n\(expected.lines)")
    }
    daemon.signal(SIGTERM)
    #expect(daemon.wait(timeout: 10) == 0)
  }

  @Test func wrongCallsGetStandardErrorsAndTheDaemonKeepsWorking() throws {
    let bus = try PrivateBus()
    let daemon = try sensorlessDaemon(bus)
    // gdbus prints the error name: "GDBus.Error:org.freedesktop.DBus.Error.InvalidArgs: ...".
    func gdbus(_ service: String, _ path: String, _ method: String, _ arguments: [String] = [])
      throws -> (status: Int32, said: String)
    {
      let result = try ChildProcess.run(
        [
          "gdbus", "call", "--address", bus.address, "--dest", service, "--object-path", path,
          "--method", method,
        ] + arguments, outputDirectory: bus.directory.path)
      return (result.status, result.stdout + result.stderr)
    }
    let own = (Wire.orientdName, Wire.orientationPath.rawValue)
    let compat = (Wire.sensorProxyName, Wire.sensorProxyPath.rawValue)
    let properties = "org.freedesktop.DBus.Properties"
    for (target, method, arguments, error) in [
      (own, "\(Wire.orientdName).Claim", ["'extra'"], "InvalidArgs"),
      (own, "\(Wire.orientdName).Frobnicate", [], "UnknownMethod"),
      // The policy lets only the public interfaces through.
      (own, "org.orientd.Nope.Claim", [], "AccessDenied"),
      (compat, "\(Wire.sensorProxyName).ClaimCompass", [], "UnknownMethod"),
      (
        own, "\(Wire.orientdName).GetReading", [],
        "\(Wire.orientdName).Error.NoAccelerometer"
      ),
      (
        own, "\(properties).Set", [Wire.orientdName, "Orientation", "<'normal'>"],
        "PropertyReadOnly"
      ),
      (
        compat, "\(properties).Set", [Wire.sensorProxyName, "HasAccelerometer", "<true>"],
        "InvalidArgs"
      ),
      (own, "\(properties).Get", [Wire.orientdName, "Nope"], "UnknownProperty"),
      (own, "\(properties).Get", [Wire.orientdName], "InvalidArgs"),
      (
        (Wire.orientdName, "/nowhere"), "\(Wire.orientdName).Claim", [],
        "UnknownObject"
      ),
    ] {
      let result = try gdbus(target.0, target.1, method, arguments)
      #expect(result.status != 0, "\(method) \(arguments)")
      #expect(
        result.said.contains("Error.\(error)") || result.said.contains(error),
        "\(method): \(result.said)")
    }
    // Still alive and answering.
    #expect(daemon.isRunning)
    let ping = try busctl(
      bus,
      [
        "call", Wire.orientdName, Wire.orientationPath.rawValue,
        "org.freedesktop.DBus.Peer",
        "Ping",
      ])
    #expect(ping.status == 0)
    for method in ["ClaimLight", "ReleaseLight", "ClaimProximity", "ReleaseProximity"] {
      let claim = try gdbus(compat.0, compat.1, "\(Wire.sensorProxyName).\(method)")
      #expect(claim.status == 0, "\(method) succeeds without a sensor: \(claim.said)")
    }
    let none = try busctl(
      bus,
      ["get-property", own.0, own.1, own.0, "HasAccelerometer", "Orientation", "Tilt"])
    #expect(none.stdout == "b false\ns \"undefined\"\ns \"undefined\"\n")
  }

  @Test func thePolicyRefusesANonRootOwnerButLetsAnyoneCall() throws {
    let bus = try PrivateBus()
    // Let other users reach the socket; the bus policy decides what they may do.
    chmod(bus.directory.path, 0o755)
    let socket = bus.directory.file("bus.sock")
    chmod(socket, 0o777)
    let copy = bus.directory.file("orientd")
    _ = try ChildProcess.run(
      ["install", "-m", "0755", try Built.executable("orientd"), copy],
      outputDirectory: bus.directory.path)
    let nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    let refused = try ChildProcess.run(
      nobody + [copy], environment: bus.environment, outputDirectory: "/tmp", timeout: 20)
    #expect(refused.status == 69, "\(refused.stderr)")
    #expect(
      refused.stderr.contains("does not let this user own \(Wire.orientdName)"),
      "\(refused.stderr)")
    let python = """
      import sys
      from gi.repository import Gio, GLib
      c = Gio.DBusConnection.new_for_address_sync(sys.argv[1],
          Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
          | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
      c.call_sync('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus',
          'RequestName', GLib.Variant('(su)', ('\(Wire.sensorProxyName)', 4)), None, 0, -1, None)
      """
    let script = bus.directory.file("own.py")
    try writeFile(script, python)
    chmod(script, 0o644)
    let owner = try ChildProcess.run(
      nobody + ["/usr/bin/python3", script, bus.address], outputDirectory: "/tmp")
    #expect(owner.status != 0)
    #expect(owner.stderr.contains("AccessDenied"), "\(owner.stderr)")

    // Root may own them; anyone may then claim and read.
    let daemon = try sensorlessDaemon(bus)
    for method in [
      [Wire.orientdName, Wire.orientationPath.rawValue, "\(Wire.orientdName).Claim"],
      [
        Wire.sensorProxyName, Wire.sensorProxyPath.rawValue,
        "\(Wire.sensorProxyName).ClaimAccelerometer",
      ],
    ] {
      let call = try ChildProcess.run(
        nobody + [
          "gdbus", "call", "--address", bus.address, "--dest", method[0], "--object-path",
          method[1], "--method", method[2],
        ], outputDirectory: "/tmp")
      #expect(call.status == 0, "\(method): \(call.stderr)")
    }
    let read = try ChildProcess.run(
      nobody + [
        "busctl", "--address=\(bus.address)", "get-property", Wire.orientdName,
        Wire.orientationPath.rawValue, Wire.orientdName, "Orientation",
      ], outputDirectory: "/tmp")
    #expect(read.stdout == "s \"undefined\"\n", "\(read.stderr)")
    _ = daemon
  }

  @Test func namesAlreadyOwnedAndNoCompat() throws {
    let bus = try PrivateBus()
    let loop = try EventLoop()
    // Someone (iio-sensor-proxy) owns the compatibility name: orientd serves only its own.
    let other = try DBusConnection(bus: .address(bus.address), loop: loop)
    #expect(try other.requestName(Wire.sensorProxyName, flags: [.doNotQueue]) == .primaryOwner)
    let daemon = try sensorlessDaemon(bus)
    #expect(
      daemon.standardError.contains(
        "\(Wire.sensorProxyName) is already owned by \(other.uniqueName)"))
    #expect(try other.nameOwner(Wire.sensorProxyName) == other.uniqueName)
    #expect(try other.nameOwner(Wire.orientdName) != nil)
    // A second orientd cannot start: its own name is taken.
    let second = try ChildProcess.run(
      ["umockdev-run", "--", try Built.executable("orientd")], environment: bus.environment,
      outputDirectory: bus.directory.path, timeout: 20)
    #expect(second.status == 69)
    #expect(second.stderr.contains("\(Wire.orientdName) is already owned"), "\(second.stderr)")
    daemon.signal(SIGTERM)
    #expect(daemon.wait(timeout: 10) == 0)
    // The names are given back on shutdown.
    #expect(try other.nameOwner(Wire.orientdName) == nil)
    other.close()

    // --no-compat: only the own API, even when the compatibility name is free.
    let plain = try sensorlessDaemon(bus, ["--no-compat"])
    let check = try DBusConnection(bus: .address(bus.address), loop: loop)
    defer { check.close() }
    #expect(try check.nameOwner(Wire.sensorProxyName) == nil)
    #expect(try check.nameOwner(Wire.orientdName) != nil)
    #expect(plain.standardError.contains("serving \(Wire.orientdName) on"))
  }

  @Test func clientsWithoutAService() throws {
    let bus = try PrivateBus()
    let orientd = try Built.executable("orientd")
    let get = try ChildProcess.run(
      [orientd, "--get"], environment: bus.environment, outputDirectory: bus.directory.path)
    #expect(get.status == 69)
    #expect(get.stderr.contains("\(Wire.orientdName) is not running"), "\(get.stderr)")
    #expect(get.stderr.contains("\(Wire.sensorProxyName) is not running"))
    let noBus = try ChildProcess.run(
      [orientd, "--get"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent"],
      outputDirectory: bus.directory.path)
    #expect(noBus.status == 69 && noBus.stderr.contains("/nonexistent"), "\(noBus.stderr)")

    // --watch waits for the service, then reports (no accelerometer here).
    let watch = try ChildProcess(
      [orientd, "--watch", "--json"], environment: bus.environment,
      outputDirectory: bus.directory.path)
    #expect(waitFor(timeout: 10) { watch.standardError.contains("waiting for org.orientd") })
    let daemon = try sensorlessDaemon(bus)
    #expect(
      waitFor(timeout: 10) {
        watch.standardOutput.jsonLines.contains { $0["has_accelerometer"]?.boolValue == false }
      },
      "\(watch.standardError)")
    // --get with a service but no accelerometer: the answer, and 69.
    let noSensor = try ChildProcess.run(
      [orientd, "--get", "--json"], environment: bus.environment,
      outputDirectory: bus.directory.path)
    #expect(noSensor.status == 69)
    #expect(noSensor.stderr.contains("has no display accelerometer"))
    #expect(try JSONValue(parsing: noSensor.stdout)["has_accelerometer"] == .bool(false))
    // The daemon goes away: the watcher waits for it to come back.
    daemon.signal(SIGTERM)
    #expect(daemon.wait(timeout: 10) == 0)
    #expect(waitFor(timeout: 10) { watch.standardError.contains("went away") })
    #expect(watch.isRunning, "\(watch.standardError)")
    watch.signal(SIGTERM)
    #expect(watch.wait(timeout: 10) == 0)
  }

  @Test func theBusGoingAwayEndsTheDaemonWithStatus69() throws {
    let bus = try PrivateBus()
    let daemon = try sensorlessDaemon(bus)
    bus.daemon.killNow()
    #expect(daemon.wait(timeout: 10) == 69, "\(daemon.standardError)")
    #expect(daemon.standardError.contains("lost the connection to the bus"))
  }
}

/// The interfaces of an introspection document, as sorted lines that ignore layout,
/// comments, attribute order and the order of members.
struct IntrospectionSummary: Equatable {
  var lines: [String]
  private var standard: Set<String> = []

  init(_ xml: String) {
    // Drop comments (they may contain '<' and '>').
    var text = ""
    var scan = Substring(xml)
    while !scan.isEmpty {
      if scan.hasPrefix("<!--") {
        var inner = scan.dropFirst(4)
        while !inner.isEmpty && !inner.hasPrefix("-->") { inner = inner.dropFirst() }
        scan = inner.dropFirst(3)
      } else {
        text.append(scan.removeFirst())
      }
    }
    var result: [String] = []
    var interface = ""
    var member = ""
    var standardInterfaces = Set<String>()
    var rest = Substring(text)
    while let open = rest.firstIndex(of: "<") {
      guard let close = rest[open...].firstIndex(of: ">") else { break }
      let tag = rest[rest.index(after: open)..<close]
      rest = rest[rest.index(after: close)...]
      if tag.hasPrefix("!") || tag.hasPrefix("?") || tag.hasPrefix("/") { continue }
      let parts = IntrospectionSummary.attributes(String(tag))
      let attributes = parts.attributes
      switch parts.name {
      case "interface":
        interface = attributes["name"] ?? "?"
        if interface.hasPrefix("org.freedesktop.DBus.") { standardInterfaces.insert(interface) }
        result.append("\(interface)")
      case "method", "signal":
        member = "\(interface) \(parts.name) \(attributes["name"] ?? "?")"
        result.append(member)
      case "property":
        member = "\(interface) property \(attributes["name"] ?? "?")"
        result.append("\(member) \(attributes["type"] ?? "?") \(attributes["access"] ?? "?")")
      case "arg":
        result.append(
          "\(member) arg \(attributes["name"] ?? "") \(attributes["type"] ?? "?") "
            + "\(attributes["direction"] ?? (member.contains(" signal ") ? "" : "in"))")
      case "annotation":
        result.append(
          "\(member) annotation \(attributes["name"] ?? "") \(attributes["value"] ?? "")")
      default:
        continue
      }
    }
    lines = result.sorted()
    standard = standardInterfaces
  }

  /// Without Properties, Introspectable and Peer (which the file does not list).
  var withoutStandardInterfaces: IntrospectionSummary {
    var copy = self
    copy.lines = lines.filter { line in !standard.contains { line.hasPrefix($0) } }
    copy.standard = []
    return copy
  }

  static func == (a: IntrospectionSummary, b: IntrospectionSummary) -> Bool { a.lines == b.lines }

  /// `name attr="value" ...` of a tag.
  static func attributes(_ tag: String) -> (name: String, attributes: [String: String]) {
    var body = Substring(tag)
    if body.hasSuffix("/") { body = body.dropLast() }
    let name = String(body.prefix { $0 != " " && $0 != "\n" && $0 != "\t" })
    var attributes: [String: String] = [:]
    var rest = body.dropFirst(name.count)
    while let equals = rest.firstIndex(of: "=") {
      let key = rest[..<equals].trimmingCharacters()
      rest = rest[rest.index(after: equals)...]
      guard let quote = rest.first(where: { $0 == "\"" || $0 == "'" }),
        let start = rest.firstIndex(of: quote)
      else { break }
      let afterStart = rest.index(after: start)
      guard let end = rest[afterStart...].firstIndex(of: quote) else { break }
      attributes[key] = String(rest[afterStart..<end])
      rest = rest[rest.index(after: end)...]
    }
    return (name, attributes)
  }
}
