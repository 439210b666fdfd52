import Imaging

/// A V4L2 failure: what went wrong, on which device, and (from the kernel) the errno.
public struct V4L2Error: Error, Equatable, Sendable, CustomStringConvertible {
  /// The kind of failure, which decides the exit status and the advice given.
  public enum Kind: Sendable, Equatable {
    /// The device node does not exist (`ENOENT`, `ENODEV`, `ENXIO`).
    case notFound
    /// No permission to open it (`EACCES`, `EPERM`).
    case permissionDenied
    /// Another program is streaming from it (`EBUSY`).
    case busy
    /// It is not a video capture device, or cannot stream.
    case notACamera
    /// It offers no format or size orientcam can use, or not the one asked for.
    case unsupported
    /// No frame arrived in time.
    case timeout
    /// Any other ioctl or mmap failure.
    case io
  }

  /// The kind.
  public var kind: Kind
  /// The device node, e.g. `/dev/video0`.
  public var path: String
  /// The explanation, including what to do where that is clear.
  public var message: String
  /// The errno from the kernel, when a system call failed.
  public var errno: Int32?

  /// Creates an error.
  public init(_ kind: Kind, path: String, _ message: String, errno: Int32? = nil) {
    self.kind = kind
    self.path = path
    self.message = message
    self.errno = errno
  }

  /// `"/dev/video0: message"`.
  public var description: String { "\(path): \(message)" }
}

/// A frame size in pixels.
public struct FrameSize: Hashable, Sendable, Comparable, CustomStringConvertible {
  /// Width.
  public var width: Int
  /// Height.
  public var height: Int

  /// Creates a size.
  public init(width: Int, height: Int) {
    self.width = width
    self.height = height
  }

  /// Parses `WxH` (e.g. `1920x1080`); `nil` unless both are positive integers.
  public init?(parsing text: String) {
    let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
    guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0,
      w <= 65_536, h <= 65_536
    else { return nil }
    self.init(width: w, height: h)
  }

  /// Pixel count.
  public var area: Int { width * height }

  /// Whether this size is at least `other` in both directions, in either orientation (a
  /// 720x1280 requirement is met by a 1280x720 camera, which can be turned).
  public func covers(_ other: FrameSize) -> Bool {
    let (a, b) = (max(width, height), min(width, height))
    return a >= max(other.width, other.height) && b >= min(other.width, other.height)
  }

  /// Orders by area, then width.
  public static func < (lhs: FrameSize, rhs: FrameSize) -> Bool {
    (lhs.area, lhs.width) < (rhs.area, rhs.width)
  }

  /// `WxH`.
  public var description: String { "\(width)x\(height)" }
}

/// The frame sizes a format offers (`VIDIOC_ENUM_FRAMESIZES`).
public enum FrameSizes: Equatable, Sendable {
  /// A list of sizes (`V4L2_FRMSIZE_TYPE_DISCRETE`), typical for USB cameras.
  case discrete([FrameSize])
  /// Any size in a range on a grid (`V4L2_FRMSIZE_TYPE_STEPWISE` / `_CONTINUOUS` with step 1).
  case stepwise(min: FrameSize, max: FrameSize, stepWidth: Int, stepHeight: Int)

  /// The largest size offered, or `nil` for an empty list.
  public var largest: FrameSize? {
    switch self {
    case .discrete(let sizes): return sizes.max()
    case .stepwise(_, let max, _, _): return max
    }
  }

  /// Whether `size` is offered exactly.
  public func contains(_ size: FrameSize) -> Bool {
    switch self {
    case .discrete(let sizes): return sizes.contains(size)
    case .stepwise(let lo, let hi, let sw, let sh):
      return size.width >= lo.width && size.width <= hi.width && size.height >= lo.height
        && size.height <= hi.height && (size.width - lo.width) % max(1, sw) == 0
        && (size.height - lo.height) % max(1, sh) == 0
    }
  }

  /// A short list for messages: the discrete sizes largest first, or `min-max`.
  public var summary: String {
    switch self {
    case .discrete(let sizes):
      return sizes.sorted(by: >).map(\.description).joined(separator: ", ")
    case .stepwise(let lo, let hi, let sw, let sh):
      return "\(lo) to \(hi) in steps of \(sw)x\(sh)"
    }
  }
}

/// One entry of `VIDIOC_ENUM_FMT`, with its sizes.
public struct FormatDescription: Equatable, Sendable {
  /// The four-character code.
  public var fourCC: FourCC
  /// The driver's description, e.g. "Motion-JPEG".
  public var name: String
  /// Whether the driver flags it compressed (`V4L2_FMT_FLAG_COMPRESSED`).
  public var compressed: Bool
  /// The sizes it offers.
  public var sizes: FrameSizes

  /// Creates a description.
  public init(fourCC: FourCC, name: String, compressed: Bool = false, sizes: FrameSizes) {
    self.fourCC = fourCC
    self.name = name
    self.compressed = compressed
    self.sizes = sizes
  }

  /// The orientcam format for this code, if supported.
  public var pixelFormat: PixelFormat? { PixelFormat(fourCC: fourCC) }
}

/// What `VIDIOC_QUERYCAP` reports.
public struct DeviceCapability: Equatable, Sendable {
  /// Driver name, e.g. `uvcvideo`, `vivid`.
  public var driver: String
  /// Card name, e.g. "Integrated Camera: Integrated C".
  public var card: String
  /// Bus, e.g. `usb-0000:00:14.0-8`, `platform:vivid-000`.
  public var busInfo: String
  /// The node's capability bits (`device_caps` when `V4L2_CAP_DEVICE_CAPS` is set).
  public var capabilities: UInt32

  /// Creates a capability record.
  public init(driver: String, card: String, busInfo: String, capabilities: UInt32) {
    self.driver = driver
    self.card = card
    self.busInfo = busInfo
    self.capabilities = capabilities
  }

  /// `V4L2_CAP_VIDEO_CAPTURE`.
  public static let videoCapture: UInt32 = 0x0000_0001
  /// `V4L2_CAP_STREAMING`.
  public static let streaming: UInt32 = 0x0400_0000

  /// Whether the node captures single-planar video and can stream (mmap).
  public var isCamera: Bool {
    capabilities & DeviceCapability.videoCapture != 0
      && capabilities & DeviceCapability.streaming != 0
  }
}

/// Which side of the device a camera faces, when the system says so.
public enum CameraPosition: String, Sendable {
  /// Faces the user (`V4L2_CAMERA_ORIENTATION_FRONT`, ACPI _PLD panel "front").
  case front
  /// Faces away from the user (`V4L2_CAMERA_ORIENTATION_BACK`, panel "back").
  case back
  /// Not fixed to the device (`V4L2_CAMERA_ORIENTATION_EXTERNAL`).
  case external
}

/// Everything orientcam knows about one camera: what `orientcam list` prints and what format
/// negotiation and the front-camera guard decide on.
public struct DeviceDescription: Equatable, Sendable {
  /// The device node.
  public var path: String
  /// `VIDIOC_QUERYCAP`.
  public var capability: DeviceCapability
  /// Every capture format with its sizes, in the driver's order.
  public var formats: [FormatDescription]
  /// Front/back/external, when the driver or firmware says.
  public var position: CameraPosition?
  /// Where `position` came from (`"V4L2_CID_CAMERA_ORIENTATION"` or a sysfs path).
  public var positionSource: String?
  /// The driver's mounting correction in degrees counter-clockwise
  /// (`V4L2_CID_CAMERA_SENSOR_ROTATION`), if it has the control.
  public var sensorRotation: Int?

  /// Creates a description.
  public init(
    path: String, capability: DeviceCapability, formats: [FormatDescription],
    position: CameraPosition? = nil, positionSource: String? = nil, sensorRotation: Int? = nil
  ) {
    self.path = path
    self.capability = capability
    self.formats = formats
    self.position = position
    self.positionSource = positionSource
    self.sensorRotation = sensorRotation
  }

  /// The formats orientcam can use, in the driver's order.
  public var usableFormats: [FormatDescription] { formats.filter { $0.pixelFormat != nil } }

  /// The largest size among the usable formats (or among all if none is usable).
  public var largestSize: FrameSize? {
    let pool = usableFormats.isEmpty ? formats : usableFormats
    return pool.compactMap(\.sizes.largest).max()
  }

  /// `"Integrated Camera (/dev/video0)"`.
  public var displayName: String { "\(capability.card) (\(path))" }
}
