import CLibcameraAPI
import Imaging
import LibcameraKit
import Testing

@Suite struct FormatTests {
  private func name(_ fourCC: UInt32) -> String {
    var buffer = [CChar](repeating: 0, count: 64)
    plugin.format_name(fourCC, 0, &buffer, buffer.count)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  @Test("orientcam's layouts are the libcamera formats with libcamera's own codes")
  func codesAreLibcameras() {
    let known: [(orient_lc_known_format, PixelFormat, String)] = [
      (ORIENT_LC_FORMAT_MJPEG, .mjpeg, "MJPEG"), (ORIENT_LC_FORMAT_YUYV, .yuyv, "YUYV"),
      (ORIENT_LC_FORMAT_NV12, .nv12, "NV12"),
      // DRM names by the bits of a word: BGR888 is R, G, B in memory (V4L2's RGB24).
      (ORIENT_LC_FORMAT_BGR888, .rgb24, "BGR888"), (ORIENT_LC_FORMAT_RGB888, .bgr24, "RGB888"),
    ]
    for (format, layout, libcameraName) in known {
      let code = plugin.known_format_fourcc(format)
      #expect(LibcameraFormats.fourCC(for: layout) == code, "\(layout)")
      #expect(LibcameraFormats.pixelFormat(fourCC: code) == layout)
      #expect(name(code) == libcameraName)
    }
    #expect(LibcameraFormats.fourCC(for: .jpeg) == nil)
    // A tiled or compressed modifier is another layout.
    let nv12 = plugin.known_format_fourcc(ORIENT_LC_FORMAT_NV12)
    #expect(LibcameraFormats.pixelFormat(fourCC: nv12, modifier: 1) == nil)
    #expect(
      LibcameraFormats.fourCCs(for: PixelFormat.preference).map(name)
        == ["MJPEG", "YUYV", "NV12", "BGR888", "RGB888"])
  }
}

@Suite struct LogTests {
  @Test(
    "libcamera's log lines are told apart by severity",
    arguments: [
      ("[0:00:01.123456789] [4242]  INFO Camera camera_manager.cpp:293 libcamera v0.0.3", 1),
      ("[0:00:01.1] [7] ERROR V4L2 v4l2_videodevice.cpp:1 /dev/video2[12:cap]: busy", 3),
      ("[0:00:01.1] [7]  WARN IPAManager ipa_manager.cpp:1 not signed", 2),
      ("[0:00:01.1] [7] DEBUG Request request.cpp:1 x", 0),
      ("[0:00:01.1] [7] FATAL default x", 4),
      ("  #3 /usr/lib/libcamera.so.0.0.3(+0x1234)", -1),
      ("[0:00:01.1] [7] INFORMATION x", -1),
      ("", -1),
    ])
  func severity(line: String, expected: Int) {
    let found = line.withCString { plugin.log_severity($0, line.utf8.count) }
    #expect(Int(found) == expected)
  }
}

@Suite struct PluginTests {
  @Test("the plugin is looked for where a build and an installation put it")
  func candidates() {
    #expect(
      LibcameraPlugin.candidates(executable: "/usr/bin/orientcam", override: nil) == [
        "/usr/bin/liborientcam-libcamera.so", "/usr/bin/../lib/orientcam/liborientcam-libcamera.so",
      ])
    #expect(
      LibcameraPlugin.candidates(executable: "/b/debug/orientcam", override: "/x/p.so").first
        == "/x/p.so")
  }
}

@Suite struct ManagerTests {
  @Test("the manager starts on a machine without cameras, and again after it stopped")
  func startsWithoutCameras() throws {
    for _ in 0..<2 {
      let manager = try LibcameraManager()
      #expect(manager.version.hasPrefix("v0."))
      // This host has no media devices; a VM or a device has, and orientcam-libcamera checks them.
      #expect(manager.cameras.allSatisfy { !$0.id.isEmpty })
    }
    let headers = try LibcameraManager.headersVersion()
    #expect(headers.major == 0)
    #expect((plugin.headers_have_transform() == 1) == (headers.minor < 2))
  }
}
