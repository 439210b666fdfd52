import DBusKit

/// The system services orientd follows for face-aware rotation, spelt once: logind (is the
/// session locked?) and power-profiles-daemon (is power saving on?). The camera is never used
/// while the session is locked or its lock state is unknown, nor in power saving.
public enum SystemServices {
  /// logind's bus name.
  public static let logindName = "org.freedesktop.login1"
  /// The seat whose active session is followed: `seat0`, the one with the built-in display.
  public static let seatPath = path("/org/freedesktop/login1/seat/seat0")
  /// `org.freedesktop.login1.Seat`.
  public static let seatInterface = "org.freedesktop.login1.Seat"
  /// The seat's `ActiveSession` property: `(so)`, the session's id and object path (`/` when
  /// none).
  public static let activeSessionProperty = "ActiveSession"
  /// `org.freedesktop.login1.Session`.
  public static let sessionInterface = "org.freedesktop.login1.Session"
  /// The session's `LockedHint` property (`b`), set by the screen locker
  /// (`SetLockedHint`), announced with `PropertiesChanged`.
  public static let lockedHintProperty = "LockedHint"

  /// One power-profiles-daemon API: its bus name, object path and interface.
  public struct PowerProfilesAPI: Equatable, Sendable {
    /// The bus name (also the interface).
    public var name: String
    /// The object path.
    public var path: DBusObjectPath
  }

  /// power-profiles-daemon's APIs, the old name first: `net.hadess.PowerProfiles` (0.1
  /// onwards, Debian 12's 0.12) and `org.freedesktop.UPower.PowerProfiles` (0.20 onwards,
  /// which serves both).
  public static let powerProfiles = [
    PowerProfilesAPI(name: "net.hadess.PowerProfiles", path: path("/net/hadess/PowerProfiles")),
    PowerProfilesAPI(
      name: "org.freedesktop.UPower.PowerProfiles",
      path: path("/org/freedesktop/UPower/PowerProfiles")),
  ]
  /// The `ActiveProfile` property (`s`).
  public static let activeProfileProperty = "ActiveProfile"
  /// The profile that means power saving.
  public static let powerSaverProfile = "power-saver"

  private static func path(_ text: String) -> DBusObjectPath {
    (try? DBusObjectPath(text)) ?? .root
  }
}
