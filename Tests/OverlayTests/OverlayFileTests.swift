import Glibc
import Imaging
import JSON
import OrientCore
import Overlay
import Testing

@Suite struct OverlayFileTests {
  /// The built-in overlay written as a file reads back to the same overlay.
  @Test func builtInRoundTrips() throws {
    let text = OverlayFile.text(OverlayFile.builtIn)
    let parsed = try OverlayFile.parse(text, path: "built-in.json")
    #expect(parsed == OverlayFile.builtIn)
    #expect(parsed.statusLabel?.id == "status")
  }

  /// A hand-written overlay with every kind of member.
  @Test func handWrittenOverlay() throws {
    let text = """
      {
        "version": 1,
        "controls": [
          {"id": "go", "kind": "button", "shape": "circle", "action": "capture",
           "size": [80, "10%"], "anchor": "bottom-right", "margin": [12, "2.5%"],
           "offset": [-4, 0], "fill": "#112233", "border": "#445566cc", "text_color": "#FFFFFF"},
          {"id": "info", "kind": "label", "status": true, "size": ["50%", 40], "anchor": "top"},
          {"id": "scan", "kind": "button", "text": "Scan",
           "action": {"status": "Scanning...", "seconds": 1.5}, "size": [90, 30],
           "anchor": "left", "frame": "device"},
          {"id": "note", "kind": "button", "action": {"message": "hello"}, "size": [30, 30],
           "anchor": "center", "margin": 5},
          {"id": "mark", "kind": "shape", "shape": "brace", "size": [20, 20],
           "anchor": "top-left"}
        ]
      }
      """
    let overlay = try OverlayFile.parse(text, path: "mine.json")
    #expect(overlay.controls.map(\.id) == ["go", "info", "scan", "note", "mark"])
    let go = overlay.controls[0]
    #expect(go.shape == .circle && go.action == .capture && go.anchor == .bottomRight)
    #expect(go.width == .pixels(80) && go.height == .percent(10))
    #expect(go.marginX == .pixels(12) && go.marginY == .percent(2.5))
    #expect(go.offsetX == .pixels(-4))
    #expect(go.fill == Colour(0x11, 0x22, 0x33) && go.border == Colour(0x44, 0x55, 0x66, 0xCC))
    #expect(overlay.controls[2].action == .status("Scanning...", seconds: 1.5))
    #expect(overlay.controls[2].frame == .device)
    #expect(overlay.controls[3].action == .message("hello"))
    #expect(overlay.controls[3].marginX == .pixels(5) && overlay.controls[3].marginY == .pixels(5))
    #expect(overlay.controls[4].kind == .shape && overlay.controls[4].shape == .brace)
    #expect(overlay.statusLabel?.id == "info")
    #expect(go.textColour == Colour(0xFF, 0xFF, 0xFF))
  }

  /// Overlay files written by orientcam 0.1 spell `text_color` as `textColor`: still read,
  /// and written back with the new key.
  @Test func oldTextColorKeyIsRead() throws {
    let text = """
      {"version": 1, "controls": [{"id": "go", "kind": "button", "action": "capture",
        "size": [80, 40], "anchor": "center", "textColor": "#102030"}]}
      """
    let overlay = try OverlayFile.parse(text, path: "old.json")
    #expect(overlay.controls.first?.textColour == Colour(0x10, 0x20, 0x30))
    let written = try JSONValue(parsing: OverlayFile.text(overlay))
    let control = try #require(written["controls"]?.arrayValue?.first)
    #expect(control["text_color"]?.stringValue == "#102030")
    #expect(control["textColor"] == nil)
  }

  /// Each way an overlay file can be wrong is reported at the right line and column.
  @Test(arguments: [
    // JSON syntax: a missing comma.
    ("{\"controls\": [\n  {\"id\": \"a\"\n   \"kind\": \"button\"}]}", 3, 4, "not valid JSON"),
    ("[]", 1, 1, "expected an object"),
    ("{\"controls\": [], \"colour\": 1}", 1, 18, "unknown member"),
    ("{\"controls\": {}}", 1, 14, "expected an array of controls"),
    (
      "{\"controls\": [\n {\"id\": \"a\", \"kind\": \"button\", \"action\": \"capture\",\n"
        + "  \"size\": [1, 1], \"anchor\": \"middle\"}]}", 3, 29, "unknown anchor \"middle\""
    ),
    (
      "{\"controls\": [{\"id\": \"a\", \"kind\": \"knob\", \"size\": [1, 1], \"anchor\": \"top\"}]}",
      1, 35, "unknown kind \"knob\""
    ),
    ("{\"controls\": [{\"kind\": \"label\"}]}", 1, 15, "missing \"id\""),
    (
      "{\"controls\": [\n{\"id\": \"a\", \"kind\": \"label\", \"size\": [1, 1], \"anchor\": \"top\"},\n"
        + "{\"id\": \"a\", \"kind\": \"label\", \"size\": [1, 1], \"anchor\": \"top\"}]}", 3, 8,
      "duplicate id \"a\""
    ),
    (
      "{\"controls\": [{\"id\": \"b\", \"kind\": \"shape\", \"shape\": \"brace\", \"size\": [1, 1],"
        + " \"anchor\": \"top\"}]}", 1, 88, "a brace marks a corner"
    ),
    (
      "{\"controls\": [{\"id\": \"m\", \"kind\": \"button\", \"action\": {\"message\": \"hi\"},"
        + " \"size\": [1, 1], \"anchor\": \"top\"}]}", 1, 55, "no label has \"status\": true"
    ),
    (
      "{\"controls\": [{\"id\": \"a\", \"kind\": \"label\", \"size\": [1, 1], \"anchor\": \"top\","
        + " \"fill\": \"red\"}]}", 1, 85, "\"red\" is not a colour"
    ),
    (
      "{\"controls\": [{\"id\": \"a\", \"kind\": \"label\", \"size\": [\"12px\", 1],"
        + " \"anchor\": \"top\"}]}", 1, 53, "expected a length"
    ),
    (
      "{\"controls\": [{\"id\": \"a\", \"kind\": \"label\", \"size\": [0, 1], \"anchor\": \"top\"}]}",
      1, 53, "greater than 0"
    ),
    (
      "{\"controls\": [{\"id\": \"a\", \"kind\": \"label\", \"action\": \"capture\", \"size\": [1, 1],"
        + " \"anchor\": \"top\"}]}", 1, 44, "only buttons have actions"
    ),
    (
      "{\"controls\": [{\"id\": \"a\", \"kind\": \"button\", \"action\": {\"status\": \"x\"},"
        + " \"size\": [1, 1], \"anchor\": \"top\"}]}", 1, 55, "needs \"seconds\""
    ),
    (
      "{\"controls\": [{\"id\": \"a\", \"kind\": \"button\", \"action\": \"capture\", \"size\": [1],"
        + " \"anchor\": \"top\"}]}", 1, 74, "expected [x, y]"
    ),
    (
      "{\"controls\": [{\"id\": \"a\", \"kind\": \"button\", \"action\": \"capture\", \"size\": [1, 1],"
        + " \"anchor\": \"top\", \"margin\": -3}]}", 1, 109, "must not be negative"
    ),
  ])
  func invalidFilesNameTheSpot(_ text: String, _ line: Int, _ column: Int, _ reason: String) {
    do {
      _ = try OverlayFile.parse(text, path: "/etc/orientcam/overlay.json")
      Issue.record("accepted: \(text)")
    } catch {
      #expect(error.path == "/etc/orientcam/overlay.json")
      #expect(error.line == line, "\(error)")
      #expect(error.column == column, "\(error)")
      #expect(error.reason.contains(reason), "\(error)")
      #expect(error.description.hasPrefix("/etc/orientcam/overlay.json:\(line):\(column): "))
    }
  }

  /// The locations recorded while parsing point at values and member names.
  @Test func jsonLocations() throws {
    let (value, locations) = try JSONValue.parseWithLocations(
      "{\n  \"a\": [1,\n    {\"b\": true}]\n}")
    #expect(value["a"]?.arrayValue?.count == 2)
    #expect(locations.value(at: []) == .init(line: 1, column: 1))
    #expect(locations.key(at: [.key("a")]) == .init(line: 2, column: 3))
    #expect(locations.value(at: [.key("a"), .index(0)]) == .init(line: 2, column: 9))
    #expect(locations.value(at: [.key("a"), .index(1), .key("b")]) == .init(line: 3, column: 11))
    #expect(JSONLocations.describe([.key("a"), .index(1), .key("b")]) == "a[1].b")
  }
}

@Suite struct PNGTests {
  /// The PNG writer's output is read back by an independent decoder (Python's zlib inflating
  /// the IDAT stream, every CRC checked), pixel for pixel.
  @Test(arguments: [(1, 1, 3), (37, 23, 3), (640, 360, 4), (300, 200, 3)])
  func decodesElsewhere(_ width: Int, _ height: Int, _ channels: Int) throws {
    var pixels = [UInt8](repeating: 0, count: width * height * channels)
    var seed: UInt32 = 12345
    for y in 0..<height {
      for x in 0..<width {
        for c in 0..<channels {
          // Flat areas (long matches) mixed with noise (literals).
          seed = seed &* 1_103_515_245 &+ 12345
          let noisy = (x / 16 + y / 16) % 3 == 0
          pixels[(y * width + x) * channels + c] =
            noisy ? UInt8(truncatingIfNeeded: seed >> 16) : UInt8((x * 7 + c * 50) & 0xFF)
        }
      }
    }
    let png = PNG.encode(width: width, height: height, channels: channels, pixels: pixels)
    let dir = "/tmp/orientd-png-\(getpid())-\(width)x\(height)"
    mkdir(dir, 0o755)
    defer { _ = system("rm -rf \(dir)") }
    try write(png, to: "\(dir)/t.png")
    try write(pixels, to: "\(dir)/t.raw")
    let script = """
      import struct, sys, zlib
      d = open(sys.argv[1], "rb").read()
      assert d[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
      i, idat, ihdr = 8, b"", None
      while i < len(d):
          n = struct.unpack(">I", d[i:i+4])[0]; t = d[i+4:i+8]; body = d[i+8:i+8+n]
          assert struct.unpack(">I", d[i+8+n:i+12+n])[0] == zlib.crc32(t + body), t
          if t == b"IHDR": ihdr = struct.unpack(">IIBBBBB", body)
          if t == b"IDAT": idat += body
          i += 12 + n
      w, h, depth, colour = ihdr[0], ihdr[1], ihdr[2], ihdr[3]
      ch = {2: 3, 6: 4}[colour]
      raw = zlib.decompress(idat)
      out, stride, prev = bytearray(), w * ch, bytearray(w * ch)
      for y in range(h):
          f = raw[y * (stride + 1)]; row = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
          for x in range(stride):
              a = row[x - ch] if x >= ch else 0
              if f == 1: row[x] = (row[x] + a) & 255
              elif f == 2: row[x] = (row[x] + prev[x]) & 255
              elif f != 0: raise SystemExit("filter %d" % f)
          out += row; prev = row
      sys.exit(0 if bytes(out) == open(sys.argv[2], "rb").read() and depth == 8 else 1)
      """
    try write(Array(script.utf8), to: "\(dir)/check.py")
    #expect(system("python3 \(dir)/check.py \(dir)/t.png \(dir)/t.raw") == 0)
    if width * height > 10_000 { #expect(png.count < pixels.count / 2) }
  }

  func write(_ bytes: [UInt8], to path: String) throws {
    guard let f = fopen(path, "wb") else { throw PNGTestError() }
    defer { fclose(f) }
    _ = fwrite(bytes, 1, bytes.count, f)
  }

  struct PNGTestError: Error {}
}
