// `orientd --watch --json` lines as orientcam reads them (`--orientation-from`):
// `Capture.WatchLineParser`, fed incrementally as reads arrive from a pipe.
//
// Input: byte 0 picks the read sizes; the rest is the stream.
//
// Invariants: however the stream is cut into reads, the result is the same as one read of the
// whole stream (latest orientation, its line, the warnings, the line count); every line is
// counted, the latest orientation is a defined one on a line that was read, and each warning
// names the input and a line that was read.
import Capture
import OrientCore

/// libFuzzer's entry point: checks one input against the invariants above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWatchLines(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = inputBytes(data, size)
  guard let first = bytes.first else { return 0 }
  let stream = Array(bytes.dropFirst())

  var whole = WatchLineParser(label: "stdin")
  whole.feed(stream)
  whole.finish()

  var pieces = WatchLineParser(label: "stdin")
  var start = 0
  var step = Int(first % 17) + 1
  while start < stream.count {
    let end = min(stream.count, start + step)
    pieces.feed(stream[start..<end])
    start = end
    step = step * 5 % 17 + 1  // varying read sizes, 1...17 bytes
  }
  pieces.finish()

  require(pieces.lineCount == whole.lineCount, "line count depends on the read sizes")
  require(pieces.warnings == whole.warnings, "warnings depend on the read sizes")
  require(
    pieces.latest?.orientation == whole.latest?.orientation
      && pieces.latest?.line == whole.latest?.line, "the result depends on the read sizes")
  require(pieces.sawUndefined == whole.sawUndefined, "undefined depends on the read sizes")

  let newlines = stream.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
  let expectedLines = newlines + (stream.last.map { $0 == 0x0A ? 0 : 1 } ?? 0)
  require(
    whole.lineCount == expectedLines, "\(whole.lineCount) lines counted, \(expectedLines) read")
  if let latest = whole.latest {
    require(latest.orientation != .undefined, "undefined became the latest orientation")
    require(latest.line >= 1 && latest.line <= whole.lineCount, "latest line \(latest.line)")
  }
  for warning in whole.warnings {
    require(warning.hasPrefix("stdin:"), "a warning without its place: \(warning)")
    let number = warning.dropFirst("stdin:".count).prefix { $0.isASCII && $0.isNumber }
    require(
      Int(number).map { $0 >= 1 && $0 <= whole.lineCount } == true, "warning line in \(warning)")
  }
  return 0
}
