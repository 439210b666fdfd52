import Accelerometer
import DBusKit
import OrientLog
import SystemKit

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
/// fresh reading or `claimReplyBound`), reading only while claimed, and the state the daemon
/// publishes (the polkit check is the daemon's `ClaimGate`, before the call gets here). The daemon owns one; it calls `publish` with the kind whose
/// properties changed, so each change goes to that kind's claimers only.
final class AmbientService {
  /// The current values.
  private(set) var state = AmbientState()
  /// Who holds which claim.
  private(set) var claims = AmbientClaims()
  /// Publishes `state` for `kind`'s properties (to its claimers, or to everyone when a
  /// sensor appeared or went away).
  var publish: ((AmbientKind, AmbientState) -> Void)?
  /// A claim of `kind` by a sender is about to be answered (the daemon sends it the kind's
  /// current values first: ClaimSnapshots.swift).
  var answering: ((AmbientKind, String) -> Void)?

  let sensors: AmbientSensors
  private let loop: EventLoop
  private let logger: Logger
  private let claimReplyBound: Duration
  private var tracker: DBusClientTracker?
  private var held: [AmbientKind: [DBusMethodInvocation]] = [:]
  private var holdTimers: [AmbientKind: EventLoop.Timer] = [:]

  init(loop: EventLoop, logger: Logger, claimReplyBound: Duration) throws(SystemError) {
    self.loop = loop
    self.logger = logger
    self.claimReplyBound = claimReplyBound
    sensors = try AmbientSensors(loop: loop, logger: logger.child("ambient"))
  }

  /// The poll intervals of polled sensors (`light-interval` for light and the compass,
  /// `proximity-interval`), used from the next time a kind starts being read.
  func setIntervals(_ sampling: SamplingConfiguration) {
    sensors.intervals = [
      .light: sampling.lightInterval, .proximity: sampling.proximityInterval,
      .compass: sampling.lightInterval,
    ]
  }

  /// Enumerates the sensors and follows hotplug.
  func begin() throws(SystemError) {
    sensors.onSensorChange = { [weak self] kind, info in self?.sensorChanged(kind, info) }
    sensors.onReading = { [weak self] reading in self?.received(reading) }
    try sensors.begin()
  }

  /// Starts tracking claimers on `connection`.
  func attach(_ connection: DBusConnection) {
    tracker = DBusClientTracker(connection: connection) { [weak self] name in
      self?.vanished(name)
    }
  }

  /// Drops every claim and stops reading (shutdown).
  func stopAll() {
    for kind in AmbientKind.allCases {
      sensors.stop(kind)
      answerHeld(kind)
      holdTimers.removeValue(forKey: kind)?.cancel()
    }
    tracker = nil
  }

  // MARK: Claims

  /// `ClaimLight`, `ClaimProximity`, `ClaimCompass` (already authorized).
  func claim(_ invocation: DBusMethodInvocation, _ kind: AmbientKind) {
    let sender = invocation.sender
    guard !sender.isEmpty else {
      invocation.reply()
      return
    }
    let first = claims.claim(sender, kind)
    tracker?.track(sender)
    logger.debug("\(sender) claimed the \(kind) sensor")
    if first {
      sensors.start(kind)
      guard sensors.isReading(kind) else {
        answer(invocation, kind)
        return
      }
      held[kind, default: []].append(invocation)
      armHoldTimer(kind)
      return
    }
    // A later claimer is answered with the first one while the sensor is still starting,
    // otherwise at once.
    if !(held[kind] ?? []).isEmpty {
      held[kind, default: []].append(invocation)
      return
    }
    answer(invocation, kind)
  }

  /// Answers a claim, after `answering` (the kind's current values, to that client alone).
  private func answer(_ invocation: DBusMethodInvocation, _ kind: AmbientKind) {
    answering?(kind, invocation.sender)
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
    for invocation in waiting { answer(invocation, kind) }
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
