import DBusKit
import DeviceDiscovery
import Glibc
import JSON
import OrientClient
import OrientCore
import OrientLog
import OrientWire
import ScreenRotation
import SystemKit

/// The running `orientd rotate`: one event loop for the orientation client, the lock socket,
/// the tablet-mode switch and the settle timer.
final class Rotator {
  private let options: RotateOptions
  private let backend: RotationBackend?
  private let loop: EventLoop
  private let logger: Logger
  private let client: OrientClient
  private let hooks: Hooks
  /// `--exec-before` hooks: a turn waits for them. `--exec` hooks: started after the turn,
  /// which the next turn does not wait for. Both run as children watched on the loop.
  private let beforeQueue: HookQueue
  private let afterQueue: HookQueue
  /// A turn is between its before hooks and the backend: later changes wait for it.
  private var turning = false
  /// `--once` has its orientation: stop when the turn and its hooks are done.
  private var onceDue = false
  private let outputName: String
  /// How the panel is mounted: `--natural`, else the DRM "panel orientation", else normal.
  private let natural: Orientation
  /// The devices to map, found again before each turn (a touchscreen or pen plugged in since
  /// then is mapped at the next turn).
  private var touch: [TouchDevice]
  private var udev: UdevContext?
  private let statePath: String?
  private var lockServer: LockServer?
  private var tablet: TabletModeSwitch?
  /// `--suggest`: the offer to rotate once while locked.
  private var suggestion: SuggestionController?
  /// The daemon's `SuggestedOrientation`: a turn a face kept back.
  private var faceSuggestion: Orientation?
  /// That turn, accepted from the suggestion while unlocked: shown until the device turns.
  private var acceptedFaceTurn: Orientation?
  /// orientd's posture (`org.orientd.Posture1`), followed for `--when tablet` while orientd is
  /// the service.
  private var posture: PostureFollower?
  /// orientd's `TabletMode` while it has a hinge: it wins over the evdev switches, since
  /// orientd already publishes a firmware switch when there is one and its own guess otherwise.
  private var postureTabletMode: Bool?
  private var settleTimer: EventLoop.Timer?
  private var stopTimer: EventLoop.Timer?
  private var retryTimer: EventLoop.Timer?
  private var wait: ServiceWait?
  private var signals: EventLoop.Watch?
  /// The backend's connection, when devices can appear between turns (`TouchHotplugging`).
  private var deviceWatch: EventLoop.Watch?

  private var latest: Orientation = .undefined
  private var appliedTurn: Turn?
  private var appliedOrientation: Orientation?
  private var locked: Bool
  private var settling = false
  private var stopping = false
  private var status: Int32 = 0

  init(
    options: RotateOptions, backend: RotationBackend?, environment: [String: String],
    loop: EventLoop, logger: Logger
  ) throws(RotateError) {
    self.options = options
    self.backend = backend
    self.loop = loop
    self.logger = logger
    hooks = Hooks(before: options.before, after: options.after)
    beforeQueue = HookQueue(loop: loop)
    afterQueue = HookQueue(loop: loop)
    if let backend {
      let output = try backend.chooseOutput(options.output)
      outputName = output.name
      appliedTurn = output.turn
    } else {
      outputName = options.output ?? "eDP-1"
    }
    natural = options.natural ?? PanelNatural.fromDRM(output: outputName, logger: logger)
    if !options.touchOnly, backend != nil {
      do {
        udev = try UdevContext()
      } catch {
        throw RotateError(.osError, "cannot start libudev: \(error)")
      }
    }
    touch = try Rotator.touchDevices(options, output: outputName, udev: udev)
    statePath = RotationLock.statePath(environment)
    locked = RotationLock.load(statePath)
    do {
      client = try OrientClient(
        bus: options.session ? .session : .system, loop: loop, logger: logger)
    } catch {
      throw RotateError(.unavailable, error.message)
    }
    if !options.once, let socket = RotationLock.socketPath(environment) {
      lockServer = try LockServer(path: socket, loop: loop)
    }
    if options.policy == .tablet {
      let switches = TabletModeSwitch(
        loop: loop, udev: udev ?? (try? UdevContext()), logger: logger)
      if switches.paths.isEmpty {
        logger.notice(
          "--when tablet: no input device reports SW_TABLET_MODE yet; not turning until one "
            + "appears or orientd reports tablet mode (a convertible with two accelerometers)")
      }
      tablet = switches
    }
    if options.suggest && !options.once {
      suggestion = SuggestionController(
        timeoutSeconds: options.suggestSeconds, loop: loop, logger: logger)
    }
    let backendName = backend?.name ?? "hooks only"
    logger.notice(
      "turning \(outputName) with \(backendName), mounted \(natural.rawValue)"
        + (options.natural == nil ? "" : " (--natural)") + "; touch: "
        + (touch.isEmpty
          ? "none found"
          : touch.map { "\($0.name) (\($0.kind.rawValue))" }
            .joined(separator: ", "))
        + (locked ? "; rotation locked" : ""))
  }

  /// Runs the loop; returns the exit status.
  func run() -> Int32 {
    do {
      signals = try loop.handleSignals([SIGINT, SIGTERM]) { [weak self] _ in self?.stop(0) }
      settleTimer = try loop.makeTimer { [weak self] in
        guard let self else { return }
        self.settling = false
        self.logger.debug("settled; latest orientation \(self.latest)")
        self.consider()
      }
      if let hotplug = backend as? TouchHotplugging {
        deviceWatch = try loop.watch(hotplug.eventDescriptor, for: .readable) {
          [weak self] events in
          if !events.isDisjoint(with: [.hangup, .error]) {
            self?.logger.warning("the \(hotplug.name) connection closed; new devices stay unmapped")
            self?.deviceWatch?.cancel()
            return
          }
          self?.mapNewDevices()
        }
      }
    } catch {
      StandardStream.error.writeLine(
        "orientd rotate: cannot handle signals or make a timer: \(error)")
      return ExitStatus.osError.rawValue
    }
    for queue in [beforeQueue, afterQueue] {
      queue.onFailure = { [weak self] failure in self?.logger.warning(failure) }
    }
    lockServer?.handler = { [weak self] request in self?.lockRequest(request) ?? false }
    suggestion?.onRotate = { [weak self] orientation in self?.rotateOnce(orientation) }
    tablet?.onChange = { [weak self] on in
      guard let self else { return }
      if self.postureTabletMode != nil {
        self.logger.debug("switch says tablet mode \(on ? "on" : "off"); orientd's posture decides")
        return
      }
      self.logger.notice("tablet mode \(on ? "on" : "off")")
      self.consider()
    }
    client.connection.onDisconnect = { [weak self] in
      StandardStream.error.writeLine("orientd rotate: lost the connection to the bus")
      self?.status = ExitStatus.unavailable.rawValue
      self?.stopping = true
      self?.loop.stop()
    }
    client.onChange = { [weak self] state, _ in self?.update(state) }
    client.onServiceLost = { [weak self] service in
      self?.logger.notice("\(service.busName) went away; waiting for it to come back")
      self?.followPosture(nil)
      self?.claimWhenThere()
    }
    claimWhenThere()
    do {
      try loop.run()
    } catch {
      StandardStream.error.writeLine("orientd rotate: \(error)")
      return ExitStatus.software.rawValue
    }
    wait?.cancel()
    wait = nil
    retryTimer?.cancel()
    stopTimer?.cancel()
    settleTimer?.cancel()
    signals?.cancel()
    deviceWatch?.cancel()
    client.onChange = nil
    client.onServiceLost = nil
    client.connection.onDisconnect = nil
    lockServer?.handler = nil
    lockServer = nil
    tablet?.onChange = nil
    posture?.onChange = nil
    suggestion?.close()
    suggestion = nil
    client.connection.close()
    return status
  }

  private func stop(_ code: Int32) {
    guard !stopping else { return }
    stopping = true
    status = code
    posture?.release()
    client.release(timeoutMilliseconds: 1_000) { [weak self] _ in self?.loop.stop() }
    stopTimer = try? loop.makeTimer { [weak self] in self?.loop.stop() }
    try? stopTimer?.schedule(after: .milliseconds(1_500))
  }

  private func claimWhenThere() {
    guard !stopping else { return }
    do {
      wait = try client.waitForService(
        absent: { [weak self] in
          self?.logger.notice(
            "waiting for \(Wire.orientdName) or \(Wire.sensorProxyName) to appear")
        }, { [weak self] service in self?.claim(service) })
    } catch {
      StandardStream.error.writeLine("orientd rotate: \(error.message)")
      stop(ExitStatus.unavailable.rawValue)
    }
  }

  private func claim(_ service: OrientService) {
    let services = Array(OrientService.allCases.drop { $0 != service })
    client.claim(services: services) { [weak self] result in
      guard let self else { return }
      switch result {
      case .success(let state):
        self.logger.notice("following \(state.service.busName)")
        self.followPosture(state.service)
        self.update(state)
      case .failure(let error) where error.kind == .serviceMissing:
        self.claimWhenThere()
      case .failure(let error) where error.kind == .failed:
        self.logger.notice("claim failed (\(error.message)); trying again in 1 s")
        self.retryTimer = try? self.loop.makeTimer { [weak self] in
          self?.retryTimer = nil
          self?.claimWhenThere()
        }
        if (try? self.retryTimer?.schedule(after: .seconds(1))) == nil {
          StandardStream.error.writeLine("orientd rotate: \(error.message)")
          self.stop(ExitStatus.unavailable.rawValue)
        }
      case .failure(let error):
        StandardStream.error.writeLine("orientd rotate: \(error.message)")
        self.stop(ExitStatus.unavailable.rawValue)
      }
    }
  }

  /// `--when tablet`: follows orientd's posture while orientd is `service` (nil: none).
  private func followPosture(_ service: OrientService?) {
    guard tablet != nil else { return }
    posture?.onChange = nil
    posture = nil
    let had = postureTabletMode
    postureTabletMode = nil
    if service == .orientd {
      let follower = PostureFollower(connection: client.connection, logger: logger)
      follower.onChange = { [weak self] reading in self?.postureChanged(reading) }
      posture = follower
      follower.start()
    }
    if had != nil {
      logger.notice("tablet mode from the switches again: \(isTabletMode ? "on" : "off")")
      consider()
    }
  }

  private func postureChanged(_ reading: PostureReading) {
    let now: Bool? = reading.hasHinge ? reading.tabletMode : nil
    guard now != postureTabletMode else { return }
    postureTabletMode = now
    if let now {
      logger.notice(
        "tablet mode \(now ? "on" : "off") (orientd: posture \(reading.posture.rawValue), "
          + "from the \(reading.tabletModeSource))")
    } else {
      logger.notice("orientd reports no hinge; tablet mode from the switches")
    }
    consider()
  }

  /// Whether `--when tablet` lets the screen follow the orientation now.
  private var isTabletMode: Bool {
    postureTabletMode ?? tablet?.isTabletMode ?? true
  }

  private func update(_ state: OrientState) {
    if !state.hasAccelerometer {
      logger.notice("\(state.service.busName) has no accelerometer; waiting for one")
    }
    latest = state.orientation
    if state.suggestedOrientation != faceSuggestion {
      faceSuggestion = state.suggestedOrientation
      if faceSuggestion != acceptedFaceTurn { acceptedFaceTurn = nil }
    }
    consider()
    suggest()
    if options.once, state.hasAccelerometer {
      onceDue = true
      finishOnce()
    }
  }

  /// `--once`: stops once the current orientation is applied and its hooks have exited.
  private func finishOnce() {
    guard onceDue, !stopping, !turning, !beforeQueue.isBusy, !afterQueue.isBusy else { return }
    stop(status)
  }

  private func lockRequest(_ request: RotationLock.Request) -> Bool {
    switch request {
    case .lock: locked = true
    case .unlock: locked = false
    case .toggle: locked.toggle()
    case .status: return locked
    }
    if let statePath {
      do {
        try RotationLock.save(locked, to: statePath)
      } catch {
        logger.warning(error.message)
      }
    }
    logger.notice(locked ? "rotation locked" : "rotation unlocked")
    if !locked { consider() }
    suggest()
    return locked
  }

  /// Applies the latest orientation unless locked, settling, or already there; outside tablet
  /// mode (`--when tablet`) the screen goes back to upright, the way a laptop is used.
  private func consider() {
    // Nothing to follow yet (no service, no accelerometer): leave the screen as it is.
    guard !stopping, latest != .undefined else { return }
    var orientation = acceptedFaceTurn ?? latest
    if tablet != nil && !isTabletMode {
      if latest != .normal { logger.debug("not in tablet mode: not turning to \(latest)") }
      orientation = .normal
    }
    guard let target = Turn.target(for: orientation, natural: natural) else { return }
    if locked {
      logger.debug("locked: not turning to \(orientation)")
      suggest()
      return
    }
    if settling || turning { return }
    if target == appliedTurn && backend != nil { return }
    if backend == nil && orientation == appliedOrientation { return }
    apply(target, orientation: orientation)
  }

  /// `--suggest`: tells the suggestion what the device and the screen show now. A turn the
  /// daemon kept because a face is upright in the current orientation (its
  /// `SuggestedOrientation`) is offered as a turn under the lock is, locked or not.
  private func suggest() {
    guard let suggestion else { return }
    var orientation = faceSuggestion ?? latest
    if tablet != nil && !isTabletMode { orientation = .normal }
    suggestion.update(
      orientation: orientation, shown: shownOrientation,
      locked: locked || faceSuggestion != nil)
  }

  /// What the screen shows: the orientation applied last, else the one the output's current
  /// transform stands for.
  private var shownOrientation: Orientation? {
    if let appliedOrientation { return appliedOrientation }
    return Orientation.defined.first { Turn.target(for: $0, natural: natural) == appliedTurn }
  }

  /// The user accepted the suggestion: turn once, the lock stays on.
  private func rotateOnce(_ orientation: Orientation) {
    guard !stopping, !turning, let target = Turn.target(for: orientation, natural: natural) else {
      return
    }
    // Unlocked, a turn the face kept back holds until the device turns again.
    if !locked && orientation == faceSuggestion { acceptedFaceTurn = orientation }
    apply(target, orientation: orientation)
  }

  /// The udev-found devices bound to `output` (unless `--touch-only`) and the `--touch` ones.
  static func touchDevices(_ options: RotateOptions, output: String, udev: UdevContext?)
    throws(RotateError) -> [TouchDevice]
  {
    var devices =
      try udev.map { udev throws(RotateError) in
        try TouchDiscovery.devices(for: output, udev: udev)
      } ?? []
    for name in options.touch where !devices.contains(where: { $0.name == name }) {
      devices.append(TouchDevice(name: name, kind: .named))
    }
    return devices
  }

  /// Finds the touch devices again (one plugged in since the last look is mapped too).
  private func refreshTouch() {
    do {
      let now = try Rotator.touchDevices(options, output: outputName, udev: udev)
      // udev enumerates in no fixed order: the same devices in another order are no change.
      let key = { (device: TouchDevice) in device.devnode ?? device.name }
      if now.map(key).sorted() != touch.map(key).sorted() {
        logger.notice("touch devices now: \(now.map(\.name).joined(separator: ", "))")
        touch = now
      }
    } catch {
      logger.warning("cannot list touch devices again (\(error.message)); keeping the last list")
    }
  }

  private func apply(_ turn: Turn, orientation: Orientation) {
    refreshTouch()
    let previous = appliedOrientation?.rawValue
    let environment = { (stage: Hooks.Stage) in
      Hooks.environment(
        stage: stage, orientation: orientation.rawValue, turn: turn, previous: previous,
        output: self.outputName)
    }
    // The before hooks finish before the output turns; the loop keeps running meanwhile, and
    // changes that come in wait (`turning`) and are considered once this turn is done.
    turning = true
    beforeQueue.run(hooks.before, stage: .before, environment: environment(.before)) {
      [weak self] in
      guard let self else { return }
      self.turning = false
      guard !self.stopping else { return }
      self.turnOutput(turn, orientation: orientation, environment: environment(.after))
    }
  }

  /// The backend's part of a turn, then the after hooks (not waited for) and the settle time.
  private func turnOutput(
    _ turn: Turn, orientation: Orientation, environment: [String: String]
  ) {
    var applied: Applied?
    if let backend {
      do {
        applied = try backend.apply(turn, output: outputName, touch: touch)
      } catch {
        StandardStream.error.writeLine(
          "orientd rotate: turning \(outputName) to \(turn) failed: \(error.message)")
        if error.status == .unavailable || error.status == .ioError {
          stop(error.status.rawValue)
        }
        finishOnce()
        return
      }
    }
    appliedTurn = turn
    appliedOrientation = orientation
    // A device made while the turn was being applied: its event may be queued already.
    mapNewDevices()
    for skipped in applied?.touchSkipped ?? [] { logger.notice("touch not mapped: \(skipped)") }
    afterQueue.run(hooks.after, stage: .after, environment: environment) { [weak self] in
      self?.finishOnce()
    }
    report(turn, orientation: orientation, touch: applied?.touch ?? [])
    settling = true
    if options.settleMilliseconds > 0 {
      do {
        try settleTimer?.schedule(after: .milliseconds(options.settleMilliseconds))
        return
      } catch {
        settling = false
      }
    }
    settling = false
    consider()
  }

  /// Gives devices the backend saw appear (a tablet tool's X device made on its first
  /// proximity, a touchscreen plugged in) the matrix of the turn applied last.
  private func mapNewDevices() {
    guard let hotplug = backend as? TouchHotplugging, hotplug.devicesChanged(),
      let turn = appliedTurn, !stopping
    else { return }
    // Xorg adds input devices from udev: a new touchscreen is in udev's list by now.
    refreshTouch()
    do {
      let changed = try hotplug.mapTouch(turn, output: outputName, touch: touch)
      if !changed.isEmpty {
        logger.notice("mapped \(changed.joined(separator: ", ")) to \(outputName) (\(turn))")
      }
    } catch {
      logger.warning(error.message)
    }
  }

  private func report(_ turn: Turn, orientation: Orientation, touch: [String]) {
    let now = Clock.realtimeNanoseconds()
    let line: String
    if options.json {
      line = JSONValue.object([
        ("time", .number((Double(now / 1_000_000) / 1000))),
        ("orientation", .string(orientation.rawValue)),
        ("output", .string(outputName)),
        ("transform", .string(turn.waylandName)),
        ("touch", .array(touch.map { .string($0) })),
      ]).encoded()
    } else {
      line =
        "\(Clock.localTimestamp(now))  \(orientation.rawValue): \(outputName) transform "
        + "\(turn.waylandName)" + (touch.isEmpty ? "" : ", touch \(touch.joined(separator: ", "))")
    }
    if !StandardStream.output.writeLine(line) { stop(0) }
  }
}
