import DBusKit

/// What orientd calls and follows of systemd-logind (or elogind, which serves the same names):
/// `PrepareForSleep` around a system suspend and the `delay` inhibitor that lets the daemon
/// quiesce its sensors first (org.freedesktop.login1(5), "Inhibitor Locks" in systemd's docs).
public enum Logind {
  /// `org.freedesktop.login1`: logind's bus name on the system bus.
  public static let name = "org.freedesktop.login1"
  /// `/org/freedesktop/login1`: the manager object.
  public static let path = (try? DBusObjectPath("/org/freedesktop/login1")) ?? .root
  /// `org.freedesktop.login1.Manager`.
  public static let managerInterface = "org.freedesktop.login1.Manager"
  /// `PrepareForSleep(b start)`: true just before the system sleeps (after every delay
  /// inhibitor has been let go, or `InhibitDelayMaxSec` passed), false once it has resumed
  /// (or the suspend failed).
  public static let prepareForSleepSignal = "PrepareForSleep"
  /// `Inhibit(s what, s who, s why, s mode) -> h fd`: the lock lasts while the descriptor is
  /// open.
  public static let inhibitMethod = "Inhibit"
  /// The `what` of orientd's inhibitor.
  public static let inhibitWhat = "sleep"
  /// The `mode` of orientd's inhibitor: the suspend waits (at most `InhibitDelayMaxSec`, 5 s by
  /// default) until the descriptor is closed.
  public static let inhibitMode = "delay"
  /// The `who` of orientd's inhibitor (what `systemd-inhibit --list` shows).
  public static let inhibitWho = "orientd"
  /// The `why` of orientd's inhibitor.
  public static let inhibitWhy = "switching the claimed sensors off before the suspend"

  /// The seat whose active session face-aware rotation follows: `seat0`, the one with the
  /// built-in display.
  public static let seatPath =
    (try? DBusObjectPath("/org/freedesktop/login1/seat/seat0")) ?? .root
  /// `org.freedesktop.login1.Seat`.
  public static let seatInterface = "org.freedesktop.login1.Seat"
  /// The seat's `ActiveSession` property: `(so)`, the session's id and object path (`/` when
  /// none).
  public static let activeSessionProperty = "ActiveSession"
  /// `org.freedesktop.login1.Session`.
  public static let sessionInterface = "org.freedesktop.login1.Session"
  /// The session's `LockedHint` property (`b`), set by the screen locker (`SetLockedHint`),
  /// announced with `PropertiesChanged`.
  public static let lockedHintProperty = "LockedHint"
}
