// JPEG files as `orientcam capture --source file:PATH` takes them: `Capture.FileSource` reads
// the file (TurboJPEG header, end-of-image check, the file's own EXIF through libexif), then
// `Capture.PhotoProcessor` turns it (lossless transform, trim or re-encode) and writes the new
// EXIF block into the marker segments (`JPEGKit.JPEGSegments`).
//
// Input: byte 0 picks the plan (bits 0-1 orientation, 2-3 --lossless, 4-5 --rotate, 6
// --mirror); the rest is the file.
//
// Invariants: a photo that comes out is a complete JPEG that TurboJPEG reads at the size the
// photo reports, ending with EOI; its EXIF (read back with libexif) holds the Orientation tag
// the plan asked for and the pixel size; a failure is a data error with a message naming the
// file, never a crash.
import Capture
import Glibc
import Imaging
import JPEGKit
import OrientCore

private let path: String = {
  var template = Array("/tmp/orientcam-fuzz-XXXXXX".utf8CString)
  let fd = mkstemp(&template)
  guard fd >= 0 else { fatalError("mkstemp failed") }
  close(fd)
  return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}()

/// libFuzzer's entry point: checks one input against the invariants above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJPEGFile(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = inputBytes(data, size)
  guard let first = bytes.first else { return 0 }
  let file = Array(bytes.dropFirst())
  // A few hundred bytes of arithmetic-coded JPEG may claim 200 megapixels, under
  // `JPEGLimits.maxPixels`: decoding one took 10 s and 1.5 GB under ASan, and with such a seed
  // a 20 s run never got past its corpus. Big pictures take the same code path as small ones
  // (the limit itself is JPEGKitTests'), so the fuzzer spends its time on pictures of at most
  // 4 megapixels.
  if let info = try? JPEGDecoder().header(file), info.width * info.height > 1 << 22 { return 0 }
  writeFile(file)
  let plan = RotationPlan(
    orientation: Orientation.defined[Int(first & 3)], sensorRotation: 0,
    mirror: first & 64 != 0, mode: RotateMode.allCases[Int(first >> 4) & 3])
  let lossless = LosslessPolicy.allCases[min(2, Int(first >> 2) & 3)]

  let frame: Frame
  do {
    let source = try FileSource(pattern: path)
    frame = try source.nextFrame()
  } catch {
    require(error.kind == .badData || error.kind == .noInput, "file error \(error.kind): \(error)")
    require(error.message.contains(path), "the error does not name the file: \(error)")
    return 0
  }
  // A header may say 0x0 (height defined later by a DNL marker, which TurboJPEG cannot
  // decode): the frame is delivered and processing must then refuse it.
  require(frame.width >= 0 && frame.height >= 0, "a \(frame.width)x\(frame.height) frame")

  let photo: ProcessedPhoto
  do {
    let processor = try PhotoProcessor(quality: 75, lossless: lossless, software: "fuzz")
    photo = try processor.process(
      frame, plan: plan, identity: CameraIdentity(make: "Fuzz", model: "File"))
  } catch {
    require(error.kind == .badData, "processing error \(error.kind): \(error)")
    require(error.message.contains(path), "the error does not name the file: \(error)")
    return 0
  }
  require(photo.width > 0 && photo.height > 0, "a \(photo.width)x\(photo.height) photo")
  let out = photo.bytes
  let info: JPEGInfo
  do {
    info = try JPEGDecoder().header(out)
  } catch {
    require(false, "the photo is not a readable JPEG: \(error)")
    return 0
  }
  require(
    info.width == photo.width && info.height == photo.height,
    "photo says \(photo.width)x\(photo.height), the JPEG is \(info.width)x\(info.height)")
  require(JPEGSegments.endsWithEOI(out), "the photo does not end with EOI")
  let exif = EXIF.read(fromJPEG: out)
  require(exif != nil, "the photo has no readable EXIF")
  require(
    exif?.orientation == photo.exifOrientation,
    "EXIF Orientation \(String(describing: exif?.orientation))")
  require(exif?.pixelWidth == photo.width && exif?.pixelHeight == photo.height, "EXIF pixel size")
  require(exif?.make == "Fuzz" || frame.identity != nil, "EXIF Make")
  if photo.method == .lossless || photo.method == .unchanged {
    let turned = photo.pixelTransform.swapsDimensions
    require(
      (turned ? (photo.height, photo.width) : (photo.width, photo.height)) == (
        frame.width, frame.height
      ),
      "a lossless turn changed the size")
  }
  return 0
}

private func writeFile(_ bytes: [UInt8]) {
  let fd = open(path, O_WRONLY | O_TRUNC)
  guard fd >= 0 else { fatalError("cannot open \(path)") }
  defer { close(fd) }
  var done = 0
  while done < bytes.count {
    let n = bytes.withUnsafeBytes { raw in
      write(fd, raw.baseAddress.map { $0 + done }, raw.count - done)
    }
    guard n > 0 else { fatalError("cannot write \(path)") }
    done += n
  }
}
