import Glibc
import Logging
import Orientation

/// orientd's version, printed by `--version`.
let orientdVersion = "0.1.0"

let arguments = Array(CommandLine.arguments.dropFirst())
// Sensor input commands (issue 3) parse their own options: see ListSensors.swift and Record.swift.
if arguments.first == "record" { exit(RecordCommand.main(Array(arguments.dropFirst()))) }
if arguments.contains("--list-sensors") { exit(ListSensorsCommand.main(arguments)) }

let options: Options
do {
  options = try Options(arguments: arguments)
} catch {
  printError("orientd: \(error.message)\nTry 'orientd --help'.")
  exit(64)
}

switch options.command {
case .help:
  print(Options.usage)
  exit(0)
case .version:
  print("orientd \(orientdVersion)")
  exit(0)
case .replay(let replay):
  exit(Replay.run(replay).rawValue)
}
