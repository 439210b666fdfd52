import OrientCore

/// A screen rotation in quarter turns, as compositors name them: the transform that keeps the
/// picture upright when the device is held in an `Orientation`.
///
/// The convention is GNOME's (mutter): `left-up` (the device turned 90° clockwise, orientd's
/// rotation 90) is `WL_OUTPUT_TRANSFORM_90` (wlr-randr `--transform 90`) and RandR
/// `RR_Rotate_90` (xrandr `left`): the picture turned a quarter counter-clockwise on the
/// panel. sway spells rotations clockwise (it inverts 90 and 270 when it parses `transform`,
/// and its IPC reports its own spelling), so there `left-up` is `transform 270`: `swayName`.
public enum Turn: Int, CaseIterable, Sendable, CustomStringConvertible {
  /// Upright.
  case normal = 0
  /// A quarter turn (`90`, RandR `left`).
  case quarter = 90
  /// Upside down (`180`, RandR `inverted`).
  case half = 180
  /// Three quarter turns (`270`, RandR `right`).
  case threeQuarters = 270

  /// The turn for `degrees` (any multiple of 90, negative allowed).
  public init(degrees: Int) {
    let normalised = ((degrees % 360) + 360) % 360
    self = Turn(rawValue: normalised - normalised % 90) ?? .normal
  }

  /// The turn for the device held in `orientation` on a panel mounted `natural` (both as
  /// orientd names them), or `nil` while the orientation is undefined.
  ///
  /// `natural` is how the panel's own top sits when the device is upright: a portrait-native
  /// panel in a landscape tablet reads `right-up` or `left-up`, and its base transform is
  /// composed in so that the picture is upright in every orientation.
  public static func target(for orientation: Orientation, natural: Orientation = .normal) -> Turn? {
    guard let device = orientation.clockwiseRotation else { return nil }
    return Turn(degrees: device + (natural.clockwiseRotation ?? 0))
  }

  /// wl_output's name (wlr-output-management, wlr-randr): `normal`, `90`, `180`, `270`.
  public var waylandName: String { self == .normal ? "normal" : String(rawValue) }

  /// sway's name for the same transform (`output NAME transform T`, `GET_OUTPUTS`): 90 and
  /// 270 swapped, because sway counts clockwise.
  public var swayName: String {
    switch self {
    case .quarter: return "270"
    case .threeQuarters: return "90"
    default: return waylandName
    }
  }

  /// The turn sway reports as `name` in `GET_OUTPUTS` (its clockwise spelling).
  public init?(swayName name: String) {
    switch name {
    case "90": self = .threeQuarters
    case "270": self = .quarter
    default: self.init(name: name)
    }
  }

  /// xrandr's name: `normal`, `left`, `inverted`, `right`.
  public var randrName: String {
    switch self {
    case .normal: return "normal"
    case .quarter: return "left"
    case .half: return "inverted"
    case .threeQuarters: return "right"
    }
  }

  /// The turn named by a compositor (`normal`, `90`, `180`, `270`, xrandr's `left`...);
  /// flipped transforms are not turns and give `nil`.
  public init?(name: String) {
    switch name {
    case "normal", "0": self = .normal
    case "90", "left": self = .quarter
    case "180", "inverted": self = .half
    case "270", "right": self = .threeQuarters
    default: return nil
    }
  }

  /// The XInput "Coordinate Transformation Matrix" (row-major 3x3) that maps a touchscreen's
  /// normalised coordinates onto the output turned this way.
  public var touchMatrix: [Float] {
    switch self {
    case .normal: return [1, 0, 0, 0, 1, 0, 0, 0, 1]
    case .quarter: return [0, -1, 1, 1, 0, 0, 0, 0, 1]
    case .half: return [-1, 0, 1, 0, -1, 1, 0, 0, 1]
    case .threeQuarters: return [0, 1, 0, -1, 0, 1, 0, 0, 1]
    }
  }

  /// The description: the wayland name.
  public var description: String { waylandName }
}

extension Orientation {
  /// The orientation named by a user (`normal`, `left-up`, `right-up`, `bottom-up`).
  public init?(userName: String) {
    guard let value = Orientation(rawValue: userName), value.clockwiseRotation != nil else {
      return nil
    }
    self = value
  }
}
