import CEvdev
import Glibc
import SystemKit

/// Why an input device could not be used.
public struct EvdevError: Error, Equatable, Sendable, CustomStringConvertible {
  /// What kind of failure, for exit statuses.
  public enum Kind: Sendable, Equatable {
    /// No such device, or no device has the keys.
    case notFound
    /// The device exists but cannot be used (permissions, busy, no uinput).
    case unavailable
    /// A read or write failed while running.
    case io
  }

  /// The kind.
  public var kind: Kind
  /// The device (or `/dev/uinput`).
  public var path: String
  /// What happened and what to do.
  public var message: String

  /// Creates an error.
  public init(_ kind: Kind, path: String, _ message: String) {
    self.kind = kind
    self.path = path
    self.message = message
  }

  /// `path: message`.
  public var description: String { "\(path): \(message)" }
}

/// Key codes (`KEY_*` from linux/input-event-codes.h) by their libevdev names.
public enum KeyCode {
  /// The code for `volumeup`, `VolumeUp` or `KEY_VOLUMEUP` (`libevdev_event_code_from_name`).
  public static func named(_ name: String) -> UInt32? {
    var upper = name.uppercased()
    if !upper.hasPrefix("KEY_") && !upper.hasPrefix("BTN_") { upper = "KEY_" + upper }
    let code = libevdev_event_code_from_name(UInt32(EV_KEY), upper)
    return code >= 0 ? UInt32(code) : nil
  }

  /// `volumeup` for `KEY_VOLUMEUP` (`libevdev_event_code_get_name`), or the number.
  public static func name(_ code: UInt32) -> String {
    guard let raw = libevdev_event_code_get_name(UInt32(EV_KEY), code) else { return "\(code)" }
    let full = String(cString: raw)
    return full.hasPrefix("KEY_") ? String(full.dropFirst(4)).lowercased() : full.lowercased()
  }
}

/// One evdev event (`struct input_event`), with the kernel's timestamp in nanoseconds.
public struct InputEvent: Equatable, Sendable {
  /// `EV_*`.
  public var type: UInt16
  /// `KEY_*`, `SYN_*`, `MSC_*`, ...
  public var code: UInt16
  /// 1 pressed, 0 released, 2 auto-repeat (keys); other meanings for other types.
  public var value: Int32
  /// The event's time in nanoseconds, on the clock the device was set to.
  public var timeNanoseconds: Int64

  /// Creates an event.
  public init(type: UInt16, code: UInt16, value: Int32, timeNanoseconds: Int64 = 0) {
    self.type = type
    self.code = code
    self.value = value
    self.timeNanoseconds = timeNanoseconds
  }

  /// `EV_SYN` / `SYN_REPORT`: the end of one hardware report.
  public var isReport: Bool { type == UInt16(EV_SYN) && code == UInt16(SYN_REPORT) }
}

/// The reports (`SYN_REPORT` frames) of an event stream in which something of interest
/// changed. A report can be split across two reads, so the state is kept between calls.
public struct ChangedReports {
  private let isChange: (InputEvent) -> Bool
  private var pending = false

  /// Watches for events for which `isChange` is true.
  public init(where isChange: @escaping (InputEvent) -> Bool) {
    self.isChange = isChange
  }

  /// The `SYN_REPORT` events, in order, that close a report in which a change arrived.
  public mutating func reports(in events: [InputEvent]) -> [InputEvent] {
    var closing: [InputEvent] = []
    for event in events {
      if isChange(event) {
        pending = true
      } else if event.isReport && pending {
        pending = false
        closing.append(event)
      }
    }
    return closing
  }

  /// Forgets a report begun before the device was closed.
  public mutating func reset() { pending = false }
}

/// An absolute axis as the kernel describes it (`struct input_absinfo`).
public struct AbsoluteAxis: Equatable, Sendable {
  /// The last value libevdev knows (read when the device was opened, then updated by events).
  public var value: Int32
  /// The smallest value the device reports.
  public var minimum: Int32
  /// The largest value the device reports.
  public var maximum: Int32
  /// Units per millimetre, or for the main axes of an `INPUT_PROP_ACCELEROMETER` device units
  /// per g (the kernel's input ABS documentation); 0 when the driver does not say.
  public var resolution: Int32

  /// Creates one.
  public init(value: Int32, minimum: Int32, maximum: Int32, resolution: Int32) {
    self.value = value
    self.minimum = minimum
    self.maximum = maximum
    self.resolution = resolution
  }
}

/// An evdev device node opened with libevdev (`libevdev_new_from_fd`), owned: `deinit`
/// releases a grab, frees the libevdev handle and closes the descriptor.
public final class InputDevice {
  /// `/dev/input/eventN`.
  public let path: String
  /// The device name (`libevdev_get_name`), e.g. `gpio-keys`.
  public let name: String
  private let descriptor: FileDescriptor
  private let handle: OpaquePointer
  /// Whether the device's event timestamps are on `CLOCK_MONOTONIC` (`libevdev_set_clock_id`);
  /// otherwise they are wall-clock times and callers use their own reading time.
  public let monotonicTimestamps: Bool
  /// Whether this process holds the grab.
  public private(set) var isGrabbed = false

  /// Opens `path` read-only and non-blocking.
  ///
  /// - Throws: `EvdevError` `.notFound` / `.unavailable` with the reason.
  public init(path: String) throws(EvdevError) {
    self.path = path
    do {
      descriptor = try FileDescriptor(path: path, options: [.readOnly, .nonBlocking])
    } catch {
      let kind: EvdevError.Kind = error.code == .noSuchFileOrDirectory ? .notFound : .unavailable
      let advice =
        error.code == .permissionDenied
        ? " (run as root, or add the user to the \"input\" group)" : ""
      throw EvdevError(kind, path: path, "cannot open: \(error.reason)\(advice)")
    }
    var pointer: OpaquePointer?
    let rc = libevdev_new_from_fd(descriptor.rawValue, &pointer)
    guard rc == 0, let pointer else {
      throw EvdevError(
        .unavailable, path: path,
        "not an evdev input device (libevdev: \(String(cString: strerror(-rc))))")
    }
    handle = pointer
    name = libevdev_get_name(pointer).map { String(cString: $0) } ?? "?"
    monotonicTimestamps = libevdev_set_clock_id(pointer, CLOCK_MONOTONIC) == 0
  }

  deinit {
    ungrab()
    libevdev_free(handle)
  }

  /// The descriptor to watch for readability.
  public var fileDescriptor: Int32 { descriptor.rawValue }

  /// Whether the device can send key `code` (`libevdev_has_event_code(EV_KEY, code)`).
  public func hasKey(_ code: UInt32) -> Bool {
    libevdev_has_event_code(handle, UInt32(EV_KEY), code) == 1
  }

  /// Whether the device has switch `code` (`libevdev_has_event_code(EV_SW, code)`), e.g.
  /// `SW_TABLET_MODE`.
  public func hasSwitch(_ code: UInt32) -> Bool {
    libevdev_has_event_code(handle, UInt32(EV_SW), code) == 1
  }

  /// The current state of switch `code` as libevdev tracks it (`libevdev_get_event_value`):
  /// read from the kernel when opened and updated by `readEvents`.
  public func switchValue(_ code: UInt32) -> Int32 {
    libevdev_get_event_value(handle, UInt32(EV_SW), code)
  }

  /// Whether the device has the input property `property` (`libevdev_has_property`), e.g.
  /// `INPUT_PROP_ACCELEROMETER`.
  public func hasProperty(_ property: UInt32) -> Bool {
    libevdev_has_property(handle, property) == 1
  }

  /// The absolute axis `code` (`libevdev_get_abs_info`), `nil` when the device has none.
  public func absoluteAxis(_ code: UInt32) -> AbsoluteAxis? {
    guard libevdev_has_event_code(handle, UInt32(EV_ABS), code) == 1,
      let info = libevdev_get_abs_info(handle, code)
    else { return nil }
    return AbsoluteAxis(
      value: info.pointee.value, minimum: info.pointee.minimum, maximum: info.pointee.maximum,
      resolution: info.pointee.resolution)
  }

  /// Whether the device produces anything besides the keys in `codes` (other keys, switches,
  /// relative or absolute axes, LEDs...): what a grab would take away from the rest of the
  /// system, so it has to be passed on through uinput.
  public func producesMore(than codes: Set<UInt32>) -> Bool {
    // Types that only accompany keys: SYN (0), KEY (1), MSC (4, scan codes), REP (0x14).
    for type in 0...UInt32(EV_MAX) where ![0, 1, 4, 0x14].contains(type) {
      if libevdev_has_event_type(handle, type) == 1 { return true }
    }
    for code in 0...UInt32(KEY_MAX) where !codes.contains(code) {
      if libevdev_has_event_code(handle, UInt32(EV_KEY), code) == 1 { return true }
    }
    return false
  }

  /// Takes the device for this process alone (`EVIOCGRAB` via `libevdev_grab`): the rest of
  /// the system (the compositor's volume handling) no longer sees its events.
  ///
  /// - Throws: `EvdevError.unavailable` when another program holds the grab.
  public func grab() throws(EvdevError) {
    let rc = libevdev_grab(handle, LIBEVDEV_GRAB)
    guard rc == 0 else {
      let why =
        rc == -EBUSY
        ? "another program has grabbed it (is another orientcam session running?)"
        : String(cString: strerror(-rc))
      throw EvdevError(.unavailable, path: path, "cannot grab: \(why)")
    }
    isGrabbed = true
  }

  /// Gives the grab back (`libevdev_grab(LIBEVDEV_UNGRAB)`); idempotent. Closing the
  /// descriptor (also when the process dies) releases it too.
  public func ungrab() {
    guard isGrabbed else { return }
    _ = libevdev_grab(handle, LIBEVDEV_UNGRAB)
    isGrabbed = false
  }

  /// Reads every event that is ready without blocking (`libevdev_next_event`), including the
  /// state libevdev re-synchronises after the kernel dropped events (`SYN_DROPPED`).
  ///
  /// - Throws: `EvdevError.io` when the device went away (unplugged) or reading failed.
  public func readEvents() throws(EvdevError) -> [InputEvent] {
    var events: [InputEvent] = []
    var flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue
    var event = input_event()
    while true {
      let rc = libevdev_next_event(handle, flags, &event)
      if rc == -EAGAIN {
        if flags == LIBEVDEV_READ_FLAG_SYNC.rawValue {
          flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue
          continue
        }
        return events
      }
      if rc < 0 {
        throw EvdevError(
          .io, path: path, "reading events failed: \(String(cString: strerror(-rc)))")
      }
      if rc == LIBEVDEV_READ_STATUS_SYNC.rawValue { flags = LIBEVDEV_READ_FLAG_SYNC.rawValue }
      let seconds = Int64(event.time.tv_sec)
      let micros = Int64(event.time.tv_usec)
      events.append(
        InputEvent(
          type: event.type, code: event.code, value: event.value,
          timeNanoseconds: seconds * 1_000_000_000 + micros * 1000))
    }
  }

  /// The libevdev handle, for creating a uinput clone.
  var libevdevHandle: OpaquePointer { handle }

  /// The event device nodes under `directory`, sorted by number (`event2` before `event10`).
  public static func eventNodes(in directory: String = "/dev/input") -> [String] {
    guard let dir = opendir(directory) else { return [] }
    defer { closedir(dir) }
    var numbers: [Int] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name.hasPrefix("event"), let n = Int(name.dropFirst(5)) { numbers.append(n) }
    }
    return numbers.sorted().map { "\(directory)/event\($0)" }
  }
}

/// A virtual input device with the same capabilities as a grabbed one
/// (`libevdev_uinput_create_from_device`), through which the events the session does not use
/// are passed on to the rest of the system. Destroyed in `deinit`.
public final class UInputClone {
  private let handle: OpaquePointer
  /// The uinput descriptor; libevdev does not close one it was given, so it is closed (by
  /// `FileDescriptor`'s deinit) after `libevdev_uinput_destroy`.
  private let control: FileDescriptor
  /// The new device's node (`/dev/input/eventN`), if the kernel says.
  public let devnode: String?

  /// The uinput node used unless told otherwise.
  public static let defaultPath = "/dev/uinput"

  /// Creates the clone through `uinputPath` (`/dev/uinput`).
  ///
  /// - Throws: `EvdevError.unavailable` when uinput is missing or not permitted.
  public init(of device: InputDevice, uinputPath: String = UInputClone.defaultPath)
    throws(EvdevError)
  {
    func refuse(_ code: Errno) -> EvdevError {
      let advice: String
      switch code {
      case .noSuchFileOrDirectory, .noSuchDevice, .noSuchAddressOrDevice:
        advice = "\(uinputPath) is missing (load it: modprobe uinput)"
      case .permissionDenied, .notPermitted:
        advice = "no permission to open \(uinputPath) (run as root)"
      default: advice = "\(uinputPath): \(code)"
      }
      return EvdevError(
        .unavailable, path: device.path,
        "cannot create a uinput copy to pass on its other keys: \(advice)")
    }
    do { control = try FileDescriptor(path: uinputPath, options: [.readWrite]) } catch {
      throw refuse(error.code)
    }
    var pointer: OpaquePointer?
    let rc = libevdev_uinput_create_from_device(device.libevdevHandle, control.rawValue, &pointer)
    guard rc == 0, let pointer else { throw refuse(Errno(rawValue: -rc)) }
    handle = pointer
    devnode = libevdev_uinput_get_devnode(pointer).map { String(cString: $0) }
  }

  deinit { libevdev_uinput_destroy(handle) }

  /// Emits events (`libevdev_uinput_write_event`); a report should end with `SYN_REPORT`.
  ///
  /// - Throws: `EvdevError.io` if the write fails.
  public func write(_ events: [InputEvent]) throws(EvdevError) {
    for event in events {
      let rc = libevdev_uinput_write_event(
        handle, UInt32(event.type), UInt32(event.code), event.value)
      if rc < 0 {
        throw EvdevError(
          .io, path: devnode ?? "/dev/uinput",
          "passing on an event failed: \(String(cString: strerror(-rc)))")
      }
    }
  }
}
