import DBusKit
import Glibc
import OrientCore
import OrientLog
import OrientWire
import Sensors
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

/// orientd: the real parts around `DaemonCore` on one `EventLoop`: the device watcher (one
/// udev context, one monitor) and the sensor layer (`SensorHub`), the bus connection with
/// every API, the one client tracker, polkit, and the bus names.
///
/// If the bus goes away, the daemon stops reading, restores the sensors' settings and ends
/// with status 69, so that systemd (`Restart=on-failure`) starts it again on the new bus.
public final class OrientDaemon {
  /// The loop everything runs on.
  public let loop: EventLoop
  /// The options it was started with.
  public let options: DaemonOptions
  /// Whether `net.hadess.SensorProxy` is owned and served.
  public private(set) var servesCompatibility = false
  /// Set when the daemon has stopped: the exit status.
  public private(set) var exitStatus: ExitStatus?

  /// The logic.
  public let core: DaemonCore
  /// The sensor layer.
  public let sensors: SensorHub
  private let watcher: DeviceWatcher
  private var logger: Logger
  private var connection: DBusConnection?
  private var tracker: DBusClientTracker?
  private var ownedNames: [String] = []
  /// logind's lock and power saving, followed while `[face] enabled`.
  private var systemState: SystemStateFollower?

  /// orientd's own bus name and interface.
  public static let orientdName = Wire.orientdName
  /// iio-sensor-proxy's bus name and interface.
  public static let sensorProxyName = Wire.sensorProxyName

  /// Creates the daemon; `start()` enumerates sensors and goes on the bus.
  ///
  /// - Throws: `StatusError` (69) if udev cannot be used.
  public init(
    options: DaemonOptions, configuration: DaemonConfiguration, loop: EventLoop, logger: Logger
  ) throws(StatusError) {
    self.options = options
    self.loop = loop
    self.logger = logger
    do {
      watcher = try DeviceWatcher(
        subsystems: SensorDrivers.subsystems + ["input"], loop: loop, logger: logger.child("udev"))
      sensors = try SensorHub(
        loop: loop, configuration: configuration.sensors, logger: logger.child("sensors"),
        watcher: watcher)
    } catch {
      throw StatusError(.unavailable, "cannot use udev: \(error)")
    }
    core = DaemonCore(
      configuration: configuration, sensors: sensors, scheduler: loop,
      claimReplyBound: options.claimReplyBound, logger: logger, loop: loop, watcher: watcher)
    core.onIdle = { [loop] in
      // Back to idle: what a burst of clients left free on the heap goes back to the system
      // (1000 clients at once left 1.1 MB resident without this).
      loop.post { Memory.trim() }
    }
  }

  /// The configuration in use.
  public var configuration: DaemonConfiguration { core.configuration }
  /// What clients are told.
  public var published: PublishedState { core.published }
  /// Who holds claims.
  public var claims: ClaimSet { core.claims }
  /// Whether the display accelerometer is being read right now.
  public var isSampling: Bool { core.isSampling }
  /// Readings fed to the detector since start.
  public var samplesProcessed: Int { core.samplesProcessed }

  // MARK: Starting and stopping

  /// Enumerates the sensors (and follows hotplug), connects to the bus, exports every API and
  /// takes the names: `org.orientd.Orientation1`, then (unless disabled or owned by someone
  /// else, e.g. iio-sensor-proxy) `net.hadess.SensorProxy`.
  ///
  /// - Throws: `StatusError` (69) when udev, the bus or `org.orientd.Orientation1` is not
  ///   available.
  public func start() throws(StatusError) {
    do {
      try watcher.start()
    } catch {
      throw StatusError(.unavailable, "cannot enumerate the sensors with udev: \(error)")
    }
    core.begin()

    let connection: DBusConnection
    do {
      connection = try DBusConnection(bus: options.bus, loop: loop, logger: logger.child("dbus"))
    } catch {
      throw StatusError(.unavailable, "\(error.message)")
    }
    self.connection = connection
    connection.onDisconnect = { [weak self] in self?.busLost() }
    connection.onNameLost = { [weak self] name in
      self?.logger.warning("lost the bus name \(name)")
    }
    let publisher = DBusPublisher(connection: connection, logger: logger.child("dbus"))
    let tracker = DBusClientTracker(connection: connection) { [weak self] name in
      self?.core.vanished(name)
    }
    self.tracker = tracker
    let handlers = BusInterfaces.Handlers(
      claim: { [weak self] invocation, target in
        guard let self else { return invocation.answer() }
        self.core.claim(invocation, target)
      },
      release: { [weak self] invocation, target in
        guard let self else { return invocation.answer() }
        self.core.release(invocation, target)
      },
      reading: { [weak self] () throws(DBusError) -> [DBusValue] in
        guard let self else { throw DBusError(.failed, "shutting down") }
        return try self.core.reading()
      },
      motionValue: { [weak self] name, sender in
        self?.core.motionValue(name, for: sender) ?? name.value(in: PublishedState())
      },
      openStream: { [weak self] invocation in
        guard let self else { return invocation.fail(.failed, "shutting down") }
        let options = invocation.arguments.first?.stringKeyedDictionary ?? [:]
        self.core.openStream(invocation, options: options) { invocation.reply($0) }
      })
    let state = core.published
    do {
      try connection.export([BusInterfaces.orientd(handlers)], at: Wire.orientationPath)
      try publisher.record(OrientdProperty.self, state, at: Wire.orientationPath)
      try connection.export([BusInterfaces.posture(handlers)], at: Wire.posturePath)
      try publisher.record(PostureProperty.self, state, at: Wire.posturePath)
      try connection.export([BusInterfaces.motion(handlers)], at: Wire.motionPath)
      try publisher.record(MotionProperty.self, state, at: Wire.motionPath)
    } catch {
      throw StatusError(.unavailable, "cannot export \(Wire.orientationPath): \(error)")
    }
    try own(Wire.orientdName, required: true)
    if options.compatibility {
      do {
        try connection.export([BusInterfaces.sensorProxy(handlers)], at: Wire.sensorProxyPath)
        try connection.export([BusInterfaces.compass(handlers)], at: Wire.compassPath)
        try publisher.record(SensorProxyProperty.self, state, at: Wire.sensorProxyPath)
        try publisher.record(CompassProperty.self, state, at: Wire.compassPath)
      } catch {
        throw StatusError(.unavailable, "cannot export \(Wire.sensorProxyPath): \(error)")
      }
      servesCompatibility = try own(Wire.sensorProxyName, required: false)
      if !servesCompatibility {
        connection.unexport(Wire.sensorProxyPath)
        connection.unexport(Wire.compassPath)
      }
    }
    publisher.servesCompatibility = servesCompatibility
    core.attach(
      bus: publisher, tracker: tracker, authority: PolkitAuthority(connection: connection))
    do {
      core.attach(sleep: try LogindSleep(connection: connection, logger: logger.child("sleep")))
    } catch {
      logger.warning("cannot follow system sleep through \(Logind.name): \(error)")
    }
    followSystemState()
    let names = ownedNames.joined(separator: " and ")
    logger.notice(
      "serving \(names) on \(connection.address); "
        + (core.published.hasAccelerometer
          ? "accelerometer \(sensors.status(of: .accelerometer)?.sensor.sysname ?? "?")"
          : "no accelerometer yet"))
  }

  /// Requests `name`; a required name that cannot be had is an error, an optional one is
  /// logged and skipped.
  @discardableResult
  private func own(_ name: String, required: Bool) throws(StatusError) -> Bool {
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
            + "\(Wire.orientdName). Stop the other service or use --no-compat"
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
    if required { throw StatusError(.unavailable, problem) }
    logger.notice(problem)
    return false
  }

  /// Stops reading (restoring the sensors' sysfs settings), answers pending claims, gives the
  /// names back, closes the connection and stops the loop. Idempotent.
  public func shutdown(status: ExitStatus = .success) {
    guard exitStatus == nil else { return }
    exitStatus = status
    core.shutdown()
    systemState?.close()
    systemState = nil
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

  /// Applies a new configuration (`DaemonCore.reload`).
  public func reload(_ new: DaemonConfiguration) {
    core.reload(new)
    if exitStatus == nil && connection != nil { followSystemState() }
  }

  /// Follows the session's lock and power saving on the daemon's bus (the system bus) while
  /// face-aware rotation is on; until they are known the camera is not used (the lock state is
  /// unknown).
  private func followSystemState() {
    guard core.isFaceResolving else {
      systemState?.close()
      systemState = nil
      core.faceConditions = FaceConditions()
      return
    }
    guard systemState == nil, let connection else { return }
    let follower = SystemStateFollower(connection: connection, logger: logger.child("face"))
    follower.onChange = { [weak self] conditions in self?.core.faceConditions = conditions }
    do {
      try follower.start()
      systemState = follower
    } catch {
      follower.close()
      logger.warning(
        "cannot follow logind and power-profiles-daemon on \(connection.address) "
          + "(\(error.message)): the camera is not used for face-aware rotation")
    }
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
}
