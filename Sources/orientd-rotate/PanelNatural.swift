import DRMKit
import OrientCore
import OrientLog

/// The panel's natural orientation from the kernel (DRM), composed in like `--natural`.
enum PanelNatural {
  /// orientd's name for a DRM panel orientation: "Left Side Up" (the panel's top at the
  /// casing's left) needs the picture turned as for a device held left edge up, so it is
  /// `left-up`, the same quarter turn mutter gives both.
  static func orientation(_ panel: PanelOrientation) -> Orientation {
    switch panel {
    case .normal: return .normal
    case .leftSideUp: return .leftUp
    case .rightSideUp: return .rightUp
    case .upsideDown: return .bottomUp
    }
  }

  /// The "panel orientation" of the DRM connector named `output`, or normal when there is no
  /// such connector, it has no such property, or no card can be read (each logged).
  static func fromDRM(output: String, logger: Logger) -> Orientation {
    let connectors: [DRMConnector]
    do {
      connectors = try DRMConnectors.list()
    } catch {
      logger.notice(
        "cannot read the DRM connectors (\(error)): taking \(output) as mounted normally; "
          + "--natural sets how it is mounted")
      return .normal
    }
    guard let connector = DRMConnectors.connector(named: output, in: connectors) else {
      logger.debug(
        "no DRM connector named \(output) (there are: "
          + "\(connectors.map(\.name).joined(separator: ", "))); mounted normally")
      return .normal
    }
    guard let panel = connector.panelOrientation else {
      logger.debug("\(connector.name) on \(connector.card) has no panel orientation: normal")
      return .normal
    }
    logger.notice(
      "\(connector.name) on \(connector.card): DRM panel orientation \"\(panel.rawValue)\"")
    return orientation(panel)
  }
}
