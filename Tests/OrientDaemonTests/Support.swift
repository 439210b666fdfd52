import Glibc
import JSON
import OrientCore
import OrientWire
import TestSupport
import TextFormats

/// Emulated accelerometers for the daemon's end-to-end tests (1 g = 1000 counts).
enum Accel {
  static let parent = EmulatedAccelerometer.parent

  /// A polled accelerometer, upright (Tests/Fixtures/umockdev/mxc4005.umockdev).
  static let polled = EmulatedAccelerometer.polled

  /// A buffered accelerometer (scan elements, buffer, trigger, `/dev/iio:device0` as a pty that
  /// delivers nothing, so a first claim is answered after the bound) and its data-ready
  /// trigger. orientd raises `sampling_frequency` from 15.62 to 31.26 Hz while it samples.
  static let buffered: [UMockdevDevice] = [
    UMockdevDevice(
      devpath: "\(parent.devpath)/iio:device0",
      properties: [("SUBSYSTEM", "iio"), ("DEVNAME", "/dev/iio:device0")],
      attributes: [
        ("name", "bmc150_accel\n"), ("dev", "241:0\n"), ("in_accel_x_raw", "0\n"),
        ("in_accel_y_raw", "-1000\n"), ("in_accel_z_raw", "0\n"),
        ("in_accel_scale", "0.00980665\n"), ("sampling_frequency", "15.620000\n"),
        ("sampling_frequency_available", "15.620000 31.260000 62.500000 125\n"),
        ("current_timestamp_clock", "realtime\n"), ("buffer/enable", "0\n"),
        ("buffer/length", "2\n"), ("buffer/watermark", "1\n"),
        ("trigger/current_trigger", "\n"),
      ]
        + ["x", "y", "z"].enumerated().flatMap { index, axis in
          [
            ("scan_elements/in_accel_\(axis)_en", "0\n"),
            ("scan_elements/in_accel_\(axis)_index", "\(index)\n"),
            ("scan_elements/in_accel_\(axis)_type", "le:s16/16>>0\n"),
          ]
        } + [
          ("scan_elements/in_timestamp_en", "0\n"), ("scan_elements/in_timestamp_index", "3\n"),
          ("scan_elements/in_timestamp_type", "le:s64/64>>0\n"),
        ],
      node: "iio:device0"),
    UMockdevDevice(
      devpath: "\(parent.devpath)/trigger1", properties: [("SUBSYSTEM", "iio")],
      attributes: [("name", "bmc150_accel-dev0\n")]),
  ]

  /// Raw counts for a display held upright in `orientation`, or turned `degrees` clockwise.
  static func raw(_ orientation: Orientation) -> (Int, Int, Int) {
    raw(degrees: Double(orientation.clockwiseRotation ?? 0))
  }

  /// Raw counts for a vertical display turned `degrees` clockwise from upright.
  static func raw(degrees: Double) -> (Int, Int, Int) {
    let r = degrees * Double.pi / 180
    return (Int((1000 * sin(r)).rounded()), Int((-1000 * cos(r)).rounded()), 0)
  }
}

/// The daemon on a private bus with the project's policy, in a live umockdev testbed.
final class DaemonFixture {
  let bus: PrivateBus
  let testbed: LiveTestbed
  let device: UMockdevDevice
  private var current = (0, -1000, 0)

  /// Starts `orientd -v` (plus `arguments`) with `devices` (default: one polled sensor) and
  /// waits until it serves its bus name.
  init(
    _ arguments: [String] = [], devices: [UMockdevDevice] = [Accel.parent, Accel.polled],
    bus: PrivateBus? = nil
  ) throws {
    self.bus = try bus ?? PrivateBus()
    device = Accel.polled
    testbed = try LiveTestbed(
      devices: devices,
      program: [try Built.executable("orientd"), "-v"] + isolated(arguments, in: self.bus),
      environment: self.bus.environment)
    let testbed = testbed
    guard waitFor(timeout: 15, { testbed.programStderr.contains("notice: serving ") }) else {
      throw TestFailure("orientd did not start:\n\(testbed.programStderr)")
    }
  }

  /// Sets the emulated reading; axes that become non-zero first, so that every intermediate
  /// state is a valid reading between the two orientations.
  func set(_ raw: (Int, Int, Int)) throws {
    let new = [raw.0, raw.1, raw.2]
    let old = [current.0, current.1, current.2]
    let axes = ["x", "y", "z"]
    let order = (0..<3).filter { new[$0] != 0 } + (0..<3).filter { new[$0] == 0 }
    try testbed.perform { scenario in
      for i in order where new[i] != old[i] {
        scenario.set(device, "in_accel_\(axes[i])_raw", "\(new[i])\n")
      }
    }
    current = raw
  }

  /// Turns the emulated device to `orientation`.
  func turn(_ orientation: Orientation) throws { try set(Accel.raw(orientation)) }

  /// Whether the daemon has the sensor's raw attributes open (it samples only then).
  var isReadingSensor: Bool { testbed.openFiles().contains { $0.contains("in_accel_") } }

  /// The read system calls the daemon has made so far (`syscr` in /proc/PID/io): a poll of a
  /// polled sensor is three `pread`s and a timerfd read.
  var readCalls: Int {
    let line = readFile("/proc/\(testbed.programPID)/io").split(separator: "\n")
      .first { $0.hasPrefix("syscr: ") }
    return line.flatMap { Int($0.dropFirst("syscr: ".count)) } ?? 0
  }

  /// Waits until the daemon has polled the sensor `polls` more times (no other reads happen
  /// while no client talks to it), so a value just written has been read.
  func waitForPolls(_ polls: Int = 3) -> Bool {
    let start = readCalls
    return waitFor(timeout: 15) { readCalls >= start + 4 * polls }
  }

  /// The daemon's log.
  var log: String { testbed.programStderr }

  /// Runs a command-line client against the bus and waits for it.
  func client(_ arguments: [String], timeout: Double = 15) throws -> (
    status: Int32, stdout: String, stderr: String
  ) {
    try ChildProcess.run(
      arguments, environment: bus.environment, outputDirectory: bus.directory.path,
      timeout: timeout)
  }

  /// Starts a long-running client against the bus.
  func start(_ arguments: [String]) throws -> ChildProcess {
    try ChildProcess(
      arguments, environment: bus.environment, outputDirectory: bus.directory.path)
  }

  /// `busctl get-property` of orientd's own interface, e.g. `s "left-up"`.
  func property(
    _ name: String, service: String = Wire.orientdName,
    path: String = Wire.orientationPath.rawValue, interface: String? = nil
  ) throws -> String {
    let result = try client([
      "busctl", "--address=\(bus.address)", "get-property", service, path, interface ?? service,
      name,
    ])
    return result.stdout.trimmingCharacters()
  }
}

/// busctl against a private bus.
func busctl(_ bus: PrivateBus, _ arguments: [String]) throws -> (
  status: Int32, stdout: String, stderr: String
) {
  try ChildProcess.run(
    ["busctl", "--address=\(bus.address)"] + arguments, environment: bus.environment,
    outputDirectory: bus.directory.path)
}

/// orientd outside any testbed sensor: run in an empty umockdev testbed, so a machine with a
/// real accelerometer gives the same result.
func sensorlessDaemon(_ bus: PrivateBus, _ arguments: [String] = []) throws -> ChildProcess {
  let daemon = try ChildProcess(
    ["umockdev-run", "--", try Built.executable("orientd"), "-v"] + isolated(arguments, in: bus),
    environment: bus.environment, outputDirectory: bus.directory.path)
  let started = waitFor(timeout: 15) {
    daemon.standardError.contains("notice: serving ") || !daemon.isRunning
  }
  guard started, daemon.isRunning else {
    throw TestFailure("orientd did not start: \(daemon.standardError)")
  }
  return daemon
}

/// A `--watch --json` line saying there is no sensor: every field undefined.
func isUndefinedWithoutSensor(_ line: JSONValue) -> Bool {
  line["orientation"]?.stringValue == "undefined" && line["rotation"] == .null
    && line["tilt"]?.stringValue == "undefined" && line["has_accelerometer"]?.boolValue == false
}

/// A `--watch --json` line saying a sensor reads `orientation`.
func isSensed(_ line: JSONValue, _ orientation: Orientation) -> Bool {
  line["orientation"]?.stringValue == orientation.rawValue
    && line["has_accelerometer"]?.boolValue == true
}

extension StringProtocol {
  /// Without leading and trailing whitespace and newlines (OrientCore's `trimming`).
  func trimmingCharacters() -> String { String(trimming()) }
}

extension String {
  /// The lines, without empty ones.
  var lines: [String] { split(separator: "\n").map(String.init) }
}

/// `arguments` with `--config` of an empty file unless they name one: a daemon under test must
/// not read the machine's own /etc/orientd.conf.
func isolated(_ arguments: [String], in bus: PrivateBus) throws -> [String] {
  if arguments.contains(where: { $0 == "--config" || $0.hasPrefix("--config=") }) {
    return arguments
  }
  let empty = bus.directory.file("empty.conf")
  try writeFile(empty, "")
  return arguments + ["--config", empty]
}

/// A line of `/proc/PID/status` in kB (`VmRSS`, `VmHWM`), 0 if absent.
func statusKilobytes(_ pid: pid_t, _ field: String) -> Int {
  for line in readFile("/proc/\(pid)/status").split(separator: "\n")
  where line.hasPrefix("\(field):") {
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
  }
  return 0
}

/// How many descriptors `pid` has open.
func descriptorCount(_ pid: pid_t) -> Int {
  guard let dir = opendir("/proc/\(pid)/fd") else { return 0 }
  defer { closedir(dir) }
  var count = 0
  while readdir(dir) != nil { count += 1 }
  return count - 2  // "." and ".."
}
