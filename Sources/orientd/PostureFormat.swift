import Accelerometer
import OrientClient

/// How `--watch` prints a convertible's posture after the orientation.
enum PostureFormat {
  /// `"posture":"laptop","hinge_angle":112.0,"hinge_reliable":true,"tablet_mode":false,
  /// "tablet_mode_source":"hinge"` (`hinge_angle` null while unreliable).
  static func json(_ p: PostureReading) -> [(String, String)] {
    [
      ("posture", "\"\(p.posture.rawValue)\""),
      (
        "hinge_angle", p.hingeAngle.isFinite ? FixedPoint.format(p.hingeAngle, decimals: 1) : "null"
      ),
      ("hinge_reliable", p.hingeAngleReliable ? "true" : "false"),
      ("tablet_mode", p.tabletMode ? "true" : "false"),
      ("tablet_mode_source", "\"\(p.tabletModeSource)\""),
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
