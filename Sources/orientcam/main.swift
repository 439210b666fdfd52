import Capture
import Glibc
import OrientLog
import Session
import SystemKit
import V4L2Kit

/// orientcam's version, printed by `--version` and written to EXIF Software.
let orientcamVersion = "0.1.0"

/// Writes a line to stdout in one `write(2)`.
func say(_ text: String) {
  StandardStream.output.writeLine(text.hasSuffix("\n") ? String(text.dropLast()) : text)
}

/// Prints the error and exits with its status.
func fail(_ error: CaptureError) -> Never {
  StandardStream.error.writeLine("orientcam: \(error.message)")
  exit(error.status)
}

let arguments = Array(CommandLine.arguments.dropFirst())

// session and layout live in the Session module (they build on capture's options).
if let first = arguments.first, first == "session" || first == "layout" {
  let rest = Array(arguments.dropFirst())
  if rest.contains("--help") || rest.contains("-h") {
    say(first == "session" ? SessionUsage.session : SessionUsage.layout)
    exit(ExitStatus.success)
  }
  if rest.contains("--version") {
    say("orientcam \(orientcamVersion)")
    exit(ExitStatus.success)
  }
  if first == "layout" {
    do {
      let conflicts = try LayoutCommand.run(try LayoutOptions(arguments: rest), emit: say)
      if !conflicts.isEmpty {
        let list = conflicts.map { "  \($0)" }.joined(separator: "\n")
        StandardStream.error.writeLine("orientcam: the overlay does not fit:\n\(list)")
        exit(ExitStatus.dataError)
      }
    } catch {
      fail(error)
    }
    exit(ExitStatus.success)
  }
  let options: SessionOptions
  do { options = try SessionOptions(arguments: rest) } catch { fail(error) }
  let logger = Logger(label: "orientcam", level: options.capture.verbose ? .debug : .info)
  var environment = SessionEnvironment(
    logger: logger, software: "orientcam \(orientcamVersion)",
    autoOrientation: { logger in BusOrientationSource(logger: logger) }, emit: say)
  if let uinput = getenv("ORIENTCAM_UINPUT") { environment.uinputPath = String(cString: uinput) }
  do {
    _ = try CameraSession.run(options, environment: environment)
  } catch {
    fail(error)
  }
  exit(ExitStatus.success)
}

let command: OrientcamCommand
do {
  command = try OrientcamCommand(arguments: arguments)
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
  case "session": say(SessionUsage.session)
  case "layout": say(SessionUsage.layout)
  default: say(Usage.main)
  }
case .list(let json):
  let found = CameraDiscovery.cameras()
  let libcamera = LibcameraListing.gather()
  let logger = Logger(label: "orientcam")
  for failure in found.failures where !libcamera.drivenNodes.contains(failure.path) {
    logger.warning(failure.description)
  }
  if let failure = libcamera.failure { logger.warning("libcamera: \(failure)") }
  if json {
    say(OrientcamJSON.line(ListCommand.json(found.cameras, libcamera: libcamera)))
  } else {
    say(ListCommand.text(found.cameras, libcamera: libcamera))
  }
case .inspect(let paths, let json):
  var status = ExitStatus.success
  for path in paths {
    do {
      let result = try InspectCommand.inspect(path)
      say(json ? OrientcamJSON.line(result) : InspectCommand.text(result))
    } catch {
      StandardStream.error.writeLine("orientcam: \(error.message)")
      status = error.status
    }
  }
  exit(status)
case .capture(let options):
  let logger = Logger(label: "orientcam", level: options.verbose ? .debug : .info)
  let environment = CaptureEnvironment(
    logger: logger, software: "orientcam \(orientcamVersion)",
    autoOrientation: { logger in BusOrientationSource(logger: logger) },
    photoTaken: { report in say(options.json ? OrientcamJSON.line(report.json) : report.path) })
  do {
    _ = try CaptureCommand.run(options, environment: environment)
  } catch {
    fail(error)
  }
}
exit(ExitStatus.success)
