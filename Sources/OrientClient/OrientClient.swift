import DBusKit
import OrientCore
import OrientLog
import OrientWire
import SystemKit

/// A client of orientd (or iio-sensor-proxy) on the event loop: claims the accelerometer,
/// reads the state, follows `PropertiesChanged`, releases.
///
/// Everything runs as callbacks on the connection's `EventLoop`; nothing blocks.
/// `SynchronousOrientClient` wraps it for command-line tools that just want one answer.
///
/// Typical use: `claim { result in ... }`, then `onChange` for every change, `release()` at the
/// end. If the service goes away (or is replaced) while claimed, `onServiceLost` is called and
/// the claim is gone; `waitForService` then tells when to claim again.
public final class OrientClient {
  /// The connection used (owned by the caller; `close()` it on shutdown).
  public let connection: DBusConnection
  /// Where problems are logged.
  public var logger: Logger
  /// The latest state of the claimed service (kept after a release or loss as last known).
  public private(set) var state: OrientState?
  /// Whether a claim is held right now.
  public private(set) var isClaimed = false
  /// Called on the loop after a `PropertiesChanged` changed the state while claimed.
  public var onChange: ((OrientState, OrientState.Fields) -> Void)?
  /// Called on the loop when the claimed service disappears or is replaced by another process;
  /// the claim is gone then.
  public var onServiceLost: ((OrientService) -> Void)?

  private var subscription: DBusSubscription?
  private var ownerWatch: DBusNameWatch?
  private var claimedOwner: String?
  private var claimedService: OrientService?
  /// Increases with every claim attempt and release, so late answers of an older attempt are
  /// ignored.
  private var generation = 0

  /// Wraps an open connection.
  public init(connection: DBusConnection, logger: Logger) {
    self.connection = connection
    self.logger = logger
  }

  /// Connects to `bus` on `loop`.
  ///
  /// - Throws: `OrientClientError` (`noBus`, `accessDenied`) naming the address.
  public convenience init(bus: DBusConnection.Bus, loop: EventLoop, logger: Logger)
    throws(OrientClientError)
  {
    do {
      self.init(
        connection: try DBusConnection(bus: bus, loop: loop, logger: logger), logger: logger)
    } catch {
      let kind: OrientClientError.Kind = error.name == .accessDenied ? .accessDenied : .noBus
      throw OrientClientError(kind, error.message)
    }
  }

  deinit {
    subscription?.cancel()
    ownerWatch?.cancel()
  }

  // MARK: Claiming

  /// Claims the accelerometer on the first of `services` that is on the bus, reads its state
  /// and starts following changes.
  ///
  /// orientd holds the reply to the first claim until it has a first reading (at most about
  /// 1.5 s), so the state passed to `completion` is fresh. A call that finds no owner (or no
  /// bus-activatable service) moves on to the next service.
  ///
  /// - Parameters:
  ///   - services: the services to try, in order of preference.
  ///   - timeoutMilliseconds: how long each call may take.
  ///   - completion: on the loop, with the state or `OrientClientError` (`serviceMissing` when
  ///     none of them is there, `accessDenied`, `noBus`, `failed`).
  public func claim(
    services: [OrientService] = OrientService.allCases, timeoutMilliseconds: Int32 = 10_000,
    completion: @escaping (Result<OrientState, OrientClientError>) -> Void
  ) {
    stopFollowing()
    isClaimed = false
    generation += 1
    attempt(services[...], missing: [], timeout: timeoutMilliseconds, completion: completion)
  }

  private func attempt(
    _ services: ArraySlice<OrientService>, missing: [String], timeout: Int32,
    completion: @escaping (Result<OrientState, OrientClientError>) -> Void
  ) {
    guard let service = services.first else {
      completion(
        .failure(
          OrientClientError(
            .serviceMissing,
            "no orientation service on the bus at \(connection.address): "
              + "\(missing.joined(separator: "; ")). Start orientd (systemctl start orientd) "
              + "or iio-sensor-proxy")))
      return
    }
    let current = generation
    // Subscribe first, so that no change between the claim and GetAll is lost.
    do {
      subscription = try connection.subscribePropertiesChanged(
        sender: service.busName, path: service.path, interface: service.interface
      ) { [weak self] changed, _ in
        self?.propertiesChanged(changed, service: service, generation: current)
      }
    } catch {
      completion(.failure(OrientClientError(error, talkingTo: service.busName)))
      return
    }
    let message: DBusMessage
    do {
      message = try DBusMessage.methodCall(
        destination: service.busName, path: service.path, interface: service.interface,
        member: service.claimMethod)
    } catch {
      completion(.failure(OrientClientError(error, talkingTo: service.busName)))
      return
    }
    connection.call(message, timeoutMilliseconds: timeout) { [weak self] result in
      guard let self, self.generation == current else { return }
      switch result {
      case .failure(let error) where error.name == .serviceUnknown || error.name == .nameHasNoOwner:
        self.logger.debug("\(service.busName) is not on the bus: \(error.message)")
        self.stopFollowing()
        self.attempt(
          services.dropFirst(), missing: missing + ["\(service.busName) is not running"],
          timeout: timeout, completion: completion)
      case .failure(let error):
        self.stopFollowing()
        completion(.failure(OrientClientError(error, talkingTo: service.busName)))
      case .success(let reply):
        self.claimed(service, owner: reply.sender, timeout: timeout, completion: completion)
      }
    }
  }

  private func claimed(
    _ service: OrientService, owner: String?, timeout: Int32,
    completion: @escaping (Result<OrientState, OrientClientError>) -> Void
  ) {
    let current = generation
    isClaimed = true
    claimedService = service
    claimedOwner = owner
    do {
      ownerWatch = try connection.watchName(service.busName) { [weak self] newOwner in
        self?.ownerChanged(newOwner, service: service, generation: current)
      }
    } catch {
      logger.debug("cannot watch \(service.busName): \(error)")
    }
    connection.call(
      destination: service.busName, path: service.path,
      interface: Wire.propertiesInterface, member: "GetAll",
      arguments: [.string(service.interface)], timeoutMilliseconds: timeout
    ) { [weak self] result in
      guard let self, self.generation == current else { return }
      switch result {
      case .failure(let error):
        completion(.failure(OrientClientError(error, talkingTo: service.busName)))
      case .success(let values):
        guard let properties = values.first?.stringKeyedDictionary else {
          completion(
            .failure(
              OrientClientError(.failed, "\(service.busName) answered GetAll with \(values)")))
          return
        }
        var state = OrientState(service: service)
        state.apply(properties)
        self.state = state
        completion(.success(state))
      }
    }
  }

  /// Releases the claim (if one is held) and stops following changes; `completion` runs on the
  /// loop when the service has answered (or at once when nothing was claimed).
  public func release(
    timeoutMilliseconds: Int32 = 2_000,
    completion: ((Result<Void, OrientClientError>) -> Void)? = nil
  ) {
    let wasClaimed = isClaimed
    let service = claimedService
    isClaimed = false
    generation += 1
    stopFollowing()
    guard wasClaimed, let service else {
      if let completion { connection.loop.post { completion(.success(())) } }
      return
    }
    connection.call(
      destination: service.busName, path: service.path, interface: service.interface,
      member: service.releaseMethod, timeoutMilliseconds: timeoutMilliseconds
    ) { result in
      completion?(
        result.map { _ in () }.mapError { OrientClientError($0, talkingTo: service.busName) })
    }
  }

  /// Asks orientd for the filtered gravity vector (`GetReading`); not available from
  /// iio-sensor-proxy.
  public func gravity(
    timeoutMilliseconds: Int32 = 5_000,
    completion: @escaping (Result<GravityReading, OrientClientError>) -> Void
  ) {
    let service = OrientService.orientd
    connection.call(
      destination: service.busName, path: service.path, interface: service.interface,
      member: Wire.getReadingMethod, timeoutMilliseconds: timeoutMilliseconds
    ) { result in
      switch result {
      case .failure(let error):
        completion(.failure(OrientClientError(error, talkingTo: service.busName)))
      case .success(let values):
        guard values.count == 4, let x = values[0].doubleValue, let y = values[1].doubleValue,
          let z = values[2].doubleValue, let t = values[3].uint64Value
        else {
          completion(
            .failure(OrientClientError(.failed, "unexpected GetReading answer \(values)")))
          return
        }
        completion(.success(GravityReading(x: x, y: y, z: z, timestampMicroseconds: t)))
      }
    }
  }

  // MARK: Following

  private func propertiesChanged(
    _ changed: [String: DBusValue], service: OrientService, generation: Int
  ) {
    guard generation == self.generation, isClaimed, var state, state.service == service else {
      return
    }
    let fields = state.apply(changed)
    self.state = state
    if !fields.isEmpty { onChange?(state, fields) }
  }

  private func ownerChanged(_ owner: String?, service: OrientService, generation: Int) {
    guard generation == self.generation, isClaimed else { return }
    if claimedOwner == nil {
      claimedOwner = owner
      if owner != nil { return }
    }
    guard owner != claimedOwner else { return }
    logger.debug(
      "\(service.busName) changed owner from \(claimedOwner ?? "none") to \(owner ?? "none")")
    isClaimed = false
    self.generation += 1
    stopFollowing()
    onServiceLost?(service)
  }

  private func stopFollowing() {
    subscription?.cancel()
    subscription = nil
    ownerWatch?.cancel()
    ownerWatch = nil
    claimedOwner = nil
    claimedService = nil
  }

  // MARK: Waiting

  /// Calls `handler` once, on the loop, with the most preferred of `services` that has an owner
  /// on the bus: at once if one is there, otherwise as soon as one appears.
  ///
  /// - Parameter absent: called once if none of them is on the bus at first (to say that the
  ///   wait begins).
  /// - Returns: the wait; cancel or release it to stop waiting.
  /// - Throws: `OrientClientError` (`noBus`) if the connection is closed.
  public func waitForService(
    _ services: [OrientService] = OrientService.allCases, absent: (() -> Void)? = nil,
    _ handler: @escaping (OrientService) -> Void
  ) throws(OrientClientError) -> ServiceWait {
    let wait = ServiceWait(services: services, absent: absent, handler: handler)
    for service in services {
      do {
        let watch = try connection.watchName(service.busName) { [weak wait] owner in
          wait?.update(service, owner: owner)
        }
        wait.watches.append(watch)
      } catch {
        throw OrientClientError(error, talkingTo: service.busName)
      }
    }
    return wait
  }
}

/// A pending `OrientClient.waitForService`; stops watching when cancelled or released.
public final class ServiceWait {
  fileprivate var watches: [DBusNameWatch] = []
  private let services: [OrientService]
  private var owners: [OrientService: String?] = [:]
  private var handler: ((OrientService) -> Void)?
  private var absent: (() -> Void)?

  fileprivate init(
    services: [OrientService], absent: (() -> Void)?,
    handler: @escaping (OrientService) -> Void
  ) {
    self.services = services
    self.absent = absent
    self.handler = handler
  }

  deinit { cancel() }

  /// Stops waiting; the handler will not be called. Idempotent.
  public func cancel() {
    handler = nil
    absent = nil
    for watch in watches { watch.cancel() }
    watches = []
  }

  fileprivate func update(_ service: OrientService, owner: String?) {
    owners[service] = .some(owner)
    guard let handler else { return }
    // Decide once every name's owner is known, so that a less preferred service that answers
    // first does not win over a preferred one that is there too; the most preferred one wins
    // at once.
    let allKnown = services.allSatisfy { owners[$0] != nil }
    let present = services.filter { (owners[$0] ?? nil) != nil }
    if allKnown, present.isEmpty, let absent {
      self.absent = nil
      absent()
    }
    guard let chosen = present.first, allKnown || chosen == services.first else { return }
    cancel()
    handler(chosen)
  }
}
