import Capture
import FaceDetection
import Glibc
import Imaging
import JPEGKit
import OrientLog
import V4L2Kit

/// The camera orientd-face looks through: any of Capture's `FrameSource`s.
///
/// - `auto`, `v4l2`: the first V4L2 camera facing the user (else the first camera);
///   `v4l2:/dev/videoN`: that one. A size near 640x480 is asked for (a face at arm's length
///   fills much of it; larger frames only cost time), raw formats first (their luma needs no
///   decoding).
/// - `file:DIR` or `file:GLOB`: JPEG files as frames, in sorted order (Capture's `FileSource`),
///   the file camera the tests and benchmarks use.
/// - `libcamera[:ID]`: the place for Capture's libcamera source once it exists; until then
///   this answers that it is not built.
enum FaceCamera {
  /// Formats in order of preference: raw luma is free, JPEG must be decoded.
  static let formats: [PixelFormat] = [.yuyv, .nv12, .mjpeg, .jpeg, .rgb24, .bgr24]

  /// Opens the camera `spec` names, streaming.
  ///
  /// - Throws: `CaptureError` (`cameraBusy` when another program holds it).
  static func open(_ spec: String, logger: Logger) throws(CaptureError) -> FrameSource {
    if spec.hasPrefix("file:") {
      var pattern = String(spec.dropFirst(5))
      if isDirectory(pattern) { pattern = (pattern.hasSuffix("/") ? pattern : pattern + "/") + "*" }
      return try FileSource(pattern: pattern)
    }
    if spec == "libcamera" || spec.hasPrefix("libcamera:") {
      // Capture's libcamera source (a C++ target over libcamera, being written) plugs in here
      // as another FrameSource; nothing else in orientd-face changes.
      throw CaptureError(
        .unavailable, "\(spec): this orientd-face has no libcamera source yet; use v4l2")
    }
    let path: String
    if spec.hasPrefix("v4l2:") {
      path = String(spec.dropFirst(5))
    } else {
      let found = CameraDiscovery.cameras()
      guard
        let camera = found.cameras.first(where: { $0.position == .front }) ?? found.cameras.first
      else {
        let reasons = found.failures.map(\.description).joined(separator: "; ")
        if found.failures.contains(where: { $0.kind == .busy }) {
          var error = CaptureError(.unavailable, "no free camera: \(reasons)")
          error.cameraBusy = true
          throw error
        }
        throw CaptureError(
          .unavailable, "no camera found" + (reasons.isEmpty ? "" : " (\(reasons))"))
      }
      path = camera.path
    }
    let size: FrameSize?
    do {
      size = preferredSize(try CameraDiscovery.describe(path: path))
    } catch {
      throw CaptureError(error)
    }
    return try CameraSource(
      path: path, resolution: size, formats: formats, skip: 0, minimum: nil, logger: logger)
  }

  /// The size to ask for: in the most preferred format that has one, the smallest size at
  /// least 640 wide (else its largest); `nil` leaves the choice to the negotiation.
  static func preferredSize(_ device: DeviceDescription) -> FrameSize? {
    let target = FrameSize(width: 640, height: 480)
    for format in formats {
      guard let description = device.formats.first(where: { $0.fourCC == format.fourCC }) else {
        continue
      }
      switch description.sizes {
      case .discrete(let sizes):
        let usable = sizes.filter { format.supports(width: $0.width, height: $0.height) }
        if let size = usable.filter({ $0.width >= target.width }).min() ?? usable.max() {
          return size
        }
      case .stepwise:
        if description.sizes.contains(target) { return target }
        if let largest = description.sizes.largest, largest.width < target.width {
          return largest
        }
      }
    }
    return nil
  }

  static func isDirectory(_ path: String) -> Bool {
    var status = stat()
    return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
  }

  /// A frame as the detector reads it: the luma, shown as a file's Orientation tag says.
  static func grayImage(_ frame: Frame, decoder: JPEGDecoder) throws(CaptureError) -> GrayImage {
    switch frame.content {
    case .jpeg(let bytes):
      do {
        return GrayImage(try decoder.decode(bytes)).transformed(frame.storedTransform)
      } catch {
        throw CaptureError(error, about: frame.label)
      }
    case .raw(let raw):
      return GrayImage(raw)
    }
  }
}
