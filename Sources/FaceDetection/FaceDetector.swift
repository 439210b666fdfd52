import CFaceDetect
import OrientCore

/// A failure of the face detector or of reading an image, with its message.
public struct FaceDetectionError: Error, Equatable, Sendable, CustomStringConvertible {
  /// What kind of failure, for the exit status.
  public enum Kind: Sendable, Equatable {
    /// The file is missing or cannot be read (exit 66).
    case noInput
    /// The file is not an image that can be decoded (exit 65).
    case badData
    /// The detector itself failed (exit 70).
    case software
  }

  /// What kind of failure.
  public var kind: Kind
  /// What went wrong (with the path, for files).
  public var message: String
  /// Creates an error.
  public init(_ kind: Kind, _ message: String) {
    self.kind = kind
    self.message = message
  }
  /// The message.
  public var description: String { message }
}

/// One upright face found in a picture.
public struct DetectedFace: Equatable, Sendable {
  /// Left edge of its box, in the analysed picture's pixels.
  public var left: Int
  /// Top edge.
  public var top: Int
  /// Box width.
  public var width: Int
  /// Box height.
  public var height: Int
  /// dlib's detection confidence (above 0 is a detection at dlib's own threshold).
  public var confidence: Double
  /// Which of the detector's five HOG filters fired (0 frontal, 1 and 2 looking left and
  /// right, 3 and 4 frontal turned a little).
  public var filter: Int
}

/// dlib's frontal face detector (`dlib::get_frontal_face_detector`, through CFaceDetect's C
/// API `orient_face_detector_new`/`orient_face_detect`). It finds upright faces only (up to
/// about 35-40 degrees of roll); `HeadFinder` turns pictures to find the others. Not for use
/// from two threads at once.
public final class FaceDetector {
  private let raw: OpaquePointer
  /// How the detector was made: from the cache, or built (and why the cache was not used).
  public let origin: String

  /// Loads the detector. Its weights are compiled into dlib's headers, where decoding them
  /// takes about 0.7 s of CPU; the decoded detector is kept in `cachePath` (see
  /// `FaceDetectorCache`) and read from there in about 15 ms. `nil` builds without a cache.
  ///
  /// - Throws: `FaceDetectionError` with dlib's message.
  public init(cachePath: String? = FaceDetectorCache.path()) throws(FaceDetectionError) {
    var message = [CChar](repeating: 0, count: 512)
    var state = ORIENT_FACE_CACHE_NONE
    guard let made = orient_face_detector_new(cachePath, &state, &message, message.count) else {
      throw FaceDetectionError(
        .software, "cannot load dlib's face detector: \(FaceDetector.text(message))")
    }
    raw = made
    let file = cachePath ?? "no cache"
    switch state {
    case ORIENT_FACE_CACHE_LOADED: origin = "read from \(file)"
    case ORIENT_FACE_CACHE_WRITTEN: origin = "built from dlib's headers; cached in \(file)"
    case ORIENT_FACE_CACHE_UNWRITABLE:
      origin = "built from dlib's headers; not cached (\(FaceDetector.text(message)))"
    default: origin = "built from dlib's headers (no cache)"
    }
  }

  deinit { orient_face_detector_free(raw) }

  /// The upright faces in `image`, strongest first (at most `limit`).
  ///
  /// - Parameter threshold: dlib's `adjust_threshold` (0: its own; lower finds more).
  /// - Throws: `FaceDetectionError` with dlib's message.
  public func faces(in image: GrayImage, threshold: Double = 0, limit: Int = 16)
    throws(FaceDetectionError) -> [DetectedFace]
  {
    guard image.width > 0, image.height > 0 else { return [] }
    var found = [orient_face](repeating: orient_face(), count: limit)
    var message = [CChar](repeating: 0, count: 512)
    let count = image.pixels.withUnsafeBufferPointer { pixels in
      orient_face_detect(
        raw, pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(image.width),
        threshold, &found, Int32(limit), &message, message.count)
    }
    guard count >= 0 else { throw FaceDetectionError(.software, FaceDetector.text(message)) }
    return found.prefix(Int(min(count, Int32(limit)))).map {
      DetectedFace(
        left: Int($0.left), top: Int($0.top), width: Int($0.width), height: Int($0.height),
        confidence: $0.confidence, filter: Int($0.filter))
    }
  }

  static func text(_ message: [CChar]) -> String {
    String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}
