import Glibc
import OrientCore
import OrientDaemon
import OrientLog
import SystemKit

/// orientd's version, printed by `--version`.
let orientdVersion = "0.1.0"

let options: Options
do {
  options = try Options(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
  StandardStream.error.writeLine("orientd: \(error.message)\nTry 'orientd --help'.")
  exit(ExitStatus.usage)
}

switch options.command {
case .help:
  print(Options.usage)
  exit(ExitStatus.success)
case .version:
  print("orientd \(orientdVersion)")
  exit(ExitStatus.success)
case .configKeys:
  print(DaemonConfiguration.schema.reference, terminator: "")
  exit(ExitStatus.success)
case .daemon(let daemon):
  var settings = DaemonOptions()
  settings.bus = daemon.session ? .session : .system
  settings.compatibility = daemon.compatibility
  settings.configPath = daemon.configPath
  let logger = Logger(label: "orientd", level: daemon.verbose ? .debug : .info)
  exit(DaemonRunner.run(options: settings, logger: logger))
case .watch(let watch) where watch.motion:
  exit(MotionWatchCommand.main(watch))
case .watch(let watch):
  exit(WatchCommand.main(watch))
case .get(let get):
  exit(GetCommand.main(get))
case .listSensors(let list):
  exit(ListSensorsCommand.main(list))
case .record(let record):
  exit(RecordCommand.main(record))
case .calibrate(let calibrate):
  exit(CalibrateCommand.main(calibrate))
case .rotate(let arguments):
  exit(RotateLauncher.exec(arguments))
case .replay(let replay):
  exit(Replay.run(replay))
}
