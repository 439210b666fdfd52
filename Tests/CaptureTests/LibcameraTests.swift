import Glibc
import Imaging
import JSON
import LibcameraKit
import OrientCore
import TestSupport
import TestThreads
import Testing
import V4L2Kit

@testable import Capture

private let vimcID = "platform/vimc.0 Sensor B"
private let uvcID = "\\_SB_.PCI0.XHC_.RHUB.HS02-2.4:1.0-046d:0825"

private func rgb24(_ code: String) -> UInt32 { FourCC(code)?.rawValue ?? 0 }

/// vimc as libcamera 0.0.3 describes it: no Location, no Rotation, BGR888 and RGB888 from
/// 48x48 to 4096x2160.
private let vimc = LibcameraCameraInfo(
  index: 0, id: vimcID, model: "Sensor B",
  formats: ["BG24", "RG24"].map { code in
    LibcameraFormatInfo(
      fourCC: rgb24(code), name: code == "BG24" ? "BGR888" : "RGB888",
      range: (
        LibcameraSize(width: 48, height: 48), LibcameraSize(width: 4096, height: 2160),
        LibcameraSize(width: 1, height: 1)
      ))
  })
private let webcam = LibcameraCameraInfo(
  index: 1, id: uvcID, model: "UVC Camera (046d:0825)", location: .external,
  formats: [
    LibcameraFormatInfo(
      fourCC: rgb24("MJPG"), name: "MJPEG", range: nil,
      sizes: [LibcameraSize(width: 1280, height: 960), LibcameraSize(width: 640, height: 480)])
  ])

@Suite(.ownThreads) struct LibcameraSourceChoiceTests {
  @Test("a camera is chosen by its id, by its number, or the first")
  func choice() throws {
    let cameras = [vimc, webcam]
    #expect(try LibcameraSource.choose(cameras, id: nil).id == vimcID)
    #expect(try LibcameraSource.choose(cameras, id: uvcID).id == uvcID)
    #expect(try LibcameraSource.choose(cameras, id: "2").id == uvcID)
    let unknown = #expect(throws: CaptureError.self) {
      try LibcameraSource.choose(cameras, id: "3")
    }
    #expect(unknown?.kind == .unavailable)
    #expect(
      unknown?.message.contains("1: \(vimcID), 2: \(uvcID)") == true,
      "\(String(describing: unknown))")
    let none = #expect(throws: CaptureError.self) { try LibcameraSource.choose([], id: nil) }
    #expect(none?.message.contains("libcamera found no camera") == true)
  }

  @Test("the front-camera guard refuses a camera below --min-resolution, naming the others")
  func minimum() throws {
    let small = FrameSize(width: 2000, height: 1000)
    let refused = #expect(throws: CaptureError.self) {
      try LibcameraSource.requireMinimum(webcam, minimum: small, others: [vimc, webcam])
    }
    #expect(refused?.kind == .unavailable)
    #expect(refused?.message.contains("external camera libcamera:\(uvcID)") == true)
    #expect(refused?.message.contains("--source libcamera:\(vimcID) (Sensor B, 4096x2160)") == true)
    try LibcameraSource.requireMinimum(vimc, minimum: small, others: [vimc, webcam])
  }
}

@Suite(.ownThreads) struct LibcameraListingTests {
  @Test("the video nodes this process holds are read from its descriptors")
  func heldNodes() throws {
    let dir = try TemporaryDirectory("fds")
    for (fd, target) in [
      ("3", "/dev/video3"), ("4", "/dev/null"), ("5", "/dev/video-ctl"), ("6", "/dev/video12"),
    ] {
      #expect(symlink(target, dir.file(fd)) == 0)
    }
    #expect(LibcameraListing.heldNodes(fdDirectory: dir.path) == ["/dev/video3", "/dev/video12"])
  }

  /// A sysfs tree as the kernel has it: vimc's three capture nodes on one platform device, a
  /// USB webcam's capture and metadata nodes on its interface, vivid alone. libcamera holds one
  /// node of vimc and the webcam's capture node.
  @Test("nodes are grouped by device and told apart per camera by libcamera's ids")
  func attribution() throws {
    let sys = try TemporaryDirectory("sys")
    let devices = [
      "video0": "devices/platform/vivid.0", "video1": "devices/platform/vimc.0",
      "video2": "devices/platform/vimc.0", "video3": "devices/platform/vimc.0",
      "video4": "devices/pci0000:00/0000:00:14.0/usb3/3-2/3-2.4/3-2.4:1.0",
      "video5": "devices/pci0000:00/0000:00:14.0/usb3/3-2/3-2.4/3-2.4:1.0",
    ]
    for (node, device) in devices {
      let link = sys.file("class/video4linux/\(node)")
      #expect(mkdirs(sys.file(device)) && mkdirs(link))
      #expect(symlink(sys.file(device), "\(link)/device") == 0)
    }
    let nodes = (0...5).map { "/dev/video\($0)" }
    let groups = LibcameraListing.group(
      nodes, held: ["/dev/video2", "/dev/video4"],
      device: { LibcameraListing.sysfsDevice(ofNode: $0, sysfsRoot: sys.path) })
    #expect(groups.count == 2)  // vivid is not libcamera's
    let (perCamera, shared) = LibcameraListing.attribute(
      cameraIDs: [vimcID, uvcID], groups: groups, sysfsRoot: resolved(sys.path))
    #expect(perCamera[0] == ["/dev/video1", "/dev/video2", "/dev/video3"])
    #expect(perCamera[1] == ["/dev/video4", "/dev/video5"])
    #expect(shared.isEmpty)
    // Two sensors described in firmware behind one ISP: neither id names the ISP's device.
    let isp = ["\(resolved(sys.path))/devices/platform/ff910000.isp": ["/dev/video7"]]
    let phone = LibcameraListing.attribute(
      cameraIDs: ["/base/i2c@ff110000/camera@36", "/base/i2c@ff110000/camera@10"], groups: isp,
      sysfsRoot: resolved(sys.path))
    #expect(phone.perCamera.isEmpty && phone.shared == ["/dev/video7"])
    // One camera: the group is its own, whatever its id.
    let one = LibcameraListing.attribute(
      cameraIDs: ["/base/i2c@ff110000/camera@36"], groups: isp, sysfsRoot: resolved(sys.path))
    #expect(one.perCamera[0] == ["/dev/video7"])
  }

  @Test("orientcam list shows libcamera's cameras and not their V4L2 nodes again")
  func listing() throws {
    func v4l2(_ path: String, _ driver: String) -> DeviceDescription {
      DeviceDescription(
        path: path,
        capability: DeviceCapability(
          driver: driver, card: driver, busInfo: "platform:\(driver)", capabilities: 0x0400_0001),
        formats: [
          FormatDescription(
            fourCC: PixelFormat.yuyv.fourCC, name: "YUYV",
            sizes: .discrete([FrameSize(width: 640, height: 480)]))
        ])
    }
    let devices = [v4l2("/dev/video0", "vivid"), v4l2("/dev/video1", "vimc")]
    let listing = LibcameraListing(
      version: "v0.0.3", cameras: [vimc, webcam], nodes: [0: ["/dev/video1"]],
      sharedNodes: ["/dev/video9"])
    let text = ListCommand.text(devices, libcamera: listing)
    #expect(text.contains("/dev/video0: vivid"))
    #expect(!text.contains("/dev/video1: vimc"), "\(text)")
    #expect(
      text.contains("libcamera:\(vimcID): Sensor B (libcamera v0.0.3)\n  largest: 4096x2160\n"))
    #expect(text.contains("  BGR888 (rgb24): 48x48 to 4096x2160 in steps of 1x1\n"))
    #expect(text.contains("  RGB888 (bgr24): "))
    #expect(text.contains("  V4L2 nodes: /dev/video1 (driven by libcamera)\n"))
    #expect(
      text.contains(
        "libcamera:\(uvcID): UVC Camera (046d:0825) (libcamera v0.0.3), external camera"))
    #expect(text.contains("  MJPEG (mjpeg): 1280x960, 640x480\n"))
    #expect(text.contains("libcamera drives /dev/video9 for its cameras"))

    guard case .array(let entries) = ListCommand.json(devices, libcamera: listing) else {
      Issue.record("not an array")
      return
    }
    #expect(
      entries.map { $0["source"]?.stringValue } == [
        "v4l2:/dev/video0", "libcamera:\(vimcID)", "libcamera:\(uvcID)",
      ])
    #expect(entries[1]["v4l2_devices"] == .array([.string("/dev/video1")]))
    #expect(entries[1]["position"] == .null && entries[1]["sensor_rotation"] == .null)
    let format = entries[1]["formats"]?.arrayValue?.first
    #expect(format?["format"]?.stringValue == "rgb24")
    #expect(format?["sizes"] == .array([.string("48x48-4096x2160")]))
    #expect(entries[2]["position"]?.stringValue == "external")
    #expect(entries[2]["largest"]?.stringValue == "1280x960")
  }
}

/// `realpath(3)` of a directory (the temporary folder may sit behind a symbolic link).
private func resolved(_ path: String) -> String {
  guard let real = realpath(path, nil) else { return path }
  defer { free(real) }
  return String(cString: real)
}

/// `mkdir -p`.
@discardableResult
private func mkdirs(_ path: String) -> Bool {
  var prefix = ""
  for part in path.split(separator: "/") {
    prefix += "/\(part)"
    if mkdir(prefix, 0o755) != 0 && errno != EEXIST { return false }
  }
  return true
}

@Suite(.ownThreads) struct LibcameraPhotoTests {
  /// The whole arithmetic as a photo takes it: a device held in each orientation, a camera
  /// mounted at 90 or 270 (what the sensor sees is the camera's view turned clockwise by its
  /// counter-clockwise correction), a pipeline that forces Identity or (ipu3/raspberrypi, 0.0.x)
  /// flips the sensor and reports Transpose; the source's correction and Location go into the
  /// plan as `capture` does. A rear camera's photo is the scene; a front camera's the scene
  /// mirrored, as with --mirror.
  @Test(
    "photos through libcamera come out upright for a sensor mounted at 90 or 270",
    arguments: Orientation.defined, [90, 270])
  func upright(orientation: Orientation, mounting: Int) {
    let scene = TestPattern.render(width: 48, height: 32)
    for location in [LibcameraLocation.back, .front] {
      let r = orientation.clockwiseRotation ?? 0
      // The camera's view: the scene turned against the device (back) or with it (front).
      let view = scene.transformed(ImageTransform(quarterTurns: (location == .front ? r : -r) / 90))
      let raw = view.transformed(ImageTransform(quarterTurns: mounting / 90))
      for pipeline in [LibcameraPipelineCase.forcesIdentity, .flipsSensor] {
        let (frame, applied) = pipeline.deliver(raw, rotation: mounting)
        let correction = LibcameraOrientation.correction(
          location: location, rotation: mounting, override: nil, applied: applied)
        let plan = RotationPlan(
          orientation: orientation, sensorRotation: correction.remaining.clockwiseDegrees,
          sensorMirrored: correction.remaining.mirrored, mirror: correction.facesUser)
        let photo = frame.transformed(plan.correction)
        let expected = location == .front ? scene.transformed(.mirror) : scene
        #expect(photo == expected, "\(orientation) \(location) mounted \(mounting) \(pipeline)")
      }
    }
  }
}

/// The two 0.0.x behaviours, as libcamera's pipelines do them for a sensor at 90 or 270 with
/// flips: requested Identity, combined = Identity * Rot90|Rot270 loses its transpose to
/// validate(), which reports Transpose; the sensor is flipped by what is left.
enum LibcameraPipelineCase {
  case forcesIdentity, flipsSensor

  func deliver(_ raw: RGBImage, rotation: Int) -> (RGBImage, PipelineApplied) {
    switch self {
    case .forcesIdentity:
      return (raw, .transform(.identity, combinedWithRotation: false))
    case .flipsSensor:
      let fromRotation = LibcameraTransform(fromRotation: rotation) ?? .identity
      let flips = LibcameraTransform(rawValue: fromRotation.rawValue & 3) ?? .identity
      return (
        raw.transformed(flips.imageTransform),
        .transform(.transpose, combinedWithRotation: true)
      )
    }
  }
}

@Suite(.ownThreads) struct LibcameraPluginMissingTests {
  /// orientcam without its libcamera plugin (a copy of the executable alone in a folder): it
  /// still lists the V4L2 cameras, warning that libcamera is missing and where the plugin was
  /// looked for; `--source libcamera` fails with 69 saying the same. libcamera is never linked
  /// into orientcam itself.
  @Test func withoutThePlugin() throws {
    let dir = try TemporaryDirectory("noplugin")
    let copy = dir.file("orientcam")
    let original = try Built.executable("orientcam")
    let copied = try ChildProcess.run(["cp", original, copy], outputDirectory: dir.path)
    #expect(copied.status == 0)
    let list = try ChildProcess.run([copy, "list"], outputDirectory: dir.path)
    #expect(list.status == 0, "\(list.stderr)")
    let missing =
      "libcamera plugin liborientcam-libcamera.so is not installed (looked for "
      + "\(dir.path)/liborientcam-libcamera.so"
    #expect(list.stderr.contains("warning: libcamera: orientcam's \(missing)"), "\(list.stderr)")
    let capture = try ChildProcess.run(
      [
        copy, "capture", "--source", "libcamera", "--orientation", "normal", "-o",
        dir.file("a.jpg"),
      ],
      outputDirectory: dir.path)
    #expect(capture.status == 69)
    #expect(capture.stderr.contains(missing), "\(capture.stderr)")
    let libraries = try ChildProcess.run(["ldd", original], outputDirectory: dir.path)
    #expect(!libraries.stdout.contains("libcamera"), "\(libraries.stdout)")
  }
}
