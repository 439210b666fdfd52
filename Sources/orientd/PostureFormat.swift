import JSON
import OrientClient
import Sensors

/// How `--watch` prints a convertible's posture after the orientation.
enum PostureFormat {
  /// `"posture":"laptop","hinge_angle":112.0,"hinge_reliable":true,"tablet_mode":false,
  /// "tablet_mode_source":"hinge"` (`hinge_angle` null while unreliable).
  static func json(_ p: PostureReading) -> [(String, JSONValue)] {
    [
      ("posture", .string(p.posture.rawValue)),
      // One decimal (0.1 degree), as the line has always shown it.
      ("hinge_angle", p.hingeAngle.isFinite ? .number((p.hingeAngle * 10).rounded() / 10) : .null),
      ("hinge_reliable", .bool(p.hingeAngleReliable)),
      ("tablet_mode", .bool(p.tabletMode)),
      ("tablet_mode_source", .string(p.tabletModeSource)),
    ]
  }

  /// `, posture laptop (hinge 112 degrees)`, `(hinge unreliable)`, plus `, tablet mode`.
  static func line(_ p: PostureReading) -> String {
    let hinge =
      p.hingeAngle.isFinite && p.hingeAngleReliable
      ? "hinge \(FixedPoint.format(p.hingeAngle, decimals: 0)) degrees" : "hinge unreliable"
    return ", posture \(p.posture.rawValue) (\(hinge))" + (p.tabletMode ? ", tablet mode" : "")
  }
}
