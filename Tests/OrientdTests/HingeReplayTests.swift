import Glibc
import OrientCore
import TestSupport
import TestThreads
import Testing
import TextFormats

/// `orientd replay` on a two-sensor trace (`t,sensor,x,y,z`, what `orientd record --base`
/// writes): the orientation as before, plus posture commits and the hinge's reliability.
@Suite(.ownThreads) struct HingeReplayTests {
  /// Laptop at 110 degrees for 1 s, folded to a tablet display up for 1 s, then on its side
  /// (hinge vertical) for 1 s; the two sensors sampled at 50 Hz, 5 ms apart.
  static let trace: String = {
    var text = "# convertible\nt,sensor,x,y,z\n"
    var t = 0.0
    func add(_ r: (lid: Vector3, base: Vector3), seconds: Double) {
      for _ in 0..<Int(seconds * 50) {
        t += 0.02
        for (name, v, dt) in [("display", r.lid, 0.0), ("base", r.base, 0.005)] {
          let time = shortDecimal(((t + dt) * 1000).rounded() / 1000)
          text += "\(time),\(name),\(v.x),\(v.y),\(v.z)\n"
        }
      }
    }
    add(HingeGeometry.readings(angle: 110), seconds: 1)
    add(HingeGeometry.readings(angle: 356, pitch: 180), seconds: 1)
    add(HingeGeometry.readings(angle: 356, pitch: 180, roll: 89), seconds: 1)
    return text
  }()

  @Test func aTwoSensorTraceReportsPosturesAndReliability() throws {
    let dir = try TemporaryDirectory("hinge-replay")
    let path = "\(dir.path)/convertible.csv"
    try writeFile(path, Self.trace)
    let orientd = try Built.executable("orientd")
    let csv = try ChildProcess.run([orientd, "replay", path], outputDirectory: dir.path)
    #expect(csv.status == 0, "\(csv.stderr)")
    let lines = csv.stdout.split(separator: "\n").map(String.init)
    let postures = lines.filter { $0.contains(",posture,") }.map {
      $0.split(separator: ",")[2]
    }
    #expect(postures == ["laptop", "tablet"], "\(csv.stdout)")
    #expect(lines.contains { $0.contains(",hinge,unreliable,hinge-vertical") }, "\(csv.stdout)")
    // The orientation lines are the one-sensor form's: the display upright first.
    #expect(
      lines.first { !$0.contains(",posture,") && !$0.contains(",hinge,") }?.hasSuffix(",normal")
        == true)

    let json = try ChildProcess.run(
      [orientd, "replay", "--json", "--set", "posture-settle-time=0.5", path],
      outputDirectory: dir.path)
    #expect(json.status == 0, "\(json.stderr)")
    #expect(json.stdout.contains("\"posture\":\"tablet\""), "\(json.stdout)")
    #expect(json.stdout.contains("\"hinge_reliable\":false"), "\(json.stdout)")
  }

  @Test func mixedFormsAndUnknownSensorsAreErrorsWithTheirLine() throws {
    var parser = TaggedTraceParser(source: "x.csv")
    #expect(try parser.parse(line: Array("t,sensor,x,y,z".utf8)) == nil)
    let first = try parser.parse(line: Array("0.1,base,0,0,-9.8".utf8))
    #expect(first?.part == .base)
    #expect(throws: TraceError.self) { try parser.parse(line: Array("0.2,0,-9.8,0".utf8)) }
    #expect(throws: TraceError.self) { try parser.parse(line: Array("0.3,keyboard,0,0,1".utf8)) }
    do {
      _ = try parser.parse(line: Array("0.4,lid,0,x,1".utf8))
      Issue.record("a bad value was accepted")
    } catch {
      #expect(error.line == 5, "\(error)")
    }
  }
}
