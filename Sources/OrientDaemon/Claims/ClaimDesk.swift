import DBusKit
import OrientLog
import OrientWire
import Sensors
import SystemKit

/// Who watches the claimers: each tracked client that leaves the bus is reported once
/// (`DBusClientTracker` on the bus: one match rule per client, one for all beyond a limit).
public protocol ClientTracking: AnyObject {
  /// Starts watching `name`.
  func track(_ name: String)
  /// Stops watching `name`.
  func untrack(_ name: String)
}

extension DBusClientTracker: ClientTracking {}

/// The one claim path, for every target: authorization (polkit for the targets that have an
/// action, each client's calls in arrival order), the claim table, the client tracker, and the
/// first-reading hold.
///
/// - A claim whose kind is starting is answered after that kind's first reading (the
///   orientation's first detector update, light's first level...), at most `bound` later;
///   otherwise at once. Either way its client first gets a snapshot of what it claimed
///   (`answer`, ClaimSnapshots in BusPublisher.swift say why).
/// - A client that leaves the bus loses its claims; releasing without a claim succeeds.
/// - The desk decides nothing about sensors: `onClaimsChanged` tells the daemon, which reads
///   the kinds the claims want, and tells the desk when a kind starts (`kindStarted`), gives
///   its first reading (`firstReading`) or stops (`kindStopped`).
final class ClaimDesk {
  /// Who holds claims.
  private(set) var claims = ClaimSet()
  /// Called after every claim, release or vanished client.
  var onClaimsChanged: (() -> Void)?
  /// Sends `call`'s sender the snapshot of `target`, then replies.
  var answer: (any ClaimCall, ClaimTarget) -> Void = { call, _ in call.answer() }
  /// Watches the claimers (set once on the bus).
  var tracker: (any ClientTracking)?
  /// Authorizes the targets with a polkit action (set once on the bus).
  var gate: ClaimGate?

  private let scheduler: any Scheduler
  private let bound: Duration
  private let logger: Logger
  private var closed = false
  /// Kinds that started being read and have not given their first reading yet.
  private var awaiting: Set<SensorKind> = []
  private var held: [SensorKind: [(call: any ClaimCall, target: ClaimTarget)]] = [:]
  private var holdTimers: [SensorKind: any LoopTimer] = [:]

  /// A desk whose holds last at most `bound` on `scheduler`'s clock.
  init(scheduler: any Scheduler, bound: Duration, logger: Logger) {
    self.scheduler = scheduler
    self.bound = bound
    self.logger = logger
  }

  // MARK: Calls

  /// `Claim*` of `target`.
  func claim(_ call: any ClaimCall, _ target: ClaimTarget) {
    authorize(call, target) { [weak self] in self?.grant(call, target) }
  }

  /// `Release*` of `target`.
  /// Needs no authorization (giving up a claim grants nothing), but waits behind the client's
  /// earlier calls that are still with the authority.
  func release(_ call: any ClaimCall, _ target: ClaimTarget) {
    let proceed = { [weak self] in
      self?.drop(call.sender, target)
      call.answer()
    }
    guard !closed else { return call.fail(.failed, "orientd is shutting down") }
    guard let action = target.polkitAction, let gate else { return proceed() }
    gate.inOrder(call, action: action, then: proceed)
  }

  /// A claimer left the bus: it loses all its claims.
  func vanished(_ name: String) {
    guard claims.holds(name) else { return }
    claims.vanished(name)
    logger.debug("\(name) left the bus; \(claims.clientCount) client(s)")
    onClaimsChanged?()
  }

  /// Runs `proceed` once `call` may act on `target`: at once for orientd's own API, after the
  /// authority for a target with a polkit action; never while shutting down.
  private func authorize(
    _ call: any ClaimCall, _ target: ClaimTarget, then proceed: @escaping () -> Void
  ) {
    // Shutting down: nothing may start a sensor after the sensors stopped (the gate's own
    // queue is failed the same way when it closes).
    guard !closed else { return call.fail(.failed, "orientd is shutting down") }
    guard let action = target.polkitAction, let gate else { return proceed() }
    gate.authorize(call, action: action, then: proceed)
  }

  private func grant(_ call: any ClaimCall, _ target: ClaimTarget) {
    let sender = call.sender
    guard !sender.isEmpty, !closed else { return call.answer() }
    if claims.claim(sender, target) { tracker?.track(sender) }
    logger.debug("\(sender) claimed through \(target.rawValue); \(claims.clientCount) client(s)")
    onClaimsChanged?()
    let kind = target.holdKind
    guard awaiting.contains(kind) else { return answer(call, target) }
    held[kind, default: []].append((call, target))
    if held[kind]?.count == 1 { armHoldTimer(kind) }
  }

  private func drop(_ sender: String, _ target: ClaimTarget) {
    guard claims.holds(sender) else { return }
    if claims.release(sender, target) { tracker?.untrack(sender) }
    logger.debug("\(sender) released through \(target.rawValue); \(claims.clientCount) client(s)")
    onClaimsChanged?()
  }

  // MARK: The first-reading hold

  /// `kind` started being read (its first claim, or a new sensor while claimed): claims of
  /// it are held until its first reading.
  func kindStarted(_ kind: SensorKind) { awaiting.insert(kind) }

  /// `kind` gave its first reading since it started: the claims held for it are answered.
  func firstReading(_ kind: SensorKind) {
    guard awaiting.remove(kind) != nil else { return }
    answerHeld(kind)
  }

  /// Whether claims of `kind` are held now.
  func isAwaiting(_ kind: SensorKind) -> Bool { awaiting.contains(kind) }

  /// `kind` stopped being read or lost its sensor: held claims are answered with what there is.
  func kindStopped(_ kind: SensorKind) {
    awaiting.remove(kind)
    answerHeld(kind)
  }

  /// Shutdown: every held claim is answered, every call waiting for the authority failed,
  /// and nothing is granted any more.
  func close() {
    closed = true
    gate?.cancelAll()
    gate = nil
    for kind in Array(held.keys) { answerHeld(kind) }
    for timer in holdTimers.values { timer.cancel() }
    holdTimers = [:]
    awaiting = []
    tracker = nil
  }

  private func armHoldTimer(_ kind: SensorKind) {
    do {
      let timer = try holdTimers[kind] ?? scheduler.timer { [weak self] in self?.holdExpired(kind) }
      holdTimers[kind] = timer
      try timer.schedule(after: bound, interval: nil)
    } catch {
      // Without the bound a claim could wait forever for a sensor that never answers:
      // answer at once with the state there is.
      logger.error(
        "cannot arm the \(bound.seconds) s claim reply timer: \(error); answering "
          + "\(held[kind]?.count ?? 0) claim(s) at once")
      answerHeld(kind)
    }
  }

  private func holdExpired(_ kind: SensorKind) {
    guard let waiting = held[kind], !waiting.isEmpty else { return }
    logger.info(
      "no usable reading within \(bound.seconds) s; answering \(waiting.count) claim(s) with the "
        + "last known state")
    awaiting.remove(kind)
    answerHeld(kind)
  }

  private func answerHeld(_ kind: SensorKind) {
    holdTimers[kind]?.disarm()
    let waiting = held.removeValue(forKey: kind) ?? []
    for (call, target) in waiting { answer(call, target) }
  }
}
