import FaceDetection
import JSON
import OrientCore
import SystemKit

/// `orientd-face detect [--json] FILE...`: which way the head points in each picture.
enum DetectCommand {
  /// Runs over every file; a file that fails is reported on stderr and the others still run.
  ///
  /// - Returns: 0, or the status of the first failure (66 unreadable, 65 not decodable, 70
  ///   the detector).
  static func run(_ options: FaceOptions.DetectOptions) -> ExitStatus {
    let finder: HeadFinder
    do {
      finder = HeadFinder(detector: try FaceDetector())
    } catch {
      StandardStream.error.writeLine("orientd-face: \(error.message)")
      return .software
    }
    var status = ExitStatus.success
    for path in options.files {
      do {
        let finding = try finder.find(in: try ImageFile.load(path))
        StandardStream.output.writeLine(line(path, finding, json: options.json))
      } catch {
        StandardStream.error.writeLine("orientd-face: \(error.message)")
        if status == .success { status = exitStatus(error.kind) }
      }
    }
    return status
  }

  /// The exit status for a failure.
  static func exitStatus(_ kind: FaceDetectionError.Kind) -> ExitStatus {
    switch kind {
    case .noInput: return .noInput
    case .badData: return .dataError
    case .software: return .software
    }
  }

  /// One output line.
  static func line(_ path: String, _ finding: HeadFinding, json: Bool) -> String {
    if json {
      return JSONValue.object([
        ("file", .string(path)),
        ("faces", .number(Double(finding.faceCount))),
        ("head_toward", finding.headToward.map { .string($0.rawValue) } ?? .null),
        ("confidence", finding.best?.strongest.map { .number(rounded($0)) } ?? .null),
      ]).encoded()
    }
    guard let edge = finding.headToward else { return "\(path): no face" }
    let count = finding.faceCount
    return "\(path): \(count) face\(count == 1 ? "" : "s"), head toward \(edge)"
  }

  static func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
}
