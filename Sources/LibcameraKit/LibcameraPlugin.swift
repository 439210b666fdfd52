import CLibcameraAPI
import Glibc
import SystemKit

/// orientcam's libcamera plugin (`liborientcam-libcamera.so`, the LibcameraBridge target), loaded
/// with `dlopen(3)` the first time a libcamera camera is asked for.
///
/// Linking libcamera would make every start of every program that uses LibcameraKit load it
/// and what it links (gnutls, lttng-ust, libdw; lttng-ust reads every loaded library's ELF notes
/// as the process starts), which more than doubled `orientcam --version` here: a V4L2 capture,
/// a session or the test pattern must not pay for a camera stack it does not use.
public enum LibcameraPlugin {
  /// The plugin's file name (SwiftPM's dynamic library product `orientcam-libcamera`).
  public static let fileName = "liborientcam-libcamera.so"
  /// The environment variable that names the plugin file, for a build kept elsewhere.
  public static let environmentVariable = "ORIENTCAM_LIBCAMERA_PLUGIN"

  /// Where the plugin is looked for, in order: `$ORIENTCAM_LIBCAMERA_PLUGIN`; beside the
  /// executable (a build tree: SwiftPM puts products together); `../lib/orientcam/` from it (an
  /// installation: `PREFIX/bin/orientcam`, `PREFIX/lib/orientcam/liborientcam-libcamera.so`).
  public static func candidates(executable: String, override: String?) -> [String] {
    var paths: [String] = []
    if let override, !override.isEmpty { paths.append(override) }
    let folder = executable.split(separator: "/", omittingEmptySubsequences: false).dropLast()
      .joined(separator: "/")
    paths.append("\(folder)/\(fileName)")
    paths.append("\(folder)/../lib/orientcam/\(fileName)")
    return paths
  }

  /// The loaded plugin's function table.
  ///
  /// - Throws: `LibcameraError` (`ENOENT`: not installed; `ELIBACC`: it, or libcamera, cannot
  ///   be loaded), the same error on every call.
  public static func api() throws(LibcameraError) -> orient_lc_api {
    try loaded.result.get().pointee
  }

  private final class Loaded: @unchecked Sendable {
    // The table is static data in the plugin, which is never unloaded.
    let result: Result<UnsafePointer<orient_lc_api>, LibcameraError>
    init() { result = LibcameraPlugin.load() }
  }
  private static let loaded = Loaded()

  private static func load() -> Result<UnsafePointer<orient_lc_api>, LibcameraError> {
    var executable = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &executable, executable.count - 1)
    let exe =
      n > 0
      ? String(decoding: executable[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    let override = getenv(environmentVariable).map { String(cString: $0) }
    var tried: [String] = []
    for path in candidates(executable: exe, override: override) {
      guard access(path, F_OK) == 0 else {
        tried.append(path)
        continue
      }
      guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
        let why = dlerror().map { String(cString: $0) } ?? "unknown error"
        return .failure(
          LibcameraError(
            Errno(rawValue: ELIBACC),
            "libcamera cannot be used: dlopen \(path): \(why) (is libcamera installed? Debian: "
              + "apt-get install libcamera0.0.3)"))
      }
      guard let symbol = dlsym(handle, "orient_lc_api_v1") else {
        return .failure(
          LibcameraError(
            Errno(rawValue: ELIBACC), "\(path) is not orientcam's libcamera plugin"))
      }
      typealias Entry = @convention(c) () -> UnsafePointer<orient_lc_api>?
      guard let table = unsafeBitCast(symbol, to: Entry.self)(),
        table.pointee.version == ORIENT_LC_API_VERSION
      else {
        return .failure(
          LibcameraError(
            Errno(rawValue: ELIBACC),
            "\(path) is another version of orientcam's libcamera plugin (reinstall orientcam)"))
      }
      return .success(table)
    }
    return .failure(
      LibcameraError(
        Errno(rawValue: ENOENT),
        "orientcam's libcamera plugin \(fileName) is not installed (looked for "
          + tried.joined(separator: ", ") + ")"))
  }
}
