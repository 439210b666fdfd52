import Glibc
import JSON

/// A umockdev testbed that a test drives step by step while the program under test (a daemon)
/// and other clients run: `iio_driver.py` under `umockdev-wrapper` starts the program, then
/// takes further steps from a FIFO (its `serve` op), so the test can change sysfs values,
/// send uevents or unplug devices at any moment and wait for each step to be done.
///
/// Steps are built with `UMockdevScenario`'s methods (`set`, `uevent`, `unplug`, ...).
public final class LiveTestbed {
  /// The driver process (`umockdev-wrapper python3 iio_driver.py`).
  public let driver: ChildProcess
  /// The testbed's root directory (sysfs is under `root/sys`).
  public let root: String
  /// The program's process id (the latest one after `spawnAgain`).
  public private(set) var programPID: pid_t
  /// The file collecting the program's stderr.
  public let programStderrPath: String
  private let directory: TemporaryDirectory
  private var fifo: Int32 = -1
  private var nextID = 0

  /// Starts the driver with `devices` and spawns `program` (with `environment` added) in it.
  ///
  /// - Throws: `TestFailure` if the driver or the program does not start.
  public init(devices: [UMockdevDevice], program: [String], environment: [String: String] = [:])
    throws
  {
    directory = try TemporaryDirectory("live")
    let fifoPath = directory.file("steps.fifo")
    guard mkfifo(fifoPath, 0o600) == 0 else {
      throw TestFailure("mkfifo \(fifoPath): \(String(cString: strerror(errno)))")
    }
    let spawn = JSONValue.object([
      ("op", .string("spawn")), ("argv", .array(program.map { .string($0) })),
      ("env", .object(environment.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
    ])
    let document = JSONValue.object([
      ("devices", .string(devices.map(\.record).joined(separator: "\n"))),
      (
        "steps", .array([spawn, .object([("op", .string("serve")), ("fifo", .string(fifoPath))])])
      ),
    ])
    let scenario = directory.file("scenario.json")
    try writeFile(scenario, document.encoded())
    driver = try ChildProcess(
      ["umockdev-wrapper", "/usr/bin/python3", UMockdevScenario.driverPath, scenario],
      outputDirectory: directory.path)
    // The driver opens the FIFO for reading when it reaches "serve": until then a
    // non-blocking open for writing fails with ENXIO.
    var fd: Int32 = -1
    let driverRef = driver
    let opened = waitFor(timeout: 15) {
      fd = open(fifoPath, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
      return fd >= 0 || !driverRef.isRunning
    }
    guard opened, fd >= 0 else {
      throw TestFailure(
        "the umockdev driver did not start serving: \(driver.standardOutput)\n"
          + "\(driver.standardError)")
    }
    let flags = fcntl(fd, F_GETFL)
    _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
    fifo = fd
    let events = LiveTestbed.events(driver.standardOutput)
    guard let testbed = events.first(where: { $0["event"]?.stringValue == "testbed" }),
      let root = testbed["root"]?.stringValue,
      let spawned = events.first(where: { $0["event"]?.stringValue == "spawned" }),
      let pid = spawned["pid"]?.numberValue, let stderr = spawned["stderr"]?.stringValue
    else {
      throw TestFailure("the umockdev driver did not report its testbed: \(driver.standardOutput)")
    }
    self.root = root
    programPID = pid_t(pid)
    programStderrPath = stderr
  }

  deinit {
    if fifo >= 0 { close(fifo) }
    _ = driver.wait(timeout: 5)
    driver.killNow()
  }

  /// What the program wrote to stderr so far.
  public var programStderr: String { readFile(programStderrPath) }

  /// Whether the program is still running.
  public var programIsRunning: Bool {
    kill(programPID, 0) == 0 && !(readFile("/proc/\(programPID)/stat").contains(") Z "))
  }

  /// Runs the steps `build` adds to a scenario, one after the other, each waited for.
  ///
  /// - Throws: `TestFailure` if a step fails or is not done within `timeout` seconds.
  public func perform(timeout: Double = 15, _ build: (inout UMockdevScenario) -> Void) throws {
    var scenario = UMockdevScenario()
    build(&scenario)
    for step in scenario.steps {
      guard case .object(var members) = step else { continue }
      nextID += 1
      let id = nextID
      members.append(("id", .number(Double(id))))
      var line = JSONValue.object(members).encoded() + "\n"
      let written = line.withUTF8 { write(fifo, $0.baseAddress, $0.count) }
      guard written == line.utf8.count else {
        throw TestFailure("cannot send a step to the driver")
      }
      var failure: String?
      let done = waitFor(timeout: timeout) {
        for event in LiveTestbed.events(driver.standardOutput)
        where event["id"]?.numberValue == Double(id) {
          if event["event"]?.stringValue == "step_failed" {
            failure = event["reason"]?.stringValue ?? "failed"
          }
          return true
        }
        return !driver.isRunning
      }
      if let failure {
        throw TestFailure("step \(members.first?.1.stringValue ?? "?") failed: \(failure)")
      }
      guard done, driver.isRunning else {
        throw TestFailure(
          "step \(members.first?.1.stringValue ?? "?") not done within \(timeout) s\n\(driver.standardOutput)"
        )
      }
    }
  }

  /// The descriptor targets the program has open now (from `/proc/PID/fd`).
  public func openFiles() -> [String] {
    let directory = "/proc/\(programPID)/fd"
    guard let dir = opendir(directory) else { return [] }
    defer { closedir(dir) }
    var targets: [String] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name == "." || name == ".." { continue }
      var buffer = [CChar](repeating: 0, count: 4096)
      let n = readlink("\(directory)/\(name)", &buffer, buffer.count - 1)
      if n > 0 {
        targets.append(
          String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self))
      }
    }
    return targets
  }

  /// Sends `signal` to the program and waits up to `timeout` seconds for it to end.
  ///
  /// - Returns: its exit code (as the driver reports it), or `nil` if it did not end.
  public func stopProgram(signal: String = "TERM", timeout: Double = 10) throws -> Int? {
    try perform(timeout: timeout + 5) {
      $0.signal(signal)
      $0.wait(timeout: timeout)
    }
    let exits = LiveTestbed.events(driver.standardOutput).filter {
      $0["event"]?.stringValue == "exit"
    }
    return exits.last?["code"]?.numberValue.map { Int($0) }
  }

  /// Waits up to `timeout` seconds for the program to end by itself.
  ///
  /// - Returns: its exit code (as the driver reports it), or `nil` if it did not end.
  public func waitForProgram(timeout: Double = 10) throws -> Int? {
    try perform(timeout: timeout + 5) { $0.wait(timeout: timeout) }
    let exits = LiveTestbed.events(driver.standardOutput).filter {
      $0["event"]?.stringValue == "exit"
    }
    return exits.last?["code"]?.numberValue.map { Int($0) }
  }

  /// Starts `program` again in the same testbed once the previous one has ended (as systemd
  /// restarts a service), its stderr appended to the same file.
  public func spawnAgain(program: [String], environment: [String: String] = [:]) throws {
    try perform { $0.spawn(program, environment: environment) }
    let spawned = LiveTestbed.events(driver.standardOutput).filter {
      $0["event"]?.stringValue == "spawned"
    }
    guard let pid = spawned.last?["pid"]?.numberValue else {
      throw TestFailure("the umockdev driver did not report the new program")
    }
    programPID = pid_t(pid)
  }

  static func events(_ output: String) -> [JSONValue] {
    output.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
  }
}
