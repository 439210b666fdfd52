import Glibc
import JSON
import TestSupport
import TestThreads
import Testing

/// The live preview under a private X server: what is on the screen (read back with xwd) and
/// what clicks (sent with xdotool) do.
@Suite(.ownThreads, .serialized) struct PreviewTests {
  /// The reference layout from `orientcam layout --json`: id -> (x, y, width, height).
  func reference(_ orientation: String, in dir: TemporaryDirectory) throws -> [String: [Int]] {
    let result = try orientcam(
      ["layout", "--size", "640x360", "--orientation", orientation, "--json"], in: dir)
    let layout = try JSONValue(parsing: result.stdout)
    var rects: [String: [Int]] = [:]
    for control in layout["controls"]?.arrayValue ?? [] {
      let r = control["rect"]
      rects[control["id"]?.stringValue ?? "?"] = [r?["x"], r?["y"], r?["width"], r?["height"]]
        .map { Int($0?.numberValue ?? -1) }
    }
    return rects
  }

  /// Starts a previewing session of the pattern on `display`.
  func startSession(
    on display: XvfbDisplay, in dir: TemporaryDirectory, watch: Fifo
  ) throws -> SessionProcess {
    try SessionProcess(
      [
        "--source", "pattern", "--resolution", "640x360", "--preview-size", "640x360",
        "--fps", "5", "--orientation-from", watch.path, "-o", dir.file("{orientation}-{n}.jpg"),
      ], in: dir, environment: display.environment)
  }

  /// What the screen shows at the controls, by colour: the shutter's fill at its centre, the
  /// blocker's and the scan button's fill just inside their borders, a brace's colour at its
  /// corner. Returns the mismatches (empty when the screen shows the layout).
  func mismatches(
    _ screen: Screenshot, window: (x: Int, y: Int), rects: [String: [Int]]
  ) -> [String] {
    var problems: [String] = []
    func check(_ id: String, _ x: Int, _ y: Int, _ want: (Int, Int, Int)) {
      let got = screen[window.x + x, window.y + y]
      if abs(got.r - want.0) > 2 || abs(got.g - want.1) > 2 || abs(got.b - want.2) > 2 {
        problems.append("\(id) at \(x),\(y): \(got), want \(want)")
      }
    }
    if let r = rects["shutter"] {
      check("shutter", r[0] + r[2] / 2, r[1] + r[3] / 2, (244, 244, 244))
    }
    if let r = rects["switch-camera-blocker"] {
      check("blocker", r[0] + 3, r[1] + 3, (180, 20, 30))
      check("blocker", r[0] + r[2] - 4, r[1] + r[3] - 4, (180, 20, 30))
    }
    if let r = rects["scan"] { check("scan", r[0] + 3, r[1] + 3, (30, 111, 217)) }
    for (id, r) in rects where id.hasPrefix("brace-") {
      // The brace's own corner is the box corner nearest the preview corner it marks.
      let x = r[0] + r[2] / 2 < 320 ? r[0] : r[0] + r[2] - 1
      let y = r[1] + r[3] / 2 < 180 ? r[1] : r[1] + r[3] - 1
      check(id, x, y, (255, 214, 0))
    }
    return problems
  }

  /// Screenshots in two orientations show every control where `orientcam layout` puts it.
  @Test func screenshotsFollowTheLayout() throws {
    let display = try XvfbDisplay()
    let dir = try TemporaryDirectory("preview")
    let watch = try Fifo(dir.file("watch"))
    watch.send("{\"orientation\":\"normal\"}\n")
    let session = try startSession(on: display, in: dir, watch: watch)
    #expect(session.ready["preview"]?["width"]?.numberValue == 640)
    let window = try display.windowPosition(title: "orientcam")
    for (index, orientation) in ["normal", "left-up"].enumerated() {
      if index > 0 {
        watch.send("{\"orientation\":\"\(orientation)\"}\n")
        try session.waitFor("orientation")
      }
      let rects = try reference(orientation, in: dir)
      var problems: [String] = []
      let shown = try waitFor(timeout: 10) {
        let screen = try display.screenshot()
        problems = mismatches(screen, window: window, rects: rects)
        if problems.isEmpty {
          screen.keep("preview-\(orientation)", window: window, width: 640, height: 360)
        }
        return problems.isEmpty
      }
      #expect(shown, "\(orientation): \(problems)")
    }
    // The layouts differ: in left-up the shutter (the user's right) is on the display's top.
    let normal = try reference("normal", in: dir)
    let turned = try reference("left-up", in: dir)
    #expect(normal["shutter"] != turned["shutter"])
    #expect((turned["shutter"]?[1] ?? 99) < 30)
    session.signal(SIGTERM)
    #expect(try session.exitStatus() == 0)
  }

  /// A click on the shutter takes a photo; on the blocker it shows the message in the status
  /// label; on the scan button "Scanning..." for two seconds.
  @Test func clicksPerformTheirActions() throws {
    let display = try XvfbDisplay()
    let dir = try TemporaryDirectory("preview")
    let watch = try Fifo(dir.file("watch"))
    watch.send("{\"orientation\":\"right-up\"}\n")
    let session = try startSession(on: display, in: dir, watch: watch)
    let window = try display.windowPosition(title: "orientcam")
    let rects = try reference("right-up", in: dir)
    func centre(_ id: String) throws -> (Int, Int) {
      let r = try #require(rects[id])
      return (window.x + r[0] + r[2] / 2, window.y + r[1] + r[3] / 2)
    }
    // Wait until the overlay is on screen before clicking it.
    let overlayShown = try waitFor(timeout: 10) {
      mismatches(try display.screenshot(), window: window, rects: rects).isEmpty
    }
    try #require(overlayShown, "the overlay never showed the right-up layout")

    let shutter = try centre("shutter")
    try display.click(x: shutter.0, y: shutter.1)
    let photo = try session.waitFor("photo")
    #expect(photo["trigger"]?.stringValue == "press:shutter")
    try expectUprightPhoto(try #require(photo["path"]?.stringValue), width: 360, height: 640)

    let blocker = try centre("switch-camera-blocker")
    try display.click(x: blocker.0, y: blocker.1)
    let message = try session.waitFor("status")
    #expect(message["text"]?.stringValue == "Front camera disabled: resolution too low")
    #expect(message["control"]?.stringValue == "switch-camera-blocker")
    // The status label is on screen: dark (the label's translucent black over the pattern)
    // with white text.
    let label = try #require(rects["status"])
    var dark = 0
    var white = 0
    let labelShown = try waitFor(timeout: 10) {
      let screen = try display.screenshot()
      dark = 0
      white = 0
      for y in label[1]..<(label[1] + label[3]) {
        for x in label[0]..<(label[0] + label[2]) {
          let c = screen[window.x + x, window.y + y]
          if c.r < 70 && c.g < 70 && c.b < 70 { dark += 1 }
          if c.r > 250 && c.g > 250 && c.b > 250 { white += 1 }
        }
      }
      let shown = dark > label[2] * label[3] / 3 && white > 100
      if shown { screen.keep("preview-right-up-message", window: window, width: 640, height: 360) }
      return shown
    }
    #expect(labelShown, "status label: \(dark) dark, \(white) white pixels")
    #expect(session.events("photo").count == 1)  // the blocker takes no photo

    let scan = try centre("scan")
    try display.click(x: scan.0, y: scan.1)
    let scanning = try session.waitFor("status", count: 2)
    #expect(scanning["text"]?.stringValue == "Scanning...")
    #expect(scanning["seconds"]?.numberValue == 2)
    let cleared = try session.waitFor("status", count: 3, timeout: 10)
    #expect(cleared["text"] == .null)
    #expect(
      session.events("press").compactMap { $0["control"]?.stringValue } == [
        "shutter", "switch-camera-blocker", "scan",
      ])
    session.stdin.send("q\n")
    #expect(try session.exitStatus() == 0)
  }

  /// Keys in the window: Enter and Space take a photo, q and Escape end the session; any other
  /// key does nothing. The keys go in one xdotool call, in order, so the photo's arrival proves
  /// the session outlived the keys before it.
  @Test func otherWindowKeysDoNotEndTheSession() throws {
    let display = try XvfbDisplay()
    let dir = try TemporaryDirectory("preview")
    let watch = try Fifo(dir.file("watch"))
    watch.send("{\"orientation\":\"normal\"}\n")
    let session = try startSession(on: display, in: dir, watch: watch)
    let window = try display.windowPosition(title: "orientcam")
    // A new pointer position each time: `mousemove --sync` waits for the pointer to move.
    let (x, y) = (window.x + 5, window.y + 5)
    try display.key(["a", "Tab", "x", "F1", "BackSpace", "Return"], x: x, y: y)
    let photo = try session.waitFor("photo")
    #expect(photo["trigger"]?.stringValue == "window:key")
    #expect(session.events("end").isEmpty)
    try display.key(["z", "space"], x: x + 1, y: y)
    let second = try session.waitFor("photo", count: 2)
    #expect(second["trigger"]?.stringValue == "window:key")
    #expect(session.events("end").isEmpty)
    try display.key(["Escape"], x: x + 2, y: y)
    let end = try session.waitFor("end")
    #expect(end["reason"]?.stringValue == "q")
    #expect(end["photos"]?.numberValue == 2)
    #expect(try session.exitStatus() == 0)
  }
}
