import DBusKit
import OrientCore
import OrientLog
import SystemKit

/// `OrientClient` for programs without an event loop of their own (`orientd --get`,
/// orientcam): each call runs a private loop until the answer is there.
///
/// Between calls nothing runs; `refresh()` applies the changes that have arrived meanwhile
/// without waiting, so a long-running caller (a capture session) can hold one claim and ask
/// for the current orientation whenever it needs it.
public final class SynchronousOrientClient {
  /// The private loop.
  public let loop: EventLoop
  /// The client on that loop.
  public let client: OrientClient

  /// Connects to `bus`.
  ///
  /// - Throws: `OrientClientError` (`noBus`, `accessDenied`, `failed` if no loop can be made).
  public init(bus: DBusConnection.Bus = .system, logger: Logger) throws(OrientClientError) {
    do {
      loop = try EventLoop()
    } catch {
      throw OrientClientError(.failed, "cannot create an event loop: \(error)")
    }
    client = try OrientClient(bus: bus, loop: loop, logger: logger)
  }

  deinit { close() }

  /// Claims the accelerometer (orientd first, then iio-sensor-proxy) and returns the state.
  ///
  /// - Parameters:
  ///   - waitForService: seconds to wait for a service to appear if none is on the bus yet
  ///     (0: do not wait).
  ///   - timeout: seconds each call may take.
  /// - Throws: `OrientClientError`.
  public func claim(waitForService: Double = 0, timeout: Double = 10) throws(OrientClientError)
    -> OrientState
  {
    let milliseconds = Int32(max(1, min(timeout, 600)) * 1000)
    var services = OrientService.allCases
    if waitForService > 0 {
      var found: OrientService?
      let wait = try client.waitForService { found = $0 }
      defer { wait.cancel() }
      try run(seconds: waitForService) { found != nil }
      guard let found else {
        throw OrientClientError(
          .serviceMissing,
          "neither \(OrientService.orientd) nor \(OrientService.sensorProxy) appeared on the bus "
            + "at \(client.connection.address) within \(Int(waitForService)) s")
      }
      services = Array(services.drop { $0 != found })
    }
    var outcome: Result<OrientState, OrientClientError>?
    client.claim(services: services, timeoutMilliseconds: milliseconds) { outcome = $0 }
    try run(seconds: timeout * 2 + 1) { outcome != nil }
    guard let outcome else {
      throw OrientClientError(.failed, "no answer to the claim within \(Int(timeout)) s")
    }
    return try outcome.get()
  }

  /// The state with every change that has arrived applied (does not wait); `nil` if no claim
  /// is held (never claimed, released, or the service went away).
  public func refresh() -> OrientState? {
    // A few passes: a message may need a dispatch, then its handler posts more work.
    for _ in 0..<4 { try? loop.runOnce(timeoutMilliseconds: 0) }
    return client.isClaimed ? client.state : nil
  }

  /// orientd's filtered gravity vector.
  ///
  /// - Throws: `OrientClientError` (the service's error, e.g. no reading yet).
  public func gravity(timeout: Double = 5) throws(OrientClientError) -> GravityReading {
    var outcome: Result<GravityReading, OrientClientError>?
    client.gravity(timeoutMilliseconds: Int32(max(1, min(timeout, 600)) * 1000)) { outcome = $0 }
    try run(seconds: timeout + 1) { outcome != nil }
    guard let outcome else { throw OrientClientError(.failed, "no answer to GetReading") }
    return try outcome.get()
  }

  /// Releases the claim and waits (briefly) for the answer, so the service stops sampling
  /// before this process goes on or exits. Errors are ignored: a vanished service has
  /// released everything anyway.
  public func release(timeout: Double = 2) {
    var done = false
    client.release(timeoutMilliseconds: Int32(max(1, min(timeout, 60)) * 1000)) { _ in
      done = true
    }
    try? run(seconds: timeout + 0.5) { done }
  }

  /// Closes the connection; the bus releases any claim still held.
  public func close() {
    client.connection.close()
  }

  private func run(seconds: Double, until condition: () -> Bool) throws(OrientClientError) {
    do {
      try loop.run(until: condition, timeout: .seconds(seconds))
    } catch {
      throw OrientClientError(.failed, "event loop failed: \(error)")
    }
  }
}
