import Glibc
import JSON

/// A real sway on the headless wlroots backend with the pixman renderer, run as `nobody`
/// (sway refuses to run as root): one output, `HEADLESS-1`, and its IPC socket.
public final class HeadlessSway {
  /// sway's runtime directory (owned by nobody, mode 700): `wayland-1`, `sway-ipc.*.sock`.
  public let directory: TemporaryDirectory
  /// The sway process (through runuser).
  public let process: ChildProcess
  /// `SWAYSOCK`.
  public let socket: String

  /// Whether sway, swaymsg and runuser are installed.
  public static var isAvailable: Bool {
    let paths: [String] = ["/usr/bin/sway", "/usr/bin/swaymsg", "/usr/sbin/runuser"]
    return paths.allSatisfy { access($0, X_OK) == 0 }
  }

  /// Starts sway with `config` (appended to a one-line configuration) and waits for its socket.
  public init(config: String = "") throws {
    directory = try TemporaryDirectory("sway")
    let conf = directory.file("config")
    try writeFile(conf, "output HEADLESS-1 resolution 1280x800\n" + config)
    guard let nobody = getpwnam("nobody") else { throw TestFailure("no user nobody") }
    chown(directory.path, nobody.pointee.pw_uid, nobody.pointee.pw_gid)
    chown(conf, nobody.pointee.pw_uid, nobody.pointee.pw_gid)
    chmod(directory.path, 0o700)
    let logs = try TemporaryDirectory("sway-log")
    let process = try ChildProcess(
      [
        "runuser", "-u", "nobody", "--", "env", "XDG_RUNTIME_DIR=\(directory.path)",
        "WLR_BACKENDS=headless", "WLR_RENDERER=pixman", "WLR_LIBINPUT_NO_DEVICES=1",
        "HOME=\(directory.path)", "sway", "-c", conf,
      ], outputDirectory: logs.path)
    self.process = process
    self.logs = logs
    let dir = directory.path
    var found: String?
    let started = waitFor(timeout: 20) {
      found = HeadlessSway.socket(in: dir)
      return found != nil || !process.isRunning
    }
    guard started, let found, process.isRunning else {
      throw TestFailure("sway did not start: \(process.standardError)")
    }
    socket = found
    // The socket exists before sway answers on it; wait for the first answer.
    guard waitFor(timeout: 10, { (try? self.swaymsg(["-t", "get_version"]).status) == 0 }) else {
      throw TestFailure("sway does not answer on \(found): \(process.standardError)")
    }
  }

  private let logs: TemporaryDirectory

  /// The environment of a client in this session.
  public var environment: [String: String] {
    ["SWAYSOCK": socket, "WAYLAND_DISPLAY": "\(directory.path)/wayland-1"]
  }

  /// Runs `swaymsg` with `arguments`.
  public func swaymsg(_ arguments: [String]) throws -> (
    status: Int32, stdout: String, stderr: String
  ) {
    try ChildProcess.run(
      ["swaymsg", "-s", socket] + arguments, outputDirectory: logs.path, timeout: 10)
  }

  /// The transform `swaymsg -t get_outputs -r` reports for `output`.
  public func transform(_ output: String = "HEADLESS-1") throws -> String? {
    let result = try swaymsg(["-t", "get_outputs", "-r"])
    let value = try JSONValue(parsing: result.stdout)
    return value.arrayValue?.first { $0["name"]?.stringValue == output }?["transform"]?
      .stringValue
  }

  private static func socket(in directory: String) -> String? {
    guard let dir = opendir(directory) else { return nil }
    defer { closedir(dir) }
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name.hasPrefix("sway-ipc.") && name.hasSuffix(".sock") { return "\(directory)/\(name)" }
    }
    return nil
  }
}
