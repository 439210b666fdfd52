import OrientCore
import TextFormats

#if canImport(Glibc)
  import Glibc
#endif

/// A real IMU recording with the device's own orientation output as the reference.
///
/// The recordings are scikit-kinematics' test data (BSD licence; its wheel on PyPI installs
/// them as `tests/data`): an Xsens MTx, an x-io x-IMU, an x-io x-IMU3 and an x-io NGIMU, each
/// with its on-board (Kalman or AHRS) orientation. The reference is another filter, not the
/// truth: agreement within a degree or two is all that can be shown.
public struct IMURecording: Sendable {
  /// One IMU sample.
  public struct Sample: Sendable {
    /// Seconds from the start.
    public var time: Double
    /// Angular velocity, rad/s, the sensor's frame.
    public var gyro: Vector3
    /// Acceleration in orientd's convention (m/s^2, the reading points along gravity).
    public var acceleration: Vector3
    /// The magnetic field (any unit), when recorded with this sample.
    public var magneticField: Vector3?
  }

  /// The dataset's name, e.g. `xsens-mtx`.
  public var name: String
  /// The device and what its reference is.
  public var summary: String
  /// The samples in time order.
  public var samples: [Sample]
  /// The device's own orientation quaternions (w, x, y, z as written) with their times.
  public var reference: [(time: Double, rotation: Quaternion)]

  /// The mean sample rate, Hz.
  public var rate: Double {
    guard let first = samples.first, let last = samples.last, last.time > first.time else {
      return 0
    }
    return Double(samples.count - 1) / (last.time - first.time)
  }
}

/// What went wrong reading a recording: the file and why.
public struct IMURecordingError: Error, CustomStringConvertible, Sendable {
  /// The file (relative to the data folder).
  public var file: String
  /// Why.
  public var reason: String
  /// `file: reason`.
  public var description: String { "\(file): \(reason)" }
}

/// Readers of scikit-kinematics' recordings; `read` returns a file's text by its path
/// relative to the data folder (`tests/data` of the wheel), or `nil` when it is missing.
public enum IMURecordings {
  /// The files the readers need, relative to the data folder.
  public static let files = [
    "data_xsens.txt", "data_xio/00033_CalInertialAndMag.csv", "data_xio/00033_Quaternion.csv",
    "data_xio/00033_Registers.csv", "data_xio3/Inertial.csv", "data_xio3/Magnetometer.csv",
    "data_xio3/Quaternion.csv", "data_ngimu/sensors.csv", "data_ngimu/quaternion.csv",
  ]

  /// Every recording that could be read, and an error for each that could not.
  public static func load(_ read: (String) -> String?) -> (
    recordings: [IMURecording], errors: [IMURecordingError]
  ) {
    var recordings: [IMURecording] = []
    var errors: [IMURecordingError] = []
    for name in ["xsens", "xio", "xio3", "ngimu"] {
      do {
        switch name {
        case "xsens": recordings.append(try xsens(read))
        case "xio": recordings.append(try xio(read))
        case "xio3": recordings.append(try xio3(read))
        default: recordings.append(try ngimu(read))
        }
      } catch {
        errors.append(error)
      }
    }
    return (recordings, errors)
  }

  // MARK: - The four devices

  /// Xsens MTx at 50 Hz: acceleration m/s^2, rate rad/s, field (a.u.), and the MTx's Kalman
  /// filter orientation in the same rows.
  static func xsens(_ read: (String) -> String?) throws(IMURecordingError) -> IMURecording {
    let file = "data_xsens.txt"
    let text = try need(file, read)
    var rate = 0.0
    var samples: [IMURecording.Sample] = []
    var reference: [(time: Double, rotation: Quaternion)] = []
    var first: Double?
    for line in text.split(whereSeparator: \.isNewline) {
      if line.hasPrefix("//") {
        if line.contains("Sample rate:"), let value = line.split(separator: ":").last {
          rate = Double(value.filter { "0123456789.".contains($0) }) ?? 0
        }
        continue
      }
      let v = line.split(whereSeparator: { $0 == "\t" || $0 == " " }).compactMap { Double($0) }
      guard v.count >= 14 else { continue }  // the header, a short line
      guard rate > 0 else { throw IMURecordingError(file: file, reason: "no sample rate line") }
      let start = first ?? v[0]
      first = start
      var counter = v[0] - start
      if counter < 0 { counter += 65536 }  // the MTx's counter wraps
      let t = counter / rate
      samples.append(
        IMURecording.Sample(
          time: t, gyro: Vector3(v[4], v[5], v[6]), acceleration: Vector3(-v[1], -v[2], -v[3]),
          magneticField: Vector3(v[7], v[8], v[9])))
      reference.append((t, Quaternion(w: v[10], x: v[11], y: v[12], z: v[13])))
    }
    return try finish(
      name: "xsens-mtx", summary: "Xsens MTx, 50 Hz, the MTx's Kalman filter", file: file,
      samples: samples, reference: reference)
  }

  /// x-io x-IMU: inertial and magnetic packets at 256 Hz (deg/s, g, gauss), quaternions at
  /// 128 Hz from its AHRS; packet numbers interleave the two.
  static func xio(_ read: (String) -> String?) throws(IMURecordingError) -> IMURecording {
    let inertialFile = "data_xio/00033_CalInertialAndMag.csv"
    let quaternionFile = "data_xio/00033_Quaternion.csv"
    let registerFile = "data_xio/00033_Registers.csv"
    // Rates: register value n means 2^(n-1) Hz (the x-IMU's user manual).
    let registerText = try need(registerFile, read)
    func registerRate(_ name: String) -> Double? {
      for line in registerText.split(whereSeparator: \.isNewline) where line.hasSuffix(name) {
        let fields = line.split(separator: ",")
        if fields.count >= 3, let n = Double(fields[2]) { return pow(2, n - 1) }
      }
      return nil
    }
    guard let rate = registerRate("InertialAndMagneticDataRate") else {
      throw IMURecordingError(file: registerFile, reason: "no InertialAndMagneticDataRate")
    }
    let inertial = try rows(inertialFile, try need(inertialFile, read), minimum: 10)
    let degrees = Double.pi / 180
    var packets: [Double] = []
    var samples: [IMURecording.Sample] = []
    for (index, v) in inertial.enumerated() {
      packets.append(v[0])
      samples.append(
        IMURecording.Sample(
          time: Double(index) / rate, gyro: Vector3(v[1], v[2], v[3]) * degrees,
          acceleration: Vector3(v[4], v[5], v[6]) * -standardGravity,
          magneticField: Vector3(v[7], v[8], v[9])))
    }
    var reference: [(time: Double, rotation: Quaternion)] = []
    var k = 0
    for v in try rows(quaternionFile, try need(quaternionFile, read), minimum: 5) {
      while k + 1 < packets.count, packets[k + 1] <= v[0] { k += 1 }
      guard k + 1 < packets.count, packets[k] <= v[0] else { continue }
      let fraction = (v[0] - packets[k]) / (packets[k + 1] - packets[k])
      reference.append(
        ((Double(k) + fraction) / rate, Quaternion(w: v[1], x: v[2], y: v[3], z: v[4])))
    }
    return try finish(
      name: "x-io x-imu", summary: "x-io x-IMU, 256 Hz, its on-board AHRS (128 Hz)",
      file: inertialFile, samples: samples, reference: reference)
  }

  /// x-io x-IMU3: inertial at 50 Hz and magnetometer at 20 Hz with microsecond timestamps,
  /// quaternions from its AHRS.
  static func xio3(_ read: (String) -> String?) throws(IMURecordingError) -> IMURecording {
    let inertialFile = "data_xio3/Inertial.csv"
    let magnetometerFile = "data_xio3/Magnetometer.csv"
    let quaternionFile = "data_xio3/Quaternion.csv"
    let inertial = try rows(inertialFile, try need(inertialFile, read), minimum: 7)
    let field = try rows(magnetometerFile, try need(magnetometerFile, read), minimum: 4)
    let quaternions = try rows(quaternionFile, try need(quaternionFile, read), minimum: 5)
    guard let start = inertial.first?[0] else {
      throw IMURecordingError(file: inertialFile, reason: "no samples")
    }
    let degrees = Double.pi / 180
    var samples: [IMURecording.Sample] = []
    var m = 0
    for v in inertial {
      var magnetic: Vector3?
      // The newest magnetometer reading since the previous inertial sample.
      while m < field.count, field[m][0] <= v[0] {
        magnetic = Vector3(field[m][1], field[m][2], field[m][3])
        m += 1
      }
      samples.append(
        IMURecording.Sample(
          time: (v[0] - start) * 1e-6, gyro: Vector3(v[1], v[2], v[3]) * degrees,
          acceleration: Vector3(v[4], v[5], v[6]) * -standardGravity, magneticField: magnetic))
    }
    let reference = quaternions.map {
      (time: ($0[0] - start) * 1e-6, rotation: Quaternion(w: $0[1], x: $0[2], y: $0[3], z: $0[4]))
    }
    return try finish(
      name: "x-io x-imu3", summary: "x-io x-IMU3, 50 Hz, its on-board AHRS",
      file: inertialFile, samples: samples, reference: reference)
  }

  /// x-io NGIMU at 50 Hz (deg/s, g, uT) with its AHRS quaternions.
  static func ngimu(_ read: (String) -> String?) throws(IMURecordingError) -> IMURecording {
    let sensorFile = "data_ngimu/sensors.csv"
    let quaternionFile = "data_ngimu/quaternion.csv"
    let degrees = Double.pi / 180
    let samples = try rows(sensorFile, try need(sensorFile, read), minimum: 10).map { v in
      IMURecording.Sample(
        time: v[0], gyro: Vector3(v[1], v[2], v[3]) * degrees,
        acceleration: Vector3(v[4], v[5], v[6]) * -standardGravity,
        magneticField: Vector3(v[7], v[8], v[9]))
    }
    let reference = try rows(quaternionFile, try need(quaternionFile, read), minimum: 5).map {
      (time: $0[0], rotation: Quaternion(w: $0[1], x: $0[2], y: $0[3], z: $0[4]))
    }
    return try finish(
      name: "x-io ngimu", summary: "x-io NGIMU, 50 Hz, its on-board AHRS (gain 0.5)",
      file: sensorFile, samples: samples, reference: reference)
  }

  // MARK: - Helpers

  private static func need(_ file: String, _ read: (String) -> String?) throws(IMURecordingError)
    -> String
  {
    guard let text = read(file) else {
      throw IMURecordingError(file: file, reason: "missing")
    }
    return text
  }

  /// The numeric rows of a CSV file (the header and shorter rows skipped).
  private static func rows(_ file: String, _ text: String, minimum: Int)
    throws(IMURecordingError) -> [[Double]]
  {
    var out: [[Double]] = []
    for line in text.split(whereSeparator: \.isNewline) {
      let fields = line.split(separator: ",", omittingEmptySubsequences: false)
      let values = fields.map {
        Double(String($0[...].trimming()))
      }
      guard values.count >= minimum, values.prefix(minimum).allSatisfy({ $0 != nil }) else {
        continue
      }
      out.append(values.map { $0 ?? .nan })
    }
    guard !out.isEmpty else { throw IMURecordingError(file: file, reason: "no numeric rows") }
    return out
  }

  private static func finish(
    name: String, summary: String, file: String, samples: [IMURecording.Sample],
    reference: [(time: Double, rotation: Quaternion)]
  ) throws(IMURecordingError) -> IMURecording {
    guard samples.count > 50, reference.count > 50 else {
      throw IMURecordingError(
        file: file, reason: "\(samples.count) samples, \(reference.count) references: too few")
    }
    return IMURecording(name: name, summary: summary, samples: samples, reference: reference)
  }
}
