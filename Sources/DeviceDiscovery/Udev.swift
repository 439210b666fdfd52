import CUdev
import Glibc
import SystemKit

/// A libudev context (`struct udev`), the root of every other libudev object.
///
/// libudev objects are not thread-safe: create the context, its devices and its monitor on the
/// thread that runs the `EventLoop`, and use them only there (systemd 252 asserts on this).
/// The context is reference counted by libudev itself; this object owns one reference and drops
/// it in `deinit` (`udev_unref`). Devices and monitors keep their own reference to it.
public final class UdevContext {
  let pointer: OpaquePointer

  /// Creates a context (`udev_new`).
  ///
  /// - Throws: `SystemError` (operation `udev_new`) when libudev cannot allocate one.
  public init() throws(SystemError) {
    guard let udev = udev_new() else {
      throw SystemError(errno: errno == 0 ? ENOMEM : errno, operation: "udev_new")
    }
    pointer = udev
  }

  deinit { udev_unref(pointer) }

  /// The devices of one subsystem, such as `iio`, sorted by sysfs path
  /// (`udev_enumerate_add_match_subsystem`, `udev_enumerate_scan_devices`).
  ///
  /// Devices that disappear between the scan and the lookup are skipped.
  ///
  /// - Throws: `SystemError` when the enumeration itself fails (for example no `/sys`).
  public func devices(subsystem: String) throws(SystemError) -> [UdevDevice] {
    guard let enumerate = udev_enumerate_new(pointer) else {
      throw SystemError(errno: errno == 0 ? ENOMEM : errno, operation: "udev_enumerate_new")
    }
    defer { udev_enumerate_unref(enumerate) }
    var rc = udev_enumerate_add_match_subsystem(enumerate, subsystem)
    if rc < 0 {
      throw SystemError(errno: -rc, operation: "udev_enumerate_add_match_subsystem \(subsystem)")
    }
    rc = udev_enumerate_scan_devices(enumerate)
    if rc < 0 {
      throw SystemError(errno: -rc, operation: "udev_enumerate_scan_devices \(subsystem)")
    }
    var paths: [String] = []
    var entry = udev_enumerate_get_list_entry(enumerate)
    while let current = entry {
      if let name = udev_list_entry_get_name(current) { paths.append(String(cString: name)) }
      entry = udev_list_entry_get_next(current)
    }
    return paths.sorted().compactMap { device(syspath: $0) }
  }

  /// The device at a sysfs path (`udev_device_new_from_syspath`), or `nil` if there is none.
  public func device(syspath: String) -> UdevDevice? {
    guard let raw = udev_device_new_from_syspath(pointer, syspath) else { return nil }
    return UdevDevice(owning: raw)
  }
}

/// One device as libudev sees it (`struct udev_device`): its sysfs path, udev properties and
/// sysfs attributes.
///
/// Owns one libudev reference, dropped in `deinit` (`udev_device_unref`). Property and attribute
/// values are read and cached by libudev the first time they are asked for; call
/// `UdevContext.device(syspath:)` again, or use `SystemKit.Sysfs`, for fresh attribute values.
public final class UdevDevice {
  let pointer: OpaquePointer

  /// Takes ownership of one reference.
  init(owning pointer: OpaquePointer) {
    self.pointer = pointer
  }

  deinit { udev_device_unref(pointer) }

  /// The absolute sysfs path, e.g. `/sys/devices/.../iio:device0` (`udev_device_get_syspath`).
  public var syspath: String { string(udev_device_get_syspath(pointer)) ?? "" }

  /// The kernel name, e.g. `iio:device0` (`udev_device_get_sysname`).
  public var sysname: String { string(udev_device_get_sysname(pointer)) ?? "" }

  /// The trailing number of the kernel name, e.g. `0` for `iio:device0`
  /// (`udev_device_get_sysnum`).
  public var sysnum: Int? { string(udev_device_get_sysnum(pointer)).flatMap { Int($0) } }

  /// The device node, e.g. `/dev/iio:device0`, if it has one (`udev_device_get_devnode`).
  public var devnode: String? { string(udev_device_get_devnode(pointer)) }

  /// The subsystem, e.g. `iio` (`udev_device_get_subsystem`).
  public var subsystem: String? { string(udev_device_get_subsystem(pointer)) }

  /// The driver bound to the device, if any (`udev_device_get_driver`).
  public var driver: String? { string(udev_device_get_driver(pointer)) }

  /// For devices received from a monitor: what happened (`udev_device_get_action`).
  public var action: UdevAction? { string(udev_device_get_action(pointer)).map(UdevAction.init) }

  /// A udev property such as `ACCEL_MOUNT_MATRIX` (`udev_device_get_property_value`).
  public func property(_ name: String) -> String? {
    string(udev_device_get_property_value(pointer, name))
  }

  /// Every udev property, in libudev's order (`udev_device_get_properties_list_entry`).
  public var properties: [(name: String, value: String)] {
    var result: [(name: String, value: String)] = []
    var entry = udev_device_get_properties_list_entry(pointer)
    while let current = entry {
      if let name = udev_list_entry_get_name(current) {
        let value = udev_list_entry_get_value(current).map { String(cString: $0) } ?? ""
        result.append((String(cString: name), value))
      }
      entry = udev_list_entry_get_next(current)
    }
    return result
  }

  /// A sysfs attribute's value with the trailing newline removed
  /// (`udev_device_get_sysattr_value`; cached by libudev after the first read).
  public func attribute(_ name: String) -> String? {
    string(udev_device_get_sysattr_value(pointer, name))
  }

  /// The names of the device's own sysfs attributes (`udev_device_get_sysattr_list_entry`),
  /// sorted; files in subdirectories such as `scan_elements/` are not listed.
  public var attributeNames: [String] {
    var result: [String] = []
    var entry = udev_device_get_sysattr_list_entry(pointer)
    while let current = entry {
      if let name = udev_list_entry_get_name(current) { result.append(String(cString: name)) }
      entry = udev_list_entry_get_next(current)
    }
    return result.sorted()
  }

  /// The parent device, if any (`udev_device_get_parent`, retained with `udev_device_ref`
  /// because libudev only lends it).
  public var parent: UdevDevice? {
    guard let borrowed = udev_device_get_parent(pointer), let owned = udev_device_ref(borrowed)
    else { return nil }
    return UdevDevice(owning: owned)
  }

  /// The first value of `name` on this device or one of its ancestors, nearest first, with the
  /// path of the device that had it (for `MODALIAS`, which IIO devices inherit from their bus
  /// parent).
  public func nearestProperty(_ name: String) -> (value: String, syspath: String)? {
    var current: UdevDevice? = self
    while let device = current {
      if let value = device.property(name), !value.isEmpty { return (value, device.syspath) }
      current = device.parent
    }
    return nil
  }

  private func string(_ c: UnsafePointer<CChar>?) -> String? {
    c.map { String(cString: $0) }
  }
}

/// What a uevent reports about a device (the `ACTION` of udev(7)).
public enum UdevAction: Equatable, Sendable, CustomStringConvertible {
  /// The device appeared.
  case add
  /// The device went away.
  case remove
  /// Its properties or attributes changed (for example after `udevadm trigger`).
  case change
  /// A driver was bound to it.
  case bind
  /// Its driver was unbound.
  case unbind
  /// An action this program does not know.
  case other(String)

  /// Parses the kernel's action name.
  public init(_ name: String) {
    switch name {
    case "add": self = .add
    case "remove": self = .remove
    case "change": self = .change
    case "bind": self = .bind
    case "unbind": self = .unbind
    default: self = .other(name)
    }
  }

  /// The action name as udev writes it.
  public var description: String {
    switch self {
    case .add: return "add"
    case .remove: return "remove"
    case .change: return "change"
    case .bind: return "bind"
    case .unbind: return "unbind"
    case .other(let name): return name
    }
  }
}

/// A udev netlink monitor (`struct udev_monitor`): device events after udev has processed them,
/// filtered by subsystem, readable from a non-blocking descriptor.
///
/// Register `fileDescriptor` with `EventLoop.watch(_:for:_:)` and call `receive()` until it
/// returns `nil` each time it is readable.
public final class UdevMonitor {
  let pointer: OpaquePointer
  private let context: UdevContext

  /// Creates a monitor on udev's event stream (`udev_monitor_new_from_netlink(udev, "udev")`),
  /// filtered to `subsystems`, and starts receiving (`udev_monitor_enable_receiving`).
  ///
  /// - Throws: `SystemError` naming the libudev call that failed (netlink sockets may be
  ///   forbidden in a sandbox).
  public init(context: UdevContext, subsystems: [String]) throws(SystemError) {
    guard let monitor = udev_monitor_new_from_netlink(context.pointer, "udev") else {
      throw SystemError(
        errno == 0 ? .protocolNotSupported : .current, operation: "udev_monitor_new_from_netlink")
    }
    pointer = monitor
    self.context = context
    for subsystem in subsystems {
      let rc = udev_monitor_filter_add_match_subsystem_devtype(monitor, subsystem, nil)
      if rc < 0 {
        throw SystemError(
          errno: -rc, operation: "udev_monitor_filter_add_match_subsystem_devtype \(subsystem)")
      }
    }
    // A larger socket buffer than the default (~200 KiB) lets a burst of uevents (a dock,
    // a driver rebinding, a hotplug storm) wait until the loop gets to them. libudev uses
    // SO_RCVBUFFORCE, which needs CAP_NET_ADMIN; without it the default stays, and an
    // overflow is still noticed (`receive()` reports `.overflow`).
    _ = udev_monitor_set_receive_buffer_size(monitor, UdevMonitor.receiveBufferSize)
    let rc = udev_monitor_enable_receiving(monitor)
    if rc < 0 { throw SystemError(errno: -rc, operation: "udev_monitor_enable_receiving") }
  }

  /// The receive buffer asked for: 4 MiB, enough for thousands of uevents.
  public static let receiveBufferSize: Int32 = 4 << 20

  deinit { udev_monitor_unref(pointer) }

  /// The netlink socket to watch for readability (`udev_monitor_get_fd`); non-blocking, owned
  /// by the monitor.
  public var fileDescriptor: Int32 { udev_monitor_get_fd(pointer) }

  /// The next queued event, or `nil` when none is waiting (`udev_monitor_receive_device`).
  ///
  /// The returned device's `action` says what happened. Use `next()` to also learn about a
  /// receive buffer overflow.
  public func receive() -> UdevDevice? {
    if case .device(let device) = next() { return device }
    return nil
  }

  /// What `next()` found on the socket.
  public enum Received {
    /// An event; its `action` says what happened.
    case device(UdevDevice)
    /// Nothing is waiting.
    case empty
    /// The kernel dropped events because the socket's receive buffer was full (ENOBUFS):
    /// some adds or removes were lost, so the owner must enumerate the devices again.
    case overflow
  }

  /// The next queued event, `.empty`, or `.overflow` when events were lost
  /// (`udev_monitor_receive_device` failing with ENOBUFS).
  public func next() -> Received {
    errno = 0
    if let raw = udev_monitor_receive_device(pointer) { return .device(UdevDevice(owning: raw)) }
    return errno == ENOBUFS ? .overflow : .empty
  }
}
