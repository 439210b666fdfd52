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

/// A real X server that rotates: Xephyr (RandR with all four rotations) nested in Xvfb.
/// Xorg with the dummy driver offers only `normal`, and Xvfb refuses `xrandr -o left`.
public final class RotatingXServer {
  /// `DISPLAY` of the Xephyr server.
  public let display: String
  private let host: ChildProcess
  private let server: ChildProcess
  private let logs: TemporaryDirectory

  /// Whether Xvfb, Xephyr, xrandr and xinput are installed.
  public static var isAvailable: Bool {
    let paths: [String] = [
      "/usr/bin/Xvfb", "/usr/bin/Xephyr", "/usr/bin/xrandr", "/usr/bin/xinput",
    ]
    return paths.allSatisfy { access($0, X_OK) == 0 }
  }

  /// Starts Xvfb on a free display and a 1024x768 Xephyr inside it (Xephyr's RandR screen is at
  /// most 1600x1200, so a turned 1280x800 would not fit).
  public init(size: String = "1024x768") throws {
    logs = try TemporaryDirectory("x11")
    // Two free display numbers in a row (no lock file, no socket).
    var base = 40 + Int(getpid() % 400)
    while (0..<2).contains(where: {
      access("/tmp/.X\(base + $0)-lock", F_OK) == 0
        || access("/tmp/.X11-unix/X\(base + $0)", F_OK) == 0
    }) {
      base += 2
    }
    host = try ChildProcess(
      ["Xvfb", ":\(base)", "-screen", "0", "1600x1600x24", "-nolisten", "tcp", "-noreset"],
      outputDirectory: logs.path)
    let hostDisplay = ":\(base)"
    guard waitFor(timeout: 15, { access("/tmp/.X11-unix/X\(base)", F_OK) == 0 }) else {
      throw TestFailure("Xvfb did not start: \(host.standardError)")
    }
    display = ":\(base + 1)"
    server = try ChildProcess(
      ["Xephyr", display, "-screen", size, "-nolisten", "tcp", "-noreset"],
      environment: ["DISPLAY": hostDisplay], outputDirectory: logs.path)
    let logs = logs
    let display = display
    guard
      waitFor(
        timeout: 15,
        {
          (try? ChildProcess.run(
            ["xrandr", "-q"], environment: ["DISPLAY": display], outputDirectory: logs.path))?
            .status == 0
        })
    else {
      throw TestFailure("Xephyr did not start: \(server.standardError)")
    }
  }

  /// Runs an X client (xrandr, xinput) on this display.
  public func run(_ arguments: [String]) throws -> String {
    try ChildProcess.run(arguments, environment: ["DISPLAY": display], outputDirectory: logs.path)
      .stdout
  }

  /// The rotation xrandr reports for `output` (`normal`, `left`, `inverted`, `right`).
  public func rotation(_ output: String = "default") throws -> String? {
    for line in try run(["xrandr", "-q"]).split(separator: "\n")
    where line.hasPrefix("\(output) connected") {
      let words = line.split(separator: " ").map(String.init)
      // "default connected 800x1280+0+0 left (normal left ...": the word after the geometry.
      guard let geometry = words.firstIndex(where: { $0.contains("+") }),
        geometry + 1 < words.count
      else { return nil }
      let next = words[geometry + 1]
      return next.hasPrefix("(") ? "normal" : next
    }
    return nil
  }

  /// A device's "Coordinate Transformation Matrix" from `xinput list-props`.
  public func matrix(_ device: String) throws -> [Double] {
    for line in try run(["xinput", "list-props", device]).split(separator: "\n")
    where line.contains("Coordinate Transformation Matrix") {
      guard let colon = line.lastIndex(of: ":") else { return [] }
      return line[line.index(after: colon)...].split(separator: ",").compactMap {
        Double($0.trimmingCharacters(in: " \t"))
      }
    }
    return []
  }
}

extension Substring {
  fileprivate func trimmingCharacters(in set: String) -> String {
    String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
  }
}
