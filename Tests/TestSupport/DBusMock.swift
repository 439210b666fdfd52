import Glibc

/// A python3-dbusmock template on a private bus (Debian's python3-dbusmock, run with Debian's
/// Python, which has its `dbus` module).
public final class DBusMock {
  /// The python3 process.
  public let process: ChildProcess
  /// The bus it is on.
  public let bus: PrivateBus
  /// Its bus name.
  public let name: String

  /// Whether Debian's python3-dbusmock is installed.
  public static var isAvailable: Bool {
    access("/usr/lib/python3/dist-packages/dbusmock/templates/logind.py", R_OK) == 0
  }

  /// The bus names of the templates used here.
  public static let names = [
    "logind": "org.freedesktop.login1", "power_profiles_daemon": "net.hadess.PowerProfiles",
  ]

  /// Starts `template` (e.g. `logind`) and waits until it owns its name.
  public init(_ template: String, bus: PrivateBus) throws {
    self.bus = bus
    name = DBusMock.names[template] ?? template
    process = try ChildProcess(
      ["/usr/bin/python3", "-m", "dbusmock", "--system", "--template", template],
      environment: bus.environment, outputDirectory: bus.directory.path)
    let name = name
    let up = waitFor(timeout: 20) {
      let result = try? ChildProcess.run(
        ["busctl", "--address=\(bus.address)", "status", name],
        outputDirectory: bus.directory.path)
      return result?.status == 0
    }
    guard up else { throw TestFailure("dbusmock \(template): \(process.standardError)") }
  }

  deinit { process.killNow() }

  /// logind with one active, unlocked session (`c1` on seat0, uid 1000): the seat's
  /// `ActiveSession` points to it.
  public static func logindWithSession(bus: PrivateBus) throws -> DBusMock {
    let mock = try DBusMock("logind", bus: bus)
    try mock.call(
      "/org/freedesktop/login1", "org.freedesktop.DBus.Mock", "AddSession",
      ["ssusb", "c1", "seat0", "1000", "user", "true"])
    return mock
  }

  /// `busctl call` on the mock.
  public func call(_ path: String, _ interface: String, _ method: String, _ arguments: [String])
    throws
  {
    let result = try ChildProcess.run(
      ["busctl", "--address=\(bus.address)", "call", name, path, interface, method] + arguments,
      outputDirectory: bus.directory.path)
    guard result.status == 0 else { throw TestFailure("busctl \(method): \(result.stderr)") }
  }

  /// Sets a string property (dbusmock announces it with `PropertiesChanged`).
  public func setProperty(_ path: String, _ interface: String, _ property: String, _ value: String)
    throws
  {
    let result = try ChildProcess.run(
      [
        "busctl", "--address=\(bus.address)", "set-property", name, path, interface, property,
        "s", value,
      ], outputDirectory: bus.directory.path)
    guard result.status == 0 else { throw TestFailure("busctl set-property: \(result.stderr)") }
  }
}
