import Imaging
import OrientCore

/// An axis-aligned rectangle in pixels: [x, x + width) x [y, y + height).
public struct Rect: Hashable, Sendable, CustomStringConvertible {
  /// Left edge.
  public var x: Int
  /// Top edge.
  public var y: Int
  /// Width.
  public var width: Int
  /// Height.
  public var height: Int

  /// Creates a rectangle.
  public init(x: Int, y: Int, width: Int, height: Int) {
    self.x = x
    self.y = y
    self.width = width
    self.height = height
  }

  /// One past the right edge.
  public var maxX: Int { x + width }
  /// One past the bottom edge.
  public var maxY: Int { y + height }
  /// The centre (rounded down).
  public var centre: (x: Int, y: Int) { (x + width / 2, y + height / 2) }

  /// Whether the two share any pixel.
  public func intersects(_ other: Rect) -> Bool {
    x < other.maxX && other.x < maxX && y < other.maxY && other.y < maxY
  }

  /// Whether the pixel (px, py) is inside.
  public func contains(x px: Int, y py: Int) -> Bool {
    px >= x && px < maxX && py >= y && py < maxY
  }

  /// Whether the rectangle lies inside a `width`x`height` frame.
  public func isInside(width w: Int, height h: Int) -> Bool {
    x >= 0 && y >= 0 && maxX <= w && maxY <= h
  }

  /// `WxH+X+Y`, as X11 geometry is written.
  public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// Where one control ended up.
public struct Placement: Equatable, Sendable {
  /// The control.
  public var control: Control
  /// Its box in preview (native display) pixels.
  public var rect: Rect
  /// Its box in the user's view (the preview turned as the user sees it).
  public var viewRect: Rect
  /// How far its content is turned clockwise on the preview (0, 90, 180, 270) so that it looks
  /// upright to the user.
  public var rotation: Int
}

/// Something wrong with a layout: a user-made overlay that does not fit.
public enum LayoutConflict: Equatable, Sendable, CustomStringConvertible {
  /// Two controls share pixels.
  case overlap(String, String, Rect, Rect)
  /// A control reaches past the edge of the preview.
  case outside(String, Rect)
  /// A control's size rounds to nothing at this preview size.
  case empty(String)

  /// A sentence for the user.
  public var description: String {
    switch self {
    case .overlap(let a, let b, let ra, let rb):
      return "\"\(a)\" (\(ra)) overlaps \"\(b)\" (\(rb))"
    case .outside(let id, let r):
      return "\"\(id)\" (\(r)) reaches outside the preview"
    case .empty(let id):
      return "\"\(id)\" is less than a pixel wide or high at this size"
    }
  }
}

/// The overlay laid out for one orientation and preview size.
public struct Layout: Equatable, Sendable {
  /// The orientation it was laid out for.
  public var orientation: Orientation
  /// Preview width (native display pixels).
  public var width: Int
  /// Preview height.
  public var height: Int
  /// Clockwise turn that makes the preview look as the user sees it (the device rotation).
  public var deviceRotation: Int
  /// Every control, in drawing order.
  public var placements: [Placement]
  /// What does not fit (empty for a good overlay).
  public var conflicts: [LayoutConflict]

  /// The size of the user's view (width and height trade places for left-up and right-up).
  public var viewSize: (width: Int, height: Int) {
    deviceRotation % 180 == 0 ? (width, height) : (height, width)
  }

  /// The clickable control at a preview pixel (buttons only; the topmost wins), if any.
  public func button(atX x: Int, y: Int) -> Placement? {
    placements.last { $0.control.kind == .button && $0.rect.contains(x: x, y: y) }
  }

  /// The placement of the control with this id.
  public func placement(_ id: String) -> Placement? {
    placements.first { $0.control.id == id }
  }
}

/// The layout function: orientation and preview size in, every control's box and rotation out.
public enum OverlayLayout {
  /// Lays out `overlay` on a `width`x`height` preview for a device held in `orientation`
  /// (`undefined` is laid out as `normal`).
  ///
  /// View-frame controls are placed in the user's view (the preview turned clockwise by the
  /// device rotation) and mapped back; device-frame controls are placed on the preview's own
  /// edges. Either way the size is the user's width and height, and the content is turned by
  /// the inverse of the device rotation so text reads upright. Overlaps and controls outside
  /// the preview are reported in `conflicts`, never silently moved.
  public static func layout(
    _ overlay: Overlay, orientation: Orientation, width: Int, height: Int
  ) -> Layout {
    let r = orientation.clockwiseRotation ?? 0
    let toView = ImageTransform(quarterTurns: r / 90)
    let toNative = toView.inverse
    let shorter = min(width, height)
    let view = toView.outputSize(width: width, height: height)
    var placements: [Placement] = []
    var conflicts: [LayoutConflict] = []
    for control in overlay.controls {
      let w = control.width.resolve(shorterSide: shorter)
      let h = control.height.resolve(shorterSide: shorter)
      let mx = control.marginX.resolve(shorterSide: shorter)
      let my = control.marginY.resolve(shorterSide: shorter)
      let ox = control.offsetX.resolve(shorterSide: shorter)
      let oy = control.offsetY.resolve(shorterSide: shorter)
      let rect: Rect
      let viewRect: Rect
      switch control.frame {
      case .view:
        viewRect = place(
          width: w, height: h, in: view, anchor: control.anchor, margin: (mx, my),
          offset: (ox, oy))
        rect = map(viewRect, toNative, frameWidth: view.width, frameHeight: view.height)
      case .device:
        let native = r % 180 == 0 ? (w, h) : (h, w)
        rect = place(
          width: native.0, height: native.1, in: (width, height), anchor: control.anchor,
          margin: (mx, my), offset: (ox, oy))
        viewRect = map(rect, toView, frameWidth: width, frameHeight: height)
      }
      if w <= 0 || h <= 0 {
        conflicts.append(.empty(control.id))
      } else if !rect.isInside(width: width, height: height) {
        conflicts.append(.outside(control.id, rect))
      }
      placements.append(
        Placement(control: control, rect: rect, viewRect: viewRect, rotation: (360 - r) % 360))
    }
    for i in placements.indices {
      for j in placements.indices where j > i && placements[i].rect.intersects(placements[j].rect) {
        conflicts.append(
          .overlap(
            placements[i].control.id, placements[j].control.id, placements[i].rect,
            placements[j].rect))
      }
    }
    return Layout(
      orientation: orientation, width: width, height: height, deviceRotation: r,
      placements: placements, conflicts: conflicts)
  }

  /// Lays out every defined orientation and returns the conflicts of each (empty: the overlay
  /// fits this preview size whichever way the device is held).
  public static func check(_ overlay: Overlay, width: Int, height: Int) -> [(
    Orientation, [LayoutConflict]
  )] {
    Orientation.defined.compactMap { o in
      let conflicts = layout(overlay, orientation: o, width: width, height: height).conflicts
      return conflicts.isEmpty ? nil : (o, conflicts)
    }
  }

  /// Places a `width`x`height` box against the anchored edges of a frame.
  static func place(
    width w: Int, height h: Int, in frame: (width: Int, height: Int), anchor: Control.Anchor,
    margin: (Int, Int), offset: (Int, Int)
  ) -> Rect {
    let x: Int
    switch anchor.horizontal {
    case -1: x = margin.0
    case 1: x = frame.width - margin.0 - w
    default: x = (frame.width - w) / 2
    }
    let y: Int
    switch anchor.vertical {
    case -1: y = margin.1
    case 1: y = frame.height - margin.1 - h
    default: y = (frame.height - h) / 2
    }
    return Rect(x: x + offset.0, y: y + offset.1, width: w, height: h)
  }

  /// The rectangle `rect` of a `frameWidth`x`frameHeight` picture after `transform`.
  static func map(_ rect: Rect, _ transform: ImageTransform, frameWidth: Int, frameHeight: Int)
    -> Rect
  {
    guard rect.width > 0, rect.height > 0 else {
      // A box that rounds to nothing (reported as `.empty`): mapped as a one-pixel box, then
      // given back its zero side, which a quarter turn moves to the other axis.
      let grown = Rect(x: rect.x, y: rect.y, width: max(rect.width, 1), height: max(rect.height, 1))
      var mapped = map(grown, transform, frameWidth: frameWidth, frameHeight: frameHeight)
      let swaps = transform.quarterTurns % 2 != 0
      if (swaps ? rect.height : rect.width) <= 0 { mapped.width = 0 }
      if (swaps ? rect.width : rect.height) <= 0 { mapped.height = 0 }
      return mapped
    }
    // Map the first and last pixel; a quarter turn maps pixel boxes to pixel boxes exactly.
    // Coordinates may lie outside the frame (a control that does not fit): the mapping is
    // affine, so it still holds there.
    let a = transform.map(x: rect.x, y: rect.y, width: frameWidth, height: frameHeight)
    let b = transform.map(
      x: rect.maxX - 1, y: rect.maxY - 1, width: frameWidth, height: frameHeight)
    return Rect(
      x: min(a.x, b.x), y: min(a.y, b.y), width: abs(a.x - b.x) + 1, height: abs(a.y - b.y) + 1)
  }
}
