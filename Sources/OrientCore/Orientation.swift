/// Which edge of the display is up, as iio-sensor-proxy and orientd publish it.
///
/// The raw values are the wire names used on D-Bus (`AccelerometerOrientation`), by
/// `orientd --watch` and in replay output.
public enum Orientation: String, CaseIterable, Sendable, CustomStringConvertible {
  /// No reading yet, no sensor, or never decided (for example the device has been flat since
  /// start-up).
  case undefined
  /// Upright: the top edge of the display is up.
  case normal
  /// Upside down: turned 180 degrees.
  case bottomUp = "bottom-up"
  /// Turned 90 degrees clockwise, so that the display's left edge is up.
  case leftUp = "left-up"
  /// Turned 90 degrees counter-clockwise (270 clockwise), so that the right edge is up.
  case rightUp = "right-up"

  /// The wire name.
  public var description: String { rawValue }

  /// The clockwise rotation of the device from upright in degrees (0, 90, 180, 270), or `nil`
  /// for `undefined`.
  public var clockwiseRotation: Int? {
    switch self {
    case .undefined: return nil
    case .normal: return 0
    case .leftUp: return 90
    case .bottomUp: return 180
    case .rightUp: return 270
    }
  }

  /// The orientation for a clockwise rotation of 0, 90, 180 or 270 degrees (any multiple of 90,
  /// normalised); `nil` for other angles.
  public init?(clockwiseRotation degrees: Int) {
    let normalised = ((degrees % 360) + 360) % 360
    switch normalised {
    case 0: self = .normal
    case 90: self = .leftUp
    case 180: self = .bottomUp
    case 270: self = .rightUp
    default: return nil
    }
  }

  /// The four defined orientations, in clockwise order from `normal`.
  public static let defined: [Orientation] = [.normal, .leftUp, .bottomUp, .rightUp]

  /// The gravity vector an ideal sensor reads in this orientation when the display is vertical,
  /// in the display frame (Linux IIO convention): normal (0, -g, 0), left-up (+g, 0, 0),
  /// bottom-up (0, +g, 0), right-up (-g, 0, 0). `nil` for `undefined`.
  public var uprightGravity: Vector3? {
    switch self {
    case .undefined: return nil
    case .normal: return Vector3(0, -standardGravity, 0)
    case .leftUp: return Vector3(standardGravity, 0, 0)
    case .bottomUp: return Vector3(0, standardGravity, 0)
    case .rightUp: return Vector3(-standardGravity, 0, 0)
    }
  }
}

/// How the display is tilted relative to vertical, published as `Tilt` (and
/// `AccelerometerTilt` in the compatibility API, with the same names as iio-sensor-proxy 3.6+).
public enum Tilt: String, CaseIterable, Sendable, CustomStringConvertible {
  /// Unknown (no reading yet).
  case undefined
  /// Within the vertical band: the display faces the user, roughly upright.
  case vertical
  /// Leaning back, display facing partly up, but not flat.
  case tiltedUp = "tilted-up"
  /// Leaning forward, display facing partly down, but not flat.
  case tiltedDown = "tilted-down"
  /// Lying flat, display up; the in-plane angle means nothing here.
  case faceUp = "face-up"
  /// Lying flat, display down.
  case faceDown = "face-down"

  /// The wire name.
  public var description: String { rawValue }

  /// Whether the display is flat (face up or down), where orientation is held, not computed.
  public var isFlat: Bool { self == .faceUp || self == .faceDown }
}
