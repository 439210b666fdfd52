import Capture
import Glibc
import Imaging
import JPEGKit
import OrientCore
import OrientLog
import SystemKit
import TestSupport
import TestThreads
import Testing

@testable import orientcam

/// A frame as a camera in a device held in `orientation` sees the upright pattern: the scene
/// turned back by the device's turn, at the sensor's fixed size.
func sensorFrame(_ orientation: Orientation, width: Int, height: Int) -> RGBImage {
  let turn = ImageTransform(quarterTurns: (orientation.clockwiseRotation ?? 0) / 90)
  let scene = turn.outputSize(width: width, height: height)
  return TestPattern.render(width: scene.width, height: scene.height, frameNumber: 3)
    .transformed(turn.inverse)
}

/// The capture sources of the matrix.
enum MatrixSource: CustomStringConvertible, CaseIterable {
  /// The pattern as YUYV frames (raw: turned in pixel space).
  case patternYUYV
  /// The pattern as MJPEG frames (lossless path), 1280x720 = MCU multiple.
  case patternMJPEG
  /// A file at an MCU-multiple size.
  case file
  /// Files at 1922x1082 (not MCU multiples) with each --lossless choice.
  case oddStrict
  case oddTrim
  case oddReencode

  var description: String {
    switch self {
    case .patternYUYV: return "pattern/yuyv"
    case .patternMJPEG: return "pattern/mjpeg"
    case .file: return "file 1280x720"
    case .oddStrict: return "file 1922x1082 strict"
    case .oddTrim: return "file 1922x1082 trim"
    case .oddReencode: return "file 1922x1082 reencode"
    }
  }

  var size: (width: Int, height: Int) {
    switch self {
    case .patternYUYV: return (640, 480)
    case .patternMJPEG, .file: return (1280, 720)
    case .oddStrict, .oddTrim, .oddReencode: return (1922, 1082)
    }
  }

  var lossless: LosslessPolicy {
    switch self {
    case .oddStrict: return .strict
    case .oddTrim: return .trim
    default: return .reencode
    }
  }

  var isFile: Bool { ![.patternYUYV, .patternMJPEG].contains(self) }

  func arguments(_ directory: TemporaryDirectory, _ orientation: Orientation) throws -> [String] {
    switch self {
    case .patternYUYV:
      return ["--source", "pattern", "--format", "yuyv", "--resolution", "640x480"]
    case .patternMJPEG:
      return ["--source", "pattern", "--format", "mjpeg", "--resolution", "1280x720"]
    default:
      let jpeg = try JPEGEncoder().encode(
        sensorFrame(orientation, width: size.width, height: size.height), quality: 92)
      let path = directory.file("frame.jpg")
      try writeFile(path, jpeg)
      return ["--source", "file:\(path)", "--lossless", lossless.rawValue]
    }
  }
}

/// Runs `orientcam capture` in-process (the same code the executable runs).
func capture(_ arguments: [String]) throws(CaptureError) -> [PhotoReport] {
  let options = try CaptureOptions(arguments: arguments)
  let environment = CaptureEnvironment(
    logger: Logger(label: "orientcam-test", level: .error), software: "orientcam test")
  return try CaptureCommand.run(options, environment: environment)
}

@Suite(.ownThreads) struct CaptureMatrixTests {
  /// For each orientation and rotate mode, from every source: decode the photo and check its
  /// size, that the pattern's up-marker is at the top once the tag is honoured, the stored
  /// transform, the EXIF Orientation read back with libexif, and the reported method.
  @Test(arguments: Orientation.defined, RotateMode.allCases)
  func uprightPhotos(_ orientation: Orientation, _ mode: RotateMode) throws {
    let turn = ImageTransform(quarterTurns: (orientation.clockwiseRotation ?? 0) / 90)
    let turnsPixels = mode == .both || mode == .pixels
    for source in MatrixSource.allCases {
      let dir = try TemporaryDirectory("matrix")
      let output = dir.file("photo.jpg")
      let arguments =
        try source.arguments(dir, orientation) + [
          "--orientation", orientation.rawValue, "--rotate", mode.rawValue, "-o", output,
        ]
      let (w, h) = source.size
      let what = "\(source), \(orientation), --rotate \(mode)"

      // Strict refuses whenever an odd-sized JPEG must be turned; nothing is written.
      if source == .oddStrict && turnsPixels && turn != .identity {
        let error = #expect(throws: CaptureError.self, "\(what)") { try capture(arguments) }
        #expect(error?.kind == .badData)
        #expect(error?.message.contains("--lossless strict") == true)
        #expect(access(output, F_OK) != 0, "\(what): no output")
        continue
      }

      let reports = try capture(arguments)
      let report = try #require(reports.first)
      let jpeg = readBytes(output)
      let image = try JPEGDecoder().decode(jpeg)
      let exif = try #require(EXIF.read(fromJPEG: jpeg), "\(what): EXIF")

      // Size.
      var expected = turnsPixels ? turn.outputSize(width: w, height: h) : (w, h)
      if source == .oddTrim && turnsPixels {
        expected = LosslessJPEG.trimmedSize(turn, width: w, height: h, subsampling: .s420)
      }
      #expect((image.width, image.height) == expected, "\(what): size")
      #expect((exif.pixelWidth, exif.pixelHeight) == (image.width, image.height), "\(what)")

      // Orientation tag.
      let tag: Int? =
        switch mode {
        case .both: 1
        case .exif: turn.exifOrientation
        case .pixels, .none: nil
        }
      #expect(exif.orientation == tag, "\(what): EXIF Orientation")
      #expect(report.exifOrientation == tag)

      // Upright as a viewer shows it: the marker is at the top.
      let shown = image.transformed(ImageTransform(exifOrientation: tag ?? 1) ?? .identity)
      let seen = PatternProbe.probe(mode == .none ? shown.transformed(turn) : shown)
      #expect(seen.transform == .identity, "\(what): \(seen)")
      if mode != .none { #expect(seen.markerEdge == "top", "\(what)") }

      // How it was turned.
      let method: RotationMethod
      if !turnsPixels || turn == .identity {
        method = .unchanged
      } else if source == .patternYUYV {
        method = .pixels
      } else if source == .oddTrim {
        method = .trimmed
      } else if source == .oddReencode {
        method = .reencoded
      } else {
        method = .lossless
      }
      #expect(report.method == method, "\(what)")
      #expect(report.notes.isEmpty == (method != .trimmed && method != .reencoded), "\(what)")
      #expect(exif.model == (source.isFile ? "file replay" : "test pattern"), "\(what)")
    }
  }
}

/// Reads a file's raw bytes.
func readBytes(_ path: String) -> [UInt8] {
  guard let f = fopen(path, "rb") else { return [] }
  defer { fclose(f) }
  var bytes: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 1 << 16)
  while true {
    let n = fread(&buffer, 1, buffer.count, f)
    if n <= 0 { break }
    bytes += buffer[0..<n]
  }
  return bytes
}

/// A stand-in for the D-Bus client: records what the capture does with it. It reports its
/// first answer at start and each further one when told to `advance()`, on the capture's loop
/// (as the service's `PropertiesChanged` signals would arrive).
final class RecordingSource: OrientationSource {
  let label = "orientd"
  var events: [String] = []
  var answers: [Orientation]
  private(set) var current: OrientationReading?
  private var loop: EventLoop?
  private var changed: ((OrientationReading) -> Void)?
  var hasEnded: Bool { answers.isEmpty && current == nil }
  var problem: CaptureError? {
    current == nil ? CaptureError(.unavailable, "orientd not reachable (test)") : nil
  }
  init(_ answers: [Orientation]) { self.answers = answers }

  func start(on loop: EventLoop, changed: @escaping (OrientationReading) -> Void) {
    events.append("start")
    self.loop = loop
    self.changed = changed
    deliver()
  }

  /// Posts the next answer to the loop.
  func advance() { loop?.post { [weak self] in self?.deliver() } }

  private func deliver() {
    guard !answers.isEmpty else { return }
    let reading = OrientationReading(answers.removeFirst(), source: "orientd")
    current = reading
    events.append("reading \(reading.orientation.rawValue)")
    changed?(reading)
  }

  func stop() { events.append("stop") }
}

@Suite(.ownThreads) struct AutoOrientationHookTests {
  /// `--orientation auto` goes through `CaptureEnvironment.autoOrientation`; the claim is
  /// given up right after the last reading, and each photo follows the reading of its time.
  @Test func providerIsAskedPerPhotoAndReleased() throws {
    let dir = try TemporaryDirectory("auto")
    let provider = RecordingSource([.leftUp, .bottomUp])
    let environment = CaptureEnvironment(
      logger: Logger(label: "orientcam-test", level: .error), software: "orientcam test",
      autoOrientation: { _ in provider }, photoTaken: { _ in provider.advance() })
    let options = try CaptureOptions(arguments: [
      "--source", "pattern", "--count", "2", "-o", dir.file("{n}-{orientation}.jpg"),
    ])
    let reports = try CaptureCommand.run(options, environment: environment)
    #expect(reports.map(\.path) == [dir.file("1-left-up.jpg"), dir.file("2-bottom-up.jpg")])
    #expect(reports.map(\.orientation.source) == ["orientd", "orientd"])
    #expect(
      provider.events.prefix(4) == ["start", "reading left-up", "reading bottom-up", "stop"])
    for report in reports {
      let image = try JPEGDecoder().decode(readBytes(report.path))
      #expect(PatternProbe.probe(image).transform == .identity, "\(report.path)")
    }
  }

  @Test func unavailableFallsBackOnlyWhenAllowed() throws {
    let dir = try TemporaryDirectory("auto")
    let environment = CaptureEnvironment(
      logger: Logger(label: "orientcam-test", level: .critical), software: "orientcam test",
      autoOrientation: { _ in RecordingSource([]) })
    let strict = try CaptureOptions(arguments: ["--source", "pattern", "-o", dir.file("a.jpg")])
    let error = #expect(throws: CaptureError.self) {
      try CaptureCommand.run(strict, environment: environment)
    }
    #expect(error?.kind == .unavailable)
    let lenient = try CaptureOptions(arguments: [
      "--source", "pattern", "--orientation-fallback", "normal", "-o", dir.file("a.jpg"),
    ])
    let reports = try CaptureCommand.run(lenient, environment: environment)
    #expect(reports.first?.orientation == OrientationReading(.normal, source: "fallback"))
  }
}
