import Capture
import DBusKit
import OrientClient
import OrientCore
import OrientLog

/// `--orientation auto`: asks orientd on the system bus (`org.orientd.Orientation1`, or
/// `net.hadess.SensorProxy` when only iio-sensor-proxy runs).
///
/// The accelerometer is claimed at the first question and released by `release()`, which the
/// capture calls as soon as it has its last orientation, so the sensor runs only for the
/// capture. While the claim is held, later questions are answered from the changes the
/// service has sent (no round trip). The bus address comes from `DBUS_SYSTEM_BUS_ADDRESS` like
/// every libdbus program.
final class BusOrientationProvider: OrientationProvider {
  private let logger: Logger
  private let bus: DBusConnection.Bus
  private let timeout: Double
  private var client: SynchronousOrientClient?

  /// Creates the provider; nothing is connected until the first question.
  init(logger: Logger, bus: DBusConnection.Bus = .system, timeout: Double = 5) {
    self.logger = logger
    self.bus = bus
    self.timeout = timeout
  }

  deinit { release() }

  func currentOrientation() throws(CaptureError) -> OrientationReading {
    let state: OrientState
    if let client, let current = client.refresh() {
      state = current
    } else {
      // First question, or the service went away since: claim (again).
      release()
      do {
        let client = try SynchronousOrientClient(bus: bus, logger: logger)
        self.client = client
        state = try client.claim(timeout: timeout)
      } catch {
        release()
        throw CaptureError(.unavailable, "orientd not reachable: \(error.message)")
      }
      logger.debug(
        "claimed the accelerometer from \(state.service.busName): \(state.orientation)")
    }
    return try state.captureReading().get()
  }

  func release() {
    guard let client else { return }
    self.client = nil
    client.release()
    client.close()
  }
}

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
