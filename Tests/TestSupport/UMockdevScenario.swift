import Glibc
import JSON

/// One device in a umockdev testbed, written out in `umockdev-record` format (`P:`/`E:`/`A:`/
/// `N:` lines). Attribute values are given as the kernel writes them, usually ending in "\n".
public struct UMockdevDevice: Sendable {
  /// The sysfs path without `/sys`, e.g. `/devices/platform/accel/iio:device0`.
  public var devpath: String
  /// udev properties; `SUBSYSTEM` is required.
  public var properties: [(String, String)]
  /// Sysfs attributes, relative to the device directory (subdirectories allowed).
  public var attributes: [(String, String)]
  /// `N:` line: a device node emulated by a pty (for `/dev/iio:deviceN`), created when set.
  public var node: String?

  /// Creates a device description.
  public init(
    devpath: String, properties: [(String, String)], attributes: [(String, String)] = [],
    node: String? = nil
  ) {
    self.devpath = devpath
    self.properties = properties
    self.attributes = attributes
    self.node = node
  }

  /// The path as programs in the testbed see it: `/sys/devices/...`.
  public var syspath: String { "/sys" + devpath }

  /// The `umockdev-record` text of this device.
  public var record: String {
    var lines = ["P: \(devpath)"]
    if let node { lines.append("N: \(node)") }
    for (key, value) in properties { lines.append("E: \(key)=\(value)") }
    for (key, value) in attributes {
      var escaped = ""
      for c in value {
        switch c {
        case "\\": escaped += "\\\\"
        case "\n": escaped += "\\n"
        default: escaped.append(c)
        }
      }
      lines.append("A: \(key)=\(escaped)")
    }
    return lines.joined(separator: "\n") + "\n"
  }
}

/// A scripted test run inside a umockdev testbed: devices, then steps executed by
/// `Tests/Fixtures/umockdev/iio_driver.py` under `umockdev-wrapper` (so that uevents reach the
/// program under test), with a transcript of everything that happened.
public struct UMockdevScenario {
  /// The devices present from the start.
  public var devices: [UMockdevDevice]
  /// The steps, each a JSON object with an `op` (see the driver's `run_step`).
  public var steps: [JSONValue] = []

  /// Creates a scenario with initial devices.
  public init(devices: [UMockdevDevice] = []) {
    self.devices = devices
  }

  /// The driver script in the source tree.
  public static var driverPath: String {
    "\(Built.packageRoot)/Tests/Fixtures/umockdev/iio_driver.py"
  }

  /// Whether umockdev and its Python bindings are installed (scripts/deps.sh installs them).
  /// Always true under CI: there a missing umockdev must fail the tests, not skip them.
  public static var isAvailable: Bool {
    runsInCI
      || (access("/usr/bin/umockdev-wrapper", X_OK) == 0 && access("/usr/bin/python3", X_OK) == 0)
  }

  // MARK: steps

  private mutating func add(_ op: String, _ members: [(String, JSONValue)]) {
    steps.append(.object([("op", .string(op))] + members))
  }

  /// Starts `argv` with `UMOCKDEV_DIR` pointing at the testbed and `environment` added.
  public mutating func spawn(_ argv: [String], environment: [String: String] = [:]) {
    add(
      "spawn",
      [
        ("argv", .array(argv.map { .string($0) })),
        (
          "env",
          .object(environment.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
        ),
      ])
  }

  /// Closes the program's stdin (end of file).
  public mutating func closeInput() { add("close_stdin", []) }

  /// Writes a line to the program's stdin.
  public mutating func send(_ text: String) { add("send", [("text", .string(text))]) }

  /// Waits until `count` new stdout lines match the regular expression `pattern`.
  public mutating func expect(_ pattern: String, count: Int = 1, timeout: Double = 15) {
    add(
      "expect",
      [
        ("pattern", .string(pattern)), ("count", .number(Double(count))),
        ("timeout", .number(timeout)),
      ])
  }

  /// Collects output for `seconds` without expecting anything.
  public mutating func drain(_ seconds: Double) { add("drain", [("seconds", .number(seconds))]) }

  /// Rewrites an attribute in place (same inode, as the kernel does).
  public mutating func set(_ device: UMockdevDevice, _ attribute: String, _ value: String) {
    add(
      "set",
      [
        ("syspath", .string(device.syspath)), ("attr", .string(attribute)),
        ("value", .string(value)),
      ])
  }

  /// Replaces an attribute with umockdev's `umockdev_testbed_set_attribute()`: a new file
  /// renamed over the old one (a new inode), as iio-sensor-proxy's own tests change values.
  /// The kernel never does this; a reader that keeps the old file open would not see it.
  public mutating func replace(_ device: UMockdevDevice, _ attribute: String, _ value: String) {
    add(
      "replace",
      [
        ("syspath", .string(device.syspath)), ("attr", .string(attribute)),
        ("value", .string(value)),
      ])
  }

  /// Sets a udev property (takes effect for the program with the next uevent).
  public mutating func property(_ device: UMockdevDevice, _ name: String, _ value: String) {
    add(
      "property",
      [("syspath", .string(device.syspath)), ("name", .string(name)), ("value", .string(value))])
  }

  /// Sends a uevent (`add`, `change`, `remove`).
  public mutating func uevent(_ device: UMockdevDevice, _ action: String) {
    add("uevent", [("syspath", .string(device.syspath)), ("action", .string(action))])
  }

  /// Emulates the evdev node `devnode` of a device added at run time: the ioctls in the file
  /// `ioctls` (as `umockdev-run -i`) and the evemu events in the file `events` (as `-e`).
  public mutating func evdev(_ devnode: String, ioctls: String, events: String? = nil) {
    var members: [(String, JSONValue)] = [
      ("devnode", .string(devnode)), ("ioctl", .string(ioctls)),
    ]
    if let events { members.append(("events", .string(events))) }
    add("evdev", members)
  }

  /// Adds devices at run time and announces each with an `add` uevent (parents that exist
  /// already are kept).
  public mutating func hotplug(_ devices: [UMockdevDevice]) {
    add("add", [("umockdev", .string(devices.map(\.record).joined(separator: "\n")))])
  }

  /// Removes a device: the uevent first, or (`filesFirst`) its files first, as in an unplug
  /// that happens while the device is being read.
  public mutating func unplug(_ device: UMockdevDevice, filesFirst: Bool = false) {
    add(
      "remove",
      [
        ("syspath", .string(device.syspath)), ("files_first", .bool(filesFirst)),
        ("pause", .number(filesFirst ? 0.2 : 0)),
      ])
  }

  /// Removes a device's files without any uevent, as if the monitor had lost it (ENOBUFS).
  public mutating func unplugSilently(_ device: UMockdevDevice) {
    add("remove", [("syspath", .string(device.syspath)), ("silent", .bool(true))])
  }

  /// Replaces an attribute that is a directory (reads and writes fail with EISDIR) with a
  /// regular file holding `value`: a fault that goes away.
  public mutating func makeFile(_ device: UMockdevDevice, _ attribute: String, _ value: String) {
    add(
      "make_file",
      [
        ("syspath", .string(device.syspath)), ("attr", .string(attribute)),
        ("value", .string(value)),
      ])
  }

  /// Runs the steps `build` adds `times` times in a row, as fast as the driver can (a storm).
  public mutating func repeating(_ times: Int, _ build: (inout UMockdevScenario) -> Void) {
    var inner = UMockdevScenario()
    build(&inner)
    add("repeat", [("times", .number(Double(times))), ("steps", .array(inner.steps))])
  }

  /// Makes `devnode` deliver `records`, one every `intervalMilliseconds`; when
  /// `timestampOffset` is given, the driver writes a kernel timestamp (s64, little endian) at
  /// that byte offset of each record, in the clock named by the device's
  /// `current_timestamp_clock` at that moment, `timestampStep` nanoseconds apart.
  ///
  /// `pauses` maps a record's index to the delay before it instead of the interval (a stall).
  public mutating func script(
    _ device: UMockdevDevice, devnode: String, records: [[UInt8]], intervalMilliseconds: Int,
    timestampOffset: Int? = nil, timestampStep: Int = 10_000_000, pauses: [Int: Int] = [:]
  ) {
    var members: [(String, JSONValue)] = [
      ("devnode", .string(devnode)),
      ("records", .array(records.map { .string($0.hexString) })),
      ("interval_ms", .number(Double(intervalMilliseconds))),
      ("clock_attr", .string(device.syspath + "/current_timestamp_clock")),
      (
        "pauses",
        .object(pauses.sorted { $0.key < $1.key }.map { ("\($0.key)", .number(Double($0.value))) })
      ),
    ]
    if let timestampOffset {
      members.append(
        (
          "timestamp",
          .object([
            ("offset", .number(Double(timestampOffset))),
            ("step_ns", .number(Double(timestampStep))),
          ])
        ))
    }
    add("script", members)
  }

  /// Makes `devnode` behave as a triggered IIO buffer (iio_driver.py `feed`): every
  /// `intervalMilliseconds`, while `buffer/enable` is 1, one scan of the channels enabled at
  /// that moment, laid out as the kernel does, with the `_raw` values and a timestamp.
  public mutating func feed(_ device: UMockdevDevice, devnode: String, intervalMilliseconds: Int) {
    add(
      "feed",
      [
        ("devnode", .string(devnode)), ("syspath", .string(device.syspath)),
        ("interval_ms", .number(Double(intervalMilliseconds))),
      ])
  }

  /// Records the current content of attributes in the transcript under `tag`.
  public mutating func dump(_ device: UMockdevDevice, _ attributes: [String], tag: String) {
    add(
      "dump",
      [
        ("syspath", .string(device.syspath)), ("attrs", .array(attributes.map { .string($0) })),
        ("tag", .string(tag)),
      ])
  }

  /// Records what the program's open descriptors point at, under `tag`.
  public mutating func openFiles(tag: String) { add("fds", [("tag", .string(tag))]) }

  /// Sends a signal by name (`TERM`, `INT`).
  public mutating func signal(_ name: String) { add("signal", [("name", .string(name))]) }

  /// Waits for the program to exit and records its exit code.
  public mutating func wait(timeout: Double = 15) { add("wait", [("timeout", .number(timeout))]) }

  /// Pauses the driver.
  public mutating func sleep(_ seconds: Double) { add("sleep", [("seconds", .number(seconds))]) }

  // MARK: running

  /// Runs the scenario and returns the transcript; a failed step is reported in it, not thrown.
  ///
  /// - Throws: `TestFailure` if the driver cannot run at all or times out.
  public func run(timeout: Double = 90) throws -> UMockdevTranscript {
    let directory = try TemporaryDirectory("umockdev")
    let document = JSONValue.object([
      ("devices", .string(devices.map(\.record).joined(separator: "\n"))),
      ("steps", .array(steps)),
    ])
    let path = directory.file("scenario.json")
    try writeFile(path, document.encoded())
    let result = try ChildProcess.run(
      ["umockdev-wrapper", "/usr/bin/python3", UMockdevScenario.driverPath, path],
      outputDirectory: directory.path, timeout: timeout)
    return try UMockdevTranscript(output: result.stdout, driverStderr: result.stderr)
  }
}

/// What happened in a `UMockdevScenario` run.
public struct UMockdevTranscript {
  /// Every event, in order.
  public var events: [JSONValue]
  /// The program's stdout lines, in order (all programs spawned).
  public var lines: [String]
  /// When each of `lines` was read by the driver (`CLOCK_MONOTONIC` ns).
  public var lineTimes: [Int64]
  /// What the program wrote to stderr (the last program spawned).
  public var stderr: String
  /// The exit codes of programs that were waited for.
  public var exitCodes: [Int]
  /// The reason of the failed step, if one failed.
  public var failure: String?
  /// The driver's own stderr (umockdev warnings).
  public var driverStderr: String

  init(output: String, driverStderr: String) throws {
    var events: [JSONValue] = []
    var lines: [String] = []
    var lineTimes: [Int64] = []
    var exitCodes: [Int] = []
    var stderr = ""
    var failure: String?
    for line in output.split(separator: "\n") {
      guard let event = try? JSONValue(parsing: String(line)) else {
        throw TestFailure("driver wrote a non-JSON line: \(line)\nstderr: \(driverStderr)")
      }
      events.append(event)
      switch event["event"]?.stringValue {
      case "line":
        lines.append(event["text"]?.stringValue ?? "")
        lineTimes.append(Int64(event["t_ns"]?.numberValue ?? 0))
      case "exit": exitCodes.append(Int(event["code"]?.numberValue ?? -1))
      case "stderr": stderr += event["text"]?.stringValue ?? ""
      case "fail": failure = event["reason"]?.stringValue
      default: break
      }
    }
    self.events = events
    self.lines = lines
    self.lineTimes = lineTimes
    self.stderr = stderr
    self.exitCodes = exitCodes
    self.failure = failure
    self.driverStderr = driverStderr
  }

  /// The attribute values dumped under `tag` (trailing newline removed).
  public func dump(_ tag: String) -> [String: String] {
    var result: [String: String] = [:]
    for event in events where event["event"]?.stringValue == "dump" {
      guard event["tag"]?.stringValue == tag, case .object(let values)? = event["values"] else {
        continue
      }
      for (key, value) in values {
        var text = value.stringValue ?? "<missing>"
        if text.hasSuffix("\n") { text.removeLast() }
        result[key] = text
      }
    }
    return result
  }

  /// When each step finished (`CLOCK_MONOTONIC` ns, the clock of the probe's sample times),
  /// by step index.
  public var stepTimes: [Int: Int64] {
    var result: [Int: Int64] = [:]
    for event in events where event["event"]?.stringValue == "step" {
      if let index = event["index"]?.numberValue, let t = event["t_ns"]?.numberValue {
        result[Int(index)] = Int64(t)
      }
    }
    return result
  }

  /// The descriptor targets recorded under `tag`.
  public func openFiles(_ tag: String) -> [String] {
    for event in events where event["event"]?.stringValue == "fds" {
      if event["tag"]?.stringValue == tag {
        return event["targets"]?.arrayValue?.compactMap(\.stringValue) ?? []
      }
    }
    return []
  }

  /// Everything, for a failing test's message.
  public var summary: String {
    "failure: \(failure ?? "none")\nstdout:\n\(lines.joined(separator: "\n"))\nstderr:\n\(stderr)"
      + "\ndriver stderr:\n\(driverStderr)"
  }
}

extension Array where Element == UInt8 {
  /// Lowercase hex, two digits per byte.
  public var hexString: String {
    let digits: [Character] = [
      "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "b", "c", "d", "e", "f",
    ]
    var out = ""
    for b in self {
      out.append(digits[Int(b >> 4)])
      out.append(digits[Int(b & 15)])
    }
    return out
  }
}
