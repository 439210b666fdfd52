/// Which session orientd rotate runs in, from the environment the compositor sets.
public enum Desktop: Equatable, Sendable {
  /// GNOME (mutter) or KDE (KWin): they follow net.hadess.SensorProxy themselves.
  case rotatesItself(String)
  /// sway, with its IPC socket.
  case sway(socket: String)
  /// Another Wayland compositor (wlroots: Hyprland, labwc, wayfire, river...).
  case wayland(display: String)
  /// An X11 session.
  case x11(display: String)
  /// Nothing reachable.
  case none

  /// Detects the session from `XDG_CURRENT_DESKTOP`, `XDG_SESSION_DESKTOP`,
  /// `KDE_FULL_SESSION`, `SWAYSOCK`, `WAYLAND_DISPLAY` and `DISPLAY`.
  public static func detect(_ environment: [String: String]) -> Desktop {
    let names = [environment["XDG_CURRENT_DESKTOP"], environment["XDG_SESSION_DESKTOP"]]
      .compactMap { $0 }.flatMap { $0.split(separator: ":").map { $0.lowercased() } }
    if let name = names.first(where: { ["gnome", "kde", "plasma", "unity"].contains($0) }) {
      return .rotatesItself(name == "plasma" ? "kde" : name)
    }
    if environment["KDE_FULL_SESSION"] == "true" { return .rotatesItself("kde") }
    if let socket = environment["SWAYSOCK"], !socket.isEmpty { return .sway(socket: socket) }
    if let display = environment["WAYLAND_DISPLAY"], !display.isEmpty {
      return .wayland(display: display)
    }
    if let display = environment["DISPLAY"], !display.isEmpty { return .x11(display: display) }
    return .none
  }
}
