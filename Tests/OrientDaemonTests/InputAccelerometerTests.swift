import Glibc
import JSON
import OrientCore
import TestSupport
import TestThreads
import Testing

/// An input-subsystem accelerometer as on HP laptops (lis3lv02d, "ST LIS3LV02DL Accelerometer")
/// for umockdev-run: the udev record (ID_INPUT_ACCELEROMETER from udev's input_id, a udev
/// ACCEL_MOUNT_MATRIX that mirrors x and z), the evdev ioctls libevdev asks (sizes as libevdev
/// 1.13 uses them, see Tests/SessionTests/Fixtures/make-key-fixtures.py; ABS_X/Y/Z with a
/// resolution of 1000 units per g and INPUT_PROP_ACCELEROMETER) and its events in evemu's
/// format.
enum InputAccel {
  static let node = "/dev/input/event4"
  static let matrix = "-1, 0, 0; 0, 1, 0; 0, 0, -1"
  static let record = record()

  /// The record, with `tag` as the event node's classification and `bustype` (hex) as the
  /// input device's `id/bustype` when given.
  static func record(tag: String = "ID_INPUT_ACCELEROMETER=1", bustype: String? = nil) -> String {
    """
    P: /devices/platform/lis3lv02d/input/input4/event4
    N: input/event4
    E: DEVNAME=/dev/input/event4
    E: ID_INPUT=1
    E: \(tag)
    E: ACCEL_MOUNT_MATRIX=\(matrix)
    E: MAJOR=13
    E: MINOR=68
    E: SUBSYSTEM=input
    A: dev=13:68
    L: device=../../input4

    P: /devices/platform/lis3lv02d/input/input4
    E: ABS=7
    E: EV=9
    E: ID_INPUT=1
    E: ID_INPUT_ACCELEROMETER=1
    E: NAME="ST LIS3LV02DL Accelerometer"
    E: PROP=40
    E: SUBSYSTEM=input
    A: capabilities/abs=7
    A: capabilities/ev=9
    A: name=ST LIS3LV02DL Accelerometer
    A: properties=40
    \(bustype.map { "A: id/bustype=\($0)" } ?? "")

    P: /devices/platform/lis3lv02d
    E: DRIVER=lis3lv02d
    E: MODALIAS=platform:lis3lv02d
    E: SUBSYSTEM=platform
    A: modalias=platform:lis3lv02d

    """
  }

  static func hex(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined()
  }

  /// `struct input_absinfo` (value, minimum, maximum, fuzz, flat, resolution), little-endian.
  static func absinfo(value: Int32, resolution: Int32 = 1000) -> String {
    let fields: [Int32] = [value, -2300, 2300, 18, 18, resolution]
    return hex(fields.flatMap { v in (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } })
  }

  /// The ioctls; the axes start upright: (0, -1000, 0) in the sensor's frame.
  static var ioctls: String { ioctls() }

  /// The ioctls with the axes' `resolution`, the device upright at `oneG` units.
  static func ioctls(resolution: Int32 = 1000, oneG: Int32 = 1000) -> String {
    func zeros(_ n: Int) -> String { String(repeating: "00", count: n) }
    let name = Array("ST LIS3LV02DL Accelerometer".utf8) + [0]
    return [
      "EVIOCGVERSION 0 01000100",
      "EVIOCGID 0 1900000000000000",
      "EVIOCGNAME(0) \(name.count) \(hex(name))\(zeros(255 - name.count))",
      "EVIOCGPROP(0) 8 40\(zeros(7))",  // INPUT_PROP_ACCELEROMETER (6)
      "EVIOCGBIT(0) 8 09\(zeros(7))",  // EV_SYN, EV_ABS
      "EVIOCGBIT(1) 96 \(zeros(96))",
      "EVIOCGBIT(2) 8 \(zeros(8))",
      "EVIOCGBIT(3) 8 07\(zeros(7))",  // ABS_X, ABS_Y, ABS_Z
      "EVIOCGBIT(17) 8 \(zeros(8))",
      "EVIOCGBIT(5) 8 \(zeros(8))",
      "EVIOCGBIT(4) 8 \(zeros(8))",
      "EVIOCGBIT(21) 16 \(zeros(16))",
      "EVIOCGBIT(18) 8 \(zeros(8))",
      "EVIOCGABS(0) 0 \(absinfo(value: 0, resolution: resolution))",
      "EVIOCGABS(1) 0 \(absinfo(value: -oneG, resolution: resolution))",
      "EVIOCGABS(2) 0 \(absinfo(value: 0, resolution: resolution))",
      "EVIOCGKEY(0) 96 \(zeros(96))",
      "EVIOCGLED(0) 8 \(zeros(8))",
      "EVIOCGSW(0) 8 \(zeros(8))",
    ].joined(separator: "\n") + "\n"
  }

  /// The turns the script makes and the raw axes of each in the sensor's frame: the udev matrix
  /// mirrors x, so left-up (gravity +x in the display frame) reads -1000 on the sensor's x.
  static let turns: [(Orientation, Int, (Int, Int, Int))] = [
    (.leftUp, 90, (-1000, 0, 0)), (.bottomUp, 180, (0, 1000, 0)), (.rightUp, 270, (1000, 0, 0)),
    (.normal, 0, (0, -1000, 0)),
  ]

  /// The events: umockdev replays them on a timeline that starts when the node is first opened
  /// (orientd reads its axis information on discovery) and queues them while it is closed, so
  /// the first turn comes `start` s later, giving the clients time to claim, then one every
  /// `spacing` s. Each pose is ten
  /// reports 50 ms apart with a little noise, as a real sensor keeps reporting.
  static func events(start: Double, spacing: Double) -> String {
    // umockdev sends the first event as soon as the node is opened and keeps the delays
    // between events: a first report of the upright state at 0 makes the turns wait.
    var lines = ["E: 0.000000 0003 0001 -1000", "E: 0.000000 0000 0000 0"]
    for (index, turn) in turns.enumerated() {
      let (x, y, z) = turn.2
      for report in 0..<10 {
        let micros = Int(((start + Double(index) * spacing) * 1e6).rounded()) + report * 50_000
        let fraction = String(micros % 1_000_000)
        let stamp =
          "\(micros / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
        let noise = report % 2 == 0 ? 3 : -3
        for (code, value) in [(0, x), (1, y), (2, z)] {
          lines.append("E: \(stamp) 0003 000\(code) \(value == 0 ? 0 : value + noise)")
        }
        lines.append("E: \(stamp) 0000 0000 0")
      }
    }
    return lines.joined(separator: "\n") + "\n"
  }
}

/// orientd on an input-subsystem accelerometer (issue 17): found, described and chosen as
/// `--list-sensors` shows, read event-driven only while claimed, through the four orientations
/// as `orientd --watch --json` and Debian's `monitor-sensor` see them.
@Suite(
  .ownThreads, .serialized, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct InputAccelerometerTests {
  func files(
    _ directory: TemporaryDirectory, events: String, record: String = InputAccel.record,
    ioctls: String = InputAccel.ioctls
  ) throws -> [String] {
    try writeFile(directory.file("input.umockdev"), record)
    try writeFile(directory.file("input.ioctl"), ioctls)
    try writeFile(directory.file("input.events"), events)
    return [
      "umockdev-run", "-d", directory.file("input.umockdev"),
      "-i", "\(InputAccel.node)=\(directory.file("input.ioctl"))",
      "-e", "\(InputAccel.node)=\(directory.file("input.events"))", "--",
    ]
  }

  @Test func listSensorsShowsTheInputAccelerometer() throws {
    let directory = try TemporaryDirectory("input-list")
    let wrapper = try files(directory, events: "")
    let result = try ChildProcess.run(
      wrapper + [try Built.executable("orientd"), "--list-sensors", "--json"],
      outputDirectory: directory.path, timeout: 30)
    #expect(result.status == 0, "\(result.stderr)")
    let document = try JSONValue(parsing: result.stdout)
    #expect(document["chosen"]?.stringValue == "event4", "\(result.stdout)")
    #expect(document["chosenMode"]?.stringValue == "events", "\(result.stdout)")
    let sensor = try #require(document["sensors"]?.arrayValue?.first)
    #expect(sensor["name"]?.stringValue == "ST LIS3LV02DL Accelerometer")
    #expect(sensor["devnode"]?.stringValue == InputAccel.node)
    #expect(sensor["modes"] == .array([.string("events")]))
    #expect(sensor["mountMatrix"]?.stringValue == InputAccel.matrix)
    #expect(sensor["mountMatrixSource"]?.stringValue == "udev ACCEL_MOUNT_MATRIX")
    // 1 g = the resolution, 1000 units.
    let scale = sensor["scale"]?.arrayValue?.compactMap(\.numberValue) ?? []
    #expect(scale.count == 3 && scale.allSatisfy { abs($0 - 0.00980665) < 1e-9 }, "\(scale)")
  }

  /// A driver that leaves the resolution 0: milli-g (lis3lv02d's unit) when the state on
  /// opening is about 1000 units, otherwise that state is the device's 1 g (iio-sensor-proxy's
  /// test device: 256 units; a still device sends nothing, so a scale off by 4 would never
  /// give an accepted reading).
  @Test(arguments: [
    (Int32(1000), "abs_x_resolution_unset_milli_g", 1000.0),
    (256, "abs_x_resolution_unset_state_at_rest", 256),
  ])
  func anUnsetResolution(oneG: Int32, source: String, unitsPerG: Double) throws {
    let directory = try TemporaryDirectory("input-scale")
    let wrapper = try files(
      directory, events: "", ioctls: InputAccel.ioctls(resolution: 0, oneG: oneG))
    let result = try ChildProcess.run(
      wrapper + [try Built.executable("orientd"), "--list-sensors", "--json"],
      outputDirectory: directory.path, timeout: 30)
    #expect(result.status == 0, "\(result.stderr)")
    let sensor = try #require(try JSONValue(parsing: result.stdout)["sensors"]?.arrayValue?.first)
    let scale = sensor["scale"]?.arrayValue?.compactMap(\.numberValue) ?? []
    #expect(
      scale.count == 3 && scale.allSatisfy { abs($0 - 9.80665 / unitsPerG) < 1e-9 },
      "\(result.stdout)")
    #expect(result.stdout.contains(source), "\(result.stdout)")
  }

  /// iio-sensor-proxy's udev type alone is enough; a game controller's motion sensor (USB or
  /// Bluetooth) is never taken for the display's accelerometer.
  @Test(arguments: [
    ("IIO_SENSOR_PROXY_TYPE=input-accel", nil, true), ("ID_INPUT_ACCELEROMETER=1", "0003", false),
    ("ID_INPUT_ACCELEROMETER=1", "0005", false), ("ID_INPUT_JOYSTICK=1", nil, false),
  ])
  func classification(tag: String, bustype: String?, used: Bool) throws {
    let directory = try TemporaryDirectory("input-kind")
    let wrapper = try files(
      directory, events: "", record: InputAccel.record(tag: tag, bustype: bustype))
    let result = try ChildProcess.run(
      wrapper + [try Built.executable("orientd"), "--list-sensors", "--json"],
      outputDirectory: directory.path, timeout: 30)
    let document = try JSONValue(parsing: result.stdout)
    #expect(result.status == (used ? 0 : 69), "\(result.stdout)\n\(result.stderr)")
    #expect(document["chosen"] == (used ? .string("event4") : .null), "\(result.stdout)")
  }

  @Test func fourOrientationsOnlyWhileClaimed() throws {
    let bus = try PrivateBus()
    let directory = try TemporaryDirectory("input-turns")
    let wrapper = try files(directory, events: InputAccel.events(start: 8, spacing: 3))
    let daemon = try ChildProcess(
      wrapper + [try Built.executable("orientd"), "-v"] + isolated([], in: bus),
      environment: bus.environment, outputDirectory: directory.path)
    defer { daemon.killNow() }
    #expect(
      waitFor(timeout: 15) { daemon.standardError.contains("notice: serving ") },
      "\(daemon.standardError)")
    #expect(daemon.standardError.contains("using event4 (ST LIS3LV02DL Accelerometer)"))
    // Idle: the node was opened for its axis information on discovery, and is closed now; a
    // claim opens it (umockdev stands in for the evdev node with a pty, /dev/pts/N).
    let pid = try #require(umockdevChild(of: daemon))
    #expect(!holdsEmulatedInputNode(pid), "idle:\n\(openFileTargets(pid))")

    let orientd = try Built.executable("orientd")
    let watch = try ChildProcess(
      [orientd, "--watch", "--json"], environment: bus.environment,
      outputDirectory: directory.path)
    let monitor = try ChildProcess(
      ["stdbuf", "-oL", "monitor-sensor"], environment: bus.environment,
      outputDirectory: bus.directory.path)
    defer {
      watch.killNow()
      monitor.killNow()
    }
    #expect(
      waitFor(timeout: 15) {
        watch.standardOutput.jsonLines.contains { $0["orientation"]?.stringValue == "normal" }
      }, "watch: \(watch.standardOutput)\n\(daemon.standardError)")
    #expect(holdsEmulatedInputNode(pid), "claimed:\n\(openFileTargets(pid))")
    #expect(daemon.standardError.contains("sampling event4 events"), "\(daemon.standardError)")

    for (orientation, rotation, _) in InputAccel.turns {
      let line = "\"orientation\":\"\(orientation.rawValue)\",\"rotation\":\(rotation)"
      let changed = "Accelerometer orientation changed: \(orientation.rawValue)"
      #expect(
        waitFor(timeout: 20) {
          watch.standardOutput.lines.last?.contains(line) == true
            && monitor.standardOutput.lines.last?.hasSuffix(changed) == true
        }, "\(orientation): watch \(watch.standardOutput)\nmonitor \(monitor.standardOutput)")
    }
    // Each turn once, in the script's order (normal first, before the claim's own answer).
    let reported = watch.standardOutput.jsonLines.compactMap { $0["orientation"]?.stringValue }
    #expect(
      reported.drop { $0 != "left-up" } == ["left-up", "bottom-up", "right-up", "normal"][...],
      "\(reported)")

    watch.signal(SIGTERM)
    monitor.killNow()
    #expect(
      waitFor(timeout: 15) { !holdsEmulatedInputNode(pid) },
      "after the last client the node is closed:\n\(openFileTargets(pid))\n\(daemon.standardError)")
    #expect(daemon.standardError.contains("stopped sampling event4"))
  }

}
