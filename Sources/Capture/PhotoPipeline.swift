import Glibc
import Imaging
import JSON
import OrientCore
import SystemKit

/// What one photo became: printed per photo (`--json`), kept by sessions.
public struct PhotoReport: Sendable {
  /// The file written.
  public var path: String
  /// Its size in bytes.
  public var bytes: Int
  /// Stored width.
  public var width: Int
  /// Stored height.
  public var height: Int
  /// The orientation used and where it came from.
  public var orientation: OrientationReading
  /// `--rotate`.
  public var mode: RotateMode
  /// The turn applied to the stored pixels.
  public var pixelTransform: ImageTransform
  /// How it was applied.
  public var method: RotationMethod
  /// The Orientation tag written, if any.
  public var exifOrientation: Int?
  /// The source name and the frame's format.
  public var source: String
  /// `MJPG`, `YUYV`, `JPEG file`, ...
  public var format: String
  /// Notices (re-encode, trim).
  public var notes: [String]
  /// From the trigger to the frame being taken, in milliseconds.
  public var triggerToFrameMilliseconds: Double
  /// From the frame being taken to the file being durable under its name, in milliseconds.
  public var frameToFileMilliseconds: Double

  /// One JSON object.
  public var json: JSONValue {
    func ms(_ v: Double) -> JSONValue { .number((v * 1000).rounded() / 1000) }
    return .object([
      ("path", .string(path)),
      ("bytes", .number(Double(bytes))),
      ("width", .number(Double(width))),
      ("height", .number(Double(height))),
      ("orientation", .string(orientation.orientation.rawValue)),
      ("orientation_source", .string(orientation.source)),
      ("rotate", .string(mode.rawValue)),
      (
        "rotation",
        .object([
          ("degrees", .number(Double(pixelTransform.clockwiseDegrees))),
          ("mirrored", .bool(pixelTransform.mirrored)),
          ("method", .string(method.rawValue)),
        ])
      ),
      ("exif_orientation", exifOrientation.map { .number(Double($0)) } ?? .null),
      ("source", .string(source)),
      ("format", .string(format)),
      ("notes", .array(notes.map { .string($0) })),
      (
        "timings",
        .object([
          ("trigger_to_frame_ms", ms(triggerToFrameMilliseconds)),
          ("frame_to_file_ms", ms(frameToFileMilliseconds)),
        ])
      ),
    ])
  }
}

/// How photos are turned and saved: the part of `orientcam capture` a session shares.
public struct PhotoSettings: Sendable {
  /// `--rotate`.
  public var rotate: RotateMode
  /// `--sensor-rotation` (clockwise degrees), or what the source reports.
  public var sensorRotation: Int
  /// Frames come mirrored by the camera's pipeline (`FrameSource.sensorCorrection`).
  public var sensorMirrored: Bool
  /// `--mirror`.
  public var mirror: Bool
  /// `-o`.
  public var template: OutputTemplate
  /// `--force`.
  public var overwrite: Bool

  /// Creates settings.
  public init(
    rotate: RotateMode = .both, sensorRotation: Int = 0, sensorMirrored: Bool = false,
    mirror: Bool = false, template: OutputTemplate, overwrite: Bool = false
  ) {
    self.rotate = rotate
    self.sensorRotation = sensorRotation
    self.sensorMirrored = sensorMirrored
    self.mirror = mirror
    self.template = template
    self.overwrite = overwrite
  }
}

/// Frame in, durable upright photo out: plan, turn, tag, name, write atomically.
///
/// Holds the TurboJPEG handles and the `{n}` counter, so a session calls `takePhoto` for each
/// trigger on one instance.
public final class PhotoPipeline {
  /// The settings; a session may change them between photos.
  public var settings: PhotoSettings
  /// The processor (quality, lossless policy).
  public let processor: PhotoProcessor
  private var nextCounter = 1
  /// Folders already cleared of temporary files that killed runs left.
  private var sweptFolders: Set<String> = []

  /// Creates a pipeline.
  public init(settings: PhotoSettings, processor: PhotoProcessor) {
    self.settings = settings
    self.processor = processor
  }

  /// Turns, tags and writes one frame.
  ///
  /// - Parameters:
  ///   - triggerNanoseconds: `CLOCK_MONOTONIC` time of the trigger (the command starting, a
  ///     key press), for the timings.
  /// - Throws: `CaptureError` from processing or writing; nothing is left on disk then.
  public func takePhoto(
    _ frame: Frame, orientation: OrientationReading, source: any FrameSource,
    triggerNanoseconds: Int64
  ) throws(CaptureError) -> PhotoReport {
    let plan = RotationPlan(
      orientation: orientation.orientation, sensorRotation: settings.sensorRotation,
      sensorMirrored: settings.sensorMirrored, mirror: settings.mirror, mode: settings.rotate)
    let photo = try processor.process(
      frame, plan: plan, identity: frame.identity ?? source.identity)
    var notes = photo.notes
    let path = try write(
      photo.bytes, frame: frame, orientation: orientation.orientation, notes: &notes)
    let done = Clock.monotonicNanoseconds()
    return PhotoReport(
      path: path, bytes: photo.bytes.count, width: photo.width, height: photo.height,
      orientation: orientation, mode: settings.rotate, pixelTransform: photo.pixelTransform,
      method: photo.method, exifOrientation: photo.exifOrientation, source: source.name,
      format: frame.formatName, notes: notes,
      triggerToFrameMilliseconds: Double(frame.monotonicNanoseconds - triggerNanoseconds) / 1e6,
      frameToFileMilliseconds: Double(done - frame.monotonicNanoseconds) / 1e6)
  }

  private func write(
    _ bytes: [UInt8], frame: Frame, orientation: Orientation, notes: inout [String]
  ) throws(CaptureError) -> String {
    let template = settings.template
    var counter = nextCounter
    for _ in 0..<100_000 {
      let path = template.expand(
        counter: counter, orientation: orientation, realtimeNanoseconds: frame.realtimeNanoseconds)
      // With {n}, taken names are skipped; the link step below still guards against races.
      if template.hasCounter && exists(path) {
        counter += 1
        continue
      }
      let folder = AtomicFileWriter.parentDirectory(of: path)
      if sweptFolders.insert(folder).inserted {
        for name in AtomicFileWriter.removeStaleTemporaries(in: folder) {
          notes.append("removed \(folder)/\(name), left by an orientcam killed while writing")
        }
      }
      do {
        try AtomicFileWriter.write(bytes, to: path, overwrite: settings.overwrite)
        nextCounter = counter + 1
        return path
      } catch  where error.errno == EEXIST && error.step == "link" && template.hasCounter {
        counter += 1
      } catch {
        throw PhotoPipeline.explain(error, path: path)
      }
    }
    throw CaptureError(.cannotCreate, "\(template.text): no free {n} below \(counter)")
  }

  private func exists(_ path: String) -> Bool {
    var status = stat()
    return lstat(path, &status) == 0
  }

  /// The user-facing error for a failed write.
  static func explain(_ failure: AtomicFileWriter.Failure, path: String) -> CaptureError {
    let reason = String(cString: strerror(failure.errno))
    let folder = AtomicFileWriter.parentDirectory(of: path)
    let nothing = "no file was written"
    if failure.isWritten {
      return CaptureError(
        .ioError,
        "\(path) is written, but syncing the folder \(folder) failed: \(reason); the photo "
          + "may be lost if the system crashes now")
    }
    if failure.step == "sync folder" {
      return CaptureError(
        .ioError,
        "\(path): syncing the folder \(folder) failed: \(reason), so the photo could not be "
          + "made durable; \(nothing)")
    }
    switch failure.errno {
    case EEXIST:
      return CaptureError(
        .cannotCreate,
        "\(path) already exists; \(nothing) (use --force to replace it, or put {n} in -o)")
    case ENOSPC, EDQUOT:
      return CaptureError(.ioError, "\(path): \(reason) in \(folder); \(nothing)")
    case EROFS:
      return CaptureError(
        .cannotCreate,
        "\(path): \(folder) is on a read-only file system; \(nothing) "
          + "(choose another folder with -o)")
    case ENOENT, ENOTDIR:
      return CaptureError(
        .cannotCreate, "\(path): the folder \(folder) does not exist; \(nothing)")
    case EACCES, EPERM:
      return CaptureError(
        .cannotCreate, "\(path): no permission to create files in \(folder); \(nothing)")
    default:
      let kind: CaptureError.Kind = failure.step == "create" ? .cannotCreate : .ioError
      return CaptureError(kind, "\(path): \(failure.step) failed: \(reason); \(nothing)")
    }
  }
}
