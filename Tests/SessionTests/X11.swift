import Glibc
import Imaging
import TestSupport

/// A private X server (Xvfb) on a free display number, killed when released.
final class XvfbDisplay {
  let number: Int
  let server: ChildProcess
  let directory: TemporaryDirectory

  /// `:N`.
  var name: String { ":\(number)" }
  /// Environment for X clients: this display, and SDL's software renderer (exact colours, no
  /// GL threads).
  var environment: [String: String] {
    var environment = ["DISPLAY": name, "SDL_RENDER_DRIVER": "software"]
    // Under scripts/sanitize.sh asan: SDL2 leaks at exit inside its libdbus use and the X11
    // libraries it dlopen()s (and has unloaded by then, so no suppression can name them).
    // LeakSanitizer stays on for every other child, the headless sessions included.
    if let options = getenv("ASAN_OPTIONS").map({ String(cString: $0) }) {
      environment["ASAN_OPTIONS"] = options + ":detect_leaks=0"
    }
    return environment
  }

  init(width: Int = 1024, height: Int = 768) throws {
    directory = try TemporaryDirectory("xvfb")
    // Try numbers from a per-process start, skipping displays in use by anything else.
    let start = 200 + Int(getpid() % 500)
    for number in start..<(start + 40) {
      if access("/tmp/.X\(number)-lock", F_OK) == 0 { continue }
      let server = try ChildProcess(
        ["Xvfb", ":\(number)", "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp"],
        outputDirectory: directory.path)
      let socket = "/tmp/.X11-unix/X\(number)"
      let up = waitFor(timeout: 10) { access(socket, F_OK) == 0 || !server.isRunning }
      if up && server.isRunning {
        self.number = number
        self.server = server
        // The socket appears before the server accepts clients; ask it something.
        let answers = waitFor(timeout: 10) {
          (try? ChildProcess.run(
            ["xdotool", "getdisplaygeometry"], environment: ["DISPLAY": ":\(number)"],
            outputDirectory: directory.path, timeout: 5))?.status == 0
        }
        guard answers else {
          server.killNow()
          throw TestFailure("Xvfb :\(number) does not answer xdotool within 10 s")
        }
        return
      }
      server.killNow()
    }
    throw TestFailure("no free X display for Xvfb")
  }

  deinit { server.killNow() }

  /// Runs an X client on this display.
  func run(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
    try ChildProcess.run(
      arguments, environment: environment, outputDirectory: directory.path, timeout: 20)
  }

  /// The position of the first window titled `title` (`xdotool search --sync`).
  func windowPosition(title: String) throws -> (x: Int, y: Int) {
    let result = try run([
      "xdotool", "search", "--sync", "--name", "^\(title)$", "getwindowgeometry",
    ])
    // "Window 123\n  Position: 192,204 (screen: 0)\n  Geometry: 640x360"
    guard let line = result.stdout.split(separator: "\n").first(where: { $0.contains("Position") }),
      let numbers = line.split(separator: ":").dropFirst().first?.split(separator: "(").first
    else { throw TestFailure("no window \(title): \(result.stdout) \(result.stderr)") }
    let parts = numbers.split(separator: ",").compactMap {
      Int($0.trimmingCharacters(in: " "))
    }
    guard parts.count == 2 else { throw TestFailure("cannot read \(line)") }
    return (parts[0], parts[1])
  }

  /// Clicks with the left button at a screen position.
  func click(x: Int, y: Int) throws {
    let result = try run(["xdotool", "mousemove", "--sync", "\(x)", "\(y)", "click", "1"])
    guard result.status == 0 else { throw TestFailure("xdotool: \(result.stderr)") }
  }

  /// Presses and releases keys (X keysym names: `a`, `Tab`, `Return`, `Escape`) with the
  /// pointer at a screen position: without a window manager the keyboard focus follows the
  /// pointer, so they go to the window there.
  func key(_ names: [String], x: Int, y: Int) throws {
    let result = try run(["xdotool", "mousemove", "--sync", "\(x)", "\(y)", "key"] + names)
    guard result.status == 0 else { throw TestFailure("xdotool: \(result.stderr)") }
  }

  /// Takes a screenshot of the whole screen with xwd.
  func screenshot() throws -> Screenshot {
    let path = directory.file("screen-\(UInt32.random(in: 0...UInt32.max)).xwd")
    let result = try run(["xwd", "-root", "-silent", "-out", path])
    guard result.status == 0 else { throw TestFailure("xwd: \(result.stderr)") }
    defer { unlink(path) }
    return try Screenshot(xwd: readBytes(path))
  }
}

/// A screen picture read from an X Window Dump (XWD version 7, the format `xwd` writes).
struct Screenshot {
  let width: Int
  let height: Int
  private let bytes: [UInt8]
  private let offset: Int
  private let bytesPerLine: Int
  private let bytesPerPixel: Int
  private let littleEndian: Bool
  private let masks: (UInt32, UInt32, UInt32)

  init(xwd: [UInt8]) throws {
    guard xwd.count >= 100 else { throw TestFailure("xwd file too short") }
    func field(_ i: Int) -> Int {
      Int(xwd[i * 4]) << 24 | Int(xwd[i * 4 + 1]) << 16 | Int(xwd[i * 4 + 2]) << 8
        | Int(xwd[i * 4 + 3])
    }
    // The header is 25 big-endian 32-bit fields, then the window name, then the colour map.
    let headerSize = field(0)
    guard field(1) == 7, field(2) == 2 else { throw TestFailure("not a ZPixmap XWD v7") }
    width = field(4)
    height = field(5)
    littleEndian = field(7) == 0
    bytesPerPixel = field(11) / 8
    bytesPerLine = field(12)
    masks = (UInt32(field(14)), UInt32(field(15)), UInt32(field(16)))
    offset = headerSize + field(19) * 12
    bytes = xwd
    guard bytesPerPixel == 3 || bytesPerPixel == 4,
      bytes.count >= offset + bytesPerLine * height
    else { throw TestFailure("unsupported XWD layout (\(field(11)) bits per pixel)") }
  }

  /// The colour at a screen position.
  subscript(x: Int, y: Int) -> (r: Int, g: Int, b: Int) {
    let i = offset + y * bytesPerLine + x * bytesPerPixel
    var value: UInt32 = 0
    for k in 0..<bytesPerPixel {
      let byte = UInt32(bytes[i + k])
      value |= littleEndian ? byte << (8 * UInt32(k)) : byte << (8 * UInt32(bytesPerPixel - 1 - k))
    }
    func channel(_ mask: UInt32) -> Int {
      guard mask != 0 else { return 0 }
      return Int((value & mask) >> UInt32(mask.trailingZeroBitCount))
    }
    return (channel(masks.0), channel(masks.1), channel(masks.2))
  }
}

extension Screenshot {
  /// The part of the screen at (x, y) of the given size as an RGB picture.
  func crop(x: Int, y: Int, width w: Int, height h: Int) -> RGBImage {
    var image = RGBImage(width: w, height: h)
    for row in 0..<h {
      for col in 0..<w {
        let c = self[x + col, y + row]
        image[col, row] = RGB(UInt8(c.r), UInt8(c.g), UInt8(c.b))
      }
    }
    return image
  }

  /// Saves the window to `$ORIENTCAM_KEEP_SCREENSHOTS/name.png` when that variable names a
  /// folder (for a person to look at what the test saw).
  func keep(_ name: String, window: (x: Int, y: Int), width: Int, height: Int) {
    guard let folder = getenv("ORIENTCAM_KEEP_SCREENSHOTS").map({ String(cString: $0) }) else {
      return
    }
    let png = PNG.encode(crop(x: window.x, y: window.y, width: width, height: height))
    guard let f = fopen("\(folder)/\(name).png", "wb") else { return }
    _ = fwrite(png, 1, png.count, f)
    fclose(f)
  }
}

extension Substring {
  fileprivate func trimmingCharacters(in set: Character) -> String {
    String(drop { $0 == set }.reversed().drop { $0 == set }.reversed())
  }
}
