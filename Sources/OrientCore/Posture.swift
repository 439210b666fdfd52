/// How a convertible is folded, from its hinge angle (and, between tent and stand, which way
/// up the display is).
///
/// The raw values are the wire names of the `Posture` D-Bus property and of
/// `orientd --watch`.
public enum Posture: String, CaseIterable, Sendable, CustomStringConvertible {
  /// Not known yet: no reliable reading since the claim, or only one accelerometer.
  case undefined
  /// Lid shut on the keyboard (hinge angle near 0).
  case closed
  /// Opened for typing (roughly 30-160 degrees).
  case laptop
  /// Opened flat (around 180 degrees).
  case flat
  /// Folded past flat and standing like an inverted V, hinge on top: the display is upside
  /// down in its own frame (bottom-up).
  case tent
  /// Folded past flat with the keyboard face down on the table and the display upright.
  case stand
  /// Folded all the way (hinge angle near 360): the keyboard is behind the display.
  case tablet

  /// The wire name.
  public var description: String { rawValue }

  /// Whether the keyboard cannot be used in this posture (`SW_TABLET_MODE` on): tablet, tent
  /// and stand, as ChromeOS and Windows treat anything folded past flat.
  public var isTabletMode: Bool {
    switch self {
    case .tablet, .tent, .stand: return true
    case .undefined, .closed, .laptop, .flat: return false
    }
  }
}

/// Why a hinge angle cannot be trusted right now.
public enum HingeUnreliability: String, Sendable, Equatable, CustomStringConvertible {
  /// Gravity lies (nearly) along the hinge axis (the machine stands on its side), so the two
  /// halves' rotation about the hinge cannot be seen.
  case hingeVertical = "hinge-vertical"
  /// A part reads more or less than 1 g, or the two parts disagree along the hinge axis (which
  /// they share): something other than gravity is acting on it.
  case accelerating
  /// A reading of one part is missing or older than the other by too much.
  case stale

  /// The wire name (`orientd replay`, logs).
  public var description: String { rawValue }
}
