import DeviceDiscovery

/// A touchscreen, pen tablet (pen and eraser) or touchpad-like absolute device bound to a screen.
public struct TouchDevice: Equatable, Sendable {
  /// What udev calls it (`ID_INPUT_TOUCHSCREEN`, `ID_INPUT_TABLET`).
  public enum Kind: String, Sendable {
    /// `ID_INPUT_TOUCHSCREEN=1`.
    case touchscreen
    /// `ID_INPUT_TABLET=1` (pen and eraser tools).
    case tablet
    /// Named with `--touch`.
    case named
  }

  /// The kernel's device name (`/sys/class/input/inputN/name`), as X11 and sway show it.
  public var name: String
  /// What kind it is.
  public var kind: Kind
  /// `/dev/input/eventN`, if known.
  public var devnode: String?
  /// The USB/bus vendor id (decimal, as sway's identifiers write it).
  public var vendor: Int?
  /// The product id.
  public var product: Int?
  /// The output udev binds it to (`WL_OUTPUT`), if any.
  public var boundOutput: String?

  /// Creates a device.
  public init(
    name: String, kind: Kind, devnode: String? = nil, vendor: Int? = nil, product: Int? = nil,
    boundOutput: String? = nil
  ) {
    self.name = name
    self.kind = kind
    self.devnode = devnode
    self.vendor = vendor
    self.product = product
    self.boundOutput = boundOutput
  }
}

/// Finds touch and tablet devices with udev's classification (the `input_id` builtin's
/// `ID_INPUT_TOUCHSCREEN` / `ID_INPUT_TABLET`, and `WL_OUTPUT`, the property libinput users
/// set to bind a device to an output), never by lists of device names.
public enum TouchDiscovery {
  /// Every touchscreen and tablet event device that is bound to `output` or to no output.
  ///
  /// - Throws: `RotateError` (74) when udev cannot enumerate the input devices.
  public static func devices(for output: String, udev: UdevContext) throws(RotateError)
    -> [TouchDevice]
  {
    let all: [UdevDevice]
    do {
      all = try udev.devices(subsystem: "input")
    } catch {
      throw RotateError(.ioError, "cannot list input devices with udev: \(error)")
    }
    var found: [TouchDevice] = []
    for device in all where device.sysname.hasPrefix("event") {
      let kind: TouchDevice.Kind
      if device.property("ID_INPUT_TOUCHSCREEN") == "1" {
        kind = .touchscreen
      } else if device.property("ID_INPUT_TABLET") == "1"
        && device.property("ID_INPUT_TABLET_PAD") != "1"
      {
        kind = .tablet
      } else {
        continue
      }
      let parent = device.parent
      let bound = device.property("WL_OUTPUT") ?? parent?.property("WL_OUTPUT")
      if let bound, bound != output { continue }
      let name = parent?.attribute("name") ?? device.property("NAME") ?? device.sysname
      found.append(
        TouchDevice(
          name: name.trimmingQuotes(), kind: kind, devnode: device.devnode,
          vendor: parent?.attribute("id/vendor").flatMap { Int($0, radix: 16) },
          product: parent?.attribute("id/product").flatMap { Int($0, radix: 16) },
          boundOutput: bound))
    }
    return found
  }
}

extension String {
  /// Without surrounding `"` (udev's NAME property is quoted) and blanks.
  func trimmingQuotes() -> String {
    var text = Substring(self)
    while let c = text.first, c == "\"" || c == " " || c == "\n" { text = text.dropFirst() }
    while let c = text.last, c == "\"" || c == " " || c == "\n" { text = text.dropLast() }
    return String(text)
  }
}
