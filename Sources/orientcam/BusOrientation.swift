import Capture
import DBusKit
import OrientClient
import OrientCore
import OrientLog
import SystemKit

extension OrientState {
  /// The orientation a photo can use from this state, or why there is none (no accelerometer,
  /// or no orientation yet): shared by `--orientation auto` in capture and session.
  func captureReading() -> Result<OrientationReading, CaptureError> {
    let name = service == .orientd ? "orientd" : "iio-sensor-proxy"
    guard hasAccelerometer else {
      return .failure(
        CaptureError(
          .unavailable,
          "\(name) (\(service.busName)) has no accelerometer (see orientd --list-sensors)"))
    }
    guard orientation != .undefined else {
      return .failure(
        CaptureError(
          .unavailable,
          "\(name) has no orientation yet (no reading, or the device has lain flat since the "
            + "sensor started)"))
    }
    return .success(OrientationReading(orientation, source: name))
  }
}

/// `--orientation auto` (capture and session): follows orientd (`org.orientd.Orientation1`, or
/// `net.hadess.SensorProxy` when only iio-sensor-proxy runs) on the system bus, on the
/// caller's event loop. The bus address comes from `DBUS_SYSTEM_BUS_ADDRESS` like every libdbus
/// program.
///
/// The accelerometer is claimed at `start` and stays claimed until `stop()`: a capture stops
/// as soon as it has its last orientation, so the sensor runs only for the capture; a session
/// at its end. Each `PropertiesChanged` with a new orientation re-lays out a session's overlay
/// and turns the next photos. If the service is missing at start, or goes away, the source
/// waits for it on the bus and claims again when it appears (`--orientation-fallback` applies
/// meanwhile, or the command refuses to start without one).
final class BusOrientationSource: OrientationSource {
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
