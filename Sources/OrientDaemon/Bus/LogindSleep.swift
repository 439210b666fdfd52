import DBusKit
import OrientLog
import OrientWire

/// `SleepSignals` from systemd-logind (or elogind) on the system bus: `PrepareForSleep`
/// followed with a match rule, the `delay` inhibitor taken with `Inhibit` and let go by closing
/// its descriptor. Without logind on the bus (the session bus, a CI container, a system without
/// it) it says so once at info and does nothing; logind appearing later is followed (its owner
/// is watched), and the lock taken then if it is wanted.
final class LogindSleep: SleepSignals {
  var onPrepareForSleep: ((_ sleeping: Bool) -> Void)?

  private let connection: DBusConnection
  private var logger: Logger
  private var subscription: DBusSubscription?
  private var ownerWatch: DBusNameWatch?
  private var owner: String?
  /// Whether the daemon wants the lock.
  private var wantsLock = false
  /// The inhibitor's descriptor: the lock lasts while it is open.
  private var lock: DBusFileDescriptor?
  private var pending: DBusPendingCall?
  private var toldAbsent = false
  private var toldRefused = false

  /// Follows logind on `connection`.
  ///
  /// - Throws: `DBusError` if the match rule or the name watch cannot be added.
  init(connection: DBusConnection, logger: Logger) throws(DBusError) {
    self.connection = connection
    self.logger = logger
    let rule = DBusMatchRule(
      sender: Logind.name, path: Logind.path, interface: Logind.managerInterface,
      member: Logind.prepareForSleepSignal)
    subscription = try connection.subscribe(rule) { [weak self] message in
      self?.signal(message)
    }
    ownerWatch = try connection.watchName(Logind.name) { [weak self] owner in
      self?.ownerChanged(owner)
    }
  }

  func holdDelayLock(_ hold: Bool) {
    wantsLock = hold
    if hold {
      takeLock()
    } else {
      pending?.cancel()
      pending = nil
      if lock != nil { logger.debug("let the sleep delay inhibitor go") }
      lock = nil
    }
  }

  func close() {
    holdDelayLock(false)
    subscription?.cancel()
    subscription = nil
    ownerWatch?.cancel()
    ownerWatch = nil
    onPrepareForSleep = nil
  }

  private func signal(_ message: DBusMessage) {
    guard let arguments = try? message.arguments(), case .boolean(let sleeping)? = arguments.first
    else {
      logger.warning("ignored a \(Logind.prepareForSleepSignal) signal without its boolean")
      return
    }
    logger.debug("\(Logind.prepareForSleepSignal)(\(sleeping)) from \(message.sender ?? "?")")
    onPrepareForSleep?(sleeping)
  }

  private func ownerChanged(_ new: String?) {
    let before = owner
    owner = new
    if let new {
      if before == nil {
        logger.info("following system sleep through \(Logind.name) (\(new))")
      }
      // A new logind knows nothing of the old one's inhibitors.
      lock = nil
      pending?.cancel()
      pending = nil
      if wantsLock { takeLock() }
    } else {
      lock = nil
      if !toldAbsent {
        toldAbsent = true
        logger.info(
          "no \(Logind.name) on \(connection.address): system suspend is not announced; a "
            + "sensor that comes back dead is caught by its reader's stall watchdog only")
      }
    }
  }

  private func takeLock() {
    guard owner != nil, lock == nil, pending == nil else { return }
    pending = connection.call(
      destination: Logind.name, path: Logind.path, interface: Logind.managerInterface,
      member: Logind.inhibitMethod,
      arguments: [
        .string(Logind.inhibitWhat), .string(Logind.inhibitWho), .string(Logind.inhibitWhy),
        .string(Logind.inhibitMode),
      ]
    ) { [weak self] result in self?.inhibitAnswered(result) }
  }

  private func inhibitAnswered(_ result: Result<[DBusValue], DBusError>) {
    pending = nil
    switch result {
    case .success(let values):
      guard case .unixFD(let fd)? = values.first else {
        logger.warning("\(Logind.inhibitMethod) answered without a descriptor")
        return
      }
      // Dropping `fd` closes it: a lock no longer wanted goes at once.
      guard wantsLock else { return }
      lock = fd
      logger.debug("holding a sleep delay inhibitor (\(fd))")
    case .failure(let error):
      guard !toldRefused else { return }
      toldRefused = true
      logger.warning(
        "\(Logind.name) refused a sleep delay inhibitor (\(error)): the suspend will not wait "
          + "for the sensors to be switched off (logged once)")
    }
  }
}
