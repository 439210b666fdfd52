import Glibc

/// `Tests/Fixtures/faultfs.c` built into a directory: an `LD_PRELOAD` library that makes the
/// file calls of the program under test fail as a given filesystem or a failing disk would
/// (see the comment at the top of that file for the faults, chosen with `ORIENTCAM_FAULTS`).
public struct FaultLibrary {
  /// The built `.so`.
  public let path: String

  /// Compiles the library with the system C compiler into `directory`.
  public init(in directory: TemporaryDirectory) throws {
    path = directory.file("faultfs.so")
    let result = try ChildProcess.run(
      [
        "cc", "-shared", "-fPIC", "-O1", "-o", path,
        "\(Built.packageRoot)/Tests/Fixtures/faultfs.c", "-ldl",
      ], outputDirectory: directory.path)
    guard result.status == 0 else { throw TestFailure("cc faultfs.c failed: \(result.stderr)") }
  }

  /// The environment that loads it with `faults` (comma-separated) in force.
  public func environment(_ faults: String, marker: String? = nil) -> [String: String] {
    var env = ["LD_PRELOAD": path, "ORIENTCAM_FAULTS": faults]
    // Under scripts/sanitize.sh the program is built with ASan, whose runtime refuses to start
    // when a preloaded library comes before it; this one only wraps libc calls, so let it.
    let asan = getenv("ASAN_OPTIONS").map { String(cString: $0) + ":" } ?? ""
    env["ASAN_OPTIONS"] = asan + "verify_asan_link_order=0"
    if let marker { env["ORIENTCAM_FAULT_MARKER"] = marker }
    return env
  }
}
