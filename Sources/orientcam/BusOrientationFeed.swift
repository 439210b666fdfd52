import Capture
import OrientClient
import OrientCore
import OrientLog
import Session
import SystemKit

/// `orientcam session --orientation auto`: follows orientd (or iio-sensor-proxy) on the system
/// bus, on the session's own event loop.
///
/// The accelerometer is claimed when the session starts and stays claimed until it ends;
/// each `PropertiesChanged` with a new orientation re-lays out the overlay and turns the next
/// photos. If the service is missing at start, or goes away, the feed waits for it on the bus
/// and claims again when it appears (the session uses `--orientation-fallback` meanwhile, or
/// refuses to start without one).
final class BusOrientationFeed: OrientationFeed {
  let label = "orientd"
  private(set) var current: OrientationReading?
  private(set) var hasEnded = false
  private(set) var problem: CaptureError?
  private let logger: Logger
  private var client: OrientClient?
  private var serviceWait: ServiceWait?
  private var changed: ((OrientationReading) -> Void)?

  init(logger: Logger) {
    self.logger = logger
  }

  func start(on loop: EventLoop, changed: @escaping (OrientationReading) -> Void)
    throws(CaptureError)
  {
    self.changed = changed
    let client: OrientClient
    do { client = try OrientClient(bus: .system, loop: loop, logger: logger) } catch {
      // No system bus: nothing to wait for; --orientation-fallback applies as for capture.
      problem = CaptureError(.unavailable, "orientd not reachable: \(error.message)")
      hasEnded = true
      return
    }
    self.client = client
    client.onChange = { [weak self] state, _ in self?.update(state) }
    client.onServiceLost = { [weak self] service in
      guard let self else { return }
      self.logger.warning("\(service.busName) left the bus; keeping the last orientation")
      self.waitAndClaim()
    }
    claim()
  }

  private func claim() {
    client?.claim { [weak self] result in
      guard let self else { return }
      switch result {
      case .success(let state):
        self.update(state)
      case .failure(let error):
        self.problem = CaptureError(.unavailable, "orientd not reachable: \(error.message)")
        self.hasEnded = true
        if error.kind == .serviceMissing { self.waitAndClaim() }
      }
    }
  }

  private func waitAndClaim() {
    guard serviceWait == nil, let client else { return }
    do {
      serviceWait = try client.waitForService { [weak self] service in
        guard let self else { return }
        self.serviceWait = nil
        self.logger.notice("\(service.busName) is on the bus; claiming the accelerometer")
        self.claim()
      }
    } catch {
      logger.warning("cannot wait for orientd: \(error.message)")
    }
  }

  private func update(_ state: OrientState) {
    let reading: OrientationReading
    switch state.captureReading() {
    case .failure(let error):
      problem = error
      // Without an accelerometer nothing will come; an undefined orientation may still turn.
      if !state.hasAccelerometer { hasEnded = true }
      return
    case .success(let value):
      reading = value
    }
    let isChange = current?.orientation != reading.orientation
    current = reading
    problem = nil
    if isChange { changed?(reading) }
  }

  func stop() {
    serviceWait?.cancel()
    serviceWait = nil
    guard let client else { return }
    self.client = nil
    // The release call is written out before the connection closes; the service also drops
    // the claim of a client that leaves the bus.
    client.release()
    client.connection.flush()
    client.connection.close()
  }
}
