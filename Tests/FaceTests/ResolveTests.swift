import Glibc
import JSON
import TestSupport
import TestThreads
import Testing

/// `orientd-face resolve` with a file camera: a directory of JPEG frames.
@Suite(
  .ownThreads,
  .enabled(if: runsInCI || Photos.available, "the photographs or Pillow are not installed"))
struct ResolveTests {
  /// A file camera whose one frame is Grace Hopper turned `degrees` clockwise (mirrored first
  /// when asked), as a camera would deliver it.
  func camera(degrees: Int, mirrored: Bool = false, in directory: TemporaryDirectory) throws
    -> String
  {
    let folder = directory.file("camera-\(degrees)\(mirrored ? "-mirrored" : "")")
    mkdir(folder, 0o755)
    try Photos.turned(
      Photos.hopper, degrees: degrees, mirrored: mirrored, to: folder + "/0001.jpg", logs: directory
    )
    return "file:\(folder)"
  }

  func resolve(
    _ camera: String, current: String, proposed: String, _ extra: [String] = [],
    in directory: TemporaryDirectory
  ) throws -> (JSONValue, String) {
    // A loaded CI machine runs the debug build, several at once: give it time (timing is the
    // benchmark's).
    let result = try orientdFace(
      [
        "resolve", "--camera", camera, "--current", current, "--proposed", proposed,
        "--timeout", "30000",
      ] + extra, in: directory)
    #expect(result.status == 0, "\(result.stderr)")
    let lines = try jsonLines(result.stdout)
    try #require(lines.count == 1, "\(result.stdout)")
    return (lines[0], result.stderr)
  }

  @Test func anUprightFaceVetoesATurnAndTheCameraUseIsLogged() throws {
    let directory = try TemporaryDirectory("face-resolve")
    let camera = try camera(degrees: 0, in: directory)
    let (answer, log) = try resolve(camera, current: "normal", proposed: "left-up", in: directory)
    #expect(answer["answer"] == .string("veto"), "\(answer)")
    #expect(answer["face"] == .string("normal") && answer["head_toward"] == .string("top"))
    #expect(answer["faces"] == .number(1) && answer["frames"] == .number(1))
    let folder = String(camera.dropFirst(5))
    #expect(
      log.contains("camera file:\(folder)/* opened for a proposed rotation normal -> left-up"))
    #expect(log.contains("camera file:\(folder)/* closed"))
  }

  /// Lying on the right side with the device upright in portrait: the head points to the
  /// display's left edge, which a front camera (mirror image) shows on its frame's right.
  @Test func theFrontCameraMirrorImageIsAccountedFor() throws {
    let directory = try TemporaryDirectory("face-resolve")
    let camera = try camera(degrees: 90, in: directory)
    let (front, _) = try resolve(camera, current: "left-up", proposed: "normal", in: directory)
    #expect(front["head_toward"] == .string("right"))
    #expect(front["face"] == .string("left-up") && front["answer"] == .string("veto"), "\(front)")
    let (back, _) = try resolve(
      camera, current: "left-up", proposed: "normal", ["--no-mirror"], in: directory)
    #expect(back["face"] == .string("right-up") && back["answer"] == .string("accept"), "\(back)")
  }

  @Test func theMountingCorrectionIsApplied() throws {
    let directory = try TemporaryDirectory("face-resolve")
    // A sensor mounted a quarter turn counter-clockwise delivers the upright scene turned
    // counter-clockwise; its correction is 90 clockwise.
    let camera = try camera(degrees: 270, in: directory)
    let (answer, _) = try resolve(
      camera, current: "normal", proposed: "right-up", ["--sensor-rotation", "90"], in: directory)
    #expect(answer["face"] == .string("normal") && answer["answer"] == .string("veto"), "\(answer)")
  }

  @Test func noFaceAccepts() throws {
    let directory = try TemporaryDirectory("face-resolve")
    let folder = directory.file("empty-room")
    mkdir(folder, 0o755)
    try Photos.turned(Photos.noFace[0], degrees: 0, to: folder + "/1.jpg", logs: directory)
    try Photos.turned(Photos.noFace[1], degrees: 0, to: folder + "/2.jpg", logs: directory)
    let (answer, _) = try resolve(
      "file:\(folder)", current: "normal", proposed: "left-up", in: directory)
    #expect(answer["answer"] == .string("accept") && answer["face"] == .null, "\(answer)")
    #expect(
      answer["frames"] == .number(2) && answer["reason"] == .string("no face in 2 frames"),
      "\(answer)")
  }

  @Test func aCameraThatCannotAnswerIsUnknown() throws {
    let directory = try TemporaryDirectory("face-resolve")
    let (missing, log) = try resolve(
      "v4l2:/dev/video-none", current: "normal", proposed: "left-up", in: directory)
    #expect(missing["answer"] == .string("unknown"), "\(missing)")
    #expect(log.contains("cannot open the camera: /dev/video-none"))
    let (libcamera, _) = try resolve(
      "libcamera", current: "normal", proposed: "left-up", in: directory)
    #expect(libcamera["answer"] == .string("unknown"))
    #expect(libcamera["reason"]?.stringValue?.contains("no libcamera source yet") == true)
    mkdir(directory.file("frames"), 0o755)
    try writeFile(directory.file("frames/1.jpg"), "not a JPEG")
    let (broken, _) = try resolve(
      "file:\(directory.file("frames"))", current: "normal", proposed: "left-up", in: directory)
    #expect(broken["answer"] == .string("unknown") && broken["frames"] == .number(0), "\(broken)")
  }

  @Test func theDecodedDetectorIsCached() throws {
    let directory = try TemporaryDirectory("face-cache")
    let camera = try camera(degrees: 0, in: directory)
    let arguments = [
      try Built.executable("orientd-face"), "resolve", "--camera", camera, "--current", "normal",
      "--proposed", "bottom-up", "--timeout", "30000", "-v",
    ]
    let environment = ["XDG_CACHE_HOME": directory.file("cache"), "CACHE_DIRECTORY": ""]
    let first = try ChildProcess.run(
      arguments, environment: environment, outputDirectory: directory.path, timeout: 120)
    #expect(
      first.stderr.contains(
        "cached in \(directory.file("cache"))/orientd/frontal-face-detector.dat"), "\(first.stderr)"
    )
    let second = try ChildProcess.run(
      arguments, environment: environment, outputDirectory: directory.path, timeout: 120)
    #expect(second.stderr.contains("detector read from "), "\(second.stderr)")
    #expect(try jsonLines(second.stdout).first?["answer"] == .string("veto"))
  }
}
