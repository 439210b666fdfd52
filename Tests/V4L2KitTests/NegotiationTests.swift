import Glibc
import Imaging
import Testing
import V4L2Kit

/// A scripted camera behind the ioctl seam. `VIDIOC_S_FMT` behaves like real drivers: an
/// unknown format becomes the first one offered, and the size snaps to the nearest offered.
final class FakeCamera: VideoDeviceControl {
  let path: String
  var capability: DeviceCapability
  var formats: [FormatDescription]
  var controls: [UInt32: Int32] = [:]
  /// When set, S_FMT answers with this size whatever was asked (a stubborn driver).
  var forcedSize: FrameSize?
  /// When set, S_FMT switches to this code (a driver that dislikes the request).
  var forcedFourCC: FourCC?
  private(set) var setFormatCalls: [(FourCC, Int, Int)] = []

  init(
    path: String = "/dev/video0", card: String = "Fake Camera", capabilities: UInt32 = 0x0400_0001,
    formats: [FormatDescription]
  ) {
    self.path = path
    self.capability = DeviceCapability(
      driver: "fake", card: card, busInfo: "platform:fake", capabilities: capabilities)
    self.formats = formats
  }

  func queryCapability() throws(V4L2Error) -> DeviceCapability { capability }
  func enumerateFormats() throws(V4L2Error) -> [FormatDescription] { formats }
  func controlValue(_ id: UInt32) -> Int32? { controls[id] }

  func setFormat(_ fourCC: FourCC, width: Int, height: Int) throws(V4L2Error) -> ActiveFormat {
    setFormatCalls.append((fourCC, width, height))
    let format = formats.first { $0.fourCC == fourCC } ?? formats[0]
    var size = FrameSize(width: width, height: height)
    if case .discrete(let sizes) = format.sizes, !sizes.contains(size) {
      size = sizes.min { abs($0.area - size.area) < abs($1.area - size.area) } ?? size
    }
    if let forcedSize { size = forcedSize }
    let code = forcedFourCC ?? format.fourCC
    let bpl = PixelFormat(fourCC: code)?.minimumBytesPerLine(width: size.width) ?? 0
    return ActiveFormat(
      fourCC: code, width: size.width, height: size.height, bytesPerLine: bpl,
      sizeImage: max(bpl * size.height, size.area))
  }
}

func sizes(_ list: [(Int, Int)]) -> FrameSizes {
  .discrete(list.map { FrameSize(width: $0.0, height: $0.1) })
}

let mjpg = FourCC("MJPG") ?? FourCC(rawValue: 0)
let yuyv = FourCC("YUYV") ?? FourCC(rawValue: 0)
let nv12 = FourCC("NV12") ?? FourCC(rawValue: 0)
let h264 = FourCC("H264") ?? FourCC(rawValue: 0)
let grey = FourCC("GREY") ?? FourCC(rawValue: 0)

/// A typical UVC webcam: MJPEG up to 1920x1080, YUYV up to 1280x720 (USB 2 bandwidth).
func webcam(path: String = "/dev/video0", card: String = "USB Webcam") -> FakeCamera {
  FakeCamera(
    path: path, card: card,
    formats: [
      FormatDescription(fourCC: yuyv, name: "YUYV 4:2:2", sizes: sizes([(640, 480), (1280, 720)])),
      FormatDescription(
        fourCC: mjpg, name: "Motion-JPEG", compressed: true,
        sizes: sizes([(640, 480), (1280, 720), (1920, 1080)])),
    ])
}

func describe(_ camera: FakeCamera) throws -> DeviceDescription {
  try CameraDiscovery.describe(camera)
}

@Suite struct NegotiationTests {
  @Test func largestSizeWinsThenMJPEG() throws {
    let camera = webcam()
    let result = try Negotiation.negotiate(camera, description: try describe(camera))
    #expect(result.format == .mjpeg)
    #expect(result.active.size == FrameSize(width: 1920, height: 1080))
  }

  @Test func mjpegPreferredAtEqualSize() throws {
    let camera = webcam()
    let choice = try Negotiation.choose(
      try describe(camera), resolution: FrameSize(width: 1280, height: 720))
    #expect(choice.format == .mjpeg)
  }

  @Test func largerRawSizeBeatsSmallerMJPEG() throws {
    let camera = FakeCamera(formats: [
      FormatDescription(fourCC: mjpg, name: "MJPEG", sizes: sizes([(640, 480)])),
      FormatDescription(fourCC: yuyv, name: "YUYV", sizes: sizes([(640, 480), (1600, 1200)])),
    ])
    let choice = try Negotiation.choose(try describe(camera))
    #expect(choice == Negotiation.Choice(format: .yuyv, size: FrameSize(width: 1600, height: 1200)))
  }

  @Test func userFormatListRestrictsAndOrders() throws {
    let camera = webcam()
    let choice = try Negotiation.choose(try describe(camera), preferences: [.yuyv])
    #expect(choice == Negotiation.Choice(format: .yuyv, size: FrameSize(width: 1280, height: 720)))
  }

  /// vivid offers only raw formats, some with stepwise sizes.
  @Test func rawOnlyStepwiseDevice() throws {
    let camera = FakeCamera(formats: [
      FormatDescription(
        fourCC: nv12, name: "NV12",
        sizes: .stepwise(
          min: FrameSize(width: 16, height: 16), max: FrameSize(width: 3840, height: 2160),
          stepWidth: 2, stepHeight: 2)),
      FormatDescription(fourCC: yuyv, name: "YUYV", sizes: sizes([(640, 360), (1280, 720)])),
    ])
    let description = try describe(camera)
    let best = try Negotiation.choose(description)
    #expect(best == Negotiation.Choice(format: .nv12, size: FrameSize(width: 3840, height: 2160)))
    let asked = try Negotiation.choose(description, resolution: FrameSize(width: 1000, height: 500))
    #expect(asked.format == .nv12)
    #expect(throws: V4L2Error.self) {
      try Negotiation.choose(description, resolution: FrameSize(width: 1001, height: 500))
    }
  }

  @Test func unavailableResolutionListsWhatIsOffered() throws {
    let camera = webcam()
    let description = try describe(camera)
    let error = #expect(throws: V4L2Error.self) {
      try Negotiation.choose(description, resolution: FrameSize(width: 4000, height: 3000))
    }
    #expect(error?.kind == .unsupported)
    #expect(error?.message.contains("does not offer 4000x3000") == true)
    #expect(error?.message.contains("1920x1080") == true)
  }

  @Test func nothingUsable() throws {
    let camera = FakeCamera(formats: [
      FormatDescription(
        fourCC: h264, name: "H.264", compressed: true, sizes: sizes([(1920, 1080)])),
      FormatDescription(fourCC: grey, name: "Greyscale", sizes: sizes([(640, 480)])),
    ])
    let description = try describe(camera)
    let error = #expect(throws: V4L2Error.self) {
      try Negotiation.negotiate(camera, description: description)
    }
    #expect(error?.kind == .unsupported)
    #expect(error?.message.contains("H264") == true)
    #expect(camera.setFormatCalls.isEmpty)
  }

  @Test func driverAdjustingTheSize() throws {
    let camera = webcam()
    camera.forcedSize = FrameSize(width: 1280, height: 720)
    let description = try describe(camera)
    // Accepted when the user did not ask for a size...
    let result = try Negotiation.negotiate(camera, description: description)
    #expect(result.active.size == FrameSize(width: 1280, height: 720))
    // ...refused when they did.
    #expect(throws: V4L2Error.self) {
      try Negotiation.negotiate(
        camera, description: description, resolution: FrameSize(width: 1920, height: 1080))
    }
  }

  @Test func driverSwitchingToAnUnreadableFormat() throws {
    let camera = webcam()
    camera.forcedFourCC = h264
    #expect(throws: V4L2Error.self) {
      try Negotiation.negotiate(camera, description: try describe(camera))
    }
  }

  @Test func notACamera() throws {
    // A UVC metadata node: V4L2_CAP_META_CAPTURE | V4L2_CAP_STREAMING.
    let camera = FakeCamera(capabilities: 0x0480_0000, formats: [])
    let error = #expect(throws: V4L2Error.self) { try CameraDiscovery.describe(camera) }
    #expect(error?.kind == .notACamera)
  }
}

@Suite struct FrontCameraGuardTests {
  func front() throws -> DeviceDescription {
    let camera = FakeCamera(
      path: "/dev/video2", card: "Front Camera",
      formats: [FormatDescription(fourCC: yuyv, name: "YUYV", sizes: sizes([(640, 480)]))])
    camera.controls[0x009a_0922] = 0  // V4L2_CID_CAMERA_ORIENTATION = FRONT
    return try describe(camera)
  }

  @Test func positionFromTheControl() throws {
    let description = try front()
    #expect(description.position == .front)
    #expect(description.positionSource == "V4L2_CID_CAMERA_ORIENTATION")
  }

  @Test func refusesNamingTheCameraAndSuggestingOthers() throws {
    let rear = try describe(webcam(path: "/dev/video0", card: "Rear Camera"))
    let small = try front()
    let error = #expect(throws: V4L2Error.self) {
      try Negotiation.requireMinimum(
        small, minimum: FrameSize(width: 1280, height: 720), others: [rear, small])
    }
    let message = error?.message ?? ""
    #expect(error?.kind == .unsupported)
    #expect(message.contains("front camera Front Camera"))
    #expect(message.contains("best resolution is 640x480"))
    #expect(message.contains("--source v4l2:/dev/video0 (Rear Camera, 1920x1080)"))
    try Negotiation.requireMinimum(rear, minimum: FrameSize(width: 1280, height: 720), others: [])
  }

  @Test func portraitMinimumIsMetByALandscapeCamera() throws {
    let rear = try describe(webcam())
    #expect(Negotiation.meets(rear, minimum: FrameSize(width: 1080, height: 1920)))
    #expect(!Negotiation.meets(rear, minimum: FrameSize(width: 2000, height: 1000)))
  }

  @Test func sizeParsing() {
    #expect(FrameSize(parsing: "1920x1080") == FrameSize(width: 1920, height: 1080))
    #expect(FrameSize(parsing: "640X480") == FrameSize(width: 640, height: 480))
    for bad in ["", "1920", "x1080", "1920x", "-1x5", "axb", "1x2x3", "0x10"] {
      #expect(FrameSize(parsing: bad) == nil, "\(bad)")
    }
  }
}

@Suite struct DiscoveryTests {
  @Test func devicesInNumericOrder() throws {
    var template = Array("/tmp/orientcam-dev-XXXXXX".utf8CString)
    let dir = try #require(mkdtemp(&template).map { String(cString: $0) })
    defer {
      for name in ["video0", "video2", "video10", "videox", "vbi0"] { unlink("\(dir)/\(name)") }
      rmdir(dir)
    }
    for name in ["video10", "video2", "video0", "videox", "vbi0"] {
      close(open("\(dir)/\(name)", O_CREAT | O_WRONLY, 0o644))
    }
    #expect(
      CameraDiscovery.devicePaths(devDirectory: dir)
        == ["\(dir)/video0", "\(dir)/video2", "\(dir)/video10"])
  }

  @Test func firmwarePanelFromSysfs() throws {
    var template = Array("/tmp/orientcam-sys-XXXXXX".utf8CString)
    let root = try #require(mkdtemp(&template).map { String(cString: $0) })
    defer { _ = system("rm -rf '\(root)'") }
    // The video node's device is a USB interface; the panel sits on its parent port device.
    let port = "\(root)/devices/usb1/1-8"
    let interface = "\(port)/1-8:1.0"
    mkdirAll("\(interface)")
    mkdirAll("\(port)/physical_location")
    mkdirAll("\(root)/class/video4linux/video0")
    #expect(symlink(interface, "\(root)/class/video4linux/video0/device") == 0)
    let fd = open("\(port)/physical_location/panel", O_CREAT | O_WRONLY, 0o644)
    _ = write(fd, "back\n", 5)
    close(fd)
    let found = CameraDiscovery.firmwarePosition(ofDevice: "/dev/video0", sysfsRoot: root)
    #expect(found?.position == .back)
    #expect(CameraDiscovery.firmwarePosition(ofDevice: "/dev/video1", sysfsRoot: root) == nil)
  }

  @Test func missingDeviceSaysSo() {
    let error = #expect(throws: V4L2Error.self) {
      try CameraDiscovery.describe(path: "/dev/video99")
    }
    #expect(error?.kind == .notFound)
    #expect(error?.description.contains("/dev/video99") == true)
    #expect(error?.description.contains("orientcam list") == true)
  }
}

func mkdirAll(_ path: String) {
  var current = ""
  for part in path.split(separator: "/") {
    current += "/\(part)"
    mkdir(current, 0o755)
  }
}
