import Capture
import Imaging
import JPEGKit
import OrientCore
import OrientLog
import Overlay
import PreviewKit
import SystemKit

/// The session's preview: the overlay laid out for the way the device is held, the status
/// label, and (unless `--headless`) the SDL window showing the latest frame under it, pumped by
/// a frame timer on the session's loop.
///
/// Headless sessions still lay the overlay out: the orientation events carry the layout.
final class PreviewController {
  /// The preview's size in pixels.
  let size: (width: Int, height: Int)
  /// The overlay file's path, or `built-in`.
  let overlayLabel: String
  private let overlay: Overlay
  private let loop: EventLoop
  private let logger: Logger
  /// The frame turned by the camera's mounting only (and mirrored for a front camera): the
  /// display turns with the device, so the scene looks right on it without the device rotation.
  private let turn: ImageTransform
  private(set) var layout: Layout?
  private var state = OverlayState()
  private var statusToken = 0
  private var statusTimer: EventLoop.Timer?
  private var window: PreviewWindow?
  private var decoder: JPEGDecoder?
  private var frameTimer: EventLoop.Timer?
  private var latestFrame: Frame?
  private var latestFrameShown = true

  /// The preview size: `requested`, or the source's frame turned by the mounting and scaled to
  /// fit 960x960 (at least 64 pixels a side; 1280x720 when the source does not know its size).
  static func size(
    requested: (width: Int, height: Int)?, frame: (width: Int, height: Int)?,
    sensorTurn: ImageTransform
  ) -> (width: Int, height: Int) {
    if let requested { return requested }
    let frame = frame ?? (1280, 720)
    let turned = sensorTurn.outputSize(width: frame.width, height: frame.height)
    let scale = min(1, 960 / Double(max(turned.width, turned.height)))
    return (
      max(64, Int((Double(turned.width) * scale).rounded())),
      max(64, Int((Double(turned.height) * scale).rounded()))
    )
  }

  /// Reads `--overlay PATH` (the built-in overlay without one), as `orientcam layout` does.
  ///
  /// - Throws: `CaptureError.noInput` (unreadable) or `.badData` (not a valid overlay file).
  static func loadOverlay(_ path: String?) throws(CaptureError) -> (Overlay, label: String) {
    do { return (try LayoutCommand.loadOverlay(path), path ?? "built-in") } catch {
      guard error.kind == .badData else { throw error }
      throw CaptureError(.badData, "--overlay \(error.message)")
    }
  }

  /// Creates the controller, with nothing on screen yet.
  init(
    overlay: Overlay, label: String, size: (width: Int, height: Int), sensorTurn: ImageTransform,
    mirror: Bool, loop: EventLoop, logger: Logger
  ) {
    self.overlay = overlay
    self.overlayLabel = label
    self.size = size
    self.turn = sensorTurn.then(mirror ? .mirror : .identity)
    self.loop = loop
    self.logger = logger
  }

  /// Checks that the overlay fits the preview in every orientation, and lays it out for
  /// `orientation`.
  ///
  /// - Throws: `CaptureError.badData` naming the conflicts.
  func layOut(for orientation: Orientation) throws(CaptureError) {
    let problems = OverlayLayout.check(overlay, width: size.width, height: size.height)
    guard problems.isEmpty else {
      let text = problems.map { o, conflicts in
        "\(o.rawValue): " + conflicts.map(\.description).joined(separator: "; ")
      }.joined(separator: "; ")
      throw CaptureError(
        .badData,
        "--overlay \(overlayLabel) does not fit a \(size.width)x\(size.height) "
          + "preview: \(text) (check it with orientcam layout)")
    }
    layout = OverlayLayout.layout(
      overlay, orientation: orientation, width: size.width, height: size.height)
  }

  /// Opens the window and starts the frame timer, which calls `tick` `fps` times a second.
  ///
  /// - Throws: `CaptureError.unavailable` without a display, `.software` if the timer or
  ///   the JPEG decoder cannot start.
  func open(fullscreen: Bool, fps: Int, tick: @escaping () -> Void) throws(CaptureError) {
    do { decoder = try JPEGDecoder() } catch {
      throw CaptureError(.software, "cannot start TurboJPEG: \(error)")
    }
    do {
      window = try PreviewWindow(
        title: "orientcam", width: size.width, height: size.height, fullscreen: fullscreen)
    } catch {
      throw CaptureError(.unavailable, "\(error)")
    }
    do {
      let timer = try loop.makeTimer(tick)
      frameTimer = timer
      try timer.schedule(after: .milliseconds(1), interval: .seconds(1) / fps)
    } catch {
      throw CaptureError(.software, "cannot start the frame timer: \(error)")
    }
    renderOverlay()
  }

  /// Whether there is a window.
  var isOpen: Bool { window != nil }

  /// The window's renderer (`nil` headless).
  var rendererName: String? { window?.rendererName }

  /// The controls as laid out now.
  var placements: [Placement] { layout?.placements ?? [] }

  /// The button at a preview position, if any.
  func button(atX x: Int, y: Int) -> Placement? { layout?.button(atX: x, y: y) }

  /// Lays the overlay out for a new orientation; on screen before the next frame.
  func relayout(for orientation: Orientation) {
    layout = OverlayLayout.layout(
      overlay, orientation: orientation, width: size.width, height: size.height)
    renderOverlay()
    window?.present()
  }

  /// Shows `text` in the status label (`nil` hides it), for `seconds` if given: then the label
  /// is cleared by calling `expired` (unless another status came meanwhile).
  func setStatus(_ text: String?, seconds: Double?, expired: @escaping () -> Void) {
    statusToken += 1
    let token = statusToken
    state.status = text
    statusTimer?.cancel()
    statusTimer = nil
    if let seconds, text != nil {
      do {
        let timer = try loop.makeTimer { [weak self] in
          guard let self, self.statusToken == token else { return }
          expired()
        }
        try timer.schedule(after: .seconds(seconds))
        statusTimer = timer
      } catch {
        logger.warning("cannot time the status: \(error)")
      }
    }
    renderOverlay()
    window?.present()
  }

  /// What happened in the window since the last call (clicks, touches, keys, close).
  func inputs() -> [PreviewInput] { window?.poll() ?? [] }

  /// Makes `frame` the one shown from the next `present()`.
  func show(_ frame: Frame) {
    latestFrame = frame
    latestFrameShown = false
  }

  /// Puts the latest frame (if new) and the overlay on screen.
  func present() {
    guard let window else { return }
    if !latestFrameShown, let frame = latestFrame, let image = image(of: frame) {
      window.setFrame(image)
      latestFrameShown = true
    }
    window.present()
  }

  /// Stops the timers and closes the window; idempotent.
  func close() {
    frameTimer?.cancel()
    frameTimer = nil
    statusTimer?.cancel()
    statusTimer = nil
    window = nil
  }

  private func renderOverlay() {
    guard let window, let layout else { return }
    window.setOverlay(OverlayRenderer.render(layout, state: state))
  }

  private func image(of frame: Frame) -> RGBImage? {
    var image: RGBImage
    switch frame.content {
    case .raw(let raw): image = raw.rgb()
    case .jpeg(let bytes):
      guard let decoded = try? decoder?.decode(bytes) else { return nil }
      image = decoded.transformed(frame.storedTransform)
    }
    return image.transformed(turn)
  }
}
