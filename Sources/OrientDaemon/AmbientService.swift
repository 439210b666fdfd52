import Accelerometer
import DBusKit
import OrientLog
import SystemKit
import TextFormats

/// The values behind the light, proximity and compass properties of iio-sensor-proxy's API.
public struct AmbientState: Equatable, Sendable {
  /// `HasAmbientLight`.
  public var hasLight = false
  /// `LightLevel`: 0 until a claimed sensor was read (as iio-sensor-proxy).
  public var lightLevel = 0.0
  /// `LightLevelUnit`.
  public var lightUnit = LightUnit.lux
  /// `HasProximity`.
  public var hasProximity = false
  /// `ProximityNear`: false until a claimed sensor was read.
  public var proximityNear = false
  /// `HasCompass`.
  public var hasCompass = false
  /// `CompassHeading`: -1 until a claimed compass was read (and with none).
  public var compassHeading = -1.0

  /// Nothing present.
  public init() {}

  /// Whether a sensor of `kind` is present.
  public func has(_ kind: AmbientKind) -> Bool {
    switch kind {
    case .light: hasLight
    case .proximity: hasProximity
    case .compass: hasCompass
    }
  }
}

/// Who claimed which ambient sensor, keyed by unique bus name (claiming twice is a no-op,
/// releasing without a claim succeeds).
public struct AmbientClaims: Equatable, Sendable {
  private var holders: [AmbientKind: Set<String>] = [:]

  /// No claims.
  public init() {}

  /// Adds a claim; returns whether it is the kind's first.
  @discardableResult
  public mutating func claim(_ name: String, _ kind: AmbientKind) -> Bool {
    let first = holders[kind, default: []].isEmpty
    holders[kind, default: []].insert(name)
    return first
  }

  /// Removes a claim; returns whether the kind has no claimer left.
  @discardableResult
  public mutating func release(_ name: String, _ kind: AmbientKind) -> Bool {
    holders[kind]?.remove(name)
    return holders[kind, default: []].isEmpty
  }

  /// The claimers of `kind`, sorted (the destinations of its `PropertiesChanged`).
  public func claimers(_ kind: AmbientKind) -> [String] { (holders[kind] ?? []).sorted() }

  /// Whether `name` holds any claim.
  public func holds(_ name: String) -> Bool { holders.values.contains { $0.contains(name) } }

  /// The kinds `name` holds.
  public func kinds(of name: String) -> [AmbientKind] {
    AmbientKind.allCases.filter { holders[$0]?.contains(name) == true }
  }
}

/// Light, proximity and the compass: claims (per client, the first one answered after a
/// fresh reading or `claimReplyBound`), the polkit check, reading only while claimed, and the
/// state the daemon publishes. The daemon owns one; it calls `publish` with the kind whose
/// properties changed, so each change goes to that kind's claimers only.
final class AmbientService {
  /// The current values.
  private(set) var state = AmbientState()
  /// Who holds which claim.
  private(set) var claims = AmbientClaims()
  /// Publishes `state` for `kind`'s properties (to its claimers, or to everyone when a
  /// sensor appeared or went away).
  var publish: ((AmbientKind, AmbientState) -> Void)?

  let sensors: AmbientSensors
  private let loop: EventLoop
  private let logger: Logger
  private let claimReplyBound: Duration
  private var tracker: DBusClientTracker?
  private var polkit: PolkitAuthority?
  private var held: [AmbientKind: [DBusMethodInvocation]] = [:]
  private var holdTimers: [AmbientKind: EventLoop.Timer] = [:]

  init(loop: EventLoop, logger: Logger, claimReplyBound: Duration) throws(SystemError) {
    self.loop = loop
    self.logger = logger
    self.claimReplyBound = claimReplyBound
    sensors = try AmbientSensors(loop: loop, logger: logger.child("ambient"))
  }

  /// Enumerates the sensors and follows hotplug.
  func begin() throws(SystemError) {
    sensors.onSensorChange = { [weak self] kind, info in self?.sensorChanged(kind, info) }
    sensors.onReading = { [weak self] reading in self?.received(reading) }
    try sensors.begin()
  }

  /// Starts tracking claimers on `connection` and checking claims with polkit.
  func attach(_ connection: DBusConnection, polkitAction: String?) {
    tracker = DBusClientTracker(connection: connection) { [weak self] name in
      self?.vanished(name)
    }
    polkit = polkitAction.map { PolkitAuthority(connection: connection, action: $0) }
  }

  /// Drops every claim and stops reading (shutdown).
  func stopAll() {
    for kind in AmbientKind.allCases {
      sensors.stop(kind)
      answerHeld(kind)
      holdTimers.removeValue(forKey: kind)?.cancel()
    }
    tracker = nil
    polkit = nil
  }

  // MARK: Claims

  /// `ClaimLight`, `ClaimProximity`, `ClaimCompass`.
  func claim(_ invocation: DBusMethodInvocation, _ kind: AmbientKind) {
    let sender = invocation.sender
    guard !sender.isEmpty else {
      invocation.reply()
      return
    }
    guard let polkit else {
      grant(invocation, kind)
      return
    }
    polkit.check(sender) { [weak self] verdict in
      guard let self else { return invocation.reply() }
      switch verdict {
      case .allowed:
        self.grant(invocation, kind)
      case .denied:
        self.logger.info("polkit refused \(sender)'s claim of the \(kind) sensor")
        invocation.fail(.accessDenied, "Sensor claim not allowed")
      case .unavailable(let why):
        // No polkit daemon (a minimal system, the tests): the bus policy is the only gate,
        // as it was before iio-sensor-proxy 3.4.
        self.logger.debug("polkit unavailable (\(why)); allowing \(sender)'s \(kind) claim")
        self.grant(invocation, kind)
      }
    }
  }

  private func grant(_ invocation: DBusMethodInvocation, _ kind: AmbientKind) {
    let sender = invocation.sender
    let first = claims.claim(sender, kind)
    tracker?.track(sender)
    logger.debug("\(sender) claimed the \(kind) sensor")
    if first {
      sensors.start(kind)
      guard sensors.isReading(kind) else {
        invocation.reply()
        return
      }
      held[kind, default: []].append(invocation)
      armHoldTimer(kind)
      return
    }
    if !(held[kind] ?? []).isEmpty {
      held[kind, default: []].append(invocation)
      return
    }
    invocation.reply()
  }

  /// `ReleaseLight`, `ReleaseProximity`, `ReleaseCompass`.
  func release(_ sender: String, _ kind: AmbientKind) {
    guard claims.claimers(kind).contains(sender) else { return }
    if claims.release(sender, kind) { sensors.stop(kind) }
    if !claims.holds(sender) { tracker?.untrack(sender) }
    logger.debug("\(sender) released the \(kind) sensor")
  }

  private func vanished(_ name: String) {
    let kinds = claims.kinds(of: name)
    guard !kinds.isEmpty else { return }
    for kind in kinds where claims.release(name, kind) { sensors.stop(kind) }
    logger.debug("\(name) left the bus; released its \(kinds.map(\.rawValue)) claims")
  }

  private func armHoldTimer(_ kind: AmbientKind) {
    do {
      let timer: EventLoop.Timer
      if let existing = holdTimers[kind] {
        timer = existing
      } else {
        timer = try loop.makeTimer { [weak self] in self?.answerHeld(kind) }
        holdTimers[kind] = timer
      }
      try timer.schedule(after: claimReplyBound)
    } catch {
      logger.error("cannot arm the claim reply timer: \(error); answering at once")
      answerHeld(kind)
    }
  }

  private func answerHeld(_ kind: AmbientKind) {
    holdTimers[kind]?.disarm()
    let waiting = held.removeValue(forKey: kind) ?? []
    for invocation in waiting { invocation.reply() }
  }

  // MARK: Sensors

  private func sensorChanged(_ kind: AmbientKind, _ info: AmbientDescription?) {
    var next = state
    switch kind {
    case .light:
      next.hasLight = info != nil
      next.lightUnit = info?.unit ?? .lux
      next.lightLevel = 0
    case .proximity:
      next.hasProximity = info != nil
      next.proximityNear = false
    case .compass:
      next.hasCompass = info != nil
      next.compassHeading = -1
    }
    state = next
    publish?(kind, next)
    if info == nil { answerHeld(kind) }
  }

  private func received(_ reading: AmbientReading) {
    var next = state
    switch reading {
    case .light(let level, let unit):
      next.lightLevel = level
      next.lightUnit = unit
    case .proximity(let near): next.proximityNear = near
    case .compass(let heading): next.compassHeading = heading
    }
    if next != state {
      state = next
      publish?(reading.kind, next)
    }
    if held[reading.kind] != nil { answerHeld(reading.kind) }
  }
}

/// Asks polkit (`org.freedesktop.PolicyKit1.Authority.CheckAuthorization`) whether a bus
/// client may do `action`, as iio-sensor-proxy 3.4+ does for its claims.
final class PolkitAuthority {
  /// What polkit said.
  enum Verdict: Equatable {
    /// Authorized.
    case allowed
    /// Not authorized.
    case denied
    /// polkit is not on the bus, or does not know the action (iio-sensor-proxy's policy file
    /// is not installed): the reason.
    case unavailable(String)
  }

  let connection: DBusConnection
  /// The action id, e.g. `net.hadess.SensorProxy.claim-sensor`.
  let action: String

  /// The errors that mean no polkit daemon is on the bus (then claims are allowed).
  static let absent: Set<DBusError.Name> = [.serviceUnknown, .nameHasNoOwner]

  init(connection: DBusConnection, action: String) {
    self.connection = connection
    self.action = action
  }

  /// Checks `sender` (a unique name) without interaction; `done` runs on the loop.
  func check(_ sender: String, _ done: @escaping (Verdict) -> Void) {
    let subject = DBusValue.structure([
      .string("system-bus-name"), .stringVariantDictionary(["name": .string(sender)]),
    ])
    let details = DBusValue.dictionary(key: .string, value: .string, [])
    guard let path = try? DBusObjectPath("/org/freedesktop/PolicyKit1/Authority") else {
      return done(.unavailable("bad object path"))
    }
    connection.call(
      destination: "org.freedesktop.PolicyKit1", path: path,
      interface: "org.freedesktop.PolicyKit1.Authority", member: "CheckAuthorization",
      arguments: [subject, .string(action), details, .uint32(0), .string("")],
      timeoutMilliseconds: 5000
    ) { result in
      switch result {
      case .success(let values):
        guard case .structure(let fields)? = values.first, case .boolean(let ok)? = fields.first
        else { return done(.unavailable("unexpected reply \(values)")) }
        done(ok ? .allowed : .denied)
      case .failure(let error)
      where PolkitAuthority.absent.contains(error.name)
        || error.message.containsText("is not registered"):
        done(.unavailable("\(error.name.rawValue): \(error.message)"))
      case .failure(let error):
        // polkit is there but failed: refuse rather than let a broken policy grant access.
        done(.denied)
        _ = error
      }
    }
  }
}
