import CLinuxShims
import Glibc
import Imaging
import SystemKit

/// The format a driver settled on after `VIDIOC_S_FMT` (drivers may adjust the request).
public struct ActiveFormat: Equatable, Sendable {
  /// The pixel format's code.
  public var fourCC: FourCC
  /// Width.
  public var width: Int
  /// Height.
  public var height: Int
  /// `bytesperline` of the first plane (0 for compressed formats).
  public var bytesPerLine: Int
  /// `sizeimage`: the largest frame in bytes.
  public var sizeImage: Int

  /// Creates a format record.
  public init(fourCC: FourCC, width: Int, height: Int, bytesPerLine: Int, sizeImage: Int) {
    self.fourCC = fourCC
    self.width = width
    self.height = height
    self.bytesPerLine = bytesPerLine
    self.sizeImage = sizeImage
  }

  /// The size.
  public var size: FrameSize { FrameSize(width: width, height: height) }
}

/// The seam between negotiation and the kernel: the few V4L2 queries and the one setting that
/// decide which format a capture uses. `V4L2Device` implements it with ioctls; tests implement
/// it with a scripted device description (umockdev cannot emulate V4L2).
public protocol VideoDeviceControl: AnyObject {
  /// The device node.
  var path: String { get }
  /// `VIDIOC_QUERYCAP`.
  func queryCapability() throws(V4L2Error) -> DeviceCapability
  /// `VIDIOC_ENUM_FMT` for `V4L2_BUF_TYPE_VIDEO_CAPTURE`, with `VIDIOC_ENUM_FRAMESIZES` for each.
  func enumerateFormats() throws(V4L2Error) -> [FormatDescription]
  /// `VIDIOC_S_FMT`: asks for a format and size; returns what the driver chose.
  func setFormat(_ fourCC: FourCC, width: Int, height: Int) throws(V4L2Error) -> ActiveFormat
  /// `VIDIOC_G_CTRL`: a control's value, or `nil` if the device has no such control.
  func controlValue(_ id: UInt32) -> Int32?
}

/// An open V4L2 device node (`open(2)` with `O_RDWR | O_NONBLOCK`), closed in `deinit`.
public final class V4L2Device: VideoDeviceControl {
  /// The device node.
  public let path: String
  /// The open descriptor (for polling in an event loop).
  public let descriptor: FileDescriptor

  /// Opens `path`.
  ///
  /// - Throws: `V4L2Error` `.notFound`, `.permissionDenied`, `.busy` or `.io`, with advice.
  public init(path: String) throws(V4L2Error) {
    self.path = path
    do {
      descriptor = try FileDescriptor(path: path, options: [.readWrite, .nonBlocking])
    } catch {
      throw V4L2Device.translate(error, path: path, doing: "open")
    }
  }

  /// Closes the device now (also done by `deinit`).
  public func close() { descriptor.close() }

  /// Runs one ioctl with a pointer argument, retrying `EINTR`.
  func ioctl<T>(_ request: UInt, _ name: String, _ argument: inout T) throws(SystemError) {
    let fd = descriptor.rawValue
    _ = try retryingInterrupts(name, path: path) {
      withUnsafeMutablePointer(to: &argument) { orient_ioctl_ptr(fd, request, $0) }
    }
  }

  /// Maps a system error to a `V4L2Error` with advice.
  static func translate(_ error: SystemError, path: String, doing: String) -> V4L2Error {
    switch error.code {
    case .noSuchFileOrDirectory, .noSuchDevice, .noSuchAddressOrDevice:
      return V4L2Error(
        .notFound, path: path,
        "no such camera (\(doing): \(error.reason)); run `orientcam list` to see the cameras",
        errno: error.code.rawValue)
    case .permissionDenied, .notPermitted:
      return V4L2Error(
        .permissionDenied, path: path,
        "permission denied (\(doing)); add yourself to the `video` group or run as root",
        errno: error.code.rawValue)
    case .resourceBusy:
      return V4L2Error(
        .busy, path: path, "the camera is in use by another program (\(doing): \(error.reason))",
        errno: error.code.rawValue)
    default:
      return V4L2Error(.io, path: path, "\(doing): \(error.reason)", errno: error.code.rawValue)
    }
  }

  /// `VIDIOC_QUERYCAP`.
  public func queryCapability() throws(V4L2Error) -> DeviceCapability {
    var cap = v4l2_capability()
    do { try ioctl(orient_VIDIOC_QUERYCAP, "VIDIOC_QUERYCAP", &cap) } catch {
      if error.code == .inappropriateIOCTLForDevice {
        throw V4L2Error(.notACamera, path: path, "not a V4L2 device", errno: ENOTTY)
      }
      throw V4L2Device.translate(error, path: path, doing: "VIDIOC_QUERYCAP")
    }
    let deviceCaps: UInt32 = 0x8000_0000  // V4L2_CAP_DEVICE_CAPS
    return DeviceCapability(
      driver: cString(cap.driver), card: cString(cap.card), busInfo: cString(cap.bus_info),
      capabilities: cap.capabilities & deviceCaps != 0 ? cap.device_caps : cap.capabilities)
  }

  /// `VIDIOC_ENUM_FMT` and `VIDIOC_ENUM_FRAMESIZES` until `EINVAL` ends each list.
  public func enumerateFormats() throws(V4L2Error) -> [FormatDescription] {
    var result: [FormatDescription] = []
    var index: UInt32 = 0
    while true {
      var desc = v4l2_fmtdesc()
      desc.index = index
      desc.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
      do { try ioctl(orient_VIDIOC_ENUM_FMT, "VIDIOC_ENUM_FMT", &desc) } catch {
        if error.code == .invalidArgument { break }
        throw V4L2Device.translate(error, path: path, doing: "VIDIOC_ENUM_FMT")
      }
      let fourCC = FourCC(rawValue: desc.pixelformat)
      result.append(
        FormatDescription(
          fourCC: fourCC, name: cString(desc.description),
          compressed: desc.flags & 0x0001 != 0,  // V4L2_FMT_FLAG_COMPRESSED
          sizes: try frameSizes(fourCC)))
      index += 1
    }
    return result
  }

  private func frameSizes(_ fourCC: FourCC) throws(V4L2Error) -> FrameSizes {
    var discrete: [FrameSize] = []
    var index: UInt32 = 0
    while true {
      var size = v4l2_frmsizeenum()
      size.index = index
      size.pixel_format = fourCC.rawValue
      do { try ioctl(orient_VIDIOC_ENUM_FRAMESIZES, "VIDIOC_ENUM_FRAMESIZES", &size) } catch {
        if error.code == .invalidArgument || error.code == .inappropriateIOCTLForDevice { break }
        throw V4L2Device.translate(error, path: path, doing: "VIDIOC_ENUM_FRAMESIZES")
      }
      if size.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
        discrete.append(
          FrameSize(width: Int(size.discrete.width), height: Int(size.discrete.height)))
        index += 1
        continue
      }
      // Stepwise and continuous ranges come as a single entry.
      let s = size.stepwise
      return .stepwise(
        min: FrameSize(width: Int(s.min_width), height: Int(s.min_height)),
        max: FrameSize(width: Int(s.max_width), height: Int(s.max_height)),
        stepWidth: max(1, Int(s.step_width)), stepHeight: max(1, Int(s.step_height)))
    }
    if discrete.isEmpty {
      // Some drivers do not enumerate sizes: report the current one.
      var format = v4l2_format()
      format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
      if (try? ioctl(orient_VIDIOC_G_FMT, "VIDIOC_G_FMT", &format)) != nil,
        format.fmt.pix.pixelformat == fourCC.rawValue
      {
        discrete.append(
          FrameSize(width: Int(format.fmt.pix.width), height: Int(format.fmt.pix.height)))
      }
    }
    return .discrete(discrete)
  }

  /// `VIDIOC_S_FMT` for single-planar capture, progressive (`V4L2_FIELD_NONE`).
  public func setFormat(_ fourCC: FourCC, width: Int, height: Int) throws(V4L2Error)
    -> ActiveFormat
  {
    var format = v4l2_format()
    format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    format.fmt.pix.width = UInt32(width)
    format.fmt.pix.height = UInt32(height)
    format.fmt.pix.pixelformat = fourCC.rawValue
    format.fmt.pix.field = V4L2_FIELD_NONE.rawValue
    do { try ioctl(orient_VIDIOC_S_FMT, "VIDIOC_S_FMT", &format) } catch {
      throw V4L2Device.translate(
        error, path: path, doing: "VIDIOC_S_FMT \(fourCC) \(width)x\(height)")
    }
    let pix = format.fmt.pix
    return ActiveFormat(
      fourCC: FourCC(rawValue: pix.pixelformat), width: Int(pix.width), height: Int(pix.height),
      bytesPerLine: Int(pix.bytesperline), sizeImage: Int(pix.sizeimage))
  }

  /// `VIDIOC_G_CTRL`; `nil` when the control does not exist.
  public func controlValue(_ id: UInt32) -> Int32? {
    var control = v4l2_control()
    control.id = id
    guard (try? ioctl(orient_VIDIOC_G_CTRL, "VIDIOC_G_CTRL", &control)) != nil else { return nil }
    return control.value
  }
}

/// A NUL-terminated C string stored in a fixed-size `__u8` array (imported as a tuple).
func cString<T>(_ tuple: T) -> String {
  withUnsafeBytes(of: tuple) { raw in
    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
  }
}
