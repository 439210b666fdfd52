import Glibc

/// A temporary directory removed (recursively) when released.
public final class TemporaryDirectory {
  /// The absolute path.
  public let path: String

  /// Creates `/tmp/orientd-test-<tag>-XXXXXX`.
  public init(_ tag: String = "t") throws {
    var template = Array("/tmp/orientd-test-\(tag)-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else {
      throw TestFailure("mkdtemp failed: \(String(cString: strerror(errno)))")
    }
    path = String(cString: made)
  }

  deinit {
    if getenv("ORIENTD_KEEP_TEST_DIRS") == nil {
      _ = try? ChildProcess.run(["rm", "-rf", path], outputDirectory: "/tmp")
    }
  }

  /// `path/name`.
  public func file(_ name: String) -> String { "\(path)/\(name)" }
}

/// Locations of the package's built products and source tree, found from the test bundle.
public enum Built {
  /// The build directory holding the executables (`.build/debug`), the one the test bundle
  /// itself runs from.
  public static var productsDirectory: String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let exe =
      n > 0 ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    // .../.build/<triple>/debug/orientdPackageTests.xctest
    var parts = exe.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast()
    return parts.joined(separator: "/")
  }

  /// The path of a built executable such as `orientd`.
  public static func executable(_ name: String) throws -> String {
    let path = "\(productsDirectory)/\(name)"
    guard access(path, X_OK) == 0 else {
      throw TestFailure("built executable \(path) not found; run swift build first")
    }
    return path
  }

  /// The package's root directory (where Package.swift is).
  public static var packageRoot: String {
    var dir = productsDirectory
    while dir.count > 1 {
      if access("\(dir)/Package.swift", F_OK) == 0 { return dir }
      dir = String(dir[..<(dir.lastIndex(of: "/") ?? dir.startIndex)])
    }
    return "."
  }
}

/// A private `dbus-daemon` on a unix socket in a temporary directory, with the project's own
/// policy files from `dbus/` included, killed with SIGKILL when released.
public final class PrivateBus {
  /// `unix:path=...`, for `DBUS_SYSTEM_BUS_ADDRESS` / `DBUS_SESSION_BUS_ADDRESS`.
  public let address: String
  /// The daemon process (a new one after `restart()`).
  public private(set) var daemon: ChildProcess
  /// The directory holding the socket and configuration.
  public let directory: TemporaryDirectory

  /// Starts the daemon and waits until its socket accepts connections.
  ///
  /// - Parameters:
  ///   - policyDirectory: included with `<includedir>` (defaults to the package's `dbus/`).
  ///   - openPolicy: add a policy allowing everything (for tests of generic bus code); leave it
  ///     off to test the project's own policy as installed.
  ///   - limits: `<limit name="...">` overrides, e.g. `["max_connections_per_user": 2048]`
  ///     for load tests (the daemon's defaults allow 256 connections per user and 512 match
  ///     rules per connection).
  ///   - standIns: names a stand-in (`DBusMock`) may own and anyone may call, beside the
  ///     project's own policy (which stays as installed).
  public init(
    policyDirectory: String? = nil, openPolicy: Bool = false, limits: [String: Int] = [:],
    standIns: [String] = []
  ) throws {
    directory = try TemporaryDirectory("bus")
    let socket = directory.file("bus.sock")
    address = "unix:path=\(socket)"
    let policy = policyDirectory ?? "\(Built.packageRoot)/dbus"
    let open =
      openPolicy
      ? """
      <policy context="default">
        <allow send_destination="*" eavesdrop="true"/>
        <allow eavesdrop="true"/>
        <allow own="*"/>
        <allow user="*"/>
      </policy>
      """ : ""
    let standInPolicy =
      standIns.isEmpty
      ? ""
      : "<policy context=\"default\">\n"
        + standIns.map { "  <allow own=\"\($0)\"/>\n  <allow send_destination=\"\($0)\"/>\n" }
        .joined() + "</policy>"
    let limitElements = limits.sorted { $0.key < $1.key }
      .map { "<limit name=\"\($0.key)\">\($0.value)</limit>" }.joined(separator: "\n")
    // One configuration for the tests, the scripts and the VM guest.
    let template = readFile("\(Built.packageRoot)/Tests/Fixtures/dbus/private-system-bus.conf.in")
    guard template.contains("@LISTEN@"), template.contains("@EXTRA@") else {
      throw TestFailure("Tests/Fixtures/dbus/private-system-bus.conf.in is missing or incomplete")
    }
    let config =
      template
      .replacing("@LISTEN@", with: address)
      .replacing(
        "@EXTRA@",
        with: "\(open)\n\(standInPolicy)\n\(limitElements)\n<includedir>\(policy)</includedir>")
    try writeFile(directory.file("bus.conf"), config)
    daemon = try PrivateBus.launch(directory)
  }

  deinit { daemon.killNow() }

  /// Starts `dbus-daemon` with `directory`'s bus.conf and waits until its socket accepts.
  private static func launch(_ directory: TemporaryDirectory) throws -> ChildProcess {
    let daemon = try ChildProcess(
      ["dbus-daemon", "--config-file=\(directory.file("bus.conf"))", "--nofork", "--nopidfile"],
      outputDirectory: directory.path)
    // The socket file appears at bind(2), a moment before listen(2): wait until it accepts.
    let up = waitFor(timeout: 10) { PrivateBus.accepts(directory.file("bus.sock")) }
    guard up else {
      throw TestFailure("dbus-daemon did not start: \(daemon.standardError)")
    }
    return daemon
  }

  /// Kills the bus with SIGKILL (as a crash would) and starts a new one on the same address
  /// with the same configuration, as systemd restarts dbus.service. Every connection is lost.
  public func restart() throws {
    daemon.killNow()
    unlink(directory.file("bus.sock"))
    daemon = try PrivateBus.launch(directory)
  }

  /// Whether a unix stream socket at `path` accepts a connection.
  static func accepts(_ path: String) -> Bool {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (index, byte) in bytes.enumerated() { raw[index] = byte }
    }
    let result = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    return result == 0
  }

  /// Environment pointing both bus kinds at this daemon.
  public var environment: [String: String] {
    ["DBUS_SYSTEM_BUS_ADDRESS": address, "DBUS_SESSION_BUS_ADDRESS": address]
  }
}

/// Whether the tests run under CI (`CI=true`), where a missing tool is a failure, not a skip.
public var runsInCI: Bool { getenv("CI").map { String(cString: $0) } == "true" }
