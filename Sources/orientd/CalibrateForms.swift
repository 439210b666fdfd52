import OrientCore
import Sensors
import SystemKit

/// The options of `orientd calibrate`.
struct CalibrateOptions: Equatable {
  /// Where `--write` installs the result.
  enum Target: String, Equatable {
    /// A local hwdb file, then `systemd-hwdb update` and `udevadm trigger`.
    case hwdb
    /// A `[device]` block in orientd's configuration file.
    case config
  }

  /// One JSON object per line (events), for tools and tests.
  var json = false
  /// The nearest rotation instead of a signed axis permutation.
  var exact = false
  /// `--write [hwdb|config]`.
  var write: Target?
  /// `--revert`: remove what an earlier `--write` installed.
  var revert = false
  /// `--sensor NAME`: the kernel name (`iio:device0`) or `name` attribute expected.
  var sensor: String?
  /// `--config FILE` (read, and written by `--write config`).
  var configPath: String?
  /// `-v`.
  var verbose = false
  /// `--hold S`: seconds of holding still that confirm a pose.
  var hold = 2.0
  /// `--timeout S`: give up on a pose after this long.
  var timeout = 120.0
  /// `--hwdb-file PATH`: the local hwdb file `--write` writes.
  var hwdbFile = "/etc/udev/hwdb.d/61-sensor-orientd.hwdb"
}

/// The three forms a result is printed in.
struct CalibrationForms {
  /// `ACCEL_MOUNT_MATRIX=...`.
  var property: String
  /// The hwdb match line, or `nil` when the sensor has no hwdb key.
  var match: String?
  /// The whole hwdb file text (marker comment, match line, property), or `nil`.
  var hwdbEntry: String?
  /// The orientd.conf block.
  var configBlock: String

  init(result: CalibrationResult, description: AccelerometerDescription) {
    let matrix = result.matrix.description
    property = "ACCEL_MOUNT_MATRIX=\(matrix)"
    let key = description.facts.hwdbKey.flatMap { SensorHwdbMatch.split(key: $0) }
    let sensorName = description.facts.name ?? description.sysname
    if let key {
      let pattern = SensorHwdbMatch.pattern(for: key)
      match = pattern
      let machine = SensorHwdbMatch.machine(key.dmi).map { " on \($0)" } ?? ""
      hwdbEntry = [
        "\(CalibrationInstall.marker) for \(sensorName)\(machine); "
          + "orientd calibrate --revert removes it",
        pattern, " \(property)",
      ].joined(separator: "\n")
    }
    var block = [
      "\(CalibrationInstall.beginMarker) (\(sensorName)); orientd calibrate --revert removes it",
      "[device \"calibrated-\(sensorName)\"]",
    ]
    if let name = description.facts.name { block.append("match-name = \(name)") }
    if let modalias = description.facts.modalias {
      let parts = modalias.split(separator: ":", omittingEmptySubsequences: false)
      let glob = parts.count >= 2 ? "\(parts[0]):\(parts[1])*" : modalias
      block.append("match-modalias = \(glob)")
    }
    if description.facts.name == nil && description.facts.modalias == nil {
      block.append("match-name = *")
    }
    block.append("mount-matrix = \(matrix)")
    block.append(CalibrationInstall.endMarker)
    configBlock = block.joined(separator: "\n")
  }
}
