import Glibc
import SystemKit

// orientd-rotate: `orientd rotate` execs this program with its own arguments. It lives apart
// from orientd so the root daemon's binary links no X11 or compositor code.

/// The version printed by `--version` (orientd's; they are released together).
let rotateVersion = "0.1.0"

let command: RotateOptions.Command
do {
  command = try RotateOptions.parse(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
  StandardStream.error.writeLine("orientd rotate: \(error.message)\nTry 'orientd rotate --help'.")
  exit(ExitStatus.usage)
}

switch command {
case .help:
  print(RotateOptions.usage)
  exit(ExitStatus.success)
case .version:
  print("orientd rotate \(rotateVersion)")
  exit(ExitStatus.success)
case .rotate(let options):
  exit(RotateCommand.main(options))
}
