/// An on-screen overlay: the controls drawn over the camera preview (a shutter button, a
/// blocker over the switch-camera corner, corner braces, a status label...).
///
/// Controls are described in the user's view (what the person holding the device sees as up,
/// left, right), so that `OverlayLayout` can keep them in place for the user and their text
/// upright as the device turns. Pure data: parsing is in `OverlayFile`, geometry in
/// `OverlayLayout`, pixels in `OverlayRenderer`.
public struct Overlay: Equatable, Sendable {
  /// The controls, drawn in this order (later ones on top); ids are unique.
  public var controls: [Control]

  /// Creates an overlay.
  public init(controls: [Control]) {
    self.controls = controls
  }

  /// The control that shows messages and statuses (the first label with `status: true`).
  public var statusLabel: Control? {
    controls.first { $0.kind == .label && $0.isStatus }
  }
}

/// One overlay control.
public struct Control: Equatable, Sendable {
  /// What a control is.
  public enum Kind: String, Equatable, Sendable, CaseIterable {
    /// Performs its action when clicked or touched.
    case button
    /// Shows text (fixed, or the session's messages when `status` is true); not clickable.
    case label
    /// A drawn shape (corner brace, rectangle, circle); not clickable.
    case shape
  }

  /// How a control is drawn.
  public enum Shape: String, Equatable, Sendable, CaseIterable {
    /// A filled rectangle with a border.
    case rect
    /// A filled circle (ellipse) inscribed in the control's box.
    case circle
    /// An L-shaped corner mark whose corner points at the anchor corner (corner anchors only).
    case brace
  }

  /// Whose edges an anchor refers to.
  public enum Frame: String, Equatable, Sendable, CaseIterable {
    /// The user's view: the control stays at the edge or corner the user sees as top, right,
    /// ..., whatever way the device is held (the default).
    case view
    /// The device's own (native display) edges: the control stays over the same physical part
    /// of the screen, such as the corner where a switch-camera button sits, while its content
    /// still turns upright for the user.
    case device
  }

  /// Where a control sits: an edge (centred along it), a corner, or the centre.
  public enum Anchor: String, Equatable, Sendable, CaseIterable {
    /// Top-left corner.
    case topLeft = "top-left"
    /// Top edge, centred.
    case top
    /// Top-right corner.
    case topRight = "top-right"
    /// Left edge, centred.
    case left
    /// The centre.
    case center
    /// Right edge, centred.
    case right
    /// Bottom-left corner.
    case bottomLeft = "bottom-left"
    /// Bottom edge, centred.
    case bottom
    /// Bottom-right corner.
    case bottomRight = "bottom-right"

    /// -1 (left), 0 (centre) or 1 (right).
    public var horizontal: Int {
      switch self {
      case .topLeft, .left, .bottomLeft: return -1
      case .top, .center, .bottom: return 0
      case .topRight, .right, .bottomRight: return 1
      }
    }

    /// -1 (top), 0 (middle) or 1 (bottom).
    public var vertical: Int {
      switch self {
      case .topLeft, .top, .topRight: return -1
      case .left, .center, .right: return 0
      case .bottomLeft, .bottom, .bottomRight: return 1
      }
    }

    /// Whether this is one of the four corners.
    public var isCorner: Bool { horizontal != 0 && vertical != 0 }
  }

  /// What clicking or touching a button does.
  public enum Action: Equatable, Sendable {
    /// Nothing (labels and shapes).
    case none
    /// Take a photo (`--burst` frames).
    case capture
    /// Show `text` in the status label until the next message or status replaces it.
    case message(String)
    /// Show `text` in the status label for `seconds`, then clear it.
    case status(String, seconds: Double)
    /// Swallow the click: the control only covers what is under it.
    case block

    /// `capture`, `message`, `status`, `block` or `none`.
    public var name: String {
      switch self {
      case .none: return "none"
      case .capture: return "capture"
      case .message: return "message"
      case .status: return "status"
      case .block: return "block"
      }
    }
  }

  /// The control's name, unique in the overlay (`shutter`, `switch-camera-blocker`).
  public var id: String
  /// Button, label or shape.
  public var kind: Kind
  /// How it is drawn.
  public var shape: Shape
  /// Text shown in the middle (upright for the user), if any.
  public var text: String?
  /// For labels: whether the session's messages and statuses appear here.
  public var isStatus: Bool
  /// What a click does (buttons only).
  public var action: Action
  /// Width in the user's view.
  public var width: Length
  /// Height in the user's view.
  public var height: Length
  /// Where it sits.
  public var anchor: Anchor
  /// Whose edges `anchor` refers to.
  public var frame: Frame
  /// Distance from the anchored vertical edge (left/right), ignored when centred horizontally.
  public var marginX: Length
  /// Distance from the anchored horizontal edge (top/bottom), ignored when centred vertically.
  public var marginY: Length
  /// Shift right (positive) after anchoring, in the anchor's frame.
  public var offsetX: Length
  /// Shift down (positive) after anchoring, in the anchor's frame.
  public var offsetY: Length
  /// Fill colour (the brace's line colour for braces).
  public var fill: Colour
  /// Border colour (`nil`: no border).
  public var border: Colour?
  /// Text colour.
  public var textColour: Colour

  /// Creates a control; the defaults suit a button.
  public init(
    id: String, kind: Kind, shape: Shape = .rect, text: String? = nil, isStatus: Bool = false,
    action: Action = .none, width: Length, height: Length, anchor: Anchor, frame: Frame = .view,
    marginX: Length = .pixels(0), marginY: Length = .pixels(0), offsetX: Length = .pixels(0),
    offsetY: Length = .pixels(0), fill: Colour = Colour(40, 40, 40, 200), border: Colour? = nil,
    textColour: Colour = Colour(255, 255, 255)
  ) {
    self.id = id
    self.kind = kind
    self.shape = shape
    self.text = text
    self.isStatus = isStatus
    self.action = action
    self.width = width
    self.height = height
    self.anchor = anchor
    self.frame = frame
    self.marginX = marginX
    self.marginY = marginY
    self.offsetX = offsetX
    self.offsetY = offsetY
    self.fill = fill
    self.border = border
    self.textColour = textColour
  }
}

/// A length in an overlay: pixels, or a percentage of the preview's shorter side (which stays
/// the same when the device turns, so controls keep their size and shape).
public enum Length: Equatable, Sendable, CustomStringConvertible {
  /// Preview pixels.
  case pixels(Double)
  /// Percent of the shorter side of the preview.
  case percent(Double)

  /// The length in pixels for a preview whose shorter side is `shorterSide` (rounded).
  public func resolve(shorterSide: Int) -> Int {
    switch self {
    case .pixels(let p): return Int(p.rounded())
    case .percent(let p): return Int((p * Double(shorterSide) / 100).rounded())
    }
  }

  /// `12` or `"12%"`, as written in overlay files.
  public var description: String {
    switch self {
    case .pixels(let p): return Length.format(p)
    case .percent(let p): return "\(Length.format(p))%"
    }
  }

  static func format(_ n: Double) -> String {
    n == n.rounded() && abs(n) < 1e9 ? String(Int(n)) : String(n)
  }
}

/// An 8-bit RGBA colour (`#rrggbb` or `#rrggbbaa` in overlay files).
public struct Colour: Hashable, Sendable, CustomStringConvertible {
  /// Red.
  public var r: UInt8
  /// Green.
  public var g: UInt8
  /// Blue.
  public var b: UInt8
  /// Opacity, 255 = opaque.
  public var a: UInt8

  /// Creates a colour.
  public init(_ r: UInt8, _ g: UInt8, _ b: UInt8, _ a: UInt8 = 255) {
    self.r = r
    self.g = g
    self.b = b
    self.a = a
  }

  /// Parses `#rrggbb` or `#rrggbbaa`.
  public init?(hex text: String) {
    let digits = Array(text.utf8)
    guard digits.first == UInt8(ascii: "#"), digits.count == 7 || digits.count == 9 else {
      return nil
    }
    var values: [UInt8] = []
    var i = 1
    while i < digits.count {
      guard let high = Colour.hexDigit(digits[i]), let low = Colour.hexDigit(digits[i + 1]) else {
        return nil
      }
      values.append(high << 4 | low)
      i += 2
    }
    self.init(values[0], values[1], values[2], values.count == 4 ? values[3] : 255)
  }

  private static func hexDigit(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
    default: return nil
    }
  }

  /// `#rrggbb`, or `#rrggbbaa` when not opaque.
  public var description: String {
    func hex(_ v: UInt8) -> String {
      let digits = Array("0123456789abcdef")
      return String([digits[Int(v >> 4)], digits[Int(v & 15)]])
    }
    return "#" + hex(r) + hex(g) + hex(b) + (a == 255 ? "" : hex(a))
  }
}
