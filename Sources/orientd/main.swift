import Glibc
import Logging
import Orientation

/// orientd's version, printed by `--version`.
let orientdVersion = "0.1.0"

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--version") {
  print("orientd \(orientdVersion)")
  exit(0)
}
// Sensor input commands (issue 3): see ListSensors.swift and Record.swift.
if arguments.first == "record" { exit(RecordCommand.main(Array(arguments.dropFirst()))) }
if arguments.contains("--list-sensors") { exit(ListSensorsCommand.main(arguments)) }
print("usage: orientd [--help] [--version] [--list-sensors [--json]] [record [--duration S]]")
exit(arguments.contains("--help") ? 0 : 64)
