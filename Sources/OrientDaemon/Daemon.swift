import Accelerometer
import DBusKit
import Glibc
import OrientCore
import OrientLog
import SystemKit

/// How the daemon runs: which bus, whether it serves iio-sensor-proxy's API, where the
/// configuration is.
public struct DaemonOptions: Equatable, Sendable {
  /// The bus to serve on (`--session` for development; the system bus otherwise).
  public var bus: DBusConnection.Bus = .system
  /// Also own `net.hadess.SensorProxy` (off with `--no-compat`).
  public var compatibility = true
  /// `--config FILE`; `nil` reads `/etc/orientd.conf` if it exists.
  public var configPath: String?
  /// The longest a first `Claim` reply waits for the first reading.
  public var claimReplyBound: Duration = .milliseconds(1500)

  /// The defaults: system bus, compatibility on, `/etc/orientd.conf`.
  public init() {}
}

/// A failure that stops the daemon, with its exit status.
public struct DaemonError: Error, Equatable, Sendable, CustomStringConvertible {
  /// What went wrong, where, and what to do.
  public var message: String
  /// The exit status: `unavailable` when the bus, a bus name or udev is unavailable.
  public var status: ExitStatus

  /// Creates an error.
  public init(_ message: String, status: ExitStatus = .unavailable) {
    self.message = message
    self.status = status
  }

  /// The message.
  public var description: String { message }
}

/// orientd: one `EventLoop` owns the sensor (`SensorManager`), the detector, the bus
/// connection with both APIs, the claims and the signals.
///
/// - The sensor is sampled only while at least one client holds a claim (through either
///   API). The first claim starts sampling from scratch: the detector forgets its state, so
///   the first reading is committed at once instead of hiding behind hysteresis, and the
///   Claim reply waits for it (at most `claimReplyBound`). Later claims are answered at once.
/// - `PropertiesChanged` carries only the changed properties and goes to that API's claimers
///   only (unicast), like iio-sensor-proxy 3.1+.
/// - While nothing is claimed the properties keep the last values published (iio-sensor-proxy
///   does the same); a claim refreshes them before it is answered.
/// - Without a display accelerometer: `HasAccelerometer` false, orientation and tilt
///   `undefined`; claims are kept and sampling resumes when a sensor appears.
/// - If the bus goes away, the daemon stops sampling, restores the sensor's settings and ends
///   with status 69, so that systemd (`Restart=on-failure`) starts it again on the new bus.
public final class OrientDaemon {
  /// The loop everything runs on.
  public let loop: EventLoop
  /// The options it was started with.
  public let options: DaemonOptions
  /// The configuration in use.
  public private(set) var configuration: DaemonConfiguration
  /// What clients are told.
  public private(set) var published = PublishedState()
  /// Who holds claims.
  public private(set) var claims = ClaimSet()
  /// Whether `net.hadess.SensorProxy` is owned and served.
  public private(set) var servesCompatibility = false
  /// Samples fed to the detector since start.
  public private(set) var samplesProcessed = 0
  /// Set when the daemon has stopped: the exit status.
  public private(set) var exitStatus: ExitStatus?

  private var logger: Logger
  private let manager: SensorManager
  private let posture: PostureController
  /// Light, proximity, compass (AmbientService.swift).
  private let ambient: AmbientService
  private var detector: OrientationDetector
  private var connection: DBusConnection?
  private var tracker: DBusClientTracker?
  private var gate: ClaimGate?
  private var ownedNames: [String] = []
  private var held: [(invocation: DBusMethodInvocation, api: ClaimAPI)] = []
  private var holdTimer: EventLoop.Timer?
  private var awaitingFirstReading = false
  private var lastGravity: (vector: Vector3, time: Double)?
  /// Whether the detector's finding that the sensor's scale is off was logged.
  private var scaleReported = false

  /// `/org/orientd/Orientation1`.
  static let orientdPath = path("/org/orientd/Orientation1")
  /// `/org/orientd/Posture1`.
  static let posturePath = path("/org/orientd/Posture1")
  /// `/net/hadess/SensorProxy`.
  static let sensorProxyPath = path("/net/hadess/SensorProxy")
  /// `/net/hadess/SensorProxy/Compass`.
  static let compassPath = path("/net/hadess/SensorProxy/Compass")
  /// orientd's own bus name and interface.
  public static let orientdName = "org.orientd.Orientation1"
  /// iio-sensor-proxy's bus name and interface.
  public static let sensorProxyName = "net.hadess.SensorProxy"
  /// The polkit action iio-sensor-proxy 3.4+ checks on every claim and release of its API
  /// (orientd too, with polkit/org.orientd.SensorProxy.policy), so that rules written for it
  /// apply to orientd.
  public static let claimSensorAction = "net.hadess.SensorProxy.claim-sensor"

  private static func path(_ text: String) -> DBusObjectPath {
    (try? DBusObjectPath(text)) ?? .root
  }

  /// Creates the daemon; `start()` enumerates sensors and goes on the bus.
  ///
  /// - Throws: `DaemonError` if udev cannot be used.
  public init(
    options: DaemonOptions, configuration: DaemonConfiguration, loop: EventLoop, logger: Logger
  ) throws(DaemonError) {
    self.options = options
    self.configuration = configuration
    self.loop = loop
    self.logger = logger
    detector = OrientationDetector(parameters: configuration.detector)
    do {
      manager = try SensorManager(
        loop: loop, configuration: configuration.accelerometer, logger: logger.child("iio"))
      ambient = try AmbientService(
        loop: loop, logger: logger, claimReplyBound: options.claimReplyBound)
    } catch {
      throw DaemonError("cannot use udev: \(error)")
    }
    ambient.setIntervals(configuration.accelerometer.sampling)
    posture = PostureController(
      manager: manager, loop: loop, settings: configuration.posture,
      logger: logger.child("posture"))
  }

  /// Whether the sensor is being read right now.
  public var isSampling: Bool { manager.isStarted && manager.active?.isSampling == true }

  // MARK: Starting and stopping

  /// Enumerates the accelerometers (and follows hotplug), connects to the bus, exports both
  /// APIs and takes the names: `org.orientd.Orientation1`, then (unless disabled or owned by
  /// someone else, e.g. iio-sensor-proxy) `net.hadess.SensorProxy`.
  ///
  /// - Throws: `DaemonError` (69) when udev, the bus or `org.orientd.Orientation1` is not
  ///   available.
  public func start() throws(DaemonError) {
    manager.onSensorChange = { [weak self] status in self?.sensorChanged(status) }
    manager.onSample = { [weak self] sample in self?.process(sample) }
    do {
      try manager.begin()
    } catch {
      throw DaemonError("cannot enumerate IIO devices with udev: \(error)")
    }
    if let status = manager.active {
      published.hasAccelerometer = true
      published.sensor = status.busDescription
    }
    posture.onChange = { [weak self] in self?.postureChanged() }
    posture.onWantsSensorsChanged = { [weak self] in self?.sensorsWantedChanged() }
    posture.begin(hasDisplay: manager.active != nil)
    published.posture = posture.state
    // Enumeration may already have made the posture want the sensors (orientd's own switch).
    sensorsWantedChanged()
    ambient.publish = { [weak self] kind, state in self?.publishAmbient(kind, state) }
    ambient.answering = { [weak self] kind, sender in self?.sendSnapshot(of: kind, to: sender) }
    do {
      try ambient.begin()
    } catch {
      throw DaemonError("cannot enumerate light, proximity and compass sensors: \(error)")
    }
    published.ambient = ambient.state

    let connection: DBusConnection
    do {
      connection = try DBusConnection(bus: options.bus, loop: loop, logger: logger.child("dbus"))
    } catch {
      throw DaemonError("\(error.message)")
    }
    self.connection = connection
    connection.onDisconnect = { [weak self] in self?.busLost() }
    connection.onNameLost = { [weak self] name in
      self?.logger.warning("lost the bus name \(name)")
    }
    tracker = DBusClientTracker(connection: connection) { [weak self] name in
      self?.vanished(name)
    }
    let handlers = BusInterfaces.Handlers(
      claim: { [weak self] invocation, api in
        if let self { self.claim(invocation, api) } else { invocation.reply() }
      },
      release: { [weak self] sender, api in self?.release(sender, api) },
      reading: { [weak self] () throws(DBusError) -> [DBusValue] in
        guard let self else { throw DBusError(.failed, "shutting down") }
        return try self.reading()
      },
      ambientClaim: { [weak self] invocation, kind in
        if let self { self.ambient.claim(invocation, kind) } else { invocation.reply() }
      },
      ambientRelease: { [weak self] sender, kind in self?.ambient.release(sender, kind) },
      authorize: { [weak self] invocation, proceed in
        // Shutting down: nothing may start a sensor after stopAll (the gate's own queue is
        // failed the same way when it closes).
        guard let self, self.exitStatus == nil else {
          return invocation.fail(.failed, "orientd is shutting down")
        }
        guard let gate = self.gate else { return proceed() }
        gate.authorize(invocation, then: proceed)
      })
    gate = ClaimGate(
      authority: PolkitAuthority(connection: connection, action: OrientDaemon.claimSensorAction),
      logger: logger.child("polkit"))
    ambient.attach(connection)
    do {
      try connection.export([BusInterfaces.orientd(handlers)], at: OrientDaemon.orientdPath)
      try publish(OrientdProperty.self, at: OrientDaemon.orientdPath, to: nil, on: connection)
      try connection.export([BusInterfaces.posture(handlers)], at: OrientDaemon.posturePath)
      try publish(PostureProperty.self, at: OrientDaemon.posturePath, to: nil, on: connection)
    } catch {
      throw DaemonError("cannot export \(OrientDaemon.orientdPath): \(error)")
    }
    try own(OrientDaemon.orientdName, required: true)
    if options.compatibility {
      do {
        try connection.export(
          [BusInterfaces.sensorProxy(handlers)], at: OrientDaemon.sensorProxyPath)
        try connection.export([BusInterfaces.compass(handlers)], at: OrientDaemon.compassPath)
        try publish(
          SensorProxyProperty.self, at: OrientDaemon.sensorProxyPath, to: nil, on: connection)
        try publish(CompassProperty.self, at: OrientDaemon.compassPath, to: nil, on: connection)
      } catch {
        throw DaemonError("cannot export \(OrientDaemon.sensorProxyPath): \(error)")
      }
      servesCompatibility = try own(OrientDaemon.sensorProxyName, required: false)
      if !servesCompatibility {
        connection.unexport(OrientDaemon.sensorProxyPath)
        connection.unexport(OrientDaemon.compassPath)
      }
    }
    let names = ownedNames.joined(separator: " and ")
    logger.notice(
      "serving \(names) on \(connection.address); "
        + (published.hasAccelerometer
          ? "accelerometer \(manager.active?.description.sysname ?? "?")"
          : "no accelerometer yet"))
  }

  /// Requests `name`; a required name that cannot be had is an error, an optional one is
  /// logged and skipped.
  @discardableResult
  private func own(_ name: String, required: Bool) throws(DaemonError) -> Bool {
    guard let connection else { return false }
    let problem: String
    do {
      switch try connection.requestName(name, flags: [.doNotQueue]) {
      case .primaryOwner, .alreadyOwner:
        ownedNames.append(name)
        return true
      case .exists, .inQueue:
        let owner = (try? connection.nameOwner(name)).flatMap { $0 } ?? "another process"
        problem =
          required
          ? "\(name) is already owned by \(owner): is another orientd running?"
          : "\(name) is already owned by \(owner) (iio-sensor-proxy?); serving only "
            + "\(OrientDaemon.orientdName). Stop the other service or use --no-compat"
      }
    } catch {
      if error.name == .accessDenied {
        problem =
          "the bus policy does not let this user own \(name) (\(error.message)): run orientd "
          + "as root, with dbus/orientd.conf installed in /usr/share/dbus-1/system.d"
      } else {
        problem = "cannot own \(name): \(error)"
      }
    }
    if required { throw DaemonError(problem) }
    logger.notice(problem)
    return false
  }

  /// Stops sampling (restoring the sensor's sysfs settings), answers pending claims, gives
  /// the names back, closes the connection and stops the loop. Idempotent.
  public func shutdown(status: ExitStatus = .success) {
    guard exitStatus == nil else { return }
    exitStatus = status
    manager.stop()
    posture.shutdown()
    ambient.stopAll()
    gate?.cancelAll()
    gate = nil
    answerHeld()
    holdTimer?.cancel()
    holdTimer = nil
    if let connection {
      if connection.isConnected {
        for name in ownedNames { _ = try? connection.releaseName(name) }
        connection.flush()
      }
      connection.close()
    }
    connection = nil
    tracker = nil
    ownedNames = []
    loop.stop()
  }

  private func busLost() {
    logger.error(
      "lost the connection to the bus; exiting with status 69 so that systemd restarts "
        + "orientd (Restart=on-failure)")
    shutdown(status: .unavailable)
  }

  // MARK: Configuration

  /// Applies a new configuration: new detector parameters start a fresh detector (the next
  /// reading is committed at once); new sampling or device settings restart the sampler.
  public func reload(_ new: DaemonConfiguration) {
    if new.detector != configuration.detector {
      detector = OrientationDetector(parameters: new.detector)
      logger.info("new detector parameters")
    }
    // The ambient poll intervals are [sampling] keys but not the accelerometer's: a change of
    // only them must not restart its sampler.
    var accelerometerPart = new.accelerometer
    accelerometerPart.sampling.lightInterval = configuration.accelerometer.sampling.lightInterval
    accelerometerPart.sampling.proximityInterval =
      configuration.accelerometer.sampling.proximityInterval
    let samplingChanged = accelerometerPart != configuration.accelerometer
    configuration = new
    ambient.setIntervals(new.accelerometer.sampling)
    posture.reload(new.posture)
    if samplingChanged { manager.update(configuration: new.accelerometer) }
  }

  /// SIGHUP: re-reads the configuration file; a broken file is reported and the previous
  /// configuration stays.
  public func reloadFromDisk() {
    do {
      let new = try DaemonConfiguration.load(path: options.configPath)
      reload(new)
      logger.notice("reloaded the configuration from \(new.source ?? "the built-in defaults")")
    } catch {
      logger.error("\(error.message); keeping the previous configuration")
    }
  }

  // MARK: Claims

  private func claim(_ invocation: DBusMethodInvocation, _ api: ClaimAPI) {
    let sender = invocation.sender
    guard !sender.isEmpty, exitStatus == nil else {
      invocation.reply()
      return
    }
    let wasIdle = !sensorsWanted
    if claims.claim(sender, api) { tracker?.track(sender) }
    logger.debug("\(sender) claimed through \(api.rawValue); \(claims.clientCount) client(s)")
    if api == .posture { posture.setClaimed(true) }
    if wasIdle { startSampling() }
    guard awaitingFirstReading, manager.active != nil else {
      answer(invocation, api)
      return
    }
    held.append((invocation, api))
    if held.count == 1 { armHoldTimer() }
  }

  /// Answers a claim (at once or after the first reading), preceded by a `PropertiesChanged`
  /// of everything claimed for that client alone (ClaimSnapshots.swift says why).
  private func answer(_ invocation: DBusMethodInvocation, _ api: ClaimAPI) {
    sendSnapshot(of: api, to: invocation.sender)
    invocation.reply()
  }

  /// The connection while it is up and the daemon is not shutting down.
  var busConnection: DBusConnection? {
    guard let connection, connection.isConnected, exitStatus == nil else { return nil }
    return connection
  }

  private func release(_ sender: String, _ api: ClaimAPI) {
    guard claims.holds(sender) else { return }
    if claims.release(sender, api) { tracker?.untrack(sender) }
    logger.debug("\(sender) released through \(api.rawValue); \(claims.clientCount) client(s)")
    posture.setClaimed(!claims.claimers(.posture).isEmpty)
    if !sensorsWanted { stopSampling() }
  }

  private func vanished(_ name: String) {
    guard claims.holds(name) else { return }
    claims.vanished(name)
    logger.debug("\(name) left the bus; \(claims.clientCount) client(s)")
    posture.setClaimed(!claims.claimers(.posture).isEmpty)
    if !sensorsWanted { stopSampling() }
  }

  /// Whether the display sensor must be read: a client claims, or the posture is wanted
  /// (orientd's own tablet-mode switch).
  private var sensorsWanted: Bool { !claims.isEmpty || posture.wantsSensors }

  /// The posture started or stopped wanting the sensors.
  private func sensorsWantedChanged() {
    if sensorsWanted, !manager.isStarted {
      startSampling()
    } else if !sensorsWanted, manager.isStarted {
      stopSampling()
    }
  }

  /// The posture's published state changed; with `laptop-orientation = normal` the
  /// orientation follows it.
  private func postureChanged() {
    var next = published
    next.posture = posture.state
    next.orientation = effectiveOrientation(detector.orientation)
    publish(next)
  }

  /// `detected`, or `normal` while the posture is laptop and that is configured; an undefined
  /// detection keeps what is published.
  private func effectiveOrientation(_ detected: Orientation) -> Orientation {
    if posture.holdsOrientationNormal { return .normal }
    return detected == .undefined ? published.orientation : detected
  }

  private func startSampling() {
    detector.reset()
    awaitingFirstReading = manager.active != nil
    manager.start()
  }

  private func stopSampling() {
    manager.stop()
    awaitingFirstReading = false
    answerHeld()
    // Back to idle: what a burst of clients left free on the heap goes back to the system
    // (1000 clients at once left 1.1 MB resident without this).
    loop.post { Memory.trim() }
  }

  private func armHoldTimer() {
    do {
      let timer = try holdTimer ?? loop.makeTimer { [weak self] in self?.holdExpired() }
      holdTimer = timer
      try timer.schedule(after: options.claimReplyBound)
    } catch {
      // Without the bound a claim could wait forever for a sensor that never answers:
      // answer at once with the state there is.
      logger.error(
        "cannot arm the \(options.claimReplyBound.seconds) s claim reply timer: \(error); answering "
          + "\(held.count) claim(s) at once")
      answerHeld()
    }
  }

  private func holdExpired() {
    guard !held.isEmpty else { return }
    logger.info(
      "no usable reading within \(options.claimReplyBound.seconds) s; answering \(held.count) "
        + "claim(s) with the last known state")
    awaitingFirstReading = false
    answerHeld()
  }

  private func answerHeld() {
    holdTimer?.disarm()
    let waiting = held
    held = []
    for (invocation, api) in waiting { answer(invocation, api) }
  }

  private func reading() throws(DBusError) -> [DBusValue] {
    guard published.hasAccelerometer else {
      throw DBusError(BusInterfaces.noAccelerometer, "orientd has no display accelerometer")
    }
    guard let last = lastGravity else {
      throw DBusError(
        BusInterfaces.noReading,
        "no reading yet: the sensor is read only while a client holds a claim; call Claim first")
    }
    let micros = UInt64(max(0, (last.time * 1e6).rounded()))
    return [
      .double(last.vector.x), .double(last.vector.y), .double(last.vector.z), .uint64(micros),
    ]
  }

  // MARK: Sensor and detector

  private func sensorChanged(_ status: SensorStatus?) {
    guard let status else {
      logger.notice("no display accelerometer: orientation undefined until one appears")
      posture.displayChanged(present: false)
      detector.reset()
      detector.resetGravityEstimate()
      scaleReported = false
      lastGravity = nil
      awaitingFirstReading = false
      var cleared = PublishedState()
      cleared.posture = posture.state
      publish(cleared)
      answerHeld()
      return
    }
    posture.displayChanged(present: true)
    var next = published
    next.hasAccelerometer = true
    next.sensor = status.busDescription
    if status.isSampling {
      // A (re)started sensor: decide from its first reading, not from before the pause.
      detector.reset()
      awaitingFirstReading = true
    }
    publish(next)
  }

  private func process(_ sample: AccelerometerSample) {
    samplesProcessed += 1
    let a = sample.acceleration
    let update = detector.process(time: Double(sample.timestamp) / 1e9, a.x, a.y, a.z)
    posture.lid(sample)
    if detector.hasReading { lastGravity = (detector.gravity, detector.gravityTime) }
    if !scaleReported, detector.gravityEstimator.isScaleOff {
      scaleReported = true
      let active = manager.active?.description
      let scale = active.map {
        $0.scale.x == $0.scale.y && $0.scale.y == $0.scale.z ? $0.scale.x : nil
      }
      logger.warning(
        "\(active?.sysname ?? "accelerometer"): "
          + detector.gravityEstimator.scaleAdvice(scale: scale ?? nil))
    }
    let proxyTilt =
      detector.hasReading ? Tilt.sensorProxy(gravity: detector.gravity) : published.sensorProxyTilt
    guard update != nil || proxyTilt != published.sensorProxyTilt else { return }
    var next = published
    next.sensorProxyTilt = proxyTilt
    guard let update else { return publish(next) }
    // Undefined only while flat since the start: then the last orientation stays published.
    next.orientation = effectiveOrientation(update.orientation)
    next.tilt = update.tilt
    if next.orientation != published.orientation {
      logger.info("orientation \(next.orientation.rawValue) (tilt \(next.tilt.rawValue))")
    }
    publish(next)
    if awaitingFirstReading {
      awaitingFirstReading = false
      answerHeld()
    }
  }

  private func publish(_ next: PublishedState) {
    published = next
    guard let connection, connection.isConnected else { return }
    // Changes go to the claimers only (as iio-sensor-proxy 3.1+ does), except a sensor
    // appearing or disappearing (`isBroadcastOnChange`): that is broadcast. iio-sensor-proxy
    // exits without a sensor and is started again with the new one, so clients (mutter, KDE)
    // re-read its properties when the name gets a new owner; orientd keeps its name, and a
    // client that only claims once HasAccelerometer is true would otherwise never hear that a
    // sensor arrived.
    announce(
      OrientdProperty.self, at: OrientDaemon.orientdPath, to: claims.claimers(.orientd),
      on: connection)
    if servesCompatibility {
      announce(
        SensorProxyProperty.self, at: OrientDaemon.sensorProxyPath,
        to: claims.claimers(.sensorProxy), on: connection)
    }
    announce(
      PostureProperty.self, at: OrientDaemon.posturePath, to: claims.claimers(.posture),
      on: connection)
  }

  /// Publishes a change of one ambient kind to that kind's claimers (a sensor appearing or
  /// going away to everyone), so light readings never reach accelerometer-only clients.
  private func publishAmbient(_ kind: AmbientKind, _ state: AmbientState) {
    published.ambient = state
    guard let connection, connection.isConnected, servesCompatibility else { return }
    let to = ambient.claims.claimers(kind)
    if kind == .compass {
      announce(CompassProperty.self, at: OrientDaemon.compassPath, to: to, on: connection)
    } else {
      announce(SensorProxyProperty.self, at: OrientDaemon.sensorProxyPath, to: to, on: connection)
    }
  }

  /// `publish(_:at:to:on:)`, logging a failure to send.
  private func announce<Name: PublishedProperty>(
    _: Name.Type, at path: DBusObjectPath, to recipients: [String], on connection: DBusConnection
  ) {
    do {
      try publish(Name.self, at: path, to: recipients, on: connection)
    } catch {
      logger.warning("cannot send PropertiesChanged of \(Name.interface): \(error)")
    }
  }

  /// Publishes `published` as the values of `Name`'s properties at `path`; the object
  /// server announces the changed ones to `recipients`.
  private func publish<Name: PublishedProperty>(
    _: Name.Type, at path: DBusObjectPath, to recipients: [String]?,
    on connection: DBusConnection
  ) throws(DBusError) {
    let state = published
    try connection.publish(at: path, to: recipients) { (name: Name) in name.value(in: state) }
  }

  /// Sends PropertiesChanged of `names` with their current values to `destinations`
  /// (unicast each).
  func emit<Name: DBusPropertyName>(
    _ names: [Name], at path: DBusObjectPath, to destinations: [String],
    on connection: DBusConnection
  ) {
    do {
      try connection.emitPropertiesChanged(names, at: path, destinations: destinations)
    } catch {
      logger.warning("cannot send PropertiesChanged of \(Name.interface): \(error)")
    }
  }
}
