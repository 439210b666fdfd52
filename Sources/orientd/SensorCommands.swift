import Glibc
import OrientCore
import OrientDaemon
import OrientLog
import Sensors
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
  /// `--base` (record only): also the base accelerometer, as `t,sensor,x,y,z`.
  var base = false
  /// `--motion` (record only): the gyroscope and rotation sensor too, as a motion trace
  /// (`MotionTraceWriter`: `t,sensor,values`).
  var motion = false
  /// `-v`/`--verbose`.
  var verbose = false
}

/// Loading the sensor configuration for the sensor commands.
enum SensorCommandSupport {
  /// Reads the configuration (`path`, else `/etc/orientd.conf` if it exists, else the
  /// defaults) like the daemon does, or exits with a message: `noInput` (66) when the file
  /// cannot be read, `dataError` (65) when its content is wrong.
  static func loadConfiguration(_ path: String?) -> SensorsConfiguration {
    do {
      return try DaemonConfiguration.load(path: path).sensors
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
    StandardStream.error.writeLine("orientd: \(message)")
    exit(status)
  }
}
