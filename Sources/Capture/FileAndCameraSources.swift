import Glibc
import Imaging
import JPEGKit
import OrientLog
import SystemKit
import V4L2Kit

/// JPEG files replayed as camera frames (`file:PATH`, PATH may be a glob), in sorted order.
///
/// A file is treated exactly like a frame from an MJPEG camera. If it carries an Orientation
/// tag, the frame is the picture as that tag shows it (so nothing is ever turned twice), and
/// its Make/Model are kept.
public final class FileSource: FrameSource {
  /// `file:PATTERN`.
  public let name: String
  /// The matching files, sorted.
  public let paths: [String]
  /// Make/Model used when a file has none.
  public let identity = CameraIdentity(make: "orientcam", model: "file replay")
  private var next = 0
  private var previewShown = false
  private let decoder: JPEGDecoder

  /// Expands the pattern.
  ///
  /// - Throws: `CaptureError.noInput` when nothing matches.
  public init(pattern: String) throws(CaptureError) {
    name = "file:\(pattern)"
    let isGlob = pattern.contains { "*?[".contains($0) }
    if isGlob {
      var matches = glob_t()
      defer { globfree(&matches) }
      let rc = glob(pattern, 0, nil, &matches)
      var found: [String] = []
      if rc == 0 {
        for i in 0..<Int(matches.gl_pathc) {
          if let p = matches.gl_pathv[i] { found.append(String(cString: p)) }
        }
      }
      guard !found.isEmpty else {
        throw CaptureError(.noInput, "\(pattern): no file matches this pattern")
      }
      paths = found.sorted()
    } else {
      paths = [pattern]
    }
    do { decoder = try JPEGDecoder() } catch {
      throw CaptureError(.software, "cannot start TurboJPEG: \(error)")
    }
  }

  /// Files not yet delivered.
  public var remainingFrames: Int? { paths.count - next }

  /// Reads the next file and checks that it is a complete JPEG.
  ///
  /// - Throws: `CaptureError.noInput` (missing or unreadable) or `.badData` (not a JPEG,
  ///   truncated).
  public func nextFrame() throws(CaptureError) -> Frame {
    guard next < paths.count else {
      throw CaptureError(.noInput, "\(name): no more files (\(paths.count) matched)")
    }
    let path = paths[next]
    next += 1
    let bytes = try readInputFile(path)
    let info: JPEGInfo
    do { info = try decoder.header(bytes) } catch {
      throw CaptureError(.badData, "\(path): not a readable JPEG (\(error.message))")
    }
    guard JPEGSegments.endsWithEOI(bytes) else {
      throw CaptureError(.badData, "\(path): the JPEG is truncated (no end-of-image marker)")
    }
    let exif = EXIF.read(fromJPEG: bytes)
    let stored = exif?.orientation.flatMap { ImageTransform(exifOrientation: $0) } ?? .identity
    var frame = Frame(
      content: .jpeg(bytes), width: info.width, height: info.height,
      monotonicNanoseconds: Clock.monotonicNanoseconds(),
      realtimeNanoseconds: Clock.realtimeNanoseconds(), storedTransform: stored, label: path,
      formatName: "JPEG file")
    if let make = exif?.make, let model = exif?.model {
      frame.identity = CameraIdentity(make: make, model: model)
    }
    return frame
  }

  /// The first file, read again (not used up), until it could be shown once; a file that
  /// cannot be read shows nothing (the photo taken from it reports why).
  public func previewFrame() -> Frame? {
    guard !previewShown, let first = paths.first,
      let frame = try? FileSource(pattern: first).nextFrame()
    else { return nil }
    previewShown = true
    return frame
  }

  /// Nothing to release.
  public func close() {}
}

/// Reads a whole input file (`fstat` + `pread`), with errors for the user.
func readInputFile(_ path: String, limit: Int = 512 << 20) throws(CaptureError) -> [UInt8] {
  let fd: FileDescriptor
  do { fd = try FileDescriptor(path: path) } catch {
    throw CaptureError(.noInput, "\(path): cannot open (\(error.reason))")
  }
  var status = stat()
  guard fstat(fd.rawValue, &status) == 0 else {
    throw CaptureError(.noInput, "\(path): cannot stat (\(String(cString: strerror(errno))))")
  }
  guard status.st_mode & S_IFMT != S_IFDIR else {
    throw CaptureError(.noInput, "\(path): is a directory, not a JPEG file")
  }
  let size = Int(status.st_size)
  guard size <= limit else {
    throw CaptureError(.badData, "\(path): \(size) bytes is too large for a photo")
  }
  var bytes = [UInt8](repeating: 0, count: size)
  var done = 0
  while done < size {
    let n: Int
    do {
      n = try bytes.withUnsafeMutableBytes { raw in
        try fd.pread(
          into: UnsafeMutableRawBufferPointer(rebasing: raw[done...]), offset: done)
      }
    } catch let error as SystemError {
      throw CaptureError(.noInput, "\(path): cannot read (\(error.reason))")
    } catch {
      throw CaptureError(.noInput, "\(path): cannot read (\(error))")
    }
    if n == 0 { break }
    done += n
  }
  if done < size { bytes.removeSubrange(done...) }
  return bytes
}

/// A V4L2 camera, negotiated and streaming (see `V4L2Kit`). Released by `close()`.
public final class CameraSource: FrameSource {
  /// The device node.
  public let name: String
  /// USB manufacturer (or the driver) and the card name.
  public let identity: CameraIdentity
  /// The device as described before streaming.
  public let device: DeviceDescription
  /// The negotiated pixel format.
  public let format: PixelFormat
  /// The driver's format.
  public let active: ActiveFormat
  /// Unlimited.
  public var remainingFrames: Int? { nil }
  private var stream: V4L2Stream?
  private let handle: V4L2Device
  private let decoder: JPEGDecoder

  static func isCompleteJPEG(_ bytes: [UInt8], _ decoder: JPEGDecoder) -> Bool {
    JPEGSegments.endsWithEOI(bytes) && (try? decoder.header(bytes)) != nil
  }

  /// The mounting correction the driver reports, converted to degrees clockwise
  /// (`V4L2_CID_CAMERA_SENSOR_ROTATION` is counter-clockwise), or `nil`.
  public var reportedSensorRotation: Int? {
    device.sensorRotation.map { ((360 - $0 % 360) % 360) / 90 * 90 }
  }

  /// Opens a camera (or the first one), applies the front-camera guard before streaming,
  /// negotiates a format, starts streaming and drops `skip` warm-up frames.
  ///
  /// - Throws: `CaptureError.unavailable` for a missing, busy, unsuitable or refused camera.
  public init(
    path: String?, resolution: FrameSize?, formats: [PixelFormat], skip: Int,
    minimum: FrameSize?, logger: Logger
  ) throws(CaptureError) {
    do { decoder = try JPEGDecoder() } catch {
      throw CaptureError(.software, "cannot start TurboJPEG: \(error)")
    }
    var others: [DeviceDescription]?
    let chosenPath: String
    if let path {
      chosenPath = path
    } else {
      let found = CameraDiscovery.cameras()
      others = found.cameras
      guard let first = found.cameras.first else {
        let reasons = found.failures.map(\.description).joined(separator: "; ")
        throw CaptureError(
          .unavailable,
          "no camera found (no usable /dev/video* capture device"
            + (reasons.isEmpty ? "" : ": \(reasons)")
            + "); use --source pattern or file:PATH to try orientcam without one")
      }
      chosenPath = first.path
    }
    do {
      handle = try V4L2Device(path: chosenPath)
      device = try CameraDiscovery.describe(
        handle, sysfsPosition: CameraDiscovery.firmwarePosition(ofDevice: chosenPath))
      if let minimum {
        let candidates = others ?? CameraDiscovery.cameras().cameras
        try Negotiation.requireMinimum(device, minimum: minimum, others: candidates)
      }
      (format, active) = try Negotiation.negotiate(
        handle, description: device, preferences: formats, resolution: resolution)
      logger.debug(
        "\(chosenPath): \(device.capability.card), \(active.fourCC) \(active.width)x\(active.height)"
      )
      stream = try V4L2Stream(device: handle, format: active)
    } catch {
      throw CaptureError(error)
    }
    name = chosenPath
    let card = device.capability.card
    let manufacturer =
      CameraSource.usbManufacturer(of: chosenPath) ?? device.capability.driver
    identity = CameraIdentity(make: manufacturer, model: card)
    for _ in 0..<skip { _ = try nextFrame() }
  }

  deinit { close() }

  static func usbManufacturer(of path: String) -> String? {
    guard let node = path.split(separator: "/").last else { return nil }
    let base = "/sys/class/video4linux/\(node)/device"
    return Sysfs.readIfPresent("\(base)/../manufacturer")
      ?? Sysfs.readIfPresent("\(base)/manufacturer")
  }

  /// Waits for the next frame.
  public func nextFrame() throws(CaptureError) -> Frame {
    guard let stream else { throw CaptureError(.software, "\(name): frame requested after close") }
    var captured: CapturedFrame
    var attempts = 0
    while true {
      do { captured = try stream.nextFrame() } catch { throw streamingError(error) }
      // USB cameras now and then deliver a cut-off MJPEG frame; take the next one.
      guard format.isCompressed, !CameraSource.isCompleteJPEG(captured.bytes, decoder) else {
        break
      }
      attempts += 1
      guard attempts < 5 else {
        throw CaptureError(
          .ioError, "\(name): \(attempts) damaged \(active.fourCC) frames in a row")
      }
    }
    return try frame(from: captured)
  }

  /// The descriptor that becomes readable when a frame is ready, for an event loop (a
  /// session); `nil` after `close()`.
  public var pollDescriptor: Int32? { stream?.pollDescriptor }

  /// Streaming, on `pollDescriptor`; on demand (failing) once closed.
  public var delivery: FrameDelivery {
    stream.map { .streaming(descriptor: $0.pollDescriptor) } ?? .onDemand
  }

  /// The negotiated size.
  public var frameSize: (width: Int, height: Int)? { (active.width, active.height) }

  /// The next frame if one is ready, without waiting (`VIDIOC_DQBUF` on the non-blocking
  /// descriptor); damaged MJPEG frames are skipped (`nil`).
  ///
  /// - Throws: `CaptureError` when the camera fails or went away.
  public func frameIfReady() throws(CaptureError) -> Frame? {
    guard let stream else { throw CaptureError(.software, "\(name): frame requested after close") }
    let captured: CapturedFrame?
    do { captured = try stream.dequeueIfReady() } catch { throw streamingError(error) }
    guard let captured else { return nil }
    if format.isCompressed && !CameraSource.isCompleteJPEG(captured.bytes, decoder) { return nil }
    return try frame(from: captured)
  }

  /// A failure while streaming: a device that is gone (`ENODEV`, `ENXIO`, `ENOENT`: unplugged,
  /// driver unbound) is said so, not as "no such camera", which is what opening one says.
  private func streamingError(_ error: V4L2Error) -> CaptureError {
    if let code = error.errno, [ENODEV, ENXIO, ENOENT].contains(code) {
      let reason = String(cString: strerror(code))
      return CaptureError(
        .unavailable,
        "\(name): the camera went away while streaming (\(reason): unplugged, or its driver gone)")
    }
    return CaptureError(error)
  }

  private func frame(from captured: CapturedFrame) throws(CaptureError) -> Frame {
    let monoNow = Clock.monotonicNanoseconds()
    let realNow = Clock.realtimeNanoseconds()
    // Drivers stamp frames with CLOCK_MONOTONIC; fall back to "now" for anything else.
    let age = monoNow - captured.timestampNanoseconds
    let taken = (0..<10_000_000_000).contains(age) ? captured.timestampNanoseconds : monoNow
    let content: Frame.Content
    if format.isCompressed {
      content = .jpeg(captured.bytes)
    } else {
      do {
        content = .raw(
          try RawFrame(
            format: format, width: active.width, height: active.height,
            bytesPerLine: active.bytesPerLine, bytes: captured.bytes))
      } catch {
        throw CaptureError(.ioError, "\(name): frame \(captured.sequence): \(error)")
      }
    }
    return Frame(
      content: content, width: active.width, height: active.height, monotonicNanoseconds: taken,
      realtimeNanoseconds: realNow - (monoNow - taken),
      label: "\(name) frame \(captured.sequence)", formatName: active.fourCC.description)
  }

  /// Stops streaming and closes the device.
  public func close() {
    stream?.stop()
    stream = nil
    handle.close()
  }
}
