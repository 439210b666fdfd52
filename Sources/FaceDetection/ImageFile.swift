import CFaceDetect
import Glibc
import Imaging
import JPEGKit

/// Image files for `orientd-face detect` and the file camera: JPEG through TurboJPEG (shown as
/// its EXIF Orientation tag says, as a viewer shows it), PNG and BMP through dlib's
/// `load_image`.
public enum ImageFile {
  /// The largest file read (a photo is far smaller).
  public static let maxBytes = 256 << 20

  /// Reads and decodes `path` to grayscale.
  ///
  /// - Throws: `FaceDetectionError` `.noInput` for a missing, unreadable or non-regular file,
  ///   `.badData` for one that is not a JPEG, PNG or BMP image or is damaged; each message
  ///   starts with the path.
  public static func load(_ path: String) throws(FaceDetectionError) -> GrayImage {
    let bytes = try read(path)
    if bytes.starts(with: [0xFF, 0xD8]) {
      let decoder: JPEGDecoder
      let image: RGBImage
      do {
        decoder = try JPEGDecoder()
        image = try decoder.decode(bytes)
      } catch {
        throw FaceDetectionError(.badData, "\(path): not a readable JPEG (\(error.message))")
      }
      let stored = EXIF.read(fromJPEG: bytes)?.orientation.flatMap {
        ImageTransform(exifOrientation: $0)
      }
      return GrayImage(image).transformed(stored ?? .identity)
    }
    let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    guard bytes.starts(with: png) || bytes.starts(with: [0x42, 0x4D]) else {
      throw FaceDetectionError(.badData, "\(path): not a JPEG, PNG or BMP image")
    }
    var pixels: UnsafeMutablePointer<UInt8>?
    var width: Int32 = 0
    var height: Int32 = 0
    var message = [CChar](repeating: 0, count: 512)
    guard orient_face_load_gray(path, &pixels, &width, &height, &message, message.count) == 0,
      let pixels
    else {
      throw FaceDetectionError(.badData, "\(path): cannot decode (\(FaceDetector.text(message)))")
    }
    defer { orient_face_free_pixels(pixels) }
    let count = Int(width) * Int(height)
    return GrayImage(
      width: Int(width), height: Int(height),
      pixels: Array(UnsafeBufferPointer(start: pixels, count: count)))
  }

  /// The whole file.
  static func read(_ path: String) throws(FaceDetectionError) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else {
      throw FaceDetectionError(
        .noInput, "\(path): cannot open (\(String(cString: strerror(errno))))")
    }
    defer { close(fd) }
    var status = stat()
    guard fstat(fd, &status) == 0 else {
      throw FaceDetectionError(
        .noInput, "\(path): cannot stat (\(String(cString: strerror(errno))))")
    }
    guard status.st_mode & S_IFMT == S_IFREG else {
      throw FaceDetectionError(.noInput, "\(path): not a regular file")
    }
    guard Int(status.st_size) <= maxBytes else {
      throw FaceDetectionError(
        .badData, "\(path): \(status.st_size) bytes is too large for a picture")
    }
    var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
    var done = 0
    while done < bytes.count {
      let n = bytes.withUnsafeMutableBytes { raw in
        pread(fd, raw.baseAddress.map { $0 + done }, raw.count - done, off_t(done))
      }
      if n < 0 && errno == EINTR { continue }
      guard n >= 0 else {
        throw FaceDetectionError(
          .noInput, "\(path): cannot read (\(String(cString: strerror(errno))))")
      }
      if n == 0 { break }
      done += n
    }
    if done < bytes.count { bytes.removeSubrange(done...) }
    return bytes
  }
}
