import DBusKit
import OrientLog

/// What an authority says about a client and an action.
public enum AuthorityVerdict: Equatable, Sendable {
  /// Authorized.
  case allowed
  /// Not authorized; the reason when the authority failed rather than said no.
  case denied(String?)
  /// No authority on the bus: the reason (the call is allowed, as with iio-sensor-proxy 3.0).
  case unavailable(String)
}

/// Who decides whether a bus client may claim: polkit (`PolkitAuthority`) in the daemon, a
/// scripted one in unit tests. Answers asynchronously, not necessarily in order.
public protocol Authority: AnyObject {
  /// Checks `sender` (a unique name) for `action`; `done` runs on the loop.
  func check(_ sender: String, action: String, _ done: @escaping (AuthorityVerdict) -> Void)
}

/// A call waiting to be answered: a claim or release (`DBusMethodInvocation` on the bus).
public protocol ClaimCall: AnyObject {
  /// The caller's unique name (empty on a peer-to-peer connection).
  var sender: String { get }
  /// The method called.
  var member: String { get }
  /// Answers with no values.
  func answer()
  /// Answers with an error.
  func fail(_ name: DBusError.Name, _ text: String)
}

extension DBusMethodInvocation: ClaimCall {
  /// Answers with no values.
  public func answer() { reply([]) }
}

/// Asks polkit (`org.freedesktop.PolicyKit1.Authority.CheckAuthorization`) whether a bus
/// client may do `action`, without interaction, as iio-sensor-proxy 3.4+ does for its claims.
final class PolkitAuthority: Authority {
  let connection: DBusConnection

  /// The errors that mean no polkit daemon is on the bus (then claims are allowed).
  static let absent: Set<DBusError.Name> = [.serviceUnknown, .nameHasNoOwner]

  init(connection: DBusConnection) {
    self.connection = connection
  }

  /// Checks `sender` (a unique name) for `action`; `done` runs on the loop.
  func check(_ sender: String, action: String, _ done: @escaping (AuthorityVerdict) -> Void) {
    let subject = DBusValue.structure([
      .string("system-bus-name"), .stringVariantDictionary(["name": .string(sender)]),
    ])
    let details = DBusValue.dictionary(key: .string, value: .string, [])
    guard let path = try? DBusObjectPath("/org/freedesktop/PolicyKit1/Authority") else {
      return done(.denied("bad object path"))
    }
    // Flags 0: no interaction. A claim is a background request; nobody is there to type a
    // password, and iio-sensor-proxy does not ask either. 25 s, libdbus's default (as
    // iio-sensor-proxy waits): the bus may be starting polkitd for this very call.
    connection.call(
      destination: "org.freedesktop.PolicyKit1", path: path,
      interface: "org.freedesktop.PolicyKit1.Authority", member: "CheckAuthorization",
      arguments: [subject, .string(action), details, .uint32(0), .string("")],
      timeoutMilliseconds: 25000
    ) { result in
      switch result {
      case .success(let values):
        guard case .structure(let fields)? = values.first, case .boolean(let ok)? = fields.first
        else { return done(.denied("unexpected reply from polkit: \(values)")) }
        done(ok ? .allowed : .denied(nil))
      case .failure(let error) where PolkitAuthority.absent.contains(error.name):
        done(.unavailable("\(error.name.rawValue): \(error.message)"))
      case .failure(let error):
        // polkit is there but failed (the action not registered, a broken rule, a timeout):
        // refuse, as iio-sensor-proxy does, rather than let a broken setup grant access.
        done(.denied("\(error.name.rawValue): \(error.message)"))
      }
    }
  }
}

/// Puts the `Claim*` calls of every target with a polkit action behind the authority, as
/// iio-sensor-proxy 3.4+ does: each of iio-sensor-proxy's (accelerometer, light, proximity,
/// compass) is checked against `net.hadess.SensorProxy.claim-sensor`, and a refusal is
/// `AccessDenied` with its text ("Not Authorized: Sensor claim not allowed"). A `Release*`
/// needs no check (iio-sensor-proxy 3.9 checks it too): giving up a claim grants nothing, and a
/// refused release kept the sensor running for a client that asked to stop (gsd-power releases
/// the light sensor when its session becomes inactive, where polkit's `allow_active` says no).
/// It still waits behind its client's earlier calls, so that order holds. With no
/// polkit daemon on the bus the calls go through (iio-sensor-proxy then refuses them all;
/// orientd keeps 3.0's behaviour, where the bus policy is the only gate, so that a system
/// without polkit keeps its sensors).
///
/// polkit answers asynchronously and not necessarily in order, so each client's calls proceed
/// in the order they arrived (its Claim followed by its Release is never applied backwards),
/// while different clients do not wait for each other: one whose check polkit is slow to answer
/// holds up only its own later calls.
final class ClaimGate {
  private final class Pending {
    let invocation: any ClaimCall
    let action: String
    let proceed: () -> Void
    var verdict: AuthorityVerdict?
    /// Whether the authority was asked (a claim) or the call only keeps its place (a release).
    let checked: Bool

    init(
      _ invocation: any ClaimCall, _ action: String, checked: Bool = true,
      _ proceed: @escaping () -> Void
    ) {
      self.invocation = invocation
      self.action = action
      self.checked = checked
      self.proceed = proceed
    }
  }

  private let authority: any Authority
  private let logger: Logger
  /// The calls waiting for polkit or for an earlier call of the same client, by sender.
  private var queues: [String: [Pending]] = [:]

  init(authority: any Authority, logger: Logger) {
    self.authority = authority
    self.logger = logger
  }

  /// Runs `proceed` once the authority allows `invocation`'s sender `action` (or is absent);
  /// otherwise fails `invocation` with `AccessDenied`.
  func authorize(
    _ invocation: any ClaimCall, action: String, then proceed: @escaping () -> Void
  ) {
    let pending = Pending(invocation, action, proceed)
    let sender = invocation.sender
    queues[sender, default: []].append(pending)
    guard !sender.isEmpty else {
      // A peer-to-peer connection has no bus name for polkit to look up.
      pending.verdict = .allowed
      return drain(sender)
    }
    authority.check(sender, action: action) { [weak self, pending] verdict in
      pending.verdict = verdict
      self?.drain(sender)
    }
  }

  /// Runs `proceed` for a call that needs no authorization (a release) once `invocation`'s
  /// sender has no earlier call still waiting for the authority.
  func inOrder(_ invocation: any ClaimCall, action: String, then proceed: @escaping () -> Void) {
    let pending = Pending(invocation, action, checked: false, proceed)
    pending.verdict = .allowed
    queues[invocation.sender, default: []].append(pending)
    drain(invocation.sender)
  }

  /// Answers every call still waiting for polkit with `Failed` (shutdown).
  func cancelAll() {
    let waiting = queues.values.joined()
    queues = [:]
    for pending in waiting { pending.invocation.fail(.failed, "orientd is shutting down") }
  }

  /// Answers `sender`'s calls from the first on, up to one polkit has not answered yet.
  private func drain(_ sender: String) {
    while let first = queues[sender]?.first, let verdict = first.verdict {
      queues[sender]?.removeFirst()
      if queues[sender]?.isEmpty == true { queues[sender] = nil }
      // Built only when a message is logged (debug is off by default; this runs per claim).
      var call: String { "\(first.invocation.member) from \(first.invocation.sender)" }
      switch verdict {
      case .allowed:
        if first.checked { logger.debug("polkit allowed \(call)") }
        first.proceed()
      case .denied(let reason):
        if let reason {
          logger.warning("refusing \(call): polkit failed: \(reason)")
        } else {
          logger.info("polkit refused \(call) (\(first.action))")
        }
        first.invocation.fail(
          .accessDenied, "Not Authorized: \(reason ?? "Sensor claim not allowed")")
      case .unavailable(let why):
        logger.debug("polkit is not running (\(why)); allowing \(call)")
        first.proceed()
      }
    }
  }
}
