import CEvdev
import Glibc
import OrientLog
import SystemKit

/// Splits a grabbed device's event stream into shutter-key presses and everything else, which
/// is passed on whole reports at a time (events up to `SYN_REPORT`).
///
/// Shutter-key events (press, release, auto-repeat) are kept back; so is the `MSC_SCAN` that
/// announces them when nothing else is in the same report. A report left with nothing but its
/// `SYN_REPORT` is not passed on at all. Pure, so it is tested without a device.
public struct ReportFilter: Sendable {
  /// The keys taken for the shutter.
  public let shutterCodes: Set<UInt32>
  private var pending: [InputEvent] = []

  /// What one batch of events became.
  public struct Output: Equatable, Sendable {
    /// Shutter keys going down (value 1), in order.
    public var presses: [InputEvent] = []
    /// Events to pass on, whole reports ending in `SYN_REPORT`.
    public var passOn: [InputEvent] = []
  }

  /// Creates a filter for these key codes.
  public init(shutterCodes: Set<UInt32>) {
    self.shutterCodes = shutterCodes
  }

  /// Takes events as read; returns presses and complete reports to pass on. A report not yet
  /// finished by `SYN_REPORT` waits for the next call.
  public mutating func feed(_ events: [InputEvent]) -> Output {
    var output = Output()
    for event in events {
      if event.type == UInt16(EV_SYN) && event.code == UInt16(SYN_DROPPED) {
        // The kernel lost events: the report in progress is incomplete, so it is neither
        // passed on nor searched for presses. libevdev discards what the kernel still sends
        // of it and then delivers the state it re-read as a report of its own.
        pending.removeAll()
        continue
      }
      guard event.isReport else {
        pending.append(event)
        continue
      }
      let codes = shutterCodes
      let isShutter = { (e: InputEvent) in
        e.type == UInt16(EV_KEY) && codes.contains(UInt32(e.code))
      }
      let shutter = pending.filter(isShutter)
      output.presses += shutter.filter { $0.value == 1 }
      var rest = pending.filter { !isShutter($0) }
      if !shutter.isEmpty && rest.allSatisfy({ $0.type == UInt16(EV_MSC) }) {
        rest = []  // only the shutter key's scan code
      }
      if !rest.isEmpty { output.passOn += rest + [event] }
      pending.removeAll()
    }
    return output
  }
}

/// The volume keys (or any keys) as a camera shutter: finds the input devices that have them,
/// grabs those devices so the system volume does not change, passes every other event of
/// those devices on through a uinput copy (so a power button on the same device keeps
/// working), and reports presses. `release()` (also `deinit`) gives the devices back.
public final class ShutterKeys {
  /// One press of a shutter key.
  public struct Press: Sendable {
    /// The key's name, e.g. `volumeup`.
    public var key: String
    /// The device it came from.
    public var device: String
    /// When it was pressed, `CLOCK_MONOTONIC` nanoseconds (the kernel's timestamp where the
    /// device reports on that clock, else the time it was read).
    public var monotonicNanoseconds: Int64
  }

  private final class Grabbed {
    let device: InputDevice
    var clone: UInputClone?
    var filter: ReportFilter
    var watch: EventLoop.Watch?

    init(device: InputDevice, clone: UInputClone?, filter: ReportFilter) {
      self.device = device
      self.clone = clone
      self.filter = filter
    }
  }

  /// The keys taken.
  public let codes: Set<UInt32>
  private var grabbed: [Grabbed] = []
  private let logger: Logger

  /// Finds and grabs the devices.
  ///
  /// - Parameters:
  ///   - codes: the shutter keys (`KeyCode.named`).
  ///   - paths: the devices to use; `nil` scans `/dev/input/event*` for every device that has
  ///     any of the keys.
  /// - Throws: `EvdevError` `.notFound` when no device has the keys, `.unavailable` when a
  ///   device cannot be grabbed or its other events could not be passed on (no uinput).
  ///   Nothing stays grabbed after a failure.
  ///   - uinputPath: the uinput node for the copies (`/dev/uinput`).
  public init(
    codes: Set<UInt32>, paths: [String]?, uinputPath: String = UInputClone.defaultPath,
    logger: Logger
  ) throws(EvdevError) {
    self.codes = codes
    self.logger = logger
    let candidates = paths ?? InputDevice.eventNodes()
    var found: [InputDevice] = []
    var problems: [String] = []
    for path in candidates {
      do throws(EvdevError) {
        let device = try InputDevice(path: path)
        if codes.contains(where: device.hasKey) {
          found.append(device)
        } else if paths != nil {
          throw EvdevError(
            .notFound, path: path,
            "\(device.name) has none of the keys \(ShutterKeys.describe(codes))")
        }
      } catch {
        if paths != nil { throw error }
        problems.append(error.description)
      }
    }
    guard !found.isEmpty else {
      let scanned =
        candidates.isEmpty
        ? "no input devices under /dev/input"
        : "none of \(candidates.count) input device(s) has them"
          + (problems.isEmpty ? "" : " (\(problems.joined(separator: "; ")))")
      throw EvdevError(
        .notFound, path: "/dev/input",
        "no device with the keys \(ShutterKeys.describe(codes)): \(scanned)")
    }
    for device in found {
      var clone: UInputClone?
      if device.producesMore(than: codes) {
        // The copy exists before the grab, so nothing the device sends in between is lost.
        do { clone = try UInputClone(of: device, uinputPath: uinputPath) } catch {
          release()
          throw EvdevError(
            error.kind, path: error.path,
            "\(error.message); refusing to grab \(device.name) because its other keys would "
              + "stop working (or give --shutter-device for a device with only these keys)")
        }
      }
      do { try device.grab() } catch {
        release()
        throw error
      }
      grabbed.append(
        Grabbed(device: device, clone: clone, filter: ReportFilter(shutterCodes: codes)))
      logger.debug(
        "\(device.path) (\(device.name)): grabbed"
          + (clone.map { ", other events passed on through \($0.devnode ?? "uinput")" } ?? ""))
    }
  }

  deinit { release() }

  /// `volumeup, volumedown`.
  public static func describe(_ codes: Set<UInt32>) -> String {
    codes.sorted().map(KeyCode.name).joined(separator: ", ")
  }

  /// The grabbed devices: path, name, and the uinput copy's node if one was needed.
  public var devices: [(path: String, name: String, passOn: String?)] {
    grabbed.map { ($0.device.path, $0.device.name, $0.clone.map { $0.devnode ?? "uinput" }) }
  }

  /// Watches the devices on `loop`: presses go to `pressed`; a device that fails (unplugged)
  /// is given back, dropped and reported to `failed`.
  ///
  /// - Throws: `SystemError` from the loop registration.
  public func watch(
    on loop: EventLoop, pressed: @escaping (Press) -> Void,
    failed: @escaping (EvdevError) -> Void
  ) throws(SystemError) {
    for entry in grabbed {
      entry.watch = try loop.watch(entry.device.fileDescriptor, for: .readable) {
        [weak self, weak entry] _ in
        guard let self, let entry else { return }
        self.service(entry, pressed: pressed, failed: failed)
      }
    }
  }

  private func service(
    _ entry: Grabbed, pressed: (Press) -> Void, failed: (EvdevError) -> Void
  ) {
    let events: [InputEvent]
    do { events = try entry.device.readEvents() } catch {
      drop(entry)
      failed(error)
      return
    }
    let now = Clock.monotonicNanoseconds()
    let output = entry.filter.feed(events)
    if !output.passOn.isEmpty, let clone = entry.clone {
      do { try clone.write(output.passOn) } catch {
        logger.warning("\(error)")
      }
    }
    for press in output.presses {
      // Trust the kernel's stamp only if it is on our clock and recent.
      let stamp = press.timeNanoseconds
      let time =
        entry.device.monotonicTimestamps && stamp <= now && now - stamp < 5_000_000_000
        ? stamp : now
      pressed(
        Press(
          key: KeyCode.name(UInt32(press.code)), device: entry.device.path,
          monotonicNanoseconds: time))
    }
  }

  private func drop(_ entry: Grabbed) {
    entry.watch?.cancel()
    entry.watch = nil
    entry.device.ungrab()
    entry.clone = nil
    grabbed.removeAll { $0 === entry }
  }

  /// Ungrabs every device and destroys the uinput copies; idempotent.
  public func release() {
    for entry in grabbed {
      entry.watch?.cancel()
      entry.watch = nil
      entry.device.ungrab()
      entry.clone = nil
    }
    grabbed.removeAll()
  }
}
