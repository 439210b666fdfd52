import Glibc
import SystemKit

/// `orientd rotate`: runs the orientd-rotate program in place of this process.
///
/// Rotation talks to compositors and X servers (libX11, libXrandr, libXi, libxcb); keeping it
/// in its own executable means the root daemon, which is this binary, never maps those
/// libraries (`ldd orientd`), and systems without a display need not install them.
enum RotateLauncher {
  /// The program's file name.
  static let program = "orientd-rotate"

  /// Where orientd-rotate may be, relative to this binary's directory: beside it (the build
  /// tree, or both in one bin directory), then `PREFIX/libexec/orientd` for `PREFIX/bin`
  /// (scripts/install.sh and the Debian package install it there).
  static func candidates(besides directory: String) -> [String] {
    let prefix = directory.hasSuffix("/bin") ? String(directory.dropLast(4)) : directory + "/.."
    return ["\(directory)/\(program)", "\(prefix)/libexec/orientd/\(program)"]
  }

  /// Replaces this process with orientd-rotate `arguments`; returns a status only when it
  /// cannot (69: not installed, 71: exec failed).
  static func exec(_ arguments: [String]) -> Int32 {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let exe =
      n > 0
      ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
      : CommandLine.arguments[0]
    let directory = exe.lastIndex(of: "/").map { String(exe[..<$0]) } ?? "."
    let places = candidates(besides: directory.isEmpty ? "/" : directory)
    guard let path = places.first(where: { access($0, X_OK) == 0 }) else {
      StandardStream.error.writeLine(
        "orientd rotate: \(program) is not installed (looked for \(places.joined(separator: " and "))); "
          + "on Debian: apt install orientd-rotate")
      return ExitStatus.unavailable.rawValue
    }
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    execv(path, argv)
    let error = errno
    StandardStream.error.writeLine(
      "orientd rotate: cannot run \(path): \(String(cString: strerror(error)))")
    return ExitStatus.osError.rawValue
  }
}
