import DBusKit

/// power-profiles-daemon, as face-aware rotation follows it: its `power-saver` profile means
/// power saving, and the camera is then not used.
public enum PowerProfiles {
  /// One of its APIs: the bus name (also the interface) and the object path.
  public struct API: Equatable, Sendable {
    /// The bus name (also the interface).
    public var name: String
    /// The object path.
    public var path: DBusObjectPath
  }

  /// Its APIs, the old name first: `net.hadess.PowerProfiles` (0.1 onwards, Debian 12's 0.12)
  /// and `org.freedesktop.UPower.PowerProfiles` (0.20 onwards, which serves both).
  public static let apis = [
    API(name: "net.hadess.PowerProfiles", path: path("/net/hadess/PowerProfiles")),
    API(
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
