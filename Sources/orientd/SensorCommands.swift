import Accelerometer
import Glibc
import OrientCore
import OrientDaemon
import OrientLog
import SystemKit

/// Options shared by `orientd --list-sensors` and `orientd record` (parsed by `Options`).
struct SensorCommandOptions: Equatable {
  /// `--json`.
  var json = false
  /// `--config FILE`.
  var configPath: String?
  /// `--duration S` (record only).
  var duration: Duration?
  /// `--raw` (record only): the sensor's own axes, without the mount matrix.
  var raw = false
  /// `-v`/`--verbose`.
  var verbose = false
}

/// Loading the accelerometer configuration for the sensor commands.
enum SensorCommandSupport {
  /// Reads the configuration (`path`, else `/etc/orientd.conf` if it exists, else the
  /// defaults) like the daemon does, or exits with a message: `noInput` (66) when the file
  /// cannot be read, `dataError` (65) when its content is wrong.
  static func loadConfiguration(_ path: String?) -> AccelerometerConfiguration {
    do {
      return try DaemonConfiguration.load(path: path).accelerometer
    } catch {
      fail(error.status, error.message)
    }
  }

  /// A logger on stderr at info (debug with `-v`).
  static func logger(verbose: Bool) -> Logger {
    Logger(label: "orientd", level: verbose ? .debug : .notice)
  }

  /// Writes `message` to stderr and exits with `status`.
  static func fail(_ status: ExitStatus, _ message: String) -> Never {
    let line = "orientd: \(message)\n"
    _ = line.withCString { Glibc.write(2, $0, strlen($0)) }
    exit(status)
  }

  /// Writes a whole line to stdout with one `write(2)` (no stdio buffering, so a pipe reader
  /// sees each line at once).
  ///
  /// - Returns: false when stdout is gone (EPIPE).
  @discardableResult
  static func writeLine(_ text: String) -> Bool {
    var line = text
    line += "\n"
    return line.withUTF8 { bytes in
      var done = 0
      while done < bytes.count {
        let n = Glibc.write(1, bytes.baseAddress.map { $0 + done }, bytes.count - done)
        if n < 0 {
          if errno == EINTR { continue }
          return false
        }
        done += n
      }
      return true
    }
  }
}
