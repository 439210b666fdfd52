import CLibcameraAPI
import Glibc
import Imaging
import SystemKit

/// A libcamera failure: the errno and what went wrong, where.
public struct LibcameraError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The errno (positive), e.g. `EBUSY` for a camera another program holds.
  public var code: Errno
  /// What went wrong, naming the camera.
  public var message: String

  /// Creates an error.
  public init(_ code: Errno, _ message: String) {
    self.code = code
    self.message = message
  }

  init(_ error: orient_lc_error, result: Int32) {
    let code = error.code != 0 ? error.code : result
    let text = withUnsafeBytes(of: error.message) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
    self.init(
      Errno(rawValue: code < 0 ? -code : code),
      text.isEmpty ? "libcamera: \(Errno(rawValue: -code))" : text)
  }

  /// The message.
  public var description: String { message }
}

/// A width and height in pixels.
public struct LibcameraSize: Hashable, Sendable, Comparable, CustomStringConvertible {
  /// Width.
  public var width: Int
  /// Height.
  public var height: Int

  /// Creates a size.
  public init(width: Int, height: Int) {
    self.width = width
    self.height = height
  }

  /// By area, then width.
  public static func < (lhs: LibcameraSize, rhs: LibcameraSize) -> Bool {
    (lhs.width * lhs.height, lhs.width) < (rhs.width * rhs.height, rhs.width)
  }

  /// `WxH`.
  public var description: String { "\(width)x\(height)" }
}

/// One pixel format of a camera's still-capture stream (`StreamFormats`).
public struct LibcameraFormatInfo: Equatable, Sendable {
  /// The DRM four-character code.
  public var fourCC: UInt32
  /// The DRM format modifier (0: linear).
  public var modifier: UInt64
  /// libcamera's name, e.g. `BGR888`, `YUYV`, `MJPEG`.
  public var name: String
  /// `StreamFormats::range`: any size from `min` to `max` on a `step` grid (`nil`: none).
  public var range: (min: LibcameraSize, max: LibcameraSize, step: LibcameraSize)?
  /// `StreamFormats::sizes`: the discrete sizes, largest first.
  public var sizes: [LibcameraSize]

  /// Creates a description.
  public init(
    fourCC: UInt32, modifier: UInt64 = 0, name: String,
    range: (min: LibcameraSize, max: LibcameraSize, step: LibcameraSize)?,
    sizes: [LibcameraSize] = []
  ) {
    self.fourCC = fourCC
    self.modifier = modifier
    self.name = name
    self.range = range
    self.sizes = sizes
  }

  /// The largest size it offers.
  public var largest: LibcameraSize? { ([range?.max].compactMap { $0 } + sizes).max() }

  /// orientcam's layout for it, if orientcam handles it.
  public var pixelFormat: PixelFormat? {
    LibcameraFormats.pixelFormat(fourCC: fourCC, modifier: modifier)
  }

  /// Compares everything.
  public static func == (lhs: LibcameraFormatInfo, rhs: LibcameraFormatInfo) -> Bool {
    lhs.fourCC == rhs.fourCC && lhs.modifier == rhs.modifier && lhs.name == rhs.name
      && lhs.sizes == rhs.sizes && lhs.range?.min == rhs.range?.min
      && lhs.range?.max == rhs.range?.max && lhs.range?.step == rhs.range?.step
  }

  /// Whether it offers a range of sizes (then `sizes` only lists common ones within it).
  public var isRange: Bool { range.map { $0.min != $0.max } ?? false }

  /// `48x48 to 4096x2160 in steps of 1x1`, or the discrete sizes, largest first.
  public var sizeSummary: String {
    if let range, isRange { return "\(range.min) to \(range.max) in steps of \(range.step)" }
    let all = sizes.isEmpty ? [range?.max].compactMap { $0 } : sizes
    return all.isEmpty ? "no sizes" : all.map(\.description).joined(separator: ", ")
  }
}

/// What a camera says about itself, recorded when the manager started.
public struct LibcameraCameraInfo: Equatable, Sendable {
  /// Its position in libcamera's list (0-based).
  public var index: Int
  /// `Camera::id()`, stable across reboots (`platform/vimc.0 Sensor B`, a firmware path, ...).
  public var id: String
  /// `properties::Model`, if reported.
  public var model: String?
  /// `properties::Location`, if reported.
  public var location: LibcameraLocation?
  /// `properties::Rotation` (degrees, the counter-clockwise correction), if reported.
  public var rotation: Int?
  /// The still-capture stream's formats.
  public var formats: [LibcameraFormatInfo]

  /// Creates a description.
  public init(
    index: Int, id: String, model: String? = nil, location: LibcameraLocation? = nil,
    rotation: Int? = nil, formats: [LibcameraFormatInfo] = []
  ) {
    self.index = index
    self.id = id
    self.model = model
    self.location = location
    self.rotation = rotation
    self.formats = formats
  }

  /// The formats orientcam can use.
  public var usableFormats: [LibcameraFormatInfo] { formats.filter { $0.pixelFormat != nil } }

  /// The largest size among the usable formats (or all of them, when none is usable).
  public var largestSize: LibcameraSize? {
    (usableFormats.isEmpty ? formats : usableFormats).compactMap(\.largest).max()
  }
}

/// libcamera's `CameraManager`, started: the cameras it found. Stopped when released (after
/// the last camera acquired through it is closed). One may run per process at a time.
public final class LibcameraManager {
  private let api: orient_lc_api
  private let handle: OpaquePointer
  /// `CameraManager::version()`, e.g. `v0.0.3`.
  public let version: String
  /// The cameras, in libcamera's order.
  public let cameras: [LibcameraCameraInfo]

  /// Loads the plugin (`LibcameraPlugin`), starts the camera manager and reads every camera's
  /// properties and formats.
  ///
  /// - Throws: `LibcameraError` when the plugin cannot be loaded or libcamera cannot start.
  public init() throws(LibcameraError) {
    let api = try LibcameraPlugin.api()
    var error = orient_lc_error()
    var started: OpaquePointer?
    let result = api.manager_start(&started, &error)
    guard result == 0, let started else { throw LibcameraError(error, result: result) }
    self.api = api
    handle = started
    version = api.manager_version(started).map { String(cString: $0) } ?? "?"
    cameras = (0..<api.camera_count(started)).compactMap {
      LibcameraManager.describe(api, started, index: $0)
    }
  }

  deinit { api.manager_free(handle) }

  private static func describe(_ api: orient_lc_api, _ handle: OpaquePointer, index: Int)
    -> LibcameraCameraInfo?
  {
    var info = orient_lc_camera_info()
    guard api.camera_info_get(handle, index, &info) == 0, let id = info.id else {
      return nil
    }
    var formats: [LibcameraFormatInfo] = []
    for f in 0..<info.format_count {
      var format = orient_lc_format_info()
      guard api.camera_format_get(handle, index, f, &format) == 0 else { continue }
      var sizes: [LibcameraSize] = []
      for s in 0..<format.size_count {
        var width: UInt32 = 0
        var height: UInt32 = 0
        if api.camera_format_size(handle, index, f, s, &width, &height) == 0 {
          sizes.append(LibcameraSize(width: Int(width), height: Int(height)))
        }
      }
      let range =
        format.max_width == 0
        ? nil
        : (
          min: LibcameraSize(width: Int(format.min_width), height: Int(format.min_height)),
          max: LibcameraSize(width: Int(format.max_width), height: Int(format.max_height)),
          step: LibcameraSize(width: Int(format.h_step), height: Int(format.v_step))
        )
      formats.append(
        LibcameraFormatInfo(
          fourCC: format.fourcc, modifier: format.modifier,
          name: format.name.map { String(cString: $0) } ?? "?", range: range,
          sizes: sizes.sorted(by: >)))
    }
    return LibcameraCameraInfo(
      index: index, id: String(cString: id), model: info.model.map { String(cString: $0) },
      location: LibcameraLocation(rawValue: Int(info.location)),
      rotation: info.rotation >= 0 ? Int(info.rotation) : nil, formats: formats)
  }

  /// Acquires a camera for exclusive use.
  ///
  /// - Throws: `LibcameraError` (`EBUSY`: another program has it).
  public func acquire(_ camera: LibcameraCameraInfo) throws(LibcameraError) -> LibcameraCamera {
    var error = orient_lc_error()
    var acquired: OpaquePointer?
    let result = api.camera_acquire(handle, camera.index, &acquired, &error)
    guard result == 0, let acquired else { throw LibcameraError(error, result: result) }
    return LibcameraCamera(api: api, handle: acquired, info: camera, manager: self)
  }

  /// Sends libcamera's own log to stderr: errors, or with `verbose` its warnings and
  /// informational lines too. `LIBCAMERA_LOG_FILE` or `LIBCAMERA_LOG_LEVELS` in the environment
  /// leave libcamera's logging as the user set it. Nothing happens when the plugin cannot be
  /// loaded (starting the manager then says why).
  public static func routeLog(verbose: Bool) {
    (try? LibcameraPlugin.api())?.log_setup(verbose ? 1 : 3)
  }

  /// The libcamera version the plugin was built against (`LIBCAMERA_VERSION_*`).
  ///
  /// - Throws: `LibcameraError` when the plugin cannot be loaded.
  public static func headersVersion() throws(LibcameraError) -> (
    major: Int, minor: Int, patch: Int
  ) {
    let api = try LibcameraPlugin.api()
    var major: Int32 = 0
    var minor: Int32 = 0
    var patch: Int32 = 0
    api.headers_version(&major, &minor, &patch)
    return (Int(major), Int(minor), Int(patch))
  }
}
