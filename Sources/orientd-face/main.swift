import Glibc
import SystemKit

// orientd-face: face finding for orientd's face-aware rotation. Its own program, so that the
// daemon never links a face detector nor opens a camera (docs/face.md).

/// The version printed by `--version` (orientd's; they are released together).
let faceVersion = "0.1.0"

signal(SIGPIPE, SIG_IGN)
let options: FaceOptions
do {
  options = try FaceOptions(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
  StandardStream.error.writeLine("orientd-face: \(error.message)\nTry 'orientd-face --help'.")
  exit(ExitStatus.usage)
}

switch options.command {
case .help:
  print(FaceOptions.usage)
  exit(ExitStatus.success)
case .version:
  print("orientd-face \(faceVersion)")
  exit(ExitStatus.success)
case .detect(let detect):
  exit(DetectCommand.run(detect))
case .resolve(let resolve):
  exit(ResolveCommand.run(resolve))
}
