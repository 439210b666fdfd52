import DeviceDiscovery
import OrientLog
import SystemKit

/// What a `DeviceWatcher` tells a subscriber.
public enum DeviceBatch {
  /// Devices that came, changed or went (`UdevDevice.action`), in the order udev sent them.
  case events([UdevDevice])
  /// Every device present, from enumerating: at start, and again after uevents were lost
  /// (`lost`), when whatever the subscriber knows and is not here is gone.
  case present([UdevDevice], lost: Bool)
}

/// One udev context and one udev monitor for every subsystem the daemon reads (iio, input,
/// hwmon, platform), on the loop; every libudev object of the daemon comes from this context.
///
/// Subscribers name the subsystems they want and get the devices of those only: first every
/// device present (`start()`), then each batch of uevents (at most 256 per wakeup, so that a
/// storm cannot starve the loop). A monitor whose receive buffer overflowed (`ENOBUFS`: uevents
/// were lost) makes it enumerate again and hand every subscriber what is present, so that what
/// was lost is reconciled for every kind alike.
public final class DeviceWatcher {
  /// The one udev context.
  public let context: UdevContext
  /// The subsystems monitored.
  public let subsystems: [String]

  private let loop: EventLoop
  private let logger: Logger
  private var monitor: UdevMonitor?
  private var monitorWatch: EventLoop.Watch?
  private var subscribers: [(subsystems: Set<String>, handler: (DeviceBatch) -> Void)] = []
  private var problems = LogOnce()

  /// A watcher of `subsystems` (duplicates ignored); `start()` begins.
  ///
  /// - Throws: `SystemError` if udev cannot be used.
  public init(subsystems: [String], loop: EventLoop, logger: Logger) throws(SystemError) {
    var seen = Set<String>()
    self.subsystems = subsystems.filter { seen.insert($0).inserted }
    self.loop = loop
    self.logger = logger
    context = try UdevContext()
  }

  deinit { monitorWatch?.cancel() }

  /// Whether the monitor runs (`start(monitor: true)`).
  public var isMonitoring: Bool { monitor != nil }

  /// Hands `handler` the devices of `subsystems`: what is present on `start()` and after lost
  /// uevents, and every batch of uevents.
  public func subscribe(
    _ subsystems: Set<String>, _ handler: @escaping (DeviceBatch) -> Void
  ) {
    subscribers.append((subsystems, handler))
  }

  /// Starts the monitor (unless `monitor` is false, for one-shot listings), then enumerates
  /// and hands each subscriber what is present. The monitor comes first, so that a device
  /// appearing in between is not missed (it may be seen twice, which is harmless).
  ///
  /// - Throws: `SystemError` if udev cannot be enumerated or monitored.
  public func start(monitor wantMonitor: Bool = true) throws(SystemError) {
    if wantMonitor, monitor == nil {
      let monitor = try UdevMonitor(context: context, subsystems: subsystems)
      self.monitor = monitor
      monitorWatch = try loop.watch(monitor.fileDescriptor, for: .readable) { [weak self] _ in
        self?.drain()
      }
    }
    try deliverPresent(lost: false)
  }

  /// The device at `syspath` now (fresh from sysfs), if it exists.
  public func device(syspath: String) -> UdevDevice? { context.device(syspath: syspath) }

  /// Enumerates again and hands every subscriber what is present, as after lost uevents.
  public func resynchronize() {
    do {
      try deliverPresent(lost: true)
    } catch {
      logger.error("cannot enumerate the devices again: \(error)")
    }
  }

  private func deliverPresent(lost: Bool) throws(SystemError) {
    var present: [String: [UdevDevice]] = [:]
    for subsystem in subsystems { present[subsystem] = try context.devices(subsystem: subsystem) }
    for subscriber in subscribers {
      let devices = subsystems.filter { subscriber.subsystems.contains($0) }
        .flatMap { present[$0] ?? [] }
      subscriber.handler(.present(devices, lost: lost))
    }
  }

  private func drain() {
    guard let monitor else { return }
    var batch: [UdevDevice] = []
    defer { deliver(batch) }
    for _ in 0..<256 {
      switch monitor.next() {
      case .empty: return
      case .overflow:
        problems.report(
          "overflow", logger: logger,
          "the udev monitor's receive buffer overflowed (uevents lost); enumerating the "
            + "devices again (logged once)")
        deliver(batch)
        batch = []
        resynchronize()
        return
      case .device(let device):
        logger.debug("uevent \(device.action ?? .change) \(device.syspath)")
        batch.append(device)
      }
    }
  }

  private func deliver(_ batch: [UdevDevice]) {
    guard !batch.isEmpty else { return }
    for subscriber in subscribers {
      let mine = batch.filter { $0.subsystem.map(subscriber.subsystems.contains) ?? false }
      if !mine.isEmpty { subscriber.handler(.events(mine)) }
    }
  }
}
