// Replay traces as `orientd replay` reads them: the input is split into lines at LF (as
// SystemKit.LineReader does), each line goes to `OrientCore.TraceParser.parse(line:)`, and
// every sample goes on to the `OrientationDetector`, as in replay.
//
// Invariants: the parser counts every line it is handed, and an error names that line and the
// source; samples are finite and their times never decrease; a sample written back as
// `t,x,y,z` with `shortDecimal` parses to the same sample; the detector never reports a change
// to `undefined` and its filtered gravity stays finite.
import OrientCore
import TextFormats

/// libFuzzer's entry point: checks one input against the invariants above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTraceCSV(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = inputBytes(data, size)
  var parser = TraceParser(source: "fuzz.csv")
  var detector = OrientationDetector()
  var previousTime = -Double.infinity
  var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
  if lines.last?.isEmpty == true { lines.removeLast() }  // the newline ending the last line
  for (index, line) in lines.enumerated() {
    let sample: Sample?
    do {
      sample = try parser.parse(line: line)
    } catch {
      require(error.line == index + 1, "error at line \(error.line), handed line \(index + 1)")
      require(error.source == "fuzz.csv" && !error.reason.isEmpty, "odd error \(error)")
      return 0  // replay stops at the first bad line
    }
    require(parser.lineNumber == index + 1, "parser at line \(parser.lineNumber)")
    guard let sample else { continue }
    let a = sample.acceleration
    require(
      sample.time.isFinite && a.x.isFinite && a.y.isFinite && a.z.isFinite,
      "non-finite sample \(sample)")
    require(sample.time >= previousTime, "time went back to \(sample.time)")
    previousTime = sample.time

    var fresh = TraceParser(source: "again")
    let written =
      "\(shortDecimal(sample.time)),\(shortDecimal(a.x)),\(shortDecimal(a.y)),\(shortDecimal(a.z))"
    let again = try? fresh.parse(line: Array(written.utf8))
    require(again == sample, "\(written) reads back as \(String(describing: again))")

    if let update = detector.process(sample) {
      require(
        !update.orientationChanged || update.orientation != .undefined, "changed to undefined")
      require(update.time == sample.time, "update time \(update.time) at \(sample.time)")
    }
    let g = detector.gravity
    require(g.x.isFinite && g.y.isFinite && g.z.isFinite, "gravity \(g) after \(sample)")
  }
  return 0
}
