import DRMKit
import OrientCore
import ScreenRotation
import Testing

@testable import orientd_rotate

/// The DRM "panel orientation" composed in: the VM test `rotate-panel` reads it from a real
/// connector; these check the mapping and the name matching.
@Suite struct PanelNaturalTests {
  /// Each kernel value turns the picture as mutter does: "Left Side Up" like a device held
  /// left-up (a quarter turn, transform 90 when upright).
  @Test(arguments: [
    (PanelOrientation.normal, Orientation.normal, "normal"),
    (.leftSideUp, .leftUp, "90"), (.upsideDown, .bottomUp, "180"), (.rightSideUp, .rightUp, "270"),
  ])
  func kernelValuesComposeAsNatural(panel: PanelOrientation, natural: Orientation, upright: String)
  {
    #expect(PanelNatural.orientation(panel) == natural)
    #expect(Turn.target(for: .normal, natural: natural)?.waylandName == upright)
  }

  /// Compositors name outputs as the kernel does (eDP-1); Xorg's intel driver drops the dash.
  @Test func connectorsMatchByKernelNameOrWithoutDashes() {
    let connectors = [
      DRMConnector(name: "HDMI-A-1", card: "/dev/dri/card0", panelOrientation: nil),
      DRMConnector(name: "eDP-1", card: "/dev/dri/card0", panelOrientation: .rightSideUp),
    ]
    #expect(
      DRMConnectors.connector(named: "eDP-1", in: connectors)?.panelOrientation == .rightSideUp)
    #expect(DRMConnectors.connector(named: "eDP1", in: connectors)?.name == "eDP-1")
    #expect(DRMConnectors.connector(named: "HEADLESS-1", in: connectors) == nil)
  }
}
