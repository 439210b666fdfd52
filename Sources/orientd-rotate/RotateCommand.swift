import DBusKit
import DeviceDiscovery
import Glibc
import JSON
import OrientClient
import OrientCore
import OrientLog
import ScreenRotation
import SystemKit

/// `orientd rotate`: follows the orientation service and turns the screen and touch input.
enum RotateCommand {
  /// Runs until stopped (or once with `--once`); returns the exit status.
  static func main(_ options: RotateOptions) -> Int32 {
    signal(SIGPIPE, SIG_IGN)
    let environment = processEnvironment()
    if let request = options.lockRequest {
      return lockCommand(request, environment: environment).rawValue
    }
    let logger = Logger(label: "orientd rotate", level: options.verbose ? .debug : .notice)
    let backend: RotationBackend?
    switch makeBackend(options, environment: environment) {
    case .success(let made): backend = made
    case .failure(let error) where error.status == .success:
      StandardStream.error.writeLine("orientd rotate: \(error.message)")
      return 0
    case .failure(let error):
      StandardStream.error.writeLine("orientd rotate: \(error.message)")
      return error.status.rawValue
    }
    let loop: EventLoop
    do {
      loop = try EventLoop()
    } catch {
      StandardStream.error.writeLine("orientd rotate: cannot create the event loop: \(error)")
      return ExitStatus.osError.rawValue
    }
    let rotator: Rotator
    do {
      rotator = try Rotator(
        options: options, backend: backend, environment: environment, loop: loop, logger: logger)
    } catch {
      StandardStream.error.writeLine("orientd rotate: \(error.message)")
      return error.status.rawValue
    }
    return rotator.run()
  }

  /// `--lock`, `--unlock`, `--toggle-lock`, `--lock-status`: ask the running instance, or change
  /// the saved state when none runs.
  static func lockCommand(_ request: RotationLock.Request, environment: [String: String])
    -> ExitStatus
  {
    if let socket = RotationLock.socketPath(environment) {
      do {
        if let answer = try RotationLock.send(request, socketPath: socket) {
          StandardStream.output.writeLine(answer)
          return .success
        }
      } catch {
        StandardStream.error.writeLine("orientd rotate: \(error.message)")
        return error.status
      }
    }
    guard let path = RotationLock.statePath(environment) else {
      StandardStream.error.writeLine(
        "orientd rotate: neither XDG_STATE_HOME nor HOME is set: nowhere to keep the lock")
      return .configuration
    }
    let was = RotationLock.load(path)
    let locked: Bool
    switch request {
    case .lock: locked = true
    case .unlock: locked = false
    case .toggle: locked = !was
    case .status: locked = was
    }
    if request != .status {
      do {
        try RotationLock.save(locked, to: path)
      } catch {
        StandardStream.error.writeLine("orientd rotate: \(error.message)")
        return error.status
      }
      StandardStream.error.writeLine(
        "orientd rotate: no orientd rotate is running; saved for its next start")
    }
    StandardStream.output.writeLine(locked ? "locked" : "unlocked")
    return .success
  }

  /// The backend for the options and the session, or an error (status 0 for "GNOME/KDE
  /// rotate by themselves").
  static func makeBackend(_ options: RotateOptions, environment: [String: String]) -> Result<
    RotationBackend?, RotateError
  > {
    let desktop = Desktop.detect(environment)
    if case .rotatesItself(let name) = desktop, !options.force {
      return .failure(
        RotateError(
          .success,
          "\(name == "kde" ? "KDE (KWin)" : "GNOME (mutter)") turns the screen by itself from "
            + "net.hadess.SensorProxy, which orientd serves: nothing to do (--force to run anyway; "
            + "auto-rotation is in the desktop's display settings)"))
    }
    do {
      switch options.backend {
      case .none:
        return .success(nil)
      case .sway:
        guard let socket = environment["SWAYSOCK"], !socket.isEmpty else {
          return .failure(
            RotateError(.unavailable, "--backend sway: SWAYSOCK is not set (is sway running?)"))
        }
        return .success(try SwayBackend(socketPath: socket))
      case .wlrRandr:
        return .success(WlrRandrBackend())
      case .x11:
        return .success(try X11Support.backend(display: environment["DISPLAY"]))
      case .auto:
        switch desktop {
        case .sway(let socket): return .success(try SwayBackend(socketPath: socket))
        case .wayland: return .success(WlrRandrBackend())
        case .x11(let display): return .success(try X11Support.backend(display: display))
        case .rotatesItself, .none:
          return .failure(
            RotateError(
              .unavailable,
              "no compositor or X server to talk to: none of SWAYSOCK, WAYLAND_DISPLAY, DISPLAY "
                + "is set. Run orientd rotate inside the graphical session (e.g. 'exec orientd "
                + "rotate' in the compositor's configuration), or use --backend none --exec CMD"
            ))
        }
      }
    } catch {
      return .failure(error)
    }
  }

  /// This process's environment.
  static func processEnvironment() -> [String: String] {
    var env: [String: String] = [:]
    var entry = environ
    while let pointer = entry.pointee {
      let text = String(cString: pointer)
      if let equals = text.firstIndex(of: "=") {
        env[String(text[..<equals])] = String(text[text.index(after: equals)...])
      }
      entry += 1
    }
    return env
  }
}
