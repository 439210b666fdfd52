import Accelerometer
import Glibc
import JSON
import OrientCore
import SystemKit
import TextFormats

/// What `orientd --list-sensors` found out about the sensor's own 1 g by reading it for a
/// moment: the same `GravityEstimator` the daemon's detector runs, fed from
/// `in_accel_{x,y,z}_raw` (a sysfs read, so it works while the daemon samples the device too).
struct GravityCheck {
  /// The longest the sensor is read, in seconds.
  static let maximumDuration = 2.5
  /// The read interval.
  static let interval = Duration.milliseconds(20)

  /// The estimator after the readings.
  var estimator: GravityEstimator
  /// Readings taken.
  var readings = 0
  /// Why nothing could be measured, if so.
  var problem: String?
  /// The scale the readings were made with, when it is the same on every axis.
  var scale: Double?

  /// Reads `sensor` until the estimator has an estimate or `maximumDuration` has passed.
  init(sensor: AccelerometerDescription, nominal: Double) {
    estimator = GravityEstimator(nominal: nominal)
    let s = sensor.scale
    scale = s.x == s.y && s.y == s.z ? s.x : nil
    guard sensor.canPoll else {
      problem = "not measured: no in_accel_{x,y,z}_raw to read"
      return
    }
    var files: [SysfsAttribute] = []
    do {
      for axis in ["x", "y", "z"] {
        files.append(try SysfsAttribute(path: "\(sensor.facts.syspath)/in_accel_\(axis)_raw"))
      }
    } catch {
      problem = "not measured: \(error)"
      return
    }
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)
    defer { buffer.deallocate() }
    let start = GravityCheck.now()
    var failure: String?
    while estimator.estimate == nil {
      let t = GravityCheck.now() - start
      if t > GravityCheck.maximumDuration { break }
      var values: [Double] = []
      for file in files {
        do {
          let n = try file.read(into: buffer)
          switch SysfsValue.parseReading(UnsafeRawBufferPointer(rebasing: buffer[0..<n])) {
          case .success(let value): values.append(value)
          case .failure(let why): failure = "\(file.path): \(why)"
          }
        } catch {
          failure = "\(file.path): \(error.reason)"
        }
      }
      if values.count == 3 {
        let a = sensor.calibrate(x: values[0], y: values[1], z: values[2])
        let m2 = a.x * a.x + a.y * a.y + a.z * a.z
        if a.isFinite, m2 > 0 {
          readings += 1
          _ = estimator.add(time: t, a.x, a.y, a.z, m2: m2)
        }
      }
      var pause = timespec(GravityCheck.interval)
      var left = timespec()
      while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
    }
    if estimator.estimate == nil {
      problem =
        readings == 0
        ? "not measured: no valid reading (\(failure ?? "?"))"
        : "not measured: the device was not still for \(shortDecimal(GravityEstimator.requiredStillTime)) s"
          + " within \(shortDecimal(GravityCheck.maximumDuration)) s; put it down and retry"
    }
  }

  /// One line for the text output.
  var text: String {
    if let problem { return problem }
    guard let estimate = estimator.estimate else { return "-" }
    if estimator.isScaleOff { return estimator.scaleAdvice(scale: scale) }
    return "\(FixedPoint.format(estimate, decimals: 3, trimZeros: true)) m/s^2 at rest (scale ok)"
  }

  /// The JSON object (`gravity_estimate`).
  var jsonValue: JSONValue {
    let estimate = estimator.estimate
    var suggested: JSONValue = .null
    if let estimate, let scale, estimator.isScaleOff {
      suggested = .number(scale * estimator.nominal / estimate)
    }
    return .object([
      ("measured", estimate.map { .number($0) } ?? .null),
      ("nominal", .number(estimator.nominal)),
      ("scale_off", .bool(estimator.isScaleOff)),
      ("factor", estimator.factor.map { .number($0) } ?? .null),
      ("suggested_scale", suggested),
      ("readings", .number(Double(readings))),
      ("message", .string(text)),
    ])
  }

  private static func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
  }
}
