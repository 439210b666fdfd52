import Capture
import Glibc
import Logging
import V4L2Kit

/// orientcam's version, printed by `--version` and written to EXIF Software.
let orientcamVersion = "0.1.0"

/// Writes a line to stdout in one `write(2)`.
func say(_ text: String) {
  var line = text.hasSuffix("\n") ? text : text + "\n"
  line.withUTF8 { bytes in _ = write(1, bytes.baseAddress, bytes.count) }
}

/// Prints the error and exits with its status.
func fail(_ error: CaptureError) -> Never {
  var line = "orientcam: \(error.message)\n"
  line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
  exit(error.exitCode)
}

let command: OrientcamCommand
do {
  command = try OrientcamCommand(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
  fail(error)
}

switch command {
case .version:
  say("orientcam \(orientcamVersion)")
case .help(let topic):
  switch topic {
  case "capture": say(Usage.capture)
  case "list": say(Usage.list)
  case "inspect": say(Usage.inspect)
  default: say(Usage.main)
  }
case .list(let json):
  let found = CameraDiscovery.cameras()
  let logger = Logger(label: "orientcam")
  for failure in found.failures { logger.warning(failure.description) }
  if json {
    say(ListCommand.json(found.cameras).encoded())
  } else {
    say(ListCommand.text(found.cameras))
  }
case .inspect(let paths, let json):
  var status: Int32 = 0
  for path in paths {
    do {
      let result = try InspectCommand.inspect(path)
      say(json ? result.encoded() : InspectCommand.text(result))
    } catch {
      var line = "orientcam: \(error.message)\n"
      line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
      status = error.exitCode
    }
  }
  exit(status)
case .capture(let options):
  let logger = Logger(label: "orientcam", level: options.verbose ? .debug : .info)
  let environment = CaptureEnvironment(
    logger: logger, software: "orientcam \(orientcamVersion)",
    autoOrientation: { logger in BusOrientationProvider(logger: logger) },
    photoTaken: { report in say(options.json ? report.json.encoded() : report.path) })
  do {
    _ = try CaptureCommand.run(options, environment: environment)
  } catch {
    fail(error)
  }
}
exit(0)
