import Imaging
import JPEGKit
import JSON
import OrientCore
import OrientLog
import SystemKit
import V4L2Kit

/// What `orientcam capture` needs from its surroundings; the seams tests and the session use.
public struct CaptureEnvironment {
  /// Messages on stderr.
  public var logger: Logger
  /// EXIF Software, e.g. `orientcam 0.1.0`.
  public var software: String
  /// Makes the orientation source for `--orientation auto` (see `OrientationSource`). The
  /// default reports that orientd cannot be reached; the D-Bus client (org.orientd.Orientation1,
  /// then net.hadess.SensorProxy, claiming only for the capture) plugs in here.
  public var autoOrientation: (Logger) throws(CaptureError) -> any OrientationSource
  /// Called for each photo as soon as it is written.
  public var photoTaken: (PhotoReport) -> Void

  /// Creates an environment.
  public init(
    logger: Logger, software: String,
    autoOrientation: @escaping (Logger) throws(CaptureError) -> any OrientationSource = { _ in
      UnreachableOrientationSource()
    },
    photoTaken: @escaping (PhotoReport) -> Void = { _ in }
  ) {
    self.logger = logger
    self.software = software
    self.autoOrientation = autoOrientation
    self.photoTaken = photoTaken
  }
}

/// `orientcam capture`.
public enum CaptureCommand {
  /// The test pattern's sensor size when `--resolution` is not given.
  public static let defaultPatternSize = FrameSize(width: 1280, height: 720)

  /// Makes the orientation source for the options, with their fallback.
  public static func orientationResolver(
    _ options: CaptureOptions, environment: CaptureEnvironment
  ) throws(CaptureError) -> OrientationResolver {
    let source: any OrientationSource
    switch options.orientation {
    case .auto: source = try environment.autoOrientation(environment.logger)
    case .fixed(let o): source = FixedOrientationSource(o)
    case .watchLines(let path):
      source = WatchLinesSource(
        path == "-" ? .standardInput : .path(path), logger: environment.logger)
    }
    return OrientationResolver(
      source: source, fallback: options.fallback, logger: environment.logger)
  }

  /// Opens the source the options name (guarding, negotiating and warming up a camera).
  public static func openSource(
    _ options: CaptureOptions, orientation: Orientation, logger: Logger
  ) throws(CaptureError) -> any FrameSource {
    switch options.source {
    case .camera(let path):
      return try CameraSource(
        path: path, resolution: options.resolution, formats: options.formats,
        skip: options.skip ?? 3, minimum: options.minimumResolution, logger: logger)
    case .libcamera(let id):
      return try LibcameraSource(
        id: id, resolution: options.resolution, formats: options.formats,
        skip: options.skip ?? 3, minimum: options.minimumResolution, logger: logger)
    case .pattern(let held):
      let size = options.resolution ?? defaultPatternSize
      // The pattern is drawn in memory at full size (3 bytes a pixel, more for the encoder):
      // no bigger than the largest picture orientcam decodes or turns.
      guard size.width * size.height <= JPEGLimits.maxPixels else {
        throw CaptureError(
          .usage,
          "--resolution \(size): the test pattern is at most \(JPEGLimits.maxPixels / 1_000_000) "
            + "megapixels (\(JPEGLimits.maxPixels) pixels, e.g. 16384x16384); give a smaller size")
      }
      if let minimum = options.minimumResolution, !size.covers(minimum) {
        throw CaptureError(
          .unavailable,
          "refusing the camera test pattern: its best resolution is \(size), below "
            + "--min-resolution \(minimum); give the pattern a larger --resolution")
      }
      let source = try PatternSource(
        name: options.source.description, width: size.width, height: size.height,
        format: options.formatGiven ? options.formats[0] : .yuyv,
        heldOrientation: held ?? orientation, followsDevice: held == nil,
        sensorRotation: options.sensorRotation ?? 0,
        facesUser: options.mirror)
      for _ in 0..<(options.skip ?? 0) { _ = try source.nextFrame() }
      return source
    case .file(let pattern):
      if options.resolution != nil || options.formatGiven {
        throw CaptureError(
          .usage, "--resolution and --format do not apply to file: sources (files are as they are)")
      }
      let source = try FileSource(pattern: pattern)
      for _ in 0..<(options.skip ?? 0) { _ = try source.nextFrame() }
      return source
    }
  }

  /// Takes the photos.
  ///
  /// The orientation is resolved before the camera is opened (so a missing orientd does not
  /// touch the camera) and again before each further photo; a camera is closed as soon as
  /// its last frame is in memory, before encoding and writing.
  ///
  /// - Returns: one report per photo (each also passed to `environment.photoTaken`).
  /// - Throws: `CaptureError`; photos written before the failure stay.
  public static func run(_ options: CaptureOptions, environment: CaptureEnvironment)
    throws(CaptureError) -> [PhotoReport]
  {
    let logger = environment.logger
    var trigger = Clock.monotonicNanoseconds()
    // The orientation source is followed on a loop of its own, turned before each photo.
    let loop: EventLoop
    do { loop = try EventLoop() } catch {
      throw CaptureError(.software, "cannot create the event loop: \(error)")
    }
    let resolver = try orientationResolver(options, environment: environment)
    defer { resolver.source.stop() }
    try resolver.start(on: loop) { _ in }
    var reading = try resolver.resolve()
    let source = try openSource(options, orientation: reading.orientation, logger: logger)
    defer { source.close() }
    let count = options.count ?? source.remainingFrames ?? 1
    if count == 1 { resolver.source.stop() }  // claim only for the capture
    if let remaining = source.remainingFrames, remaining < count {
      throw CaptureError(
        .usage, "--count \(count) but \(source.name) has only \(remaining) file(s) left")
    }
    let sensor = source.sensorCorrection(override: options.sensorRotation)
    if options.sensorRotation == nil, sensor.origin != "none" {
      logger.debug(
        "\(source.name): \(sensor.origin) gives a mounting correction of \(sensor.rotation) "
          + "degrees clockwise\(sensor.mirrored ? " after a mirror" : "")")
    }
    let processor = try PhotoProcessor(
      quality: options.quality, lossless: options.lossless, software: environment.software)
    let pipeline = PhotoPipeline(
      settings: PhotoSettings(
        rotate: options.rotate, sensorRotation: sensor.rotation, sensorMirrored: sensor.mirrored,
        mirror: options.mirror || source.facesUser, template: options.output,
        overwrite: options.force),
      processor: processor)
    var reports: [PhotoReport] = []
    for index in 0..<count {
      if index > 0 {
        trigger = Clock.monotonicNanoseconds()
        do { try loop.runOnce(timeoutMilliseconds: 0) } catch {
          throw CaptureError(.software, "event loop failed: \(error)")
        }
        reading = try resolver.resolve()
        if index == count - 1 { resolver.source.stop() }
      }
      source.deviceHeld(reading.orientation)
      let frame = try source.nextFrame()
      if index == count - 1 { source.close() }  // release the camera before the slow part
      let report = try pipeline.takePhoto(
        frame, orientation: reading, source: source, triggerNanoseconds: trigger)
      for note in report.notes { logger.notice(note) }
      environment.photoTaken(report)
      reports.append(report)
    }
    return reports
  }
}

/// `orientcam list`.
public enum ListCommand {
  /// The cameras as text, one block each: the V4L2 devices (without the nodes libcamera
  /// drives), then libcamera's cameras.
  public static func text(
    _ cameras: [DeviceDescription], libcamera: LibcameraListing = LibcameraListing()
  ) -> String {
    let v4l2 = cameras.filter { !libcamera.drivenNodes.contains($0.path) }
    guard !v4l2.isEmpty || !libcamera.cameras.isEmpty else {
      return "no cameras found (no V4L2 capture device under /dev/video*, none through libcamera)\n"
    }
    var out = ""
    for camera in v4l2 {
      let cap = camera.capability
      let position = camera.position.map { ", \($0.rawValue) camera" } ?? ""
      out += "\(camera.path): \(cap.card) (driver \(cap.driver), bus \(cap.busInfo))\(position)\n"
      out += "  largest: \(camera.largestSize.map(\.description) ?? "unknown")"
      if let rotation = camera.sensorRotation {
        out += ", sensor rotation \(rotation) degrees counter-clockwise"
      }
      out += "\n"
      for format in camera.formats {
        let usable = format.pixelFormat == nil ? " (not usable by orientcam)" : ""
        out += "  \(format.fourCC) \(format.name)\(usable): \(format.sizes.summary)\n"
      }
    }
    return out + text(libcamera)
  }

  /// The cameras as a JSON array: the V4L2 devices (without the nodes libcamera drives), then
  /// libcamera's cameras; `source` is what `--source` takes for each.
  public static func json(
    _ cameras: [DeviceDescription], libcamera: LibcameraListing = LibcameraListing()
  ) -> JSONValue {
    let v4l2 = cameras.filter { !libcamera.drivenNodes.contains($0.path) }
    return .array(
      v4l2.map { camera in
        let cap = camera.capability
        return .object([
          ("source", .string("v4l2:\(camera.path)")),
          ("device", .string(camera.path)),
          ("driver", .string(cap.driver)),
          ("card", .string(cap.card)),
          ("bus", .string(cap.busInfo)),
          ("position", camera.position.map { .string($0.rawValue) } ?? .null),
          ("position_source", camera.positionSource.map { .string($0) } ?? .null),
          ("sensor_rotation", camera.sensorRotation.map { .number(Double($0)) } ?? .null),
          ("largest", camera.largestSize.map { .string($0.description) } ?? .null),
          (
            "formats",
            .array(
              camera.formats.map { format in
                var sizes: [JSONValue] = []
                switch format.sizes {
                case .discrete(let list):
                  sizes = list.sorted(by: >).map { .string($0.description) }
                case .stepwise(let lo, let hi, _, _):
                  sizes = [.string("\(lo)-\(hi)")]
                }
                return .object([
                  ("fourcc", .string(format.fourCC.description)),
                  ("description", .string(format.name)),
                  ("usable", .bool(format.pixelFormat != nil)),
                  ("largest", format.sizes.largest.map { .string($0.description) } ?? .null),
                  ("sizes", .array(sizes)),
                ])
              })
          ),
        ])
      } + json(libcamera))
  }
}

/// `orientcam inspect`: what a JPEG says about itself, and how a test-pattern photo is turned.
public enum InspectCommand {
  /// Inspects one file.
  ///
  /// - Throws: `CaptureError` `.noInput` / `.badData`.
  public static func inspect(_ path: String) throws(CaptureError) -> JSONValue {
    let bytes = try readInputFile(path)
    let info: JPEGInfo
    let image: RGBImage
    do {
      let decoder = try JPEGDecoder()
      info = try decoder.header(bytes)
      image = try decoder.decode(bytes)
    } catch {
      throw CaptureError(error, about: path)
    }
    let exif = EXIF.read(fromJPEG: bytes)
    let stored = PatternProbe.probe(image)
    let tag = exif?.orientation.flatMap { ImageTransform(exifOrientation: $0) } ?? .identity
    let displayed = tag == .identity ? stored : PatternProbe.probe(image.transformed(tag))
    func text(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
    func number(_ value: Int?) -> JSONValue { value.map { .number(Double($0)) } ?? .null }
    return .object([
      ("path", .string(path)),
      ("bytes", .number(Double(bytes.count))),
      ("width", .number(Double(info.width))),
      ("height", .number(Double(info.height))),
      ("subsampling", text(info.subsampling?.description)),
      ("exif", .bool(exif != nil)),
      ("exif_orientation", number(exif?.orientation)),
      ("pixel_width", number(exif?.pixelWidth)),
      ("pixel_height", number(exif?.pixelHeight)),
      ("make", text(exif?.make)),
      ("model", text(exif?.model)),
      ("software", text(exif?.software)),
      ("date_time_original", text(exif?.dateTimeOriginal)),
      ("sub_sec_time_original", text(exif?.subSecTimeOriginal)),
      ("offset_time_original", text(exif?.offsetTimeOriginal)),
      (
        "pattern",
        .object([
          ("stored", text(stored.transform?.description)),
          ("displayed", text(displayed.transform?.description)),
          ("upright", .bool(displayed.transform == .identity)),
          ("marker_edge", text(displayed.markerEdge)),
        ])
      ),
    ])
  }

  /// One line of text for a result of `inspect`.
  public static func text(_ value: JSONValue) -> String {
    func s(_ key: String) -> String? {
      guard let v = value[key] else { return nil }
      if let t = v.stringValue { return t }
      if let n = v.numberValue { return JSONValue.format(n) }
      return nil
    }
    var parts = ["\(s("width") ?? "?")x\(s("height") ?? "?") \(s("subsampling") ?? "")"]
    if value["exif"]?.boolValue == true {
      parts.append("EXIF Orientation \(s("exif_orientation") ?? "absent")")
      let camera = [s("make"), s("model")].compactMap { $0 }.joined(separator: " ")
      if !camera.isEmpty { parts.append(camera) }
      if let taken = s("date_time_original") {
        let fraction = s("sub_sec_time_original").map { ".\($0)" } ?? ""
        parts.append("taken \(taken)\(fraction) \(s("offset_time_original") ?? "")")
      }
    } else {
      parts.append("no EXIF")
    }
    let displayed = value["pattern"]?["displayed"]?.stringValue
    parts.append(
      displayed.map { $0 == "none" ? "test pattern upright" : "test pattern turned: \($0)" }
        ?? "no test pattern recognised")
    return "\(s("path") ?? "?"): " + parts.joined(separator: ", ")
  }
}
