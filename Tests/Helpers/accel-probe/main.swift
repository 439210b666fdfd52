// A test helper: runs Accelerometer.SensorManager on an event loop, controlled line by line on
// stdin, reporting on stdout. The AccelerometerTests run it inside umockdev testbeds.
//
//   stdin:  start | stop | status | quit
//   stdout: sensor <json> | sensor none        whenever the active sensor changes
//           sample <ns> <x> <y> <z>            each reading (m/s^2, display frame)
//           ok start | ok stop                 after the call returned
//           status started=<b> delivered=<n> skipped=<n>
//
// Options: --config FILE, --start (start at once), -v.
import Accelerometer
import Glibc
import JSON
import Logging
import Orientation
import SystemKit

func say(_ text: String) {
  let line = text + "\n"
  _ = line.withCString { Glibc.write(1, $0, strlen($0)) }
}

var arguments = Array(CommandLine.arguments.dropFirst())
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
      exit(65)
    }
  case "--start": startNow = true
  case "-v": level = .debug
  default:
    say("usage-error \(argument)")
    exit(64)
  }
}

let loop = try EventLoop()
let logger = Logger(label: "accel-probe", level: level)
let manager = try SensorManager(loop: loop, configuration: configuration, logger: logger)
let signals = try loop.handleSignals([SIGINT, SIGTERM]) { _ in
  manager.stop()
  loop.stop()
}
manager.onSensorChange = { status in
  say("sensor " + (status.map { $0.jsonValue.encoded() } ?? "none"))
}
manager.onSample = { sample in
  let v = sample.acceleration
  say(
    "sample \(sample.timestamp) \(FixedPoint.format(v.x, decimals: 6)) "
      + "\(FixedPoint.format(v.y, decimals: 6)) \(FixedPoint.format(v.z, decimals: 6))")
}
var pending: [UInt8] = []
let input = try loop.watch(0, for: .readable) { _ in
  var buffer = [UInt8](repeating: 0, count: 256)
  let n = buffer.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, 256) }
  if n <= 0 {
    manager.stop()
    loop.stop()
    return
  }
  pending += buffer[0..<n]
  while let newline = pending.firstIndex(of: 0x0A) {
    let command = String(decoding: pending[..<newline], as: UTF8.self)
    pending.removeSubrange(...newline)
    switch command {
    case "start":
      manager.start()
      say("ok start")
    case "stop":
      manager.stop()
      say("ok stop")
    case "status":
      say(
        "status started=\(manager.isStarted) delivered=\(manager.samplesDelivered) "
          + "skipped=\(manager.readingsSkipped)")
    case "quit":
      manager.stop()
      loop.stop()
    default: say("unknown \(command)")
    }
  }
}
try manager.begin()
if manager.active == nil { say("sensor none") }
if startNow {
  manager.start()
  say("ok start")
}
try loop.run()
input.cancel()
signals.cancel()
say(
  "status started=\(manager.isStarted) delivered=\(manager.samplesDelivered) skipped=\(manager.readingsSkipped)"
)
