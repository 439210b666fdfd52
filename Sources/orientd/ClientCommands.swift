import DBusKit
import Glibc
import JSON
import OrientClient
import OrientCore
import OrientLog
import OrientWire
import Sensors
import SystemKit

/// How `--watch` and `--get` print a state.
enum StateFormat {
  /// `{"time":...,"orientation":"left-up","rotation":90,"tilt":"vertical",
  /// "has_accelerometer":true}` plus `extra` members; the line orientcam's
  /// `--orientation-from` reads. `time` is Unix seconds with milliseconds; `rotation` is null
  /// while undefined.
  static func json(_ state: OrientState, time: Int64, extra: [(String, JSONValue)] = [])
    -> String
  {
    let members: [(String, JSONValue)] = [
      // Whole milliseconds, so the shortest decimal has at most three places.
      ("time", .number((Double(time) / 1e6).rounded() / 1000)),
      ("orientation", .string(state.orientation.rawValue)),
      ("rotation", state.rotation.map { .number(Double($0)) } ?? .null),
      ("tilt", .string(state.tilt.rawValue)),
      ("has_accelerometer", .bool(state.hasAccelerometer)),
    ]
    return JSONValue.object(members + extra).encoded()
  }

  /// `2024-06-10 14:35:12.123  left-up (rotation 90, tilt vertical)`, in local time.
  static func line(_ state: OrientState, time: Int64) -> String {
    let what: String
    if !state.hasAccelerometer {
      what = "no accelerometer (orientation undefined)"
    } else if let rotation = state.rotation {
      what = "\(state.orientation.rawValue) (rotation \(rotation), tilt \(state.tilt.rawValue))"
    } else {
      what = "undefined (tilt \(state.tilt.rawValue))"
    }
    return "\(Clock.localTimestamp(time))  \(what)"
  }

  /// The sensor in one phrase: `iio:device0 (mxc4005, polled at 50 Hz)`.
  static func sensor(_ sensor: [String: DBusValue]) -> String? {
    guard let device = sensor["device"]?.stringValue else { return nil }
    var details: [String] = []
    if let name = sensor["name"]?.stringValue { details.append(name) }
    if let mode = sensor["mode"]?.stringValue, let rate = sensor["rate"]?.doubleValue {
      details.append("\(mode) at \(AvailableValues.format(rate)) Hz")
    }
    return details.isEmpty ? device : "\(device) (\(details.joined(separator: ", ")))"
  }
}

/// `orientd --watch [--light] [--proximity] [--compass] [--json]`: claims, prints the current
/// state and every change, releases on SIGINT, SIGTERM or a closed output.
enum WatchCommand {
  /// Runs until stopped; returns 0, 69 when there is no bus, the bus goes away or
  /// net.hadess.SensorProxy is missing for --light/--proximity/--compass, 77 when a claim of
  /// those is refused.
  static func main(_ options: ClientCommandOptions) -> ExitStatus {
    // A closed pipe is a normal way to stop: see it as EPIPE, release, exit.
    signal(SIGPIPE, SIG_IGN)
    let logger = Logger(label: "orientd", level: options.verbose ? .debug : .notice)
    let loop: EventLoop
    let client: OrientClient
    var status = ExitStatus.success
    var stopping = false
    var stopTimer: EventLoop.Timer?
    var ambientRelease: () -> Void = {}
    do {
      loop = try EventLoop()
    } catch {
      SensorCommandSupport.fail(.osError, "cannot create the event loop: \(error)")
    }
    func stop(_ code: ExitStatus) {
      guard !stopping else { return }
      stopping = true
      status = code
      // Release so the daemon stops sampling now; do not hang if it does not answer. The
      // ambient releases go first, but orientd answers them after their polkit check, which
      // may outlast the orientation release's reply: what is still pending when this exits is
      // released by the daemon as the client leaves the bus.
      ambientRelease()
      client.release(timeoutMilliseconds: 1_000) { _ in loop.stop() }
      stopTimer = try? loop.makeTimer { loop.stop() }
      try? stopTimer?.schedule(after: .milliseconds(1500))
    }
    do {
      client = try OrientClient(
        bus: options.session ? .session : .system, loop: loop, logger: logger)
    } catch {
      SensorCommandSupport.fail(.unavailable, error.message)
    }
    defer { client.connection.close() }
    let signals: EventLoop.Watch
    do {
      signals = try loop.handleSignals([SIGINT, SIGTERM]) { _ in stop(.success) }
    } catch {
      SensorCommandSupport.fail(.osError, "cannot handle signals: \(error)")
    }
    defer { signals.cancel() }
    client.connection.onDisconnect = {
      StandardStream.error.writeLine("orientd --watch: lost the connection to the bus")
      status = .unavailable
      stopping = true
      loop.stop()
    }

    var printed: (state: OrientState, posture: PostureReading?, ambient: AmbientValues?)?
    // The posture of a convertible (org.orientd.Posture1), followed once orientd is claimed.
    let posture = PostureFollower(connection: client.connection, logger: logger)
    // --light, --proximity, --compass: claimed on net.hadess.SensorProxy once the orientation
    // is claimed; lines wait for their first values so that every line has them all.
    let ambient =
      options.ambient.isEmpty
      ? nil : AmbientFollower(connection: client.connection, kinds: options.ambient, logger: logger)
    func show(_ state: OrientState) {
      let hinge = posture.reading.hasHinge ? posture.reading : nil
      if let ambient, !ambient.isReady { return }
      let values = ambient?.values
      if let printed, printed.state.orientation == state.orientation,
        printed.state.tilt == state.tilt,
        printed.state.hasAccelerometer == state.hasAccelerometer, printed.posture == hinge,
        printed.ambient == values
      {
        return
      }
      printed = (state, hinge, values)
      let now = Clock.realtimeNanoseconds()
      let kinds = ambient?.kinds ?? []
      let text =
        options.json
        ? StateFormat.json(
          state, time: now,
          extra: (hinge.map(PostureFormat.json) ?? [])
            + (values.map { AmbientFormat.json($0, kinds: kinds) } ?? []))
        : StateFormat.line(state, time: now) + (hinge.map(PostureFormat.line) ?? "")
          + (values.map { AmbientFormat.line($0, kinds: kinds) } ?? "")
      if !StandardStream.output.writeLine(text) {
        logger.debug("output closed: releasing and stopping")
        stop(.success)
      }
    }

    var wait: ServiceWait?
    var retryTimer: EventLoop.Timer?
    func claim(_ service: OrientService) {
      let services = Array(OrientService.allCases.drop { $0 != service })
      client.claim(services: services) { result in
        switch result {
        case .success(let state):
          logger.notice(
            "watching \(state.service.busName)"
              + (StateFormat.sensor(state.sensor).map { ": \($0)" } ?? ""))
          show(state)
          if state.service == .orientd { posture.start() }
          ambient?.start()
        case .failure(let error) where error.kind == .serviceMissing:
          claimWhenThere()  // gone again between appearing and the claim
        case .failure(let error) where error.kind == .failed:
          // E.g. the service quit while the claim was on its way (the bus then answers
          // NoReply): try again in a second rather than giving up on a passing problem.
          logger.notice("claim failed (\(error.message)); trying again in 1 s")
          retryTimer = try? loop.makeTimer {
            retryTimer = nil
            claimWhenThere()
          }
          if (try? retryTimer?.schedule(after: .seconds(1))) == nil {
            StandardStream.error.writeLine("orientd --watch: \(error.message)")
            stop(.unavailable)
          }
        case .failure(let error):
          StandardStream.error.writeLine("orientd --watch: \(error.message)")
          stop(.unavailable)
        }
      }
    }
    func claimWhenThere() {
      guard !stopping else { return }
      let absent = {
        logger.notice("waiting for \(Wire.orientdName) or \(Wire.sensorProxyName) to appear")
      }
      do {
        wait = try client.waitForService(absent: absent, claim)
      } catch {
        StandardStream.error.writeLine("orientd --watch: \(error.message)")
        stop(.unavailable)
      }
    }
    // A suggestion alone (a face kept the orientation) changes nothing --watch prints.
    client.onChange = { state, fields in if fields != [.suggestion] { show(state) } }
    posture.onChange = { _ in
      if let state = client.state { show(state) }
    }
    ambient?.onChange = { _ in
      if let state = client.state { show(state) }
    }
    ambient?.onFailure = { error in
      StandardStream.error.writeLine("orientd --watch: \(error.message)")
      stop(error.kind == .accessDenied ? .noPermission : .unavailable)
    }
    ambientRelease = { ambient?.stop() }
    client.onServiceLost = { service in
      ambient?.forget()
      logger.notice("\(service.busName) went away; waiting for it to come back")
      claimWhenThere()
    }
    claimWhenThere()
    do {
      try loop.run()
    } catch {
      StandardStream.error.writeLine("orientd --watch: \(error)")
      return .software
    }
    wait?.cancel()
    wait = nil
    retryTimer?.cancel()
    retryTimer = nil
    stopTimer?.cancel()
    // The callbacks capture the client (and the wait): break those cycles so that everything
    // is released before exit (LeakSanitizer checks the process's end).
    client.onChange = nil
    posture.onChange = nil
    ambient?.onChange = nil
    ambient?.onFailure = nil
    ambientRelease = {}
    client.onServiceLost = nil
    client.connection.onDisconnect = nil
    return status
  }
}

/// `orientd --get [--json]`: claims, prints the state once, releases.
enum GetCommand {
  /// Returns 0, or 69 when the service or the accelerometer is missing.
  static func main(_ options: ClientCommandOptions) -> ExitStatus {
    signal(SIGPIPE, SIG_IGN)
    let logger = Logger(label: "orientd", level: options.verbose ? .debug : .warning)
    let client: SynchronousOrientClient
    let state: OrientState
    do {
      client = try SynchronousOrientClient(
        bus: options.session ? .session : .system, logger: logger)
      state = try client.claim(timeout: 5)
    } catch {
      StandardStream.error.writeLine("orientd --get: \(error.message)")
      return .unavailable
    }
    var gravity: GravityReading?
    if state.service == .orientd, state.hasAccelerometer {
      gravity = try? client.gravity()
    }
    client.release()
    client.close()
    let now = Clock.realtimeNanoseconds()
    if options.json {
      var extra: [(String, JSONValue)] = [("service", .string(state.service.busName))]
      if let g = gravity {
        // Four decimals (0.1 mm/s^2), well below the sensor's noise.
        let parts = [g.x, g.y, g.z].map { JSONValue.number(($0 * 1e4).rounded() / 1e4) }
        extra.append(("gravity", .array(parts)))
      }
      StandardStream.output.writeLine(StateFormat.json(state, time: now, extra: extra))
    } else {
      var lines = [
        "orientation:   \(state.orientation.rawValue)",
        "rotation:      \(state.rotation.map { String($0) } ?? "-")",
        "tilt:          \(state.tilt.rawValue)",
        "accelerometer: "
          + (state.hasAccelerometer ? (StateFormat.sensor(state.sensor) ?? "yes") : "none"),
      ]
      if let g = gravity {
        let parts = [g.x, g.y, g.z].map { FixedPoint.format($0, decimals: 3) }
        lines.append("gravity:       \(parts.joined(separator: ", ")) m/s^2")
      }
      lines.append("service:       \(state.service.busName)")
      StandardStream.output.writeLine(lines.joined(separator: "\n"))
    }
    guard state.hasAccelerometer else {
      StandardStream.error.writeLine(
        "orientd --get: \(state.service.busName) runs but has no display accelerometer "
          + "(see orientd --list-sensors)")
      return .unavailable
    }
    return .success
  }
}
