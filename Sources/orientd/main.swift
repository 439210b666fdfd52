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
print("usage: orientd [--help] [--version]")
exit(arguments.contains("--help") ? 0 : 64)
