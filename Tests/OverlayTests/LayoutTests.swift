import Imaging
import OrientCore
import Overlay
import Testing

let sizes: [(Int, Int)] = [
  (640, 360), (1280, 720), (1920, 1080), (800, 600), (360, 640), (1080, 2340), (1024, 1024),
]

/// The user's view of a preview pixel: the preview turned clockwise by the device rotation.
func toView(_ o: Orientation) -> ImageTransform {
  ImageTransform(quarterTurns: (o.clockwiseRotation ?? 0) / 90)
}

@Suite struct LayoutTests {
  /// The built-in overlay fits every orientation at phone, tablet, laptop and square sizes.
  @Test(arguments: Orientation.defined)
  func builtInOverlayFitsEverywhere(_ orientation: Orientation) {
    for (w, h) in sizes {
      let layout = OverlayLayout.layout(
        OverlayFile.builtIn, orientation: orientation, width: w, height: h)
      #expect(layout.conflicts.isEmpty, "\(w)x\(h) \(orientation): \(layout.conflicts)")
      #expect(layout.placements.count == OverlayFile.builtIn.controls.count)
      for p in layout.placements {
        #expect(p.rect.isInside(width: w, height: h), "\(p.control.id) \(p.rect)")
      }
    }
  }

  /// View-frame anchors stay where the user sees them: the shutter on the user's right edge,
  /// centred; the status label at the user's top; content turned back by the device rotation.
  @Test(arguments: Orientation.defined)
  func viewAnchorsFollowTheUser(_ orientation: Orientation) throws {
    for (w, h) in sizes {
      let layout = OverlayLayout.layout(
        OverlayFile.builtIn, orientation: orientation, width: w, height: h)
      let view = layout.viewSize
      let r = orientation.clockwiseRotation ?? 0
      #expect(view == (r % 180 == 0 ? (w, h) : (h, w)))
      let shutter = try #require(layout.placement("shutter"))
      let margin = Length.percent(4).resolve(shorterSide: min(w, h))
      #expect(shutter.viewRect.maxX == view.width - margin)
      #expect(abs(shutter.viewRect.centre.y - view.height / 2) <= 1)
      #expect(shutter.rotation == (360 - r) % 360)
      let status = try #require(layout.placement("status"))
      #expect(status.viewRect.y == Length.percent(3).resolve(shorterSide: min(w, h)))
      #expect(abs(status.viewRect.centre.x - view.width / 2) <= 1)
      // The preview rectangle is the view rectangle turned back onto the display.
      for p in layout.placements where p.control.frame == .view {
        let corners = [
          (p.rect.x, p.rect.y), (p.rect.maxX - 1, p.rect.maxY - 1),
        ].map { toView(orientation).map(x: $0.0, y: $0.1, width: w, height: h) }
        let xs = corners.map(\.x)
        let ys = corners.map(\.y)
        #expect(xs.min() == p.viewRect.x && xs.max() == p.viewRect.maxX - 1, "\(p.control.id)")
        #expect(ys.min() == p.viewRect.y && ys.max() == p.viewRect.maxY - 1, "\(p.control.id)")
      }
    }
  }

  /// Where the user's edges land on the display: left-up puts the user's top on the display's
  /// left edge, right-up on its right edge, bottom-up on its bottom edge.
  @Test(arguments: [
    (Orientation.normal, "top"), (.leftUp, "left"), (.bottomUp, "bottom"), (.rightUp, "right"),
  ])
  func userTopIsOnTheExpectedDisplayEdge(_ orientation: Orientation, _ edge: String) throws {
    let layout = OverlayLayout.layout(
      OverlayFile.builtIn, orientation: orientation, width: 1280, height: 720)
    let status = try #require(layout.placement("status")).rect
    let margin = Length.percent(3).resolve(shorterSide: 720)
    switch edge {
    case "top": #expect(status.y == margin)
    case "left": #expect(status.x == margin)
    case "bottom": #expect(status.maxY == 720 - margin)
    default: #expect(status.maxX == 1280 - margin)
    }
  }

  /// The switch-camera blocker is anchored to the device: it covers the same display corner
  /// in every orientation, while its content turns with the user.
  @Test func blockerStaysOverTheSwitchCameraCorner() throws {
    for (w, h) in sizes {
      var rects: Set<Rect> = []
      var rotations: Set<Int> = []
      for orientation in Orientation.defined {
        let layout = OverlayLayout.layout(
          OverlayFile.builtIn, orientation: orientation, width: w, height: h)
        let blocker = try #require(layout.placement("switch-camera-blocker"))
        rects.insert(blocker.rect)
        rotations.insert(blocker.rotation)
        let margin = Length.percent(2).resolve(shorterSide: min(w, h))
        #expect(blocker.rect.x == margin && blocker.rect.maxY == h - margin)
      }
      #expect(rects.count == 1, "\(w)x\(h): \(rects)")
      #expect(rotations == [0, 90, 180, 270])
    }
  }

  /// A custom overlay: one button anchored top-left with pixel margins, worked out by hand.
  @Test(arguments: [
    (Orientation.normal, Rect(x: 10, y: 20, width: 100, height: 40)),
    // User's top-left is the display's bottom-left; the 100x40 box stands 40x100.
    (.leftUp, Rect(x: 20, y: 600 - 10 - 100, width: 40, height: 100)),
    (.bottomUp, Rect(x: 800 - 10 - 100, y: 600 - 20 - 40, width: 100, height: 40)),
    (.rightUp, Rect(x: 800 - 20 - 40, y: 10, width: 40, height: 100)),
  ])
  func pixelMarginsWorkedOutByHand(_ orientation: Orientation, _ expected: Rect) {
    let overlay = Overlay(controls: [
      Control(
        id: "b", kind: .button, action: .capture, width: .pixels(100), height: .pixels(40),
        anchor: .topLeft, marginX: .pixels(10), marginY: .pixels(20))
    ])
    let layout = OverlayLayout.layout(overlay, orientation: orientation, width: 800, height: 600)
    #expect(layout.placements[0].rect == expected)
    #expect(layout.placements[0].viewRect.x == 10 && layout.placements[0].viewRect.y == 20)
    #expect(layout.conflicts.isEmpty)
  }

  /// Overlaps and controls that leave the preview are reported, never moved; a wide control
  /// that fits a landscape view does not fit the portrait view of the same display.
  @Test func conflictsAreReported() {
    let overlay = Overlay(controls: [
      Control(
        id: "wide", kind: .label, width: .pixels(600), height: .pixels(50), anchor: .top),
      Control(
        id: "under", kind: .button, action: .block, width: .pixels(60), height: .pixels(60),
        anchor: .top, marginY: .pixels(20)),
    ])
    let normal = OverlayLayout.layout(overlay, orientation: .normal, width: 800, height: 480)
    #expect(normal.conflicts.count == 1)
    #expect(normal.conflicts.first?.description.contains("\"wide\"") == true)
    #expect(normal.conflicts.first?.description.contains("overlaps \"under\"") == true)
    let turned = OverlayLayout.layout(overlay, orientation: .leftUp, width: 800, height: 480)
    #expect(turned.conflicts.contains { if case .outside("wide", _) = $0 { true } else { false } })
    let all = OverlayLayout.check(overlay, width: 800, height: 480)
    #expect(all.map(\.0) == Orientation.defined)
  }

  /// A control whose size rounds to nothing at this preview size is reported as empty, and
  /// its boxes keep the sizes asked for, turned with the device: the view box is 0 wide, the
  /// preview box of a device-frame control held left-up 0 high. (Found by the overlay-json
  /// fuzz target: the view box came back 25x0 instead of 0x25.)
  @Test(arguments: Orientation.defined, [Control.Frame.view, .device])
  func emptyControlKeepsItsShape(_ orientation: Orientation, _ frame: Control.Frame) {
    let overlay = Overlay(controls: [
      Control(
        id: "thin", kind: .button, action: .block, width: .percent(0.1), height: .pixels(25),
        anchor: .bottomLeft, frame: frame, marginX: .pixels(4), marginY: .pixels(4))
    ])
    let layout = OverlayLayout.layout(overlay, orientation: orientation, width: 176, height: 176)
    let placement = layout.placements[0]
    let turned = orientation == .leftUp || orientation == .rightUp
    #expect(placement.viewRect.width == 0 && placement.viewRect.height == 25, "\(placement)")
    #expect(placement.rect.width == (turned ? 25 : 0), "\(placement)")
    #expect(placement.rect.height == (turned ? 0 : 25), "\(placement)")
    #expect(layout.conflicts == [.empty("thin")])
  }

  /// Only buttons are hit; the topmost wins.
  @Test func hitTesting() throws {
    let layout = OverlayLayout.layout(
      OverlayFile.builtIn, orientation: .rightUp, width: 640, height: 360)
    for id in ["shutter", "scan", "switch-camera-blocker"] {
      let p = try #require(layout.placement(id))
      #expect(layout.button(atX: p.rect.centre.x, y: p.rect.centre.y)?.control.id == id)
    }
    let brace = try #require(layout.placement("brace-top-left"))
    #expect(layout.button(atX: brace.rect.x, y: brace.rect.y) == nil)
    #expect(layout.button(atX: 320, y: 180) == nil)
  }
}

@Suite struct RenderTests {
  /// What the user sees is upright: the rendered overlay, turned as the user sees the display,
  /// holds each control exactly as drawn upright in its view rectangle.
  @Test(arguments: Orientation.defined)
  func contentIsUprightForTheUser(_ orientation: Orientation) throws {
    let layout = OverlayLayout.layout(
      OverlayFile.builtIn, orientation: orientation, width: 640, height: 360)
    let state = OverlayState(status: "Front camera disabled: resolution too low")
    let seen = OverlayRenderer.render(layout, state: state).transformed(toView(orientation))
    for p in layout.placements {
      let upright = try #require(OverlayRenderer.drawControl(p, layout: layout, state: state))
      var same = true
      for y in 0..<upright.height {
        for x in 0..<upright.width
        where upright[x, y] != seen[p.viewRect.x + x, p.viewRect.y + y] {
          same = false
        }
      }
      #expect(same, "\(p.control.id) in \(orientation)")
    }
  }

  /// Buttons are drawn in their fill colour; the status label only shows with a status; a
  /// brace's corner points into its corner of the user's view.
  @Test func coloursAndVisibility() throws {
    let layout = OverlayLayout.layout(
      OverlayFile.builtIn, orientation: .normal, width: 1280, height: 720)
    let plain = OverlayRenderer.render(layout)
    let shutter = try #require(layout.placement("shutter"))
    #expect(plain[shutter.rect.centre.x, shutter.rect.centre.y] == Colour(244, 244, 244))
    let blocker = try #require(layout.placement("switch-camera-blocker"))
    #expect(plain[blocker.rect.x + 8, blocker.rect.y + 8] == Colour(180, 20, 30))
    let status = try #require(layout.placement("status"))
    #expect(plain[status.rect.x + 3, status.rect.y + 3].a == 0)
    let shown = OverlayRenderer.render(layout, state: OverlayState(status: "Scanning..."))
    #expect(shown[status.rect.x + 3, status.rect.y + 3] == Colour(0, 0, 0, 170))
    // Some text pixels are white inside the label.
    var white = 0
    for y in status.rect.y..<status.rect.maxY {
      for x in status.rect.x..<status.rect.maxX where shown[x, y] == Colour(255, 255, 255) {
        white += 1
      }
    }
    #expect(white > 50)
    let brace = try #require(layout.placement("brace-bottom-right"))
    #expect(plain[brace.rect.maxX - 1, brace.rect.maxY - 1] == Colour(255, 214, 0))
    #expect(plain[brace.rect.x, brace.rect.y].a == 0)
  }

  /// Long text wraps at spaces and shrinks to fit; nothing is drawn outside the box.
  @Test func textWrapsAndFits() {
    let lines = OverlayRenderer.wrap(
      "Front camera disabled: resolution too low", maxWidth: 6 * 24 - 1)
    #expect(lines == ["Front camera disabled:", "resolution too low"])
    #expect(OverlayRenderer.wrap("abcdefghij", maxWidth: 6 * 4 - 1) == ["abcd", "efgh", "ij"])
    var image = RGBAImage(width: 60, height: 30)
    OverlayRenderer.drawText(
      "a very long text that cannot fit", into: &image,
      box: Rect(x: 5, y: 5, width: 50, height: 20),
      colour: Colour(255, 0, 0))
    for y in 0..<30 {
      for x in 0..<60 where image[x, y].a != 0 {
        #expect(x >= 5 && x < 55 && y >= 5 && y < 25)
      }
    }
  }
}
