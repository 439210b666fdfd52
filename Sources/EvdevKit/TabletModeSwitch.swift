import CEvdev
import Glibc
import SystemKit

/// A virtual input device with one switch, `SW_TABLET_MODE`, created through uinput
/// (`libevdev_uinput_create_from_device` on a fresh libevdev description): what libinput and
/// desktops read to disable the internal keyboard and touchpad of a convertible folded into a
/// tablet, on machines whose firmware offers no such switch.
public final class UInputTabletModeSwitch {
  /// The device name it is created with; `TabletModeSwitches.present` skips it.
  public static let deviceName = "orientd tablet-mode switch"

  /// The `/dev/input/eventN` node the kernel made for it, when libevdev can tell.
  public let devnode: String?
  /// The state last written.
  public private(set) var isOn: Bool

  private let control: FileDescriptor
  private let description: OpaquePointer
  private let handle: OpaquePointer

  /// Creates the device through `uinputPath`, reporting `initial` at once.
  ///
  /// - Throws: `EvdevError.unavailable` when uinput is missing or not permitted.
  public init(initial: Bool, uinputPath: String = UInputClone.defaultPath) throws(EvdevError) {
    do {
      control = try FileDescriptor(path: uinputPath, options: [.readWrite])
    } catch {
      let advice: String
      switch error.code {
      case .noSuchFileOrDirectory: advice = "\(uinputPath) is missing (load it: modprobe uinput)"
      case .permissionDenied: advice = "no permission to open \(uinputPath) (run as root)"
      default: advice = "\(uinputPath): \(error.reason)"
      }
      throw EvdevError(
        .unavailable, path: uinputPath, "cannot create the tablet-mode switch: \(advice)")
    }
    guard let description = libevdev_new() else {
      throw EvdevError(.unavailable, path: uinputPath, "libevdev_new failed")
    }
    self.description = description
    libevdev_set_name(description, UInputTabletModeSwitch.deviceName)
    libevdev_set_id_bustype(description, Int32(BUS_VIRTUAL))
    libevdev_set_id_vendor(description, 0x1d6b)  // Linux Foundation, as other virtual devices
    libevdev_set_id_product(description, 0x0515)
    libevdev_set_id_version(description, 1)
    _ = libevdev_enable_event_type(description, UInt32(EV_SW))
    _ = libevdev_enable_event_code(description, UInt32(EV_SW), UInt32(SW_TABLET_MODE), nil)
    var pointer: OpaquePointer?
    let rc = libevdev_uinput_create_from_device(description, control.rawValue, &pointer)
    guard rc == 0, let pointer else {
      libevdev_free(description)
      throw EvdevError(
        .unavailable, path: uinputPath,
        "cannot create the tablet-mode switch: \(String(cString: strerror(-rc)))")
    }
    handle = pointer
    devnode = libevdev_uinput_get_devnode(pointer).map { String(cString: $0) }
    isOn = false
    if initial { try set(true) }
  }

  deinit {
    libevdev_uinput_destroy(handle)
    libevdev_free(description)
  }

  /// Reports the switch on (tablet) or off, followed by `SYN_REPORT`; nothing when unchanged.
  ///
  /// - Throws: `EvdevError.io` when the write fails.
  public func set(_ on: Bool) throws(EvdevError) {
    guard on != isOn else { return }
    for (type, code, value) in [
      (UInt32(EV_SW), UInt32(SW_TABLET_MODE), Int32(on ? 1 : 0)),
      (UInt32(EV_SYN), UInt32(SYN_REPORT), Int32(0)),
    ] {
      let rc = libevdev_uinput_write_event(handle, type, code, value)
      guard rc == 0 else {
        throw EvdevError(
          .io, path: devnode ?? "/dev/uinput",
          "cannot report SW_TABLET_MODE: \(String(cString: strerror(-rc)))")
      }
    }
    isOn = on
  }
}

/// The input devices that report `SW_TABLET_MODE` (firmware switches such as
/// `intel-vbtn`, `intel-hid`, `cros_ec_buttons`), orientd's own virtual switch excluded.
public enum TabletModeSwitches {
  /// Opens each event node under `directory` and keeps those with the switch.
  public static func present(in directory: String = "/dev/input") -> [InputDevice] {
    InputDevice.eventNodes(in: directory).compactMap(device(at:))
  }

  /// The device at the event node `path` if it is a firmware tablet-mode switch: `nil` when it
  /// cannot be opened, has no `SW_TABLET_MODE`, or is orientd's own (a hotplug event for the
  /// switch orientd made itself must not be taken for a firmware one).
  public static func device(at path: String) -> InputDevice? {
    guard let device = try? InputDevice(path: path),
      device.name != UInputTabletModeSwitch.deviceName,
      device.hasSwitch(UInt32(SW_TABLET_MODE))
    else { return nil }
    return device
  }
}
