import Capture
import Glibc
import Imaging
import JPEGKit
import JSON
import OrientCore
import TestSupport
import TestThreads
import Testing

/// Runs the built `orientcam`.
func orientcam(
  _ arguments: [String], in directory: TemporaryDirectory, stdin: String = "/dev/null"
) throws -> (status: Int32, stdout: String, stderr: String) {
  try ChildProcess.run(
    [try Built.executable("orientcam")] + arguments, stdin: stdin,
    outputDirectory: directory.path, timeout: 30)
}

/// The names in a directory, without the test's own output files.
func listing(_ path: String) -> [String] {
  guard let dir = opendir(path) else { return [] }
  defer { closedir(dir) }
  var names: [String] = []
  while let entry = readdir(dir) {
    let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
    if name != "." && name != ".." && !name.hasSuffix(".out") && !name.hasSuffix(".err") {
      names.append(name)
    }
  }
  return names.sorted()
}

func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

@Suite(.ownThreads) struct CommandLineTests {
  @Test func helpAndVersion() throws {
    let dir = try TemporaryDirectory("cli")
    let version = try orientcam(["--version"], in: dir)
    #expect(version.status == 0 && version.stdout.hasPrefix("orientcam "))
    for args in [["--help"], ["capture", "--help"], ["list", "--help"], ["help"]] {
      let help = try orientcam(args, in: dir)
      #expect(help.status == 0, "\(args)")
      #expect(help.stdout.contains("usage: orientcam"), "\(args)")
    }
  }

  @Test func unknownOptionsAreUsageErrors() throws {
    let dir = try TemporaryDirectory("cli")
    for (args, needle) in [
      (["capture", "--frobnicate"], "unknown option --frobnicate"),
      (["capture", "--quality"], "--quality needs a value"),
      (["list", "--all"], "unknown option --all"),
      (["shoot"], "unknown command \"shoot\""),
      ([], "missing command"),
    ] {
      let result = try orientcam(args, in: dir)
      #expect(result.status == 64, "\(args)")
      #expect(result.stderr.contains(needle), "\(args): \(result.stderr)")
    }
  }

  @Test func jsonReportAndOutsideDecoders() throws {
    let dir = try TemporaryDirectory("cli")
    let result = try orientcam(
      [
        "capture", "--source", "pattern", "--orientation", "left-up", "--json", "-o",
        dir.file("{orientation}-{n}.jpg"),
      ], in: dir)
    #expect(result.status == 0, "\(result.stderr)")
    let report = try JSONValue(parsing: result.stdout)
    let path = dir.file("left-up-1.jpg")
    #expect(report["path"]?.stringValue == path)
    #expect(report["orientation"]?.stringValue == "left-up")
    #expect(report["orientation_source"]?.stringValue == "--orientation")
    #expect(report["width"]?.numberValue == 720 && report["height"]?.numberValue == 1280)
    #expect(report["rotation"]?["degrees"]?.numberValue == 90)
    #expect(report["rotation"]?["method"]?.stringValue == "pixels")
    #expect(report["exif_orientation"]?.numberValue == 1)
    #expect(report["bytes"]?.numberValue == Double(readBytes(path).count))
    #expect((report["timings"]?["trigger_to_frame_ms"]?.numberValue ?? -1) >= 0)
    #expect((report["timings"]?["frame_to_file_ms"]?.numberValue ?? -1) >= 0)
    // The 0.1 spellings, written beside the snake_case keys until 0.3.
    #expect(report["orientationSource"] == report["orientation_source"])
    #expect(report["timings"]?["triggerToFrameMs"] == report["timings"]?["trigger_to_frame_ms"])
    // djpeg (libjpeg's own decoder) reads it; exiftran agrees on the tags.
    let djpeg = try ChildProcess.run(
      ["djpeg", "-outfile", "/dev/null", path], outputDirectory: dir.path)
    #expect(djpeg.status == 0 && djpeg.stderr.isEmpty, "\(djpeg.stderr)")
    let tags = try ChildProcess.run(["exiftran", "-d", path], outputDirectory: dir.path)
    #expect(tags.stdout.contains("Top-left"))
    #expect(tags.stdout.contains("test pattern"))
    // inspect sees the pattern upright.
    let inspect = try orientcam(["inspect", "--json", path], in: dir)
    let seen = try JSONValue(parsing: inspect.stdout)
    #expect(seen["pattern"]?["upright"]?.boolValue == true)
    #expect(seen["offset_time_original"]?.stringValue?.count == 6)
  }

  /// `--rotate exif` keeps the pixels and tags them; exiftran (an outside reader) agrees.
  @Test(arguments: [
    ("normal", "Top-left"), ("left-up", "Right-top"), ("bottom-up", "Bottom-right"),
    ("right-up", "Left-bottom"),
  ])
  func exifTagSeenByExiftran(_ orientation: String, _ text: String) throws {
    let dir = try TemporaryDirectory("cli")
    let path = dir.file("e.jpg")
    let result = try orientcam(
      [
        "capture", "--source", "pattern", "--orientation", orientation, "--rotate", "exif", "-o",
        path,
      ],
      in: dir)
    #expect(result.status == 0, "\(result.stderr)")
    let tags = try ChildProcess.run(["exiftran", "-d", path], outputDirectory: dir.path)
    #expect(tags.stdout.contains("Orientation                    \(text)"), "\(tags.stdout)")
    // exiftran -a applies the tag: afterwards the pixels are upright and the tag says so.
    let fixed = try ChildProcess.run(["exiftran", "-a", "-i", path], outputDirectory: dir.path)
    #expect(fixed.status == 0)
    let image = try JPEGDecoder().decode(readBytes(path))
    #expect(PatternProbe.probe(image).transform == .identity)
  }
}

/// `--mirror` (a front camera) end to end: the frame a front camera delivers is made by hand
/// from the geometry (see `RotationPlanTests.frontCameraComesOutMirroredUpright`: held turned
/// clockwise by r, it sees the scene turned clockwise by r), written as a JPEG and captured as a
/// file; the photo is the pattern upright and mirrored, whether orientcam turns the pixels or
/// only tags them (exiftran, an outside tool, applying the tag). The pattern source's own front
/// camera (`--source pattern --mirror`) must agree.
@Suite(.ownThreads) struct MirrorTests {
  @Test(arguments: Orientation.defined)
  func frontCameraPhotosAreMirroredUpright(_ orientation: Orientation) throws {
    let dir = try TemporaryDirectory("mirror")
    let r = orientation.clockwiseRotation ?? 0
    let frame = TestPattern.render(width: 320, height: 240).transformed(
      ImageTransform(quarterTurns: r / 90))
    try writeFile(dir.file("front.jpg"), try JPEGEncoder().encode(frame, quality: 95))
    for (source, rotate) in [
      ("file:\(dir.file("front.jpg"))", "both"), ("file:\(dir.file("front.jpg"))", "exif"),
      ("pattern", "both"), ("pattern", "exif"),
    ] {
      let out = dir.file("\(source.hasPrefix("file") ? "file" : "pattern")-\(rotate).jpg")
      let result = try orientcam(
        [
          "capture", "--source", source, "--orientation", orientation.rawValue, "--mirror",
          "--rotate", rotate, "--json", "-o", out,
        ], in: dir)
      #expect(result.status == 0, "\(source) \(rotate): \(result.stderr)")
      if rotate == "exif" {
        let applied = try ChildProcess.run(
          ["exiftran", "-a", "-i", out], outputDirectory: dir.path)
        #expect(applied.status == 0, "\(applied.stderr)")
      }
      let image = try JPEGDecoder().decode(readBytes(out))
      let probe = PatternProbe.probe(image)
      #expect(probe.transform == .mirror, "\(orientation) \(source) \(rotate): \(probe)")
    }
  }
}

@Suite(.ownThreads) struct BadInputTests {
  @Test func missingCamera() throws {
    let dir = try TemporaryDirectory("bad")
    let result = try orientcam(
      [
        "capture", "--source", "v4l2:/dev/video99", "--orientation", "normal", "-o",
        dir.file("x.jpg"),
      ],
      in: dir)
    #expect(result.status == 69)
    #expect(result.stderr.contains("/dev/video99: no such camera"), "\(result.stderr)")
    #expect(!exists(dir.file("x.jpg")))
  }

  @Test func inputFiles() throws {
    let dir = try TemporaryDirectory("bad")
    let good = try JPEGEncoder().encode(TestPattern.render(width: 320, height: 240), quality: 90)
    try writeFile(dir.file("garbage.jpg"), Array("this is not a JPEG at all".utf8))
    try writeFile(dir.file("truncated.jpg"), Array(good.prefix(good.count / 2)))
    var damaged = good
    // Scribble over the middle of the entropy-coded data (keeping the end marker).
    for i in (good.count / 2)..<(good.count / 2 + 64) { damaged[i] = UInt8(i & 0xFF) | 0x80 }
    try writeFile(dir.file("damaged.jpg"), damaged)
    mkdir(dir.file("folder.jpg"), 0o755)
    let cases: [(String, Int32, String)] = [
      ("garbage.jpg", 65, "not a readable JPEG"),
      ("truncated.jpg", 65, "truncated"),
      ("damaged.jpg", 65, "damaged.jpg"),
      ("missing.jpg", 66, "cannot open"),
      ("folder.jpg", 66, "is a directory"),
      ("nothing-*.jpg", 66, "no file matches"),
    ]
    // Turned losslessly, untouched, and only tagged: a damaged file is refused every way.
    let ways = [
      ["--orientation", "left-up"], ["--orientation", "normal"],
      ["--orientation", "left-up", "--rotate", "exif"],
    ]
    for (name, status, needle) in cases {
      for way in ways {
        let out = dir.file("out-\(name)")
        let result = try orientcam(
          ["capture", "--source", "file:\(dir.file(name))", "-o", out] + way, in: dir)
        #expect(result.status == status, "\(name) \(way): \(result.stderr)")
        #expect(result.stderr.contains(needle), "\(name) \(way): \(result.stderr)")
        #expect(!exists(out), "\(name) \(way): no output")
      }
    }
  }

  @Test func existingPhotoIsNotOverwritten() throws {
    let dir = try TemporaryDirectory("bad")
    let path = dir.file("photo.jpg")
    try writeFile(path, "precious")
    let args = ["capture", "--source", "pattern", "--orientation", "normal", "-o", path]
    let refused = try orientcam(args, in: dir)
    #expect(refused.status == 73)
    #expect(refused.stderr.contains("already exists"), "\(refused.stderr)")
    #expect(readFile(path) == "precious")
    #expect(listing(dir.path) == ["photo.jpg"])
    let forced = try orientcam(args + ["--force"], in: dir)
    #expect(forced.status == 0, "\(forced.stderr)")
    #expect(PatternProbe.probe(try JPEGDecoder().decode(readBytes(path))).transform == .identity)
    #expect(listing(dir.path) == ["photo.jpg"])  // no temporary files left
  }

  @Test func counterSkipsTakenNames() throws {
    let dir = try TemporaryDirectory("bad")
    try writeFile(dir.file("photo-1.jpg"), "taken")
    let result = try orientcam(
      [
        "capture", "--source", "pattern", "--orientation", "normal", "--count", "2", "-o",
        dir.file("photo-{n}.jpg"),
      ],
      in: dir)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "\(dir.file("photo-2.jpg"))\n\(dir.file("photo-3.jpg"))\n")
    #expect(readFile(dir.file("photo-1.jpg")) == "taken")
  }

  @Test func missingFolder() throws {
    let dir = try TemporaryDirectory("bad")
    let result = try orientcam(
      ["capture", "--source", "pattern", "--orientation", "normal", "-o", dir.file("nope/x.jpg")],
      in: dir)
    #expect(result.status == 73)
    #expect(result.stderr.contains("does not exist"), "\(result.stderr)")
  }

  @Test func minimumResolutionRefusesBeforeCapturing() throws {
    let dir = try TemporaryDirectory("bad")
    let result = try orientcam(
      [
        "capture", "--source", "pattern", "--resolution", "640x480", "--min-resolution",
        "1280x720", "--orientation", "normal", "-o", dir.file("x.jpg"),
      ], in: dir)
    #expect(result.status == 69)
    #expect(result.stderr.contains("best resolution is 640x480"), "\(result.stderr)")
    #expect(!exists(dir.file("x.jpg")))
  }

  /// The test pattern is drawn in memory at full size: beyond `JPEGLimits.maxPixels` (2^28)
  /// it is a usage error, said before anything is allocated, for capture and session alike.
  @Test(arguments: ["65536x65536", "16385x16384", "65536x4097"])
  func patternLargerThanTheLimitIsRefused(_ size: String) throws {
    let dir = try TemporaryDirectory("bad")
    for command in ["capture", "session"] {
      let result = try orientcam(
        [
          command, "--source", "pattern", "--resolution", size, "--orientation", "normal",
          "--headless", "-o", dir.file("x.jpg"),
        ].filter { command == "session" || $0 != "--headless" }, in: dir)
      #expect(result.status == 64, "\(command) \(size): \(result.stderr)")
      #expect(
        result.stderr.contains("--resolution \(size): the test pattern is at most 268 megapixels"),
        "\(result.stderr)")
      #expect(!exists(dir.file("x.jpg")))
    }
  }
}

/// Tests that mount small tmpfs filesystems (the suite runs as root, as CI does).
@Suite(.ownThreads, .serialized) struct FilesystemTests {
  final class Mount {
    let path: String
    init(_ path: String, options: String) throws {
      self.path = path
      let result = try ChildProcess.run(
        ["mount", "-t", "tmpfs", "-o", options, "orientcam-test", path], outputDirectory: "/tmp")
      guard result.status == 0 else {
        throw TestFailure("mount tmpfs (\(options)) on \(path) failed: \(result.stderr)")
      }
    }
    deinit { _ = try? ChildProcess.run(["umount", "-l", path], outputDirectory: "/tmp") }
  }

  @Test func fullDiskLeavesNothing() throws {
    let dir = try TemporaryDirectory("full")
    let target = dir.file("disk")
    mkdir(target, 0o755)
    let mount = try Mount(target, options: "size=64k")
    // Leave only a few KiB free.
    try writeFile("\(mount.path)/filler", [UInt8](repeating: 1, count: 56 * 1024))
    let result = try orientcam(
      [
        "capture", "--source", "pattern", "--resolution", "1920x1080", "--quality", "100",
        "--orientation", "left-up", "-o", "\(mount.path)/photo.jpg",
      ], in: dir)
    #expect(result.status == 74, "\(result.stderr)")
    #expect(result.stderr.contains("No space left on device"), "\(result.stderr)")
    #expect(result.stderr.contains("no file was written"))
    #expect(listing(mount.path) == ["filler"])
  }

  @Test func readOnlyFolder() throws {
    let dir = try TemporaryDirectory("ro")
    let target = dir.file("ro")
    mkdir(target, 0o755)
    let mount = try Mount(target, options: "ro,size=64k")
    let result = try orientcam(
      [
        "capture", "--source", "pattern", "--orientation", "normal", "-o",
        "\(mount.path)/photo.jpg",
      ],
      in: dir)
    #expect(result.status == 73, "\(result.stderr)")
    #expect(result.stderr.contains("read-only file system"), "\(result.stderr)")
    #expect(listing(mount.path).isEmpty)
    // Root ignores permission bits, so a chmod'ed folder would not have shown anything: the
    // mount is what refuses. Check that it really is read-only for this (root) process.
    #expect(open("\(mount.path)/probe", O_WRONLY | O_CREAT, 0o644) == -1 && errno == EROFS)
  }

  /// The disk fills in the middle of a run of photos (`--count 8` into a filesystem with room
  /// for two or three): the photos written before it stay whole and upright, the one that did
  /// not fit leaves nothing (not even a hidden temporary file), the run ends with 74 and says
  /// which file and why.
  @Test func diskFillsDuringARun() throws {
    let dir = try TemporaryDirectory("full")
    let target = dir.file("disk")
    mkdir(target, 0o755)
    let mount = try Mount(target, options: "size=320k")
    let result = try orientcam(
      [
        "capture", "--source", "pattern", "--resolution", "1920x1080", "--quality", "95",
        "--orientation", "right-up", "--count", "8", "-o", "\(mount.path)/p-{n}.jpg",
      ], in: dir)
    #expect(result.status == 74, "\(result.stderr)")
    let written = result.stdout.split(separator: "\n").map(String.init)
    #expect(written.count >= 1 && written.count < 8, "\(result.stdout)")
    let next = "\(mount.path)/p-\(written.count + 1).jpg"
    #expect(
      result.stderr.contains(
        "\(next): No space left on device in \(mount.path); no file was written"),
      "\(result.stderr)")
    #expect(listing(mount.path) == written.map { String($0.split(separator: "/").last ?? "") })
    for path in written {
      let image = try JPEGDecoder().decode(readBytes(path))
      #expect(PatternProbe.probe(image).transform == .identity, "\(path)")
    }
  }

  /// A filesystem without hard links or unnamed files (vfat, exfat: emulated by faultfs.so,
  /// since this kernel has no vfat): the photo is named with renameat2(RENAME_NOREPLACE),
  /// still never replacing a photo that is there; where even that flag is missing, a check and
  /// rename(2). No temporary file is left either way.
  @Test(arguments: ["vfat", "vfat,no-noreplace"])
  func noHardLinks(_ faults: String) throws {
    let dir = try TemporaryDirectory("vfat")
    let library = try FaultLibrary(in: dir)
    let out = dir.file("out")
    mkdir(out, 0o755)
    try writeFile("\(out)/p-1.jpg", "earlier photo")
    func capture(_ args: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
      try ChildProcess.run(
        [
          try Built.executable("orientcam"), "capture", "--source", "pattern", "--orientation",
          "left-up",
        ] + args,
        environment: library.environment(faults), outputDirectory: dir.path, timeout: 30)
    }
    let counted = try capture(["--count", "2", "-o", "\(out)/p-{n}.jpg"])
    #expect(counted.status == 0, "\(counted.stderr)")
    #expect(counted.stdout == "\(out)/p-2.jpg\n\(out)/p-3.jpg\n")
    #expect(readFile("\(out)/p-1.jpg") == "earlier photo")
    let taken = try capture(["-o", "\(out)/p-1.jpg"])
    #expect(taken.status == 73, "\(taken.stderr)")
    #expect(taken.stderr.contains("p-1.jpg already exists; no file was written"))
    #expect(readFile("\(out)/p-1.jpg") == "earlier photo")
    let forced = try capture(["-o", "\(out)/p-1.jpg", "--force"])
    #expect(forced.status == 0, "\(forced.stderr)")
    for name in ["p-1.jpg", "p-2.jpg", "p-3.jpg"] {
      let image = try JPEGDecoder().decode(readBytes("\(out)/\(name)"))
      #expect(PatternProbe.probe(image).transform == .identity, "\(name)")
    }
    #expect(listing(out) == ["p-1.jpg", "p-2.jpg", "p-3.jpg"])
  }

  /// The folder cannot be synced after the photo got its name (EIO from fsync of the folder,
  /// injected): the error is reported, not swallowed. Without --force the new name is taken
  /// back, so the failure leaves no file; with --force the old photo is already replaced, so
  /// the new one stays and the message says it may not survive a crash.
  @Test func folderSyncFailureIsReported() throws {
    let dir = try TemporaryDirectory("dirsync")
    let library = try FaultLibrary(in: dir)
    let out = dir.file("out")
    mkdir(out, 0o755)
    try writeFile("\(out)/old.jpg", "earlier photo")
    for unnamed in [true, false] {
      let faults = unnamed ? "dirsync-eio" : "dirsync-eio,vfat"
      let result = try ChildProcess.run(
        [
          try Built.executable("orientcam"), "capture", "--source", "pattern", "--orientation",
          "normal", "-o", "\(out)/new.jpg",
        ], environment: library.environment(faults), outputDirectory: dir.path, timeout: 30)
      #expect(result.status == 74, "\(faults): \(result.stderr)")
      #expect(
        result.stderr.contains(
          "new.jpg: syncing the folder \(out) failed: Input/output error, so the photo could "
            + "not be made durable; no file was written"), "\(result.stderr)")
      #expect(listing(out) == ["old.jpg"], "\(faults)")
    }
    let forced = try ChildProcess.run(
      [
        try Built.executable("orientcam"), "capture", "--source", "pattern", "--orientation",
        "normal", "-o", "\(out)/old.jpg", "--force",
      ], environment: library.environment("dirsync-eio"), outputDirectory: dir.path, timeout: 30)
    #expect(forced.status == 74, "\(forced.stderr)")
    #expect(
      forced.stderr.contains("old.jpg is written, but syncing the folder"), "\(forced.stderr)")
    #expect(
      PatternProbe.probe(try JPEGDecoder().decode(readBytes("\(out)/old.jpg"))).transform
        == .identity)
    #expect(listing(out) == ["old.jpg"])
  }

  /// SIGKILL in the middle of writing a photo (faultfs.so stops the process half-way through
  /// the write and says so; the test then kills it): an existing photo that `--force` was
  /// replacing keeps its old bytes, and nothing else is in the folder: with O_TMPFILE the
  /// kernel frees the unnamed file with the process. Where the filesystem needs a named
  /// temporary file (vfat), the killed run leaves `.NAME.orientcam-PID-XXXXXX` behind, which
  /// no reader takes for a photo, and the next orientcam writing to that folder removes it.
  @Test(arguments: [false, true])
  func killedWhileWriting(_ vfat: Bool) throws {
    let dir = try TemporaryDirectory("kill")
    let library = try FaultLibrary(in: dir)
    let out = dir.file("out")
    mkdir(out, 0o755)
    let earlier = try JPEGEncoder().encode(TestPattern.render(width: 64, height: 48), quality: 80)
    try writeFile("\(out)/photo.jpg", earlier)
    let marker = dir.file("stalled")
    let child = try ChildProcess(
      [
        try Built.executable("orientcam"), "capture", "--source", "pattern", "--resolution",
        "1280x720", "--orientation", "left-up", "-o", "\(out)/photo.jpg", "--force",
      ],
      environment: library.environment(
        vfat ? "stall-write=1,vfat" : "stall-write=1", marker: marker),
      outputDirectory: dir.path)
    #expect(waitFor(timeout: 20) { exists(marker) || !child.isRunning }, "never stalled")
    #expect(child.isRunning, "\(child.standardError)")
    child.signal(SIGKILL)
    #expect(child.wait(timeout: 10) == 128 + SIGKILL)
    #expect(readBytes("\(out)/photo.jpg") == earlier)
    let left = listing(out)
    if vfat {
      #expect(
        left.count == 2 && left.first?.hasPrefix(".photo.jpg.orientcam-\(child.pid)-") == true)
      // The next run into the folder clears it (the process it names is gone).
      let next = try orientcam(
        [
          "capture", "--source", "pattern", "--orientation", "normal", "-o", "\(out)/next.jpg",
        ], in: dir)
      #expect(next.status == 0, "\(next.stderr)")
      #expect(next.stderr.contains("removed \(out)/.photo.jpg.orientcam-\(child.pid)-"))
      #expect(listing(out) == ["next.jpg", "photo.jpg"])
    } else {
      #expect(left == ["photo.jpg"])
    }
  }
}

@Suite(.ownThreads) struct OrientationSourceTests {
  static let lines = """
    {"time":10.0,"orientation":"normal","rotation":0,"tilt":"vertical"}
    {"time":11.5,"orientation":"right-up","rotation":270,"tilt":"vertical"}
    this line is not JSON
    {"time":12.0,"orientation":"left-up","rotation":90,"tilt":"vertical"}

    """

  func check(_ path: String, _ orientation: String) throws {
    let image = try JPEGDecoder().decode(readBytes(path))
    #expect(PatternProbe.probe(image).transform == .identity)
    #expect(image.width == 720 && image.height == 1280, "\(orientation)")
  }

  @Test func latestLineFromAFileWins() throws {
    let dir = try TemporaryDirectory("watch")
    try writeFile(dir.file("watch.log"), Self.lines)
    let result = try orientcam(
      [
        "capture", "--source", "pattern", "--orientation-from", dir.file("watch.log"), "--json",
        "-o", dir.file("p.jpg"),
      ], in: dir)
    #expect(result.status == 0, "\(result.stderr)")
    let report = try JSONValue(parsing: result.stdout)
    #expect(report["orientation"]?.stringValue == "left-up")
    #expect(report["orientation_source"]?.stringValue == "\(dir.file("watch.log")):4")
    #expect(result.stderr.contains("watch.log:3: not JSON"), "\(result.stderr)")
    try check(dir.file("p.jpg"), "left-up")
  }

  @Test func stdinAtEndOfInput() throws {
    let dir = try TemporaryDirectory("watch")
    try writeFile(dir.file("watch.log"), Self.lines)
    let result = try orientcam(
      ["capture", "--source", "pattern", "--orientation-from", "-", "-o", dir.file("p.jpg")],
      in: dir, stdin: dir.file("watch.log"))
    #expect(result.status == 0, "\(result.stderr)")
    try check(dir.file("p.jpg"), "left-up")
  }

  /// orientcam reads stdin without setting O_NONBLOCK on it: that flag belongs to the open
  /// file description, which the caller's shell and the other programs of the pipeline share,
  /// and it would stay set after orientcam exits. The next command in the same group reads
  /// the flags of the very same description from /proc.
  @Test func stdinIsLeftBlocking() throws {
    let dir = try TemporaryDirectory("watch")
    let script = """
      (echo '{"orientation":"left-up"}'; sleep 1) | {
        "$0" capture --source pattern --orientation-from - -o "$1/p.jpg"
        echo "status $?"
        sed -n 's/^flags:[[:space:]]*/flags /p' /proc/self/fdinfo/0
      }
      """
    let result = try ChildProcess.run(
      ["sh", "-c", script, try Built.executable("orientcam"), dir.path],
      outputDirectory: dir.path)
    #expect(result.stdout.contains("status 0"), "\(result.stdout) \(result.stderr)")
    let flags = try #require(
      result.stdout.split(separator: "\n").first { $0.hasPrefix("flags ") }
        .flatMap { Int($0.dropFirst(6), radix: 8) })
    #expect(flags & Int(O_NONBLOCK) == 0, "flags \(String(flags, radix: 8))")
    try check(dir.file("p.jpg"), "left-up")
  }

  /// A live `orientd --watch --json | orientcam ...` pipe never ends: orientcam takes the lines
  /// that have arrived and does not wait for end of input.
  @Test func livePipeIsNotWaitedFor() throws {
    let dir = try TemporaryDirectory("watch")
    let fifo = dir.file("watch.fifo")
    #expect(mkfifo(fifo, 0o600) == 0)
    let writer = open(fifo, O_RDWR)  // stays open: the pipe never reaches end of input
    defer { close(writer) }
    let text = Array(Self.lines.utf8)
    #expect(write(writer, text, text.count) == text.count)
    let result = try orientcam(
      ["capture", "--source", "pattern", "--orientation-from", "-", "-o", dir.file("p.jpg")],
      in: dir, stdin: fifo)
    #expect(result.status == 0, "\(result.stderr)")
    try check(dir.file("p.jpg"), "left-up")
  }

  /// Only malformed lines: the wrong input (65). Only "undefined" or nothing at all: no
  /// reading (69), which --orientation-fallback covers.
  @Test func noUsableLine() throws {
    let dir = try TemporaryDirectory("watch")
    try writeFile(dir.file("bad.log"), "nonsense\n[1]\n")
    try writeFile(dir.file("flat.log"), "nonsense\n{\"orientation\":\"undefined\"}\n")
    try writeFile(dir.file("empty.log"), "")
    for (name, status, needle) in [
      ("bad.log", Int32(65), "bad.log:1: not JSON"), ("flat.log", 69, "only \"undefined\""),
      ("empty.log", 69, "ended after 0 line(s)"),
    ] {
      let args = [
        "capture", "--source", "pattern", "--orientation-from", dir.file(name), "-o",
        dir.file("p.jpg"),
      ]
      let result = try orientcam(args, in: dir)
      #expect(result.status == status, "\(name): \(result.stderr)")
      #expect(result.stderr.contains("no orientation"), "\(name): \(result.stderr)")
      #expect(result.stderr.contains(needle), "\(name): \(result.stderr)")
      #expect(!exists(dir.file("p.jpg")))
      if status == 69 {
        let allowed = try orientcam(args + ["--orientation-fallback", "normal"], in: dir)
        #expect(allowed.status == 0, "\(name): \(allowed.stderr)")
        #expect(exists(dir.file("p.jpg")))
        unlink(dir.file("p.jpg"))
      }
    }
  }

  @Test func autoWithoutOrientdNeedsAFallback() throws {
    let dir = try TemporaryDirectory("auto")
    let refused = try orientcam(
      ["capture", "--source", "pattern", "-o", dir.file("p.jpg")], in: dir)
    #expect(refused.status == 69)
    #expect(refused.stderr.contains("orientd not reachable"), "\(refused.stderr)")
    #expect(refused.stderr.contains("--orientation-fallback normal"))
    #expect(!exists(dir.file("p.jpg")))
    let allowed = try orientcam(
      [
        "capture", "--source", "pattern", "--orientation-fallback", "normal", "--json", "-o",
        dir.file("p.jpg"),
      ],
      in: dir)
    #expect(allowed.status == 0, "\(allowed.stderr)")
    #expect(allowed.stderr.contains("using --orientation-fallback normal"))
    let report = try JSONValue(parsing: allowed.stdout)
    #expect(report["orientation_source"]?.stringValue == "fallback")
  }
}

@Suite(.ownThreads) struct ListCommandTests {
  /// `orientcam list` over a /dev of the test's making (a private mount namespace with a
  /// tmpfs on /dev, so the host's cameras do not matter): a node that is not a V4L2 device
  /// (/dev/null's numbers, a regular file) is left out silently; a video4linux node with no
  /// driver behind it is reported on stderr with its path and reason; the list is empty, in
  /// JSON and in text (libcamera, asked too, finds no camera here), and the exit status 0.
  @Test func listsWhatIsThere() throws {
    let dir = try TemporaryDirectory("list")
    let orientcam = try Built.executable("orientcam")
    let script = """
      mount -t tmpfs orientcam-dev /dev && mknod /dev/video0 c 1 3 && touch /dev/video3 \
        && mknod /dev/video12 c 81 250 || exit 99
      "$0" list --json >"$1/list.json"; echo "json $?"
      "$0" list; echo "text $?"
      rm /dev/video12; "$0" list --json; echo "empty $?"
      """
    let result = try ChildProcess.run(
      ["unshare", "-m", "sh", "-c", script, orientcam, dir.path], outputDirectory: dir.path)
    #expect(result.status == 0, "\(result.stderr)")
    let cameras = try JSONValue(parsing: readFile(dir.file("list.json")))
    #expect(cameras == .array([]))
    #expect(result.stdout.contains("json 0\n"))
    #expect(
      result.stdout.contains(
        "no cameras found (no V4L2 capture device under /dev/video*, none through libcamera)\n"
          + "text 0\n"),
      "\(result.stdout)")
    #expect(result.stdout.hasSuffix("[]\nempty 0\n"), "\(result.stdout)")
    let warnings = result.stderr.split(separator: "\n").filter { $0.contains("warning") }
    #expect(warnings.count == 2, "\(result.stderr)")  // the two lists with video12
    #expect(
      warnings.allSatisfy { $0.contains("/dev/video12: no such camera (open: ") },
      "\(result.stderr)")
    #expect(!result.stderr.contains("/dev/video0") && !result.stderr.contains("/dev/video3"))
  }
}
