import OrientCore

#if canImport(Glibc)
  import Glibc
#endif

/// A fusion filter's agreement with a recording's reference orientation.
public struct RecordingResult: Sendable {
  /// How the reference quaternions were read (chosen by `RecordingEvaluation.convention`).
  public var convention: String
  /// The median angle, in degrees, between the reference's vertical and the accelerometer
  /// while the device is still: how well the reference itself fits the data.
  public var restAgreement: Double
  /// Inclination differences, degrees, one per scored sample.
  public var inclination: [Double]
  /// Heading differences, degrees, after removing the constant heading offset between the two
  /// earth frames (their mean difference).
  public var heading: [Double]
}

/// Compares fusion filters with a recording's reference orientation.
public enum RecordingEvaluation {
  /// The four ways a vendor may write an orientation quaternion: the rotation from the sensor
  /// to the earth or back, with the earth's z up or down. Each turns the written quaternion
  /// into the rotation from the sensor frame to a z-up earth frame.
  static let conventions: [(name: String, transform: @Sendable (Quaternion) -> Quaternion)] = [
    ("sensor to earth, z up", { $0 }),
    ("earth to sensor, z up", { $0.conjugate }),
    ("sensor to earth, z down", { Quaternion(axis: Vector3(1, 0, 0), angle: Double.pi) * $0 }),
    (
      "earth to sensor, z down",
      { Quaternion(axis: Vector3(1, 0, 0), angle: Double.pi) * $0.conjugate }
    ),
  ]

  /// The convention under which the reference's vertical best matches the accelerometer while
  /// the device is still (the vendors' documents differ, and a wrong reading would be an
  /// error of up to 180 degrees): its index and the median angle in degrees.
  public static func convention(of recording: IMURecording) -> (index: Int, agreement: Double) {
    var angles = [[Double]](repeating: [], count: conventions.count)
    var r = 0
    for s in recording.samples {
      let g = s.acceleration.magnitude
      guard s.gyro.magnitude < 0.05, abs(g / standardGravity - 1) < 0.05 else { continue }
      guard let q = reference(at: s.time, in: recording, from: &r) else { continue }
      let force = (s.acceleration * -1).normalized
      for (i, c) in conventions.enumerated() {
        let up = c.transform(q).conjugate.rotate(Vector3(0, 0, 1))
        angles[i].append(force.angle(to: up) * 180 / Double.pi)
      }
    }
    var best = (index: 0, agreement: Double.infinity)
    for (i, list) in angles.enumerated() {
      guard let median = percentile(list, 50) else { continue }
      if median < best.agreement { best = (i, median) }
    }
    return best
  }

  /// Runs `filter` over the recording and compares it with the reference after `warmUp`
  /// seconds.
  public static func evaluate<F: FusionFilter>(
    _ recording: IMURecording, filter: inout F, magnetometer: Bool, warmUp: Double = 2
  ) -> RecordingResult {
    let (index, agreement) = convention(of: recording)
    let transform = conventions[index].transform
    var inclination: [Double] = []
    var headings: [Double] = []
    var r = 0
    for s in recording.samples {
      filter.update(
        MotionSample(
          time: s.time, acceleration: s.acceleration, gyro: s.gyro,
          magneticField: s.magneticField, truth: .identity),
        magnetometer: magnetometer)
      guard s.time >= warmUp, let q = reference(at: s.time, in: recording, from: &r) else {
        continue
      }
      let errors = fusionErrors(estimate: filter.estimate, truth: transform(q))
      inclination.append(errors.inclination)
      headings.append(errors.heading)
    }
    // Remove the constant offset between the two earth frames (circular mean).
    var c = 0.0
    var s = 0.0
    for h in headings {
      c += cos(h * Double.pi / 180)
      s += sin(h * Double.pi / 180)
    }
    let offset = atan2(s, c) * 180 / Double.pi
    let heading = headings.map { h -> Double in
      var d = h - offset
      while d > 180 { d -= 360 }
      while d < -180 { d += 360 }
      return abs(d)
    }
    return RecordingResult(
      convention: conventions[index].name, restAgreement: agreement, inclination: inclination,
      heading: heading)
  }

  /// The reference quaternion nearest to `time` (within 30 ms), advancing `index`.
  static func reference(at time: Double, in recording: IMURecording, from index: inout Int)
    -> Quaternion?
  {
    let list = recording.reference
    while index + 1 < list.count, abs(list[index + 1].time - time) <= abs(list[index].time - time) {
      index += 1
    }
    guard index < list.count, abs(list[index].time - time) <= 0.03 else { return nil }
    return list[index].rotation
  }
}
