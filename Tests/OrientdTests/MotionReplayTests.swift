import Glibc
import JSON
import OrientCore
import TestSupport
import TestThreads
import Testing

/// `orientd replay` on a motion trace (`orientd record --motion`'s format): the accelerometer
/// lines go through the detector as in any trace, and `--motion` prints the fusion.
@Suite(.ownThreads) struct MotionReplayTests {
  /// Upright, then turning about the display's z axis (towards left-up) at 1 rad/s for
  /// about 1.5 s, then still: the fusion's rotation turns by about that much about z.
  static var trace: String {
    var text = MotionTraceWriter.header
    var angle = 0.0
    for i in 0..<400 {
      let t = Double(i) * 0.01
      let rate = t >= 1 && t < 2.5708 ? 1.0 : 0.0
      angle += rate * 0.01
      // Gravity in the display frame as the device turns clockwise about z.
      let a = Vector3(9.80665 * sin(angle), -9.80665 * cos(angle), 0)
      text += MotionTraceWriter.line(.gyro(time: t, Vector3(0, 0, -rate)))
      text += MotionTraceWriter.line(.acceleration(.lid, Sample(time: t, acceleration: a)))
    }
    return text
  }

  @Test func aMotionTraceReplaysThroughTheDetectorAndTheFusion() throws {
    let dir = try TemporaryDirectory("motion-replay")
    let path = "\(dir.path)/motion.csv"
    try writeFile(path, Self.trace)
    let orientd = try Built.executable("orientd")
    let plain = try ChildProcess.run([orientd, "replay", path], outputDirectory: dir.path)
    #expect(plain.status == 0, "\(plain.stderr)")
    #expect(plain.stdout.split(separator: "\n").last?.hasSuffix(",left-up") == true, "\(plain)")
    #expect(!plain.stdout.contains("motion"), "no motion lines without --motion")

    let json = try ChildProcess.run(
      [orientd, "replay", "--motion", "--json", path], outputDirectory: dir.path)
    #expect(json.status == 0, "\(json.stderr)")
    let motion = json.stdout.jsonLines.filter { $0["angular_velocity"] != nil }
    #expect(motion.count >= 35 && motion.count <= 41, "10 a second: \(motion.count)")
    let turning = try #require(motion.first { ($0["time"]?.numberValue ?? 0) > 1.5 })
    #expect(turning["angular_velocity"]?.arrayValue?.last?.numberValue ?? 0 < -0.9)
    let last = try #require(motion.last)
    #expect(last["rotation_source"]?.stringValue == "fusion-6")
    func rotation(_ line: JSONValue) throws -> Quaternion {
      let q = (line["rotation"]?.arrayValue ?? []).compactMap(\.numberValue)
      try #require(q.count == 4)
      return Quaternion(w: q[0], x: q[1], y: q[2], z: q[3])
    }
    let before = try #require(motion.last { ($0["time"]?.numberValue ?? 9) < 1 })
    // From before the turn to the end: a quarter turn (the fusion integrates the gyroscope).
    let turn = (try rotation(before)).conjugate * (try rotation(last))
    #expect(abs(turn.angle - Double.pi / 2) < 0.1, "\(turn), \(turn.angle)")
    #expect(json.stdout.contains("\"orientation\":\"left-up\""))
  }
}
