import Glibc
import Imaging
import JPEGKit
import JSON
import TestSupport
import TestThreads
import Testing

/// `orientcam session` end to end with the test pattern: real process, real signals, real
/// files, umockdev-replayed evdev keys.
@Suite(.ownThreads) struct SessionTests {
  /// Enter on stdin takes a photo each time (two lines at once: two photos); q ends cleanly.
  @Test func stdinTriggersAndQuit() throws {
    let dir = try TemporaryDirectory("session")
    let session = try SessionProcess(
      [
        "--source", "pattern", "--resolution", "640x360", "--orientation", "left-up",
        "--headless", "-o", dir.file("{orientation}-{n}.jpg"),
      ], in: dir)
    #expect(session.ready["orientation"]?.stringValue == "left-up")
    #expect(session.ready["preview"] == .null)
    session.stdin.send("\n")
    try session.waitFor("photo")
    session.stdin.send("\n\n")
    try session.waitFor("photo", count: 3)
    session.stdin.send("q\n")
    #expect(try session.exitStatus() == 0)
    let photos = session.events("photo")
    #expect(photos.map { $0["trigger"]?.stringValue } == ["stdin", "stdin", "stdin"])
    #expect(session.events("end").first?["reason"]?.stringValue == "q")
    #expect(photoFiles(dir.path) == ["left-up-1.jpg", "left-up-2.jpg", "left-up-3.jpg"])
    for photo in photos {
      let path = try #require(photo["path"]?.stringValue)
      try expectUprightPhoto(path, width: 360, height: 640)
      let timings = try #require(photo["timings"])
      let total = try #require(timings["trigger_to_file_ms"]?.numberValue)
      let parts =
        (timings["trigger_to_frame_ms"]?.numberValue ?? 0)
        + (timings["frame_to_file_ms"]?.numberValue ?? 0)
      #expect(total > 0 && abs(total - parts) < 0.01)
      #expect(photo["exif_orientation"]?.numberValue == 1)
    }
  }

  /// SIGUSR1 takes a burst of photos per signal; SIGUSR2 ends cleanly.
  @Test func signalsTriggerBurstsAndEnd() throws {
    let dir = try TemporaryDirectory("session")
    let session = try SessionProcess(
      [
        "--source", "pattern", "--resolution", "640x360", "--orientation", "bottom-up",
        "--headless", "--burst", "3", "-o", dir.file("b-{n}.jpg"),
      ], in: dir)
    session.signal(SIGUSR1)
    try session.waitFor("photo", count: 3)
    session.signal(SIGUSR1)
    try session.waitFor("photo", count: 6)
    session.signal(SIGUSR2)
    #expect(try session.exitStatus() == 0)
    let photos = session.events("photo")
    #expect(photos.count == 6)
    #expect(photos.map { $0["burst_index"]?.numberValue } == [1, 2, 3, 1, 2, 3])
    // The 0.1 spelling, written beside the snake_case key until 0.3.
    #expect(photos.map { $0["burstIndex"] } == photos.map { $0["burst_index"] })
    #expect(photos.allSatisfy { $0["trigger"]?.stringValue == "SIGUSR1" })
    #expect(session.events("end").first?["reason"]?.stringValue == "SIGUSR2")
    for photo in photos {
      try expectUprightPhoto(try #require(photo["path"]?.stringValue), width: 640, height: 360)
      #expect(photo["rotation"]?["degrees"]?.numberValue == 180)
    }
  }

  /// Volume keys replayed by umockdev from a recorded-format event stream: volume up (with an
  /// auto-repeat, which is not a second press) and volume down each take one photo; the
  /// device (volume keys only) is grabbed without a uinput copy.
  @Test func volumeKeysThroughUmockdev() throws {
    let dir = try TemporaryDirectory("session")
    let wrapper = [
      "umockdev-run", "-d", "\(fixtures)/volume-keys.umockdev",
      "-i", "/dev/input/event3=\(fixtures)/volume-keys.ioctl",
      "-e", "/dev/input/event3=\(fixtures)/volume-keys.events", "--",
    ]
    let session = try SessionProcess(
      [
        "--source", "pattern", "--resolution", "640x360", "--orientation", "right-up",
        "--headless", "--shutter-keys", "volumeup,volumedown", "-o", dir.file("k-{n}.jpg"),
      ], in: dir, wrapper: wrapper)
    let devices = try #require(session.ready["shutter_devices"]?.arrayValue)
    #expect(devices.count == 1)
    #expect(devices.first?["path"]?.stringValue == "/dev/input/event3")
    #expect(devices.first?["name"]?.stringValue == "gpio-keys")
    #expect(devices.first?["pass_on"] == .null)
    try session.waitFor("photo", timeout: 20) { $0["trigger"]?.stringValue == "key:volumedown" }
    session.signal(SIGTERM)
    #expect(try session.exitStatus() == 0)
    let photos = session.events("photo")
    #expect(photos.map { $0["trigger"]?.stringValue } == ["key:volumeup", "key:volumedown"])
    for photo in photos {
      try expectUprightPhoto(try #require(photo["path"]?.stringValue), width: 360, height: 640)
    }
    #expect(session.events("end").first?["reason"]?.stringValue == "SIGTERM")
  }

  /// A keyboard that has the volume keys and also power and letter keys is only grabbed when
  /// its other keys can be passed on through uinput; without uinput the session refuses,
  /// saying why, rather than swallowing the power button. The uinput node is pointed at a path
  /// that does not exist (ORIENTCAM_UINPUT), so the test runs the same on hosts with and
  /// without /dev/uinput (and never creates a device on the host).
  @Test func deviceWithOtherKeysNeedsUinput() throws {
    let dir = try TemporaryDirectory("session")
    let missing = dir.file("no-uinput")
    let result = try ChildProcess.run(
      [
        "umockdev-run", "-d", "\(fixtures)/keyboard.umockdev",
        "-i", "/dev/input/event2=\(fixtures)/keyboard.ioctl", "--",
        try Built.executable("orientcam"), "session", "--source", "pattern", "--headless",
        "--orientation", "normal", "--shutter-keys", "volumeup", "-o", dir.file("x.jpg"),
      ], environment: ["ORIENTCAM_UINPUT": missing], outputDirectory: dir.path, timeout: 30)
    #expect(result.status == 69, "\(result.stderr)")
    #expect(result.stderr.contains("/dev/input/event2"), "\(result.stderr)")
    #expect(
      result.stderr.contains(
        "cannot create a uinput copy to pass on its other keys: \(missing) is missing"),
      "\(result.stderr)")
    #expect(result.stderr.contains("refusing to grab AT Translated Set 2 keyboard"))
    #expect(photoFiles(dir.path).isEmpty)
  }

  /// Without any device that has the keys, the session says so (69) before taking over
  /// anything.
  @Test func noKeyDevice() throws {
    let dir = try TemporaryDirectory("session")
    let result = try ChildProcess.run(
      [
        "umockdev-run", "-d", "\(fixtures)/volume-keys.umockdev",
        "-i", "/dev/input/event3=\(fixtures)/volume-keys.ioctl", "--",
        try Built.executable("orientcam"), "session", "--source", "pattern", "--headless",
        "--orientation", "normal", "--shutter-keys", "camera", "-o", dir.file("x.jpg"),
      ], outputDirectory: dir.path, timeout: 30)
    #expect(result.status == 69, "\(result.stderr)")
    #expect(result.stderr.contains("no device with the keys camera"), "\(result.stderr)")
  }

  /// Watch lines arriving on a FIFO mid-session turn the next photos, and re-lay out the
  /// overlay exactly as `orientcam layout` does for the new orientation.
  @Test func orientationChangeMidSession() throws {
    let dir = try TemporaryDirectory("session")
    let watch = try Fifo(dir.file("watch"))
    watch.send("{\"time\":0.1,\"orientation\":\"normal\",\"rotation\":0,\"tilt\":\"vertical\"}\n")
    let session = try SessionProcess(
      [
        "--source", "pattern", "--resolution", "640x360", "--orientation-from", watch.path,
        "--headless", "--preview-size", "640x360", "-o", dir.file("{orientation}-{n}.jpg"),
      ], in: dir)
    #expect(session.ready["orientation"]?.stringValue == "normal")
    session.stdin.send("\n")
    try session.waitFor("photo")
    var expected = ["normal-1.jpg"]
    for (index, name) in ["left-up", "bottom-up", "right-up", "normal"].enumerated() {
      watch.send("{\"time\":\(index + 1),\"orientation\":\"\(name)\",\"tilt\":\"vertical\"}\n")
      let change = try session.waitFor("orientation", count: index + 1)
      #expect(change["orientation"]?.stringValue == name)
      let reference = try orientcam(
        ["layout", "--size", "640x360", "--orientation", name, "--json"], in: dir)
      let layout = try JSONValue(parsing: reference.stdout)
      let controls = try #require(change["controls"]?.arrayValue)
      for (control, want) in zip(controls, layout["controls"]?.arrayValue ?? []) {
        #expect(control["id"] == want["id"])
        let r = want["rect"]
        let rect = [r?["x"], r?["y"], r?["width"], r?["height"]].map { $0?.numberValue }
        #expect(control["rect"]?.arrayValue?.map(\.numberValue) == rect, "\(name)")
        #expect(control["rotation"] == want["rotation"])
      }
      session.stdin.send("\n")
      let photo = try session.waitFor("photo", count: index + 2)
      #expect(photo["orientation"]?.stringValue == name)
      let portrait = name == "left-up" || name == "right-up"
      try expectUprightPhoto(
        try #require(photo["path"]?.stringValue), width: portrait ? 360 : 640,
        height: portrait ? 640 : 360)
      expected.append("\(name)-\(index + 2).jpg")  // {n} counts on across orientations
    }
    session.signal(SIGTERM)
    #expect(try session.exitStatus() == 0)
    #expect(photoFiles(dir.path) == expected.sorted())
  }

  /// With `--orientation-from -`, stdin carries both: JSON lines set the orientation, empty
  /// lines take photos, q ends.
  @Test func stdinCarriesOrientationAndTriggers() throws {
    let dir = try TemporaryDirectory("session")
    let session = try SessionProcess(
      [
        "--source", "pattern", "--resolution", "640x360", "--orientation-from", "-",
        "--headless", "-o", dir.file("{orientation}.jpg"),
      ], in: dir, waitForReady: false)
    session.stdin.send("{\"orientation\":\"right-up\"}\n")
    try session.waitFor("ready")
    session.stdin.send("\n{\"orientation\":\"bottom-up\"}\n\nnot a command\nq\n")
    #expect(try session.exitStatus() == 0)
    #expect(photoFiles(dir.path) == ["bottom-up.jpg", "right-up.jpg"])
    try expectUprightPhoto(dir.file("right-up.jpg"), width: 360, height: 640)
    try expectUprightPhoto(dir.file("bottom-up.jpg"), width: 640, height: 360)
    #expect(session.child.standardError.contains("\"not a command\" is not a command"))
  }

  /// A regular file of watch lines is read at start; its last defined orientation applies.
  @Test func watchLinesFromAFile() throws {
    let dir = try TemporaryDirectory("session")
    try writeFile(
      dir.file("lines.json"),
      "{\"orientation\":\"left-up\"}\nnot json\n{\"orientation\":\"bottom-up\"}\n"
        + "{\"orientation\":\"undefined\"}\n")
    let session = try SessionProcess(
      [
        "--source", "pattern", "--resolution", "640x360", "--orientation-from",
        dir.file("lines.json"), "--headless", "-o", dir.file("f.jpg"),
      ], in: dir)
    #expect(session.ready["orientation"]?.stringValue == "bottom-up")
    #expect(session.ready["orientation_source"]?.stringValue == dir.file("lines.json") + ":3")
    session.stdin.send("\nq\n")
    #expect(try session.exitStatus() == 0)
    try expectUprightPhoto(dir.file("f.jpg"), width: 640, height: 360)
    #expect(session.child.standardError.contains("lines.json:2: not JSON"))
  }

  /// SIGTERM in the middle of a burst ends the session cleanly: the photo being written is
  /// finished, the rest of the burst is dropped (and counted), and every file left is a
  /// complete photo.
  @Test func sigtermLeavesNoPartialFiles() throws {
    let dir = try TemporaryDirectory("session")
    let session = try SessionProcess(
      [
        "--source", "pattern", "--resolution", "1920x1080", "--orientation", "left-up",
        "--headless", "--burst", "6", "-o", dir.file("t-{n}.jpg"),
      ], in: dir)
    session.signal(SIGUSR1)
    try session.waitFor("photo")
    session.signal(SIGTERM)
    #expect(try session.exitStatus() == 0)
    let end = try #require(session.events("end").first)
    #expect(end["reason"]?.stringValue == "SIGTERM")
    let written = session.events("photo").compactMap { $0["path"]?.stringValue }
    #expect(Double(written.count) == end["photos"]?.numberValue)
    #expect(written.count + Int(end["dropped_shots"]?.numberValue ?? -1) == 6)
    #expect(
      photoFiles(dir.path) == written.map { String($0.split(separator: "/").last ?? "") }.sorted())
    for path in written { try expectUprightPhoto(path, width: 1080, height: 1920) }
  }

  /// Mistakes on the command line and in overlay files are refused before anything starts.
  @Test func commandLineAndOverlayErrors() throws {
    let dir = try TemporaryDirectory("session")
    for (args, status, needle) in [
      (["--frobnicate"], Int32(64), "unknown option --frobnicate for orientcam session"),
      (["--shutter-keys", "volumeupp"], 64, "unknown key \"volumeupp\""),
      (["--headless", "--fullscreen"], 64, "--fullscreen needs the preview window"),
      (["--burst", "0"], 64, "--burst takes a whole number from 1 to 100"),
      (["--shutter-device", "/dev/input/event0"], 64, "--shutter-device needs --shutter-keys"),
      (["--overlay", dir.file("missing.json")], 66, "missing.json: cannot read"),
    ] {
      let result = try orientcam(
        ["session", "--source", "pattern", "--orientation", "normal", "--headless"] + args,
        in: dir)
      #expect(result.status == status, "\(args): \(result.stderr)")
      #expect(result.stderr.contains(needle), "\(args): \(result.stderr)")
    }
    try writeFile(dir.file("bad.json"), "{\"controls\": [\n  {\"id\": 7}]}\n")
    let bad = try orientcam(
      [
        "session", "--source", "pattern", "--orientation", "normal", "--headless", "--overlay",
        dir.file("bad.json"),
      ], in: dir)
    #expect(bad.status == 65)
    #expect(
      bad.stderr.contains("bad.json:2:10: controls[0].id: expected a string"), "\(bad.stderr)")
    // Valid, but too wide for the preview when the device is held upright.
    try writeFile(
      dir.file("wide.json"),
      "{\"controls\": [{\"id\": \"w\", \"kind\": \"label\", \"size\": [500, 20], \"anchor\": \"top\"}]}"
    )
    let wide = try orientcam(
      [
        "session", "--source", "pattern", "--orientation", "normal", "--headless", "--overlay",
        dir.file("wide.json"), "--preview-size", "640x360",
      ], in: dir)
    #expect(wide.status == 65)
    #expect(
      wide.stderr.contains("does not fit a 640x360 preview: left-up: \"w\""), "\(wide.stderr)")
    #expect(photoFiles(dir.path).isEmpty)
  }

  /// `--count N` ends the session after N photos.
  @Test func countEndsTheSession() throws {
    let dir = try TemporaryDirectory("session")
    let session = try SessionProcess(
      [
        "--source", "pattern", "--resolution", "640x360", "--orientation", "normal",
        "--headless", "--burst", "2", "--count", "3", "-o", dir.file("c-{n}.jpg"),
      ], in: dir)
    session.stdin.send("\n\n")
    #expect(try session.exitStatus() == 0)
    #expect(session.events("end").first?["reason"]?.stringValue == "--count")
    #expect(photoFiles(dir.path) == ["c-1.jpg", "c-2.jpg", "c-3.jpg"])
  }
}

/// `orientcam layout` from the command line.
@Suite(.ownThreads) struct LayoutCommandTests {
  @Test func jsonTextAndRender() throws {
    let dir = try TemporaryDirectory("layout")
    let json = try orientcam(
      [
        "layout", "--size", "640x360", "--orientation", "left-up", "--json", "--render",
        dir.file("l.png"),
      ], in: dir)
    #expect(json.status == 0, "\(json.stderr)")
    let layout = try JSONValue(parsing: json.stdout)
    #expect(layout["view_width"]?.numberValue == 360 && layout["view_height"]?.numberValue == 640)
    #expect(layout["device_rotation"]?.numberValue == 90)
    let ids = layout["controls"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
    #expect(ids?.contains("switch-camera-blocker") == true)
    #expect(layout["conflicts"]?.arrayValue?.isEmpty == true)
    let png = readBytes(dir.file("l.png"))
    #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
    // A JPEG render, turned as the user sees it: the shutter (user's right) is on the right.
    let jpg = try orientcam(
      [
        "layout", "--size", "640x360", "--orientation", "left-up", "--render", dir.file("u.jpg"),
        "--upright",
      ], in: dir)
    #expect(jpg.status == 0 && jpg.stdout.contains("shutter"))
    let image = try JPEGDecoder().decode(readBytes(dir.file("u.jpg")))
    #expect(image.width == 360 && image.height == 640)
    let shutter = try #require(
      layout["controls"]?.arrayValue?.first { $0["id"]?.stringValue == "shutter" }?["view_rect"])
    let x = Int(shutter["x"]?.numberValue ?? 0) + Int(shutter["width"]?.numberValue ?? 0) / 2
    let y = Int(shutter["y"]?.numberValue ?? 0) + Int(shutter["height"]?.numberValue ?? 0) / 2
    #expect(x > 180)
    #expect(image.average(x: x, y: y, radius: 3).distanceSquared(to: RGB(244, 244, 244)) < 300)
  }

  @Test func printOverlayRoundTripsAndConflictsExit65() throws {
    let dir = try TemporaryDirectory("layout")
    let printed = try orientcam(["layout", "--print-overlay"], in: dir)
    #expect(printed.status == 0)
    try writeFile(dir.file("copy.json"), printed.stdout)
    let again = try orientcam(
      ["layout", "--overlay", dir.file("copy.json"), "--size", "1280x720", "--json"], in: dir)
    #expect(again.status == 0, "\(again.stderr)")
    try writeFile(
      dir.file("clash.json"),
      """
      {"controls": [
        {"id": "a", "kind": "button", "action": "capture", "size": [100, 100], "anchor": "center"},
        {"id": "b", "kind": "button", "action": "block", "size": [50, 50], "anchor": "center"}
      ]}
      """)
    let clash = try orientcam(
      ["layout", "--overlay", dir.file("clash.json"), "--size", "640x360"], in: dir)
    #expect(clash.status == 65)
    #expect(clash.stderr.contains("\"a\" (100x100+270+130) overlaps \"b\" (50x50+295+155)"))
    #expect(clash.stdout.contains("conflict:"))
    let usage = try orientcam(["layout", "--orientation", "left-up"], in: dir)
    #expect(usage.status == 64 && usage.stderr.contains("layout needs --size"))
  }
}

/// What a session does when the world fails under it: the disk fills, the folder turns
/// read-only, the source goes away, the process is killed while writing. Every photo is whole
/// or absent, earlier photos are never touched, and the session either goes on (a photo that
/// cannot be written is an `error` event; the next trigger tries again) or, when the source
/// itself is gone, ends with an `end` event, the source's exit status and its photos kept.
@Suite(.ownThreads, .serialized) struct SessionFaultTests {
  /// A small tmpfs (the suite runs as root, as CI does), unmounted lazily at the end.
  final class Mount {
    let path: String
    init(_ path: String, options: String) throws {
      self.path = path
      mkdir(path, 0o755)
      try Mount.run(["mount", "-t", "tmpfs", "-o", options, "orientcam-session-test", path])
    }
    func remount(_ options: String) throws {
      try Mount.run(["mount", "-o", "remount,\(options)", path])
    }
    static func run(_ command: [String]) throws {
      let result = try ChildProcess.run(command, outputDirectory: "/tmp")
      guard result.status == 0 else {
        throw TestFailure("\(command.joined(separator: " ")) failed: \(result.stderr)")
      }
    }
    deinit { _ = try? ChildProcess.run(["umount", "-l", path], outputDirectory: "/tmp") }
  }

  /// Fills the filesystem of `path` to the last byte.
  func fill(_ path: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    defer { close(fd) }
    for size in [65_536, 4096, 512, 1] {
      let chunk = [UInt8](repeating: 7, count: size)
      while write(fd, chunk, size) == size {}
    }
  }

  /// Disk full: the shot is an `error` event naming the file and the reason, nothing is left
  /// of it, the session goes on; once there is room again the next trigger writes the photo
  /// under the name the failed one would have had. The earlier photo keeps its bytes.
  @Test func diskFullThenSpaceAgain() throws {
    let dir = try TemporaryDirectory("sfault")
    let mount = try Mount(dir.file("disk"), options: "size=512k")
    let session = try SessionProcess(
      [
        "--source", "pattern", "--resolution", "1920x1080", "--orientation", "left-up",
        "--headless", "-o", "\(mount.path)/s-{n}.jpg",
      ], in: dir)
    session.stdin.send("\n")
    let first = try session.waitFor("photo")
    let firstPath = try #require(first["path"]?.stringValue)
    let firstBytes = readBytes(firstPath)
    fill("\(mount.path)/filler")
    session.stdin.send("\n")
    let error = try session.waitFor("error")
    let message = try #require(error["message"]?.stringValue)
    #expect(
      message.contains(
        "\(mount.path)/s-2.jpg: No space left on device in \(mount.path); no file was written"),
      "\(message)")
    #expect(error["trigger"]?.stringValue == "stdin")
    #expect(photoFiles(mount.path) == ["filler", "s-1.jpg"])
    unlink("\(mount.path)/filler")
    session.stdin.send("\n")
    let second = try session.waitFor("photo", count: 2)
    #expect(second["path"]?.stringValue == "\(mount.path)/s-2.jpg")
    session.stdin.send("q\n")
    #expect(try session.exitStatus() == 0)
    #expect(session.events("end").first?["photos"]?.numberValue == 2)
    #expect(readBytes(firstPath) == firstBytes)
    #expect(photoFiles(mount.path) == ["s-1.jpg", "s-2.jpg"])
    for path in [firstPath, "\(mount.path)/s-2.jpg"] {
      try expectUprightPhoto(path, width: 1080, height: 1920)
    }
  }

  /// The output folder turns read-only mid-session (remounted; root ignores permission bits,
  /// so only a read-only filesystem really stops it): `error` event, session goes on, and
  /// after the remount read-write the next trigger works.
  @Test func folderTurnsReadOnly() throws {
    let dir = try TemporaryDirectory("sfault")
    let mount = try Mount(dir.file("ro"), options: "size=2m")
    let session = try SessionProcess(
      [
        "--source", "pattern", "--resolution", "640x360", "--orientation", "normal",
        "--headless", "-o", "\(mount.path)/s-{n}.jpg",
      ], in: dir)
    session.stdin.send("\n")
    try session.waitFor("photo")
    try mount.remount("ro")
    session.stdin.send("\n")
    let error = try session.waitFor("error")
    #expect(
      error["message"]?.stringValue?.contains(
        "s-2.jpg: \(mount.path) is on a read-only file system; no file was written") == true,
      "\(error)")
    try mount.remount("rw")
    session.stdin.send("\n")
    let second = try session.waitFor("photo", count: 2)
    #expect(second["path"]?.stringValue == "\(mount.path)/s-2.jpg")
    session.signal(SIGTERM)
    #expect(try session.exitStatus() == 0)
    #expect(photoFiles(mount.path) == ["s-1.jpg", "s-2.jpg"])
  }

  /// The source goes away mid-session. A V4L2 camera that is unplugged fails VIDIOC_DQBUF
  /// with ENODEV (or polls POLLERR/POLLHUP); this host cannot emulate a V4L2 device, so the
  /// same path is taken with replayed files, one of which is removed before its turn. The
  /// session ends: an `error` event and an `end` event (reason `error`, the photos written, the
  /// exit status), exit status of the source's error (66 here: the file is missing; 69 for a
  /// camera that went away), and the photo already taken stays.
  @Test func sourceGoneEndsTheSession() throws {
    let dir = try TemporaryDirectory("sfault")
    let input = dir.file("in")
    let output = dir.file("out")
    mkdir(input, 0o755)
    mkdir(output, 0o755)
    let jpeg = try JPEGEncoder().encode(TestPattern.render(width: 320, height: 240), quality: 90)
    for n in 1...3 { try writeFile("\(input)/f-\(n).jpg", jpeg) }
    let session = try SessionProcess(
      [
        "--source", "file:\(input)/*.jpg", "--orientation", "normal", "--headless", "-o",
        "\(output)/s-{n}.jpg",
      ], in: dir)
    session.stdin.send("\n")
    try session.waitFor("photo")
    unlink("\(input)/f-2.jpg")
    session.stdin.send("\n")
    #expect(try session.exitStatus() == 66)
    let end = try #require(session.events("end").first)
    #expect(end["reason"]?.stringValue == "error")
    #expect(end["photos"]?.numberValue == 1)
    #expect(end["status"]?.numberValue == 66)
    let message = try #require(session.events("error").last?["message"]?.stringValue)
    #expect(
      message.contains(
        "the source failed during the session: \(input)/f-2.jpg: cannot open"),
      "\(message)")
    #expect(message.hasSuffix("the 1 photo taken is kept"), "\(message)")
    #expect(session.child.standardError.contains("orientcam: \(message)"))
    #expect(photoFiles(output) == ["s-1.jpg"])
    try expectUprightPhoto("\(output)/s-1.jpg", width: 320, height: 240)
  }

  /// SIGKILL while the second photo is half written (faultfs.so stops the process there):
  /// the first photo is whole and unchanged, and nothing else is in the folder (the unnamed
  /// O_TMPFILE went with the process).
  @Test func killedWhileWriting() throws {
    let dir = try TemporaryDirectory("sfault")
    let library = try FaultLibrary(in: dir)
    let output = dir.file("out")
    mkdir(output, 0o755)
    let marker = dir.file("stalled")
    let session = try SessionProcess(
      [
        "--source", "pattern", "--resolution", "1280x720", "--orientation", "bottom-up",
        "--headless", "-o", "\(output)/s-{n}.jpg",
      ], in: dir, environment: library.environment("stall-write=2", marker: marker))
    session.stdin.send("\n")
    let first = try session.waitFor("photo")
    let firstBytes = readBytes(try #require(first["path"]?.stringValue))
    session.stdin.send("\n")
    #expect(TestSupport.waitFor(timeout: 20) { access(marker, F_OK) == 0 }, "never stalled")
    session.signal(SIGKILL)
    #expect(try session.exitStatus() == 128 + SIGKILL)
    #expect(photoFiles(output) == ["s-1.jpg"])
    #expect(readBytes("\(output)/s-1.jpg") == firstBytes)
    try expectUprightPhoto("\(output)/s-1.jpg", width: 1280, height: 720)
  }

  /// The session reads stdin (Enter, q) without setting O_NONBLOCK on it, so the caller's
  /// shell gets its terminal or pipe back as it was (see CaptureTests' stdinIsLeftBlocking).
  @Test func stdinIsLeftBlocking() throws {
    let dir = try TemporaryDirectory("sfault")
    let script = """
      { printf '\\nq\\n'; sleep 1; } | {
        "$0" session --source pattern --resolution 320x240 --orientation normal --headless \
          -o "$1/s-{n}.jpg"
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
    #expect(photoFiles(dir.path) == ["s-1.jpg"])
  }
}
