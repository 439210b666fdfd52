import OrientCore
import ScreenRotation
import SystemKit

/// The options of `orientd rotate` (this program, orientd-rotate, which orientd execs).
struct RotateOptions: Equatable {
  /// What the command line asks for.
  enum Command: Equatable {
    /// Print `usage` and exit 0.
    case help
    /// Print the version and exit 0.
    case version
    /// Rotate (or, with `lockRequest`, talk to the running instance).
    case rotate(RotateOptions)
  }

  /// Which backend turns the screen.
  enum Backend: String, Equatable, CaseIterable {
    /// From the session's environment (SWAYSOCK, WAYLAND_DISPLAY, DISPLAY).
    case auto
    /// sway's IPC.
    case sway
    /// wlr-randr (wlr-output-management).
    case wlrRandr = "wlr-randr"
    /// X11 RandR + XInput2.
    case x11
    /// Only the hooks.
    case none
  }

  /// When to rotate.
  enum Policy: String, Equatable {
    /// Always.
    case always
    /// Only while SW_TABLET_MODE is on.
    case tablet
  }

  /// What a lock request asks the running instance.
  var lockRequest: RotationLock.Request?
  /// `--output NAME`; default the built-in panel.
  var output: String?
  /// `--backend`.
  var backend = Backend.auto
  /// `--touch NAME`: devices added to (or, with `--touch-only`, instead of) the discovered ones.
  var touch: [String] = []
  /// `--touch-only`: no discovery, only the `--touch` devices.
  var touchOnly = false
  /// `--when`.
  var policy = Policy.always
  /// `--exec CMD` (after each turn).
  var after: [String] = []
  /// `--exec-before CMD`.
  var before: [String] = []
  /// `--natural O`: how the panel is mounted; `nil`: as the DRM connector's "panel
  /// orientation" property says (normal when it has none).
  var natural: Orientation?
  /// `--settle MS`: after a turn, further changes wait this long.
  var settleMilliseconds = 500
  /// `--once`: apply the current orientation and exit.
  var once = false
  /// `--force`: run on GNOME/KDE too.
  var force = false
  /// `--json`: one JSON object per applied turn.
  var json = false
  /// `--session`: the session bus.
  var session = false
  /// `--suggest`: while locked, offer a turn as a desktop notification.
  var suggest = false
  /// `--suggest-timeout S`: how long an offer stays.
  var suggestSeconds = 5.0
  /// `-v`.
  var verbose = false

  /// The text of `orientd rotate --help`.
  static let usage = """
    usage: orientd rotate [--output NAME] [--backend B] [--touch NAME ...] [--when W]
                          [--exec CMD ...] [--exec-before CMD ...] [--natural O] [--settle MS]
                          [--once] [--force] [--json] [--session] [--suggest]
                          [--suggest-timeout S] [-v]
           orientd rotate --lock | --unlock | --toggle-lock | --lock-status
           orientd rotate --help | --version

    orientd rotate follows orientd (or iio-sensor-proxy) like --watch, waiting for it when it
    is not there, and turns the screen and its touch input with each change: sway through its
    IPC ($SWAYSOCK; touch with 'input ID map_to_output'), other wlroots compositors through
    wlr-randr (wlr-output-management), X11 through RandR and XInput2 (the output's rotation and
    every touchscreen, pen and eraser's "Coordinate Transformation Matrix"). GNOME and KDE
    rotate by themselves: it says so and exits 0 unless --force. Each applied turn prints a
    line (with --json an object: {"time":...,"orientation":"left-up","output":"eDP-1",
    "transform":"90","touch":["..."]}).
      --output NAME     the output to turn (default: the built-in eDP, DSI or LVDS panel)
      --backend B       auto (default), sway, wlr-randr, x11, or none (hooks only)
      --touch NAME      also map this input device (repeatable); with --touch-only, only these
                        (default: every ID_INPUT_TOUCHSCREEN/ID_INPUT_TABLET device whose
                        WL_OUTPUT is unset or names the output)
      --when W          always (default), or tablet: only in tablet mode (orientd's posture,
                        or SW_TABLET_MODE switches); upright otherwise
      --exec CMD        run CMD (sh -c) after each turn; --exec-before CMD before it; both
                        with ORIENTATION, ROTATION, PREVIOUS_ORIENTATION, OUTPUT, ORIENTD_HOOK
      --natural O       how the panel is mounted: normal, left-up, right-up, bottom-up
                        (a portrait-native panel in a landscape device; composed in);
                        default: the output's DRM "panel orientation" property, if any
      --settle MS       after a turn, changes wait MS ms and only the last counts (500)
      --once            apply the current orientation once and exit
      --force           run even on GNOME or KDE
      --suggest         while the rotation is locked, a turn of the device offers a desktop
                        notification (org.freedesktop.Notifications on the session bus) with
                        a Rotate action that turns the screen once; it goes away after
                        --suggest-timeout S seconds (5), when the device turns back, or on
                        unlock
      --lock, --unlock, --toggle-lock, --lock-status
                        change the rotation lock of the running orientd rotate (kept in
                        $XDG_STATE_HOME/orientd/rotation-lock); on unlock the current
                        orientation is applied. Bind --toggle-lock to a key.
    """

  /// Parses the arguments after `rotate`.
  ///
  /// - Throws: `UsageError` for an unknown option, a bad value or options that do not combine.
  static func parse(arguments: [String]) throws(UsageError) -> Command {
    var cursor = ArgumentCursor(arguments)
    var options = RotateOptions()
    var daemonOnly: [String] = []
    var lockFlag = ""
    let common = try cursor.scan { scanned, cursor throws(UsageError) in
      let (name, inline, argument) = (scanned.name, scanned.inline, scanned.text)
      switch name {
      case "--lock", "--unlock", "--toggle-lock", "--lock-status":
        try ArgumentCursor.noValue(name, inline)
        let request: RotationLock.Request =
          name == "--lock"
          ? .lock : name == "--unlock" ? .unlock : name == "--toggle-lock" ? .toggle : .status
        if let already = options.lockRequest, already != request {
          throw UsageError("only one of --lock, --unlock, --toggle-lock, --lock-status")
        }
        options.lockRequest = request
        lockFlag = name
      case "--output":
        options.output = try cursor.value(for: name, inline: inline)
        daemonOnly.append(name)
      case "--backend":
        let text = try cursor.value(for: name, inline: inline)
        guard let backend = Backend(rawValue: text) else {
          throw UsageError(
            "--backend '\(text)': one of \(Backend.allCases.map(\.rawValue).joined(separator: ", "))"
          )
        }
        options.backend = backend
        daemonOnly.append(name)
      case "--touch":
        options.touch.append(try cursor.value(for: name, inline: inline))
        daemonOnly.append(name)
      case "--touch-only":
        try ArgumentCursor.noValue(name, inline)
        options.touchOnly = true
        daemonOnly.append(name)
      case "--when":
        let text = try cursor.value(for: name, inline: inline)
        guard let policy = Policy(rawValue: text) else {
          throw UsageError("--when '\(text)': always or tablet")
        }
        options.policy = policy
        daemonOnly.append(name)
      case "--exec":
        options.after.append(try cursor.value(for: name, inline: inline))
        daemonOnly.append(name)
      case "--exec-before":
        options.before.append(try cursor.value(for: name, inline: inline))
        daemonOnly.append(name)
      case "--natural":
        let text = try cursor.value(for: name, inline: inline)
        guard let natural = Orientation(userName: text) else {
          throw UsageError("--natural '\(text)': normal, left-up, right-up or bottom-up")
        }
        options.natural = natural
        daemonOnly.append(name)
      case "--settle":
        let text = try cursor.value(for: name, inline: inline)
        guard let ms = Int(text), ms >= 0, ms <= 60_000 else {
          throw UsageError("--settle '\(text)': milliseconds, 0 to 60000")
        }
        options.settleMilliseconds = ms
        daemonOnly.append(name)
      case "--once":
        try ArgumentCursor.noValue(name, inline)
        options.once = true
        daemonOnly.append(name)
      case "--force":
        try ArgumentCursor.noValue(name, inline)
        options.force = true
        daemonOnly.append(name)
      case "--json":
        try ArgumentCursor.noValue(name, inline)
        options.json = true
        daemonOnly.append(name)
      case "--session":
        try ArgumentCursor.noValue(name, inline)
        options.session = true
        daemonOnly.append(name)
      case "--suggest":
        try ArgumentCursor.noValue(name, inline)
        options.suggest = true
        daemonOnly.append(name)
      case "--suggest-timeout":
        let text = try cursor.value(for: name, inline: inline)
        guard let seconds = Double(text), seconds >= 0.5, seconds <= 600 else {
          throw UsageError("--suggest-timeout '\(text)': seconds, 0.5 to 600")
        }
        options.suggestSeconds = seconds
        daemonOnly.append(name)
      default:
        throw UsageError(
          argument.hasPrefix("-")
            ? "unknown option '\(argument)' for rotate" : "unexpected argument '\(argument)'")
      }
    }
    if common.help { return .help }
    if common.version { return .version }
    options.verbose = common.verbose
    if options.lockRequest != nil, let wrong = daemonOnly.first {
      throw UsageError("\(wrong) does not apply with \(lockFlag)")
    }
    if options.touchOnly && options.touch.isEmpty {
      throw UsageError("--touch-only needs at least one --touch NAME")
    }
    return .rotate(options)
  }
}
