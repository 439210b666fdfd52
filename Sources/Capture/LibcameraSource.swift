import Glibc
import Imaging
import JPEGKit
import LibcameraKit
import OrientLog
import SystemKit
import V4L2Kit

/// A camera through libcamera (`--source libcamera[:ID]`): the cameras plain V4L2 cannot drive
/// (raw sensors behind an ISP: Raspberry Pi, the PinePhone Pro's rkisp1, IPU3 laptops) and
/// UVC webcams. Streams its still-capture stream; completed requests make an eventfd readable,
/// so a session waits for frames on its event loop as for a V4L2 camera.
///
/// Usable from any program (orientd-face opens a phone's front camera this way): it needs only
/// a logger. Released by `close()`.
public final class LibcameraSource: FrameSource {
  /// `libcamera:ID`.
  public let name: String
  /// Make "libcamera" (libcamera reports no maker), Model `properties::Model` (or the id).
  public let identity: CameraIdentity
  /// What the camera says about itself.
  public let info: LibcameraCameraInfo
  /// The accepted stream configuration.
  public let configuration: LibcameraConfiguration
  /// The delivered layout.
  public let format: PixelFormat
  /// Unlimited.
  public var remainingFrames: Int? { nil }
  private var manager: LibcameraManager?
  private var camera: LibcameraCamera?
  private let decoder: JPEGDecoder
  private let logger: Logger

  /// How long `nextFrame()` waits: ISP pipelines start slower than a webcam.
  static let frameTimeoutMilliseconds = 10_000

  /// Starts libcamera, chooses the camera (`id`: an id, or a number from 1; `nil`: the first),
  /// applies the `--min-resolution` guard before acquiring it, configures the first of
  /// `formats` it offers at `resolution` (default: the largest), starts streaming and drops
  /// `skip` warm-up frames.
  ///
  /// - Throws: `CaptureError.unavailable` for no camera, a busy or refused one, no usable
  ///   format or size; `.usage` when none of `formats` exists in libcamera.
  public init(
    id: String?, resolution: FrameSize?, formats: [PixelFormat], skip: Int,
    minimum: FrameSize?, logger: Logger
  ) throws(CaptureError) {
    do { decoder = try JPEGDecoder() } catch {
      throw CaptureError(.software, "cannot start TurboJPEG: \(error)")
    }
    self.logger = logger
    let codes = LibcameraFormats.fourCCs(for: formats)
    guard !codes.isEmpty else {
      throw CaptureError(
        .usage,
        "--format \(formats.map(\.rawValue).joined(separator: ",")): libcamera delivers none of "
          + "these (it has mjpeg, yuyv, nv12, rgb24, bgr24)")
    }
    LibcameraManager.routeLog(verbose: logger.isEnabled(.debug))
    let manager: LibcameraManager
    do { manager = try LibcameraManager() } catch {
      throw CaptureError(.unavailable, "libcamera: \(error.message)")
    }
    let chosen = try LibcameraSource.choose(manager.cameras, id: id)
    if let minimum {
      try LibcameraSource.requireMinimum(chosen, minimum: minimum, others: manager.cameras)
    }
    let camera: LibcameraCamera
    let configuration: LibcameraConfiguration
    do {
      camera = try manager.acquire(chosen)
      configuration = try camera.configure(
        fourCCs: codes,
        size: resolution.map { LibcameraSize(width: $0.width, height: $0.height) })
    } catch {
      throw LibcameraSource.explain(error)
    }
    let size = FrameSize(width: configuration.size.width, height: configuration.size.height)
    if let resolution, size != resolution {
      throw CaptureError(
        .unavailable,
        "libcamera:\(chosen.id) cannot deliver \(resolution): libcamera adjusts it to \(size) "
          + "for this camera; ask for that with --resolution, or leave it out for the largest")
    }
    guard
      let layout = LibcameraFormats.pixelFormat(
        fourCC: configuration.fourCC, modifier: configuration.modifier),
      layout.supports(width: size.width, height: size.height)
    else {
      throw CaptureError(
        .unavailable, "libcamera:\(chosen.id): libcamera chose a format orientcam cannot read")
    }
    do { try camera.start() } catch { throw LibcameraSource.explain(error) }
    self.manager = manager
    self.camera = camera
    self.info = chosen
    self.configuration = configuration
    self.format = layout
    name = "libcamera:\(chosen.id)"
    identity = CameraIdentity(make: "libcamera", model: chosen.model ?? chosen.id)
    logger.debug(
      "\(name): libcamera \(manager.version), \(layout.fourCC) (libcamera "
        + "\(LibcameraSource.formatName(configuration, in: chosen))) \(size), stride "
        + "\(configuration.stride), \(configuration.bufferCount) buffers, pipeline applied "
        + "\(configuration.applied)")
    for _ in 0..<skip { _ = try nextFrame() }
  }

  deinit { close() }

  /// The camera `id` names: an exact id, else a number from 1 in libcamera's order; the first
  /// without `id`.
  ///
  /// - Throws: `CaptureError.unavailable` naming the cameras there are.
  public static func choose(_ cameras: [LibcameraCameraInfo], id: String?) throws(CaptureError)
    -> LibcameraCameraInfo
  {
    guard !cameras.isEmpty else {
      throw CaptureError(
        .unavailable,
        "libcamera found no camera (it lists only devices udev has set up, and only those a "
          + "pipeline handler supports); see orientcam list, or use --source v4l2")
    }
    guard let id else { return cameras[0] }
    if let match = cameras.first(where: { $0.id == id }) { return match }
    if let number = Int(id), (1...cameras.count).contains(number) { return cameras[number - 1] }
    let known = cameras.enumerated().map { "\($0.offset + 1): \($0.element.id)" }
    throw CaptureError(
      .unavailable,
      "no libcamera camera \"\(id)\"; there are \(known.joined(separator: ", ")) "
        + "(--source libcamera:ID or libcamera:N)")
  }

  /// The front-camera guard: refuses a camera whose largest size is below `minimum`, naming
  /// the ones that pass.
  static func requireMinimum(
    _ camera: LibcameraCameraInfo, minimum: FrameSize, others: [LibcameraCameraInfo]
  ) throws(CaptureError) {
    func size(_ c: LibcameraCameraInfo) -> FrameSize? {
      c.largestSize.map { FrameSize(width: $0.width, height: $0.height) }
    }
    guard let best = size(camera), !best.covers(minimum) else { return }
    let passing = others.filter { size($0)?.covers(minimum) == true }.map {
      "--source libcamera:\($0.id) (\($0.model ?? "camera"), \(size($0).map(\.description) ?? "?"))"
    }
    let position = camera.location.map { " \($0.name)" } ?? ""
    throw CaptureError(
      .unavailable,
      "refusing the\(position) camera libcamera:\(camera.id): its best resolution is \(best), "
        + "below --min-resolution \(minimum); "
        + (passing.isEmpty
          ? "no libcamera camera qualifies" : "use \(passing.joined(separator: " or "))"))
  }

  /// A libcamera failure as orientcam reports it: a camera that went away, is busy or cannot be
  /// configured is unavailable (69), a failing buffer an I/O error (74).
  static func explain(_ error: LibcameraError) -> CaptureError {
    switch error.code {
    case .ioError, Errno(rawValue: ENOMEM): return CaptureError(.ioError, error.message)
    default: return CaptureError(.unavailable, error.message)
    }
  }

  private static func formatName(
    _ configuration: LibcameraConfiguration, in camera: LibcameraCameraInfo
  ) -> String {
    let match = camera.formats.first {
      $0.fourCC == configuration.fourCC && $0.modifier == configuration.modifier
    }
    return match?.name ?? "?"
  }

  /// `properties::Rotation` as a clockwise correction, or `nil` when libcamera reports none.
  public var reportedSensorRotation: Int? { info.rotation.map { (360 - $0 % 360) % 360 } }

  /// What still has to be done for the mounting (`LibcameraOrientation`): the reported
  /// Rotation or `override`, less what the pipeline already did.
  public func sensorCorrection(override: Int?) -> SensorCorrection {
    let correction = LibcameraOrientation.correction(
      location: info.location, rotation: info.rotation, override: override,
      applied: configuration.applied)
    return SensorCorrection(
      rotation: correction.remaining.clockwiseDegrees, mirrored: correction.remaining.mirrored,
      origin: override == nil ? "libcamera" : "--sensor-rotation")
  }

  /// Location front.
  public var facesUser: Bool { info.location == .front }

  /// Streaming, on the eventfd; on demand (failing) once closed.
  public var delivery: FrameDelivery {
    camera?.eventDescriptor.map { .streaming(descriptor: $0) } ?? .onDemand
  }

  /// The configured size.
  public var frameSize: (width: Int, height: Int)? {
    (configuration.size.width, configuration.size.height)
  }

  /// Waits for the next good frame.
  ///
  /// - Throws: `CaptureError` when none comes in time or the camera fails.
  public func nextFrame() throws(CaptureError) -> Frame {
    guard let camera else { throw CaptureError(.software, "\(name): frame requested after close") }
    let deadline =
      Clock.monotonicNanoseconds() + Int64(LibcameraSource.frameTimeoutMilliseconds) * 1_000_000
    while true {
      let left = Int((deadline - Clock.monotonicNanoseconds()) / 1_000_000)
      let taken: LibcameraFrame?
      do {
        taken = left > 0 ? try camera.waitForFrame(timeoutMilliseconds: left) : nil
      } catch {
        throw LibcameraSource.explain(error)
      }
      guard let taken else {
        throw CaptureError(
          .unavailable,
          "\(name): no frame within \(LibcameraSource.frameTimeoutMilliseconds) ms; is another "
            + "program using the camera?")
      }
      if let frame = try frame(from: taken) { return frame }
    }
  }

  /// The next good frame if one is ready, without waiting; damaged or cancelled ones are
  /// skipped (`nil`).
  public func frameIfReady() throws(CaptureError) -> Frame? {
    guard let camera else { throw CaptureError(.software, "\(name): frame requested after close") }
    while true {
      let taken: LibcameraFrame?
      do { taken = try camera.takeFrame() } catch { throw LibcameraSource.explain(error) }
      guard let taken else { return nil }
      if let frame = try frame(from: taken) { return frame }
    }
  }

  private func frame(from taken: LibcameraFrame) throws(CaptureError) -> Frame? {
    guard taken.status == .success, let first = taken.planes.first else { return nil }
    let monoNow = Clock.monotonicNanoseconds()
    let realNow = Clock.realtimeNanoseconds()
    // libcamera passes on the driver's CLOCK_MONOTONIC stamps; "now" for anything else.
    let age = monoNow - taken.timestampNanoseconds
    let stamp = (0..<10_000_000_000).contains(age) ? taken.timestampNanoseconds : monoNow
    let (width, height) = (configuration.size.width, configuration.size.height)
    let content: Frame.Content
    if format.isCompressed {
      guard JPEGSegments.endsWithEOI(first), (try? decoder.header(first)) != nil else {
        return nil
      }
      content = .jpeg(first)
    } else {
      // Planes may come in separate buffers (NV12's Y and UV): one run of bytes, as V4L2 has.
      var bytes = first
      if taken.planes.count > 1 {
        bytes = Array(first.prefix(configuration.stride * height))
        for plane in taken.planes.dropFirst() { bytes += plane }
      }
      do {
        content = .raw(
          try RawFrame(
            format: format, width: width, height: height, bytesPerLine: configuration.stride,
            bytes: bytes))
      } catch {
        throw CaptureError(.ioError, "\(name): frame \(taken.sequence): \(error)")
      }
    }
    return Frame(
      content: content, width: width, height: height, monotonicNanoseconds: stamp,
      realtimeNanoseconds: realNow - (monoNow - stamp),
      label: "\(name) frame \(taken.sequence)", formatName: format.fourCC.description)
  }

  /// Stops the camera, releases it and stops libcamera; idempotent.
  public func close() {
    camera?.close()
    camera = nil
    manager = nil
  }
}
