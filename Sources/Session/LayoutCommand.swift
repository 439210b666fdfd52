import Capture
import Glibc
import Imaging
import JPEGKit
import JSON
import OrientCore
import Overlay
import SystemKit
import V4L2Kit

/// `orientcam layout` options.
public struct LayoutOptions: Equatable, Sendable {
  /// `--orientation NAME` (default normal).
  public var orientation: Orientation = .normal
  /// `--size WxH`: the preview size (required unless `--print-overlay`).
  public var size: FrameSize?
  /// `--overlay FILE` (default: the built-in overlay).
  public var overlayPath: String?
  /// `--json`.
  public var json = false
  /// `--render FILE.png|FILE.jpg`.
  public var renderPath: String?
  /// `--upright`: render as the user sees it (turned by the device rotation).
  public var upright = false
  /// `--print-overlay`: print the overlay file (the built-in one unless `--overlay`).
  public var printOverlay = false

  /// Defaults.
  public init() {}
}

/// `orientcam layout`: the overlay laid out for one orientation and preview size, as text or
/// JSON, and optionally drawn over the test pattern.
public enum LayoutCommand {
  /// Reads and parses an overlay file (or returns the built-in overlay for `nil`).
  ///
  /// - Throws: `CaptureError` `.noInput` (unreadable) or `.badData` (path:line:column: reason).
  public static func loadOverlay(_ path: String?) throws(CaptureError) -> Overlay {
    guard let path else { return OverlayFile.builtIn }
    let text: String
    do {
      let fd = try FileDescriptor(path: path)
      text = String(decoding: try fd.readToEnd(limit: 1 << 20), as: UTF8.self)
    } catch {
      throw CaptureError(.noInput, "--overlay \(path): cannot read (\(error.reason))")
    }
    do { return try OverlayFile.parse(text, path: path) } catch {
      throw CaptureError(.badData, "\(error)")
    }
  }

  /// Runs the command: emits the layout (or the overlay file), writes the render.
  ///
  /// - Returns: the conflicts found (the caller exits 65 when there are any).
  /// - Throws: `CaptureError` for an unreadable or invalid overlay, or a failed render.
  public static func run(_ options: LayoutOptions, emit: (String) -> Void) throws(CaptureError)
    -> [LayoutConflict]
  {
    let overlay = try loadOverlay(options.overlayPath)
    if options.printOverlay {
      emit(OverlayFile.text(overlay))
      if options.size == nil { return [] }
    }
    guard let size = options.size else { return [] }
    let layout = OverlayLayout.layout(
      overlay, orientation: options.orientation, width: size.width, height: size.height)
    if !options.printOverlay {
      emit(options.json ? OrientcamJSON.line(json(layout)) : text(layout))
    }
    if let path = options.renderPath {
      try render(layout, to: path, upright: options.upright)
    }
    return layout.conflicts
  }

  /// The layout as one JSON object.
  public static func json(_ layout: Layout) -> JSONValue {
    func rect(_ r: Rect) -> JSONValue {
      .object([
        ("x", .number(Double(r.x))), ("y", .number(Double(r.y))),
        ("width", .number(Double(r.width))), ("height", .number(Double(r.height))),
      ])
    }
    let view = layout.viewSize
    return .object([
      ("orientation", .string(layout.orientation.rawValue)),
      ("width", .number(Double(layout.width))), ("height", .number(Double(layout.height))),
      ("view_width", .number(Double(view.width))), ("view_height", .number(Double(view.height))),
      ("device_rotation", .number(Double(layout.deviceRotation))),
      (
        "controls",
        .array(
          layout.placements.map { p in
            .object([
              ("id", .string(p.control.id)), ("kind", .string(p.control.kind.rawValue)),
              ("shape", .string(p.control.shape.rawValue)),
              ("action", .string(p.control.action.name)),
              ("frame", .string(p.control.frame.rawValue)),
              ("rect", rect(p.rect)), ("view_rect", rect(p.viewRect)),
              ("rotation", .number(Double(p.rotation))),
              ("fill", .string(p.control.fill.description)),
            ])
          })
      ),
      ("conflicts", .array(layout.conflicts.map { .string($0.description) })),
    ])
  }

  /// The layout as a table.
  public static func text(_ layout: Layout) -> String {
    let view = layout.viewSize
    var out =
      "\(layout.orientation.rawValue): preview \(layout.width)x\(layout.height), user's view "
      + "\(view.width)x\(view.height), content turned \(layout.placements.first?.rotation ?? 0) "
      + "degrees clockwise\n"
    func pad(_ s: String, _ n: Int) -> String {
      s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count)
    }
    out +=
      pad("control", 24) + pad("kind", 7) + pad("preview rect", 18) + pad("view rect", 18)
      + "action\n"
    for p in layout.placements {
      out +=
        pad(p.control.id, 24) + pad(p.control.kind.rawValue, 7) + pad("\(p.rect)", 18)
        + pad("\(p.viewRect)", 18) + p.control.action.name + "\n"
    }
    for conflict in layout.conflicts { out += "conflict: \(conflict)\n" }
    return out
  }

  /// The test frame the preview would show for this orientation: the pattern as a camera in a
  /// device held that way sees it (upright once turned as the user sees the display).
  public static func testFrame(for layout: Layout) -> RGBImage {
    let turn = ImageTransform(quarterTurns: layout.deviceRotation / 90)
    let scene = turn.outputSize(width: layout.width, height: layout.height)
    return TestPattern.render(width: scene.width, height: scene.height).transformed(turn.inverse)
  }

  /// Draws the overlay over the test frame and writes it (PNG or JPEG by the extension),
  /// atomically.
  ///
  /// - Parameter upright: turn the picture as the user sees it, instead of as the preview
  ///   (the device's display) holds it.
  /// - Throws: `CaptureError` when encoding or writing fails.
  public static func render(_ layout: Layout, to path: String, upright: Bool) throws(CaptureError) {
    var image = testFrame(for: layout)
    OverlayRenderer.render(
      layout, state: OverlayState(status: "Status: \(layout.orientation.rawValue)")
    ).composite(onto: &image)
    if upright {
      image = image.transformed(ImageTransform(quarterTurns: layout.deviceRotation / 90))
    }
    let bytes: [UInt8]
    if path.lowercased().hasSuffix(".png") {
      bytes = PNG.encode(image)
    } else {
      do { bytes = try JPEGEncoder().encode(image, quality: 92) } catch {
        throw CaptureError(.software, "\(path): cannot encode: \(error)")
      }
    }
    do { try AtomicFileWriter.write(bytes, to: path, overwrite: true) } catch {
      throw CaptureError(
        .cannotCreate,
        "\(path): cannot write the render (\(String(cString: strerror(error.errno))))")
    }
  }
}
