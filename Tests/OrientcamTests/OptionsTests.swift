import Capture
import Imaging
import OrientCore
import Testing
import V4L2Kit

@testable import orientcam

@Suite struct OptionsTests {
  @Test func defaults() throws {
    let o = try CaptureOptions(arguments: [])
    #expect(o.source == .camera(path: nil))
    #expect(o.orientation == .auto)
    #expect(o.rotate == .both)
    #expect(o.lossless == .reencode)
    #expect(o.quality == 90)
    #expect(o.output.hasCounter)
  }

  @Test func everything() throws {
    let o = try CaptureOptions(arguments: [
      "--source", "v4l2:/dev/video2", "--resolution=1280x720", "--format", "yuyv,mjpeg",
      "--skip", "5", "--count", "2", "--orientation", "right-up", "--sensor-rotation", "-90",
      "--mirror", "--rotate", "exif", "--lossless", "trim", "--quality", "75", "-o",
      "x-{n}.jpg", "--force", "--min-resolution", "640x480", "--json", "-v",
    ])
    #expect(o.source == .camera(path: "/dev/video2"))
    #expect(o.resolution == FrameSize(width: 1280, height: 720))
    #expect(o.formats == [.yuyv, .mjpeg])
    #expect(o.skip == 5 && o.count == 2)
    #expect(o.orientation == .fixed(.rightUp))
    #expect(o.sensorRotation == 270)
    #expect(o.mirror && o.force && o.json && o.verbose)
    #expect(o.rotate == .exif && o.lossless == .trim && o.quality == 75)
  }

  @Test func sources() throws {
    #expect(try SourceSpec(parsing: "pattern") == .pattern(held: nil))
    #expect(try SourceSpec(parsing: "pattern:left-up") == .pattern(held: .leftUp))
    #expect(try SourceSpec(parsing: "file:a/*.jpg") == .file("a/*.jpg"))
    #expect(try SourceSpec(parsing: "v4l2") == .camera(path: nil))
    #expect(try SourceSpec(parsing: "libcamera") == .libcamera(id: nil))
    // Ids hold slashes, spaces and colons; taken whole.
    let id = "platform/vimc.0 Sensor B"
    #expect(try SourceSpec(parsing: "libcamera:\(id)") == .libcamera(id: id))
    #expect(try SourceSpec(parsing: "libcamera:2") == .libcamera(id: "2"))
    #expect(SourceSpec.libcamera(id: id).description == "libcamera:\(id)")
    #expect(SourceSpec.libcamera(id: nil).description == "libcamera")
  }

  @Test(arguments: [
    ["--bogus"], ["extra"], ["--quality"], ["--quality", "0"], ["--quality", "101"],
    ["--rotate", "sideways"], ["--lossless", "maybe"], ["--orientation", "up"],
    ["--orientation", "normal", "--orientation-from", "-"], ["--sensor-rotation", "45"],
    ["--source", "camera"], ["--source", "pattern:undefined"], ["--source", "v4l2:video0"],
    ["--source", "libcamera:"], ["--source", "libcam"],
    ["--resolution", "big"], ["--format", "h264"], ["--mirror=yes"],
    ["--orientation", "normal", "--orientation-fallback", "normal"], ["-o", "{date}.jpg"],
    ["--source", "file:x.jpg", "--min-resolution", "10x10"],
  ])
  func usageErrors(_ arguments: [String]) {
    let error = #expect(throws: CaptureError.self) { try CaptureOptions(arguments: arguments) }
    #expect(error?.kind == .usage)
  }

  @Test func commands() throws {
    #expect(try OrientcamCommand(arguments: ["--version"]) == .version)
    #expect(try OrientcamCommand(arguments: ["--help"]) == .help(nil))
    #expect(try OrientcamCommand(arguments: ["capture", "--help"]) == .help("capture"))
    #expect(try OrientcamCommand(arguments: ["list", "--json"]) == .list(json: true))
    #expect(
      try OrientcamCommand(arguments: ["inspect", "a.jpg"])
        == .inspect(paths: ["a.jpg"], json: false))
    for bad in [[], ["shoot"], ["--frobnicate"], ["list", "--all"], ["inspect"]] {
      #expect(throws: CaptureError.self, "\(bad)") { try OrientcamCommand(arguments: bad) }
    }
  }
}
