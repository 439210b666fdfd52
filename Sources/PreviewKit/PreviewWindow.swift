import CSDL2
import Imaging
import Overlay

/// Why the preview window could not be shown.
public struct PreviewError: Error, Equatable, Sendable, CustomStringConvertible {
  /// What failed, with SDL's reason (`SDL_GetError`).
  public var message: String

  /// Creates an error.
  public init(_ message: String) { self.message = message }

  /// The message.
  public var description: String { message }
}

/// Something the person did in the preview window.
public enum PreviewInput: Equatable, Sendable {
  /// A click or touch at a preview pixel (preview coordinates, whatever the window's size).
  case press(x: Int, y: Int)
  /// A key pressed while the window has focus: `return`, `space`, `q`, `escape`, or any other
  /// by its SDL name, lowercased (`a`, `tab`, `f1`).
  case key(String)
  /// The window was closed.
  case close
}

/// The live preview: an SDL2 window showing camera frames with the overlay on top.
///
/// The window has a fixed logical size (the preview size the overlay is laid out for); SDL
/// scales it to the real window (`SDL_RenderSetLogicalSize`, letterboxed), and clicks and
/// touches come back in preview pixels. SDL is only pumped when the owner calls `poll()` (from
/// its frame timer on the event loop): nothing here blocks or starts a thread.
public final class PreviewWindow {
  /// Logical width (preview pixels).
  public let width: Int
  /// Logical height.
  public let height: Int
  private let window: OpaquePointer
  private let renderer: OpaquePointer
  private var frameTexture: OpaquePointer?
  private var frameSize = (width: 0, height: 0)
  private var overlayTexture: OpaquePointer?
  private var hasFrame = false

  /// `SDL_WINDOWPOS_UNDEFINED`, a function-like macro Swift cannot see
  /// (`SDL_WINDOWPOS_UNDEFINED_MASK | 0`).
  static let windowPositionUndefined: Int32 = 0x1FFF_0000
  /// `SDL_TOUCH_MOUSEID` (`(Uint32)-1`): mouse events SDL made up from touches.
  static let touchMouseID = UInt32.max

  /// Opens the window (`SDL_Init(SDL_INIT_VIDEO)`, `SDL_CreateWindow`, `SDL_CreateRenderer`).
  ///
  /// SDL is told not to install signal handlers (the session takes signals through a
  /// signalfd) and not to turn touches into mouse clicks (touches are handled as such).
  ///
  /// - Throws: `PreviewError` when there is no display (`DISPLAY`/`WAYLAND_DISPLAY` unset or
  ///   unreachable) or SDL fails.
  public init(title: String, width: Int, height: Int, fullscreen: Bool) throws(PreviewError) {
    self.width = width
    self.height = height
    SDL_SetHint("SDL_NO_SIGNAL_HANDLERS", "1")
    SDL_SetHint("SDL_TOUCH_MOUSE_EVENTS", "0")
    SDL_SetHint("SDL_VIDEO_X11_NET_WM_BYPASS_COMPOSITOR", "0")
    guard SDL_Init(SDL_INIT_VIDEO) == 0 else {
      throw PreviewError(
        "cannot open the preview window: \(PreviewWindow.lastError()) (no display? set "
          + "DISPLAY or WAYLAND_DISPLAY, or use --headless)")
    }
    var flags = SDL_WINDOW_SHOWN.rawValue | SDL_WINDOW_RESIZABLE.rawValue
    if fullscreen { flags |= SDL_WINDOW_FULLSCREEN_DESKTOP.rawValue }
    guard
      let window = SDL_CreateWindow(
        title, PreviewWindow.windowPositionUndefined, PreviewWindow.windowPositionUndefined,
        Int32(width), Int32(height), flags)
    else {
      let reason = PreviewWindow.lastError()
      SDL_Quit()
      throw PreviewError("cannot create the preview window: \(reason)")
    }
    guard let renderer = SDL_CreateRenderer(window, -1, 0) else {
      let reason = PreviewWindow.lastError()
      SDL_DestroyWindow(window)
      SDL_Quit()
      throw PreviewError("cannot draw in the preview window: \(reason)")
    }
    self.window = window
    self.renderer = renderer
    SDL_RenderSetLogicalSize(renderer, Int32(width), Int32(height))
  }

  deinit {
    if let frameTexture { SDL_DestroyTexture(frameTexture) }
    if let overlayTexture { SDL_DestroyTexture(overlayTexture) }
    SDL_DestroyRenderer(renderer)
    SDL_DestroyWindow(window)
    SDL_Quit()
  }

  private static func lastError() -> String {
    String(cString: SDL_GetError())
  }

  /// The renderer SDL chose (`software`, `opengl`, ...), for diagnostics.
  public var rendererName: String {
    var info = SDL_RendererInfo()
    guard SDL_GetRendererInfo(renderer, &info) == 0, let name = info.name else { return "?" }
    return String(cString: name)
  }

  /// Takes everything SDL has queued (`SDL_PollEvent`, which also pumps the display
  /// connection); never waits.
  public func poll() -> [PreviewInput] {
    var inputs: [PreviewInput] = []
    var event = SDL_Event()
    while SDL_PollEvent(&event) == 1 {
      switch SDL_EventType(rawValue: event.type) {
      case SDL_QUIT:
        inputs.append(.close)
      case SDL_MOUSEBUTTONDOWN:
        // Logical (preview) coordinates: SDL scales them for the logical size.
        if event.button.which != PreviewWindow.touchMouseID && event.button.button == 1 {
          inputs.append(.press(x: Int(event.button.x), y: Int(event.button.y)))
        }
      case SDL_FINGERDOWN:
        // Touches come normalised to the window; map to the window, then to preview pixels.
        var w: Int32 = 0
        var h: Int32 = 0
        SDL_GetWindowSize(window, &w, &h)
        var lx: Float = 0
        var ly: Float = 0
        SDL_RenderWindowToLogical(
          renderer, Int32(event.tfinger.x * Float(w)), Int32(event.tfinger.y * Float(h)), &lx, &ly)
        inputs.append(.press(x: Int(lx), y: Int(ly)))
      case SDL_KEYDOWN:
        guard event.key.repeat == 0 else { break }
        switch Int(event.key.keysym.sym) {
        case Int(SDLK_RETURN.rawValue), Int(SDLK_KP_ENTER.rawValue): inputs.append(.key("return"))
        case Int(SDLK_SPACE.rawValue): inputs.append(.key("space"))
        case Int(SDLK_q.rawValue): inputs.append(.key("q"))
        case Int(SDLK_ESCAPE.rawValue): inputs.append(.key("escape"))
        default:
          // Any other key by SDL's name, lowercased (`a`, `tab`, `f1`): the session decides
          // what it does (nothing).
          if let name = SDL_GetKeyName(event.key.keysym.sym), name.pointee != 0 {
            inputs.append(.key(String(cString: name).lowercased()))
          }
        }
      default:
        break
      }
    }
    return inputs
  }

  /// Replaces the camera picture (uploaded to a streaming texture, `SDL_UpdateTexture`).
  public func setFrame(_ image: RGBImage) {
    if frameTexture == nil || frameSize != (image.width, image.height) {
      if let frameTexture { SDL_DestroyTexture(frameTexture) }
      frameTexture = SDL_CreateTexture(
        renderer, SDL_PIXELFORMAT_RGB24.rawValue, Int32(SDL_TEXTUREACCESS_STREAMING.rawValue),
        Int32(image.width), Int32(image.height))
      frameSize = (image.width, image.height)
    }
    guard let frameTexture else { return }
    image.pixels.withUnsafeBytes { raw in
      _ = SDL_UpdateTexture(frameTexture, nil, raw.baseAddress, Int32(image.width * 3))
    }
    hasFrame = true
  }

  /// Replaces the overlay (RGBA, the preview's size), drawn blended over the frame.
  public func setOverlay(_ overlay: RGBAImage) {
    if overlayTexture == nil {
      // RGBA bytes in memory order: ABGR8888 on a little-endian machine (SDL_PIXELFORMAT_RGBA32).
      overlayTexture = SDL_CreateTexture(
        renderer, SDL_PIXELFORMAT_ABGR8888.rawValue, Int32(SDL_TEXTUREACCESS_STATIC.rawValue),
        Int32(width), Int32(height))
      if let overlayTexture { SDL_SetTextureBlendMode(overlayTexture, SDL_BLENDMODE_BLEND) }
    }
    guard let overlayTexture, overlay.width == width, overlay.height == height else { return }
    overlay.pixels.withUnsafeBytes { raw in
      _ = SDL_UpdateTexture(overlayTexture, nil, raw.baseAddress, Int32(width * 4))
    }
  }

  /// Draws the frame (fitted into the preview, letterboxed) and the overlay, and shows them
  /// (`SDL_RenderPresent`).
  public func present() {
    SDL_SetRenderDrawColor(renderer, 0, 0, 0, 255)
    SDL_RenderClear(renderer)
    if hasFrame, let frameTexture, frameSize.width > 0, frameSize.height > 0 {
      let scale = min(
        Double(width) / Double(frameSize.width), Double(height) / Double(frameSize.height))
      let w = Int32((Double(frameSize.width) * scale).rounded())
      let h = Int32((Double(frameSize.height) * scale).rounded())
      var target = SDL_Rect(x: (Int32(width) - w) / 2, y: (Int32(height) - h) / 2, w: w, h: h)
      SDL_RenderCopy(renderer, frameTexture, nil, &target)
    }
    if let overlayTexture { SDL_RenderCopy(renderer, overlayTexture, nil, nil) }
    SDL_RenderPresent(renderer)
  }
}
