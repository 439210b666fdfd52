import DBusKit
import OrientLog
import OrientWire

/// Follows what face-aware rotation's policy needs from the system bus: logind's `LockedHint`
/// of `seat0`'s active session (the seat's `ActiveSession`, both followed with
/// `PropertiesChanged`; no logind, no active session or an unreadable hint: unknown, which
/// counts as locked) and power-profiles-daemon's `ActiveProfile` on either of its names
/// (`power-saver`: saving; no daemon: not saving). Started only while `[face] enabled`, on the
/// daemon's own connection (the system bus), as `LogindSleep` is.
final class SystemStateFollower {
  /// Called on the loop whenever the conditions change.
  var onChange: (FaceConditions) -> Void = { _ in }
  /// What is known now.
  private(set) var conditions = FaceConditions()
  private let connection: DBusConnection
  private let logger: Logger
  private var watches: [DBusNameWatch] = []
  private var subscriptions: [DBusSubscription] = []
  private var session: (path: DBusObjectPath, subscription: DBusSubscription?)?
  /// Power saving as each power-profiles-daemon name says it.
  private var saving: [String: Bool] = [:]
  /// The conditions last reported (`nil`: none yet).
  private var reported: FaceConditions?

  /// Follows on `connection` (the daemon's).
  init(connection: DBusConnection, logger: Logger) {
    self.connection = connection
    self.logger = logger
  }

  /// Subscribes and reads the current values (answers arrive on the loop).
  func start() throws(DBusError) {
    subscriptions.append(
      try connection.subscribePropertiesChanged(
        sender: Logind.name, path: Logind.seatPath,
        interface: Logind.seatInterface
      ) { [weak self] changed, invalidated in
        if let value = changed[Logind.activeSessionProperty] {
          self?.activeSession(value)
        } else if invalidated.contains(Logind.activeSessionProperty) {
          self?.readActiveSession()
        }
      })
    watches.append(
      try connection.watchName(Logind.name) { [weak self] owner in
        guard let self else { return }
        if owner == nil {
          self.follow(session: nil)
          self.logger.info("logind is not on the bus: the session counts as locked")
        } else {
          self.readActiveSession()
        }
      })
    for api in PowerProfiles.apis {
      subscriptions.append(
        try connection.subscribePropertiesChanged(
          sender: api.name, path: api.path, interface: api.name
        ) { [weak self] changed, _ in
          if let value = changed[PowerProfiles.activeProfileProperty] {
            self?.profile(value, of: api.name)
          }
        })
      watches.append(
        try connection.watchName(api.name) { [weak self] owner in
          guard let self else { return }
          if owner == nil {
            self.saving[api.name] = nil
            self.update()
          } else {
            self.get(api.name, api.path, api.name, PowerProfiles.activeProfileProperty) {
              [weak self] value in
              if let value { self?.profile(value, of: api.name) }
            }
          }
        })
    }
  }

  /// Stops following (the connection stays the daemon's).
  func close() {
    for watch in watches { watch.cancel() }
    for subscription in subscriptions { subscription.cancel() }
    session?.subscription?.cancel()
    watches = []
    subscriptions = []
    session = nil
  }

  private func readActiveSession() {
    get(
      Logind.name, Logind.seatPath, Logind.seatInterface,
      Logind.activeSessionProperty
    ) { [weak self] value in
      guard let self else { return }
      if let value {
        self.activeSession(value)
      } else {
        self.follow(session: nil)
      }
    }
  }

  /// `ActiveSession` is `(so)`; the path `/` means none.
  private func activeSession(_ value: DBusValue) {
    let fields = value.structureFields
    let path = fields.flatMap { $0.count == 2 ? $0[1].objectPathValue : nil }
    follow(session: path == .root ? nil : path)
  }

  private func follow(session path: DBusObjectPath?) {
    guard path != session?.path || path == nil else { return }
    session?.subscription?.cancel()
    session = nil
    guard let path else {
      conditions.sessionLocked = nil
      return update()
    }
    var subscription: DBusSubscription?
    do {
      subscription = try connection.subscribePropertiesChanged(
        sender: Logind.name, path: path,
        interface: Logind.sessionInterface
      ) { [weak self] changed, _ in
        guard self?.session?.path == path else { return }
        if let locked = changed[Logind.lockedHintProperty]?.boolValue {
          self?.locked(locked)
        }
      }
    } catch {
      logger.warning("cannot follow \(path)'s LockedHint: \(error.message)")
    }
    session = (path, subscription)
    get(
      Logind.name, path, Logind.sessionInterface,
      Logind.lockedHintProperty
    ) { [weak self] value in
      guard let self, self.session?.path == path else { return }
      if let locked = value?.boolValue {
        self.locked(locked)
      } else {
        self.conditions.sessionLocked = nil
        self.update()
      }
    }
  }

  private func locked(_ locked: Bool) {
    conditions.sessionLocked = locked
    update()
  }

  private func profile(_ value: DBusValue, of name: String) {
    guard let text = value.stringValue else { return }
    saving[name] = text == PowerProfiles.powerSaverProfile
    update()
  }

  private func update() {
    let before = reported
    conditions.powerSaving = saving.values.contains(true)
    reported = conditions
    guard before != conditions else { return }
    if before?.sessionLocked != conditions.sessionLocked {
      logger.info(
        "session \(conditions.sessionLocked.map { $0 ? "locked" : "unlocked" } ?? "lock unknown")")
    }
    if before?.powerSaving != conditions.powerSaving {
      logger.info("power saving \(conditions.powerSaving ? "on" : "off")")
    }
    onChange(conditions)
  }

  /// `org.freedesktop.DBus.Properties.Get`; `nil` on any error (logged at debug).
  private func get(
    _ destination: String, _ path: DBusObjectPath, _ interface: String, _ property: String,
    _ reply: @escaping (DBusValue?) -> Void
  ) {
    let logger = logger
    connection.call(
      destination: destination, path: path, interface: Wire.propertiesInterface, member: "Get",
      arguments: [.string(interface), .string(property)], timeoutMilliseconds: 5000
    ) { result in
      switch result {
      case .success(let values):
        reply(values.first.flatMap { $0.variantValue ?? $0 })
      case .failure(let error):
        logger.debug("\(destination) \(path) \(interface).\(property): \(error.message)")
        reply(nil)
      }
    }
  }
}
