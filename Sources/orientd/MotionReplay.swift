import JSON
import OrientCore
import TextFormats

/// The motion side of `orientd replay` on a motion trace (`orientd record --motion`: the
/// first line `# orientd motion trace`): the display accelerometer's lines go to the detector
/// as in any trace, and with `--motion` the gyroscope, accelerometer and magnetometer lines run
/// the daemon's fusion (`MotionFusion`; a rotation sensor's lines are the rotation where the
/// trace has them), printed at most ten times a second of trace time:
///
/// CSV `t,motion,WX,WY,WZ,QW,QX,QY,QZ` (rad/s, display frame; the rotation display to earth),
/// JSON `{"time":1.2,"angular_velocity":[x,y,z],"rotation":[w,x,y,z],"rotation_source":..}`.
struct MotionReplay {
  /// The first line of a motion trace (`MotionTraceWriter.header`).
  static let marker = "# orientd motion trace"

  private var parser: MotionTraceParser
  private var fusion: MotionFusion
  private let json: Bool
  private let prints: Bool
  private var angularVelocity = Vector3.zero
  private var sensorRotation: Quaternion?
  private var magnetometer = false
  private var lastPrinted: Double?

  init(source: String, parameters: MotionFusion.Parameters, json: Bool, prints: Bool) {
    parser = MotionTraceParser(source: source)
    fusion = MotionFusion(parameters: parameters)
    self.json = json
    self.prints = prints
  }

  /// Parses one line; returns the display accelerometer's sample for the detector, if it is
  /// one, and the motion line to print, if one is due.
  ///
  /// - Throws: `TraceError` naming the source and line.
  mutating func process(line: some Collection<UInt8>) throws(TraceError) -> (
    sample: Sample?, text: String?
  ) {
    guard let event = try parser.parse(line: line) else { return (nil, nil) }
    var sample: Sample?
    switch event {
    case .acceleration(let part, let s):
      guard part == .lid else { return (nil, nil) }
      sample = s
      fusion.correct(acceleration: s.acceleration, time: s.time)
      return (sample, nil)
    case .gyro(let t, let w):
      fusion.integrate(gyro: w, time: t)
      angularVelocity = fusion.isInitialized ? fusion.angularVelocity : w
    case .magneticField(let t, let m):
      magnetometer = true
      fusion.correct(magneticField: m, time: t)
      return (nil, nil)
    case .rotation(_, let q):
      sensorRotation = q
    }
    return (sample, due(event.time) ? motionLine(event.time) : nil)
  }

  private mutating func due(_ t: Double) -> Bool {
    guard prints else { return false }
    if let last = lastPrinted, t - last < 0.1 { return false }
    lastPrinted = t
    return true
  }

  private func motionLine(_ t: Double) -> String {
    let q = sensorRotation ?? fusion.rotation
    let source = sensorRotation != nil ? "sensor" : magnetometer ? "fusion-9" : "fusion-6"
    let w = angularVelocity
    let values = [w.x, w.y, w.z, q.w, q.x, q.y, q.z].map { ($0 * 1e6).rounded() / 1e6 }
    guard json else {
      return ([shortDecimal(t), "motion"] + values.map(shortDecimal)).joined(separator: ",")
        + "\n"
    }
    return JSONValue.object([
      ("time", .number(t)),
      ("angular_velocity", .array(values[0..<3].map { .number($0) })),
      ("rotation", .array(values[3..<7].map { .number($0) })),
      ("rotation_source", .string(source)),
    ]).encoded() + "\n"
  }
}
