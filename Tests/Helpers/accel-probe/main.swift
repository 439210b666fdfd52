import DeviceDiscovery
import Glibc
import JSON
import OrientCore
import OrientLog
// A test helper: runs the sensor layer (Sensors.SensorHub) for the display accelerometer on an event loop, controlled line by line on
// stdin, reporting on stdout. The AccelerometerTests run it inside umockdev testbeds.
//
//   stdin:  start | stop | status | resync | quit
//   stdout: sensor <json> | sensor none        whenever the active sensor changes
//           sample <ns> <x> <y> <z>            each reading (m/s^2, display frame)
//           ok start | ok stop                 after the call returned
//           status started=<b> delivered=<n> skipped=<n>
//
// Options: --config FILE, --start (start at once), -v, --quiet-check SECONDS (how often a
// silent device is checked; after --config).
//
// DeviceDiscovery modes (DeviceDiscoveryTests):
//   --udev-list SUBSYSTEM   one `device <json>` line per device, then exit
//   --udev-watch SUBSYSTEM  `ready`, then `event <action> <sysname> <json>` per uevent until
//                           stdin closes
import Sensors
import SystemKit
import TextFormats

func say(_ text: String) {
  StandardStream.output.writeLine(text)
}

/// Everything DeviceDiscovery tells about a device, as JSON.
func udevJSON(_ device: UdevDevice) -> JSONValue {
  func string(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
  return .object([
    ("syspath", .string(device.syspath)), ("sysname", .string(device.sysname)),
    ("sysnum", device.sysnum.map { .number(Double($0)) } ?? .null),
    ("devnode", string(device.devnode)), ("subsystem", string(device.subsystem)),
    ("properties", .object(device.properties.map { ($0.name, .string($0.value)) })),
    ("attributes", .array(device.attributeNames.map { .string($0) })),
    ("name", string(device.attribute("name"))),
    ("parent", string(device.parent?.syspath)),
    ("modalias", string(device.nearestProperty("MODALIAS")?.value)),
    ("action", string(device.action?.description)),
  ])
}

func udevMode(_ mode: String, subsystem: String) throws -> Never {
  let context = try UdevContext()
  if mode == "--udev-list" {
    for device in try context.devices(subsystem: subsystem) {
      say("device " + udevJSON(device).encoded())
    }
    say("missing " + (context.device(syspath: "/sys/devices/none") == nil ? "nil" : "found"))
    exit(ExitStatus.success)
  }
  let loop = try EventLoop()
  let monitor = try UdevMonitor(context: context, subsystems: [subsystem])
  let watch = try loop.watch(monitor.fileDescriptor, for: .readable) { _ in
    while let device = monitor.receive() {
      say(
        "event \(device.action?.description ?? "?") \(device.sysname) " + udevJSON(device).encoded()
      )
    }
  }
  let input = try loop.watch(0, for: .readable) { _ in
    var byte: UInt8 = 0
    if Glibc.read(0, &byte, 1) <= 0 { loop.stop() }
  }
  say("ready")
  try loop.run()
  watch.cancel()
  input.cancel()
  exit(ExitStatus.success)
}

var arguments = Array(CommandLine.arguments.dropFirst())
if let mode = arguments.first, mode == "--udev-list" || mode == "--udev-watch", arguments.count == 2
{
  try udevMode(mode, subsystem: arguments[1])
}
var configuration = AccelerometerConfiguration()
var startNow = false
var level = LogLevel.info
while !arguments.isEmpty {
  let argument = arguments.removeFirst()
  switch argument {
  case "--config":
    guard let path = arguments.first else { fatalError("--config needs a file") }
    arguments.removeFirst()
    let text = String(decoding: try FileDescriptor(path: path).readToEnd(), as: UTF8.self)
    do {
      configuration = try AccelerometerConfiguration(ConfigFile(parsing: text, source: path))
    } catch {
      say("config-error \(error)")
      exit(ExitStatus.dataError)
    }
  case "--start": startNow = true
  case "--quiet-check":
    guard let text = arguments.first, let seconds = Double(text) else {
      fatalError("--quiet-check needs seconds")
    }
    arguments.removeFirst()
    configuration.sampling.quietCheckInterval = .milliseconds(Int64(seconds * 1000))
  case "-v": level = .debug
  default:
    say("usage-error \(argument)")
    exit(ExitStatus.usage)
  }
}

let loop = try EventLoop()
let logger = Logger(label: "accel-probe", level: level)
var sensors = SensorsConfiguration()
sensors.accelerometer = configuration
let hub = try SensorHub(loop: loop, configuration: sensors, logger: logger)
let signals = try loop.handleSignals([SIGINT, SIGTERM]) { _ in
  hub.stopAll()
  loop.stop()
}
hub.onEvent = { event in
  switch event {
  case .changed(.accelerometer, let status):
    say("sensor " + (status.map { $0.jsonValue.encoded() } ?? "none"))
  case .reading(.accelerometer, let reading):
    guard let v = reading.acceleration else { return }
    say(
      "sample \(reading.time) \(FixedPoint.format(v.x, decimals: 6)) "
        + "\(FixedPoint.format(v.y, decimals: 6)) \(FixedPoint.format(v.z, decimals: 6))")
  default: break
  }
}
@MainActor func status() -> String {
  "status started=\(hub.isWanted(.accelerometer)) delivered=\(hub.samplesDelivered(.accelerometer)) "
    + "skipped=\(hub.readingsSkipped(.accelerometer))"
}
var pending: [UInt8] = []
let input = try loop.watch(0, for: .readable) { _ in
  var buffer = [UInt8](repeating: 0, count: 256)
  let n = buffer.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, 256) }
  if n <= 0 {
    hub.stopAll()
    loop.stop()
    return
  }
  pending += buffer[0..<n]
  while let newline = pending.firstIndex(of: 0x0A) {
    let command = String(decoding: pending[..<newline], as: UTF8.self)
    pending.removeSubrange(...newline)
    switch command {
    case "start":
      hub.setWanted(.accelerometer, true)
      say("ok start")
    case "stop":
      hub.setWanted(.accelerometer, false)
      say("ok stop")
    case "status":
      say(status())
    case "resync":
      hub.resynchronize()
      say("ok resync")
    case "quit":
      hub.stopAll()
      loop.stop()
    default: say("unknown \(command)")
    }
  }
}
try hub.begin()
if hub.status(of: .accelerometer) == nil { say("sensor none") }
if startNow {
  hub.setWanted(.accelerometer, true)
  say("ok start")
}
try loop.run()
input.cancel()
signals.cancel()
say(status())
