/// The emulated accelerometer of the tests, `scripts/demo.sh` and the benchmarks, from its one
/// source, `Tests/Fixtures/umockdev/mxc4005.umockdev`: an MXC4005 on I2C (ACPI `MXC6655`),
/// polled through `in_accel_{x,y,z}_raw`, 1 g = 1000 counts, upright.
public enum EmulatedAccelerometer {
  /// The fixture's path in the package.
  public static var path: String { "\(Built.packageRoot)/Tests/Fixtures/umockdev/mxc4005.umockdev" }

  /// The fixture's devices in file order: the I2C parent, then the IIO device.
  public static let devices: [UMockdevDevice] = {
    let text = readFile(path)
    do {
      let devices = try UMockdevDevice.parse(record: text)
      guard devices.count == 2 else {
        throw TestFailure("expected 2 devices, found \(devices.count)")
      }
      return devices
    } catch {
      fatalError("\(path): \(error) (the emulated accelerometer of the tests)")
    }
  }()

  /// The I2C device the accelerometer hangs off (its `modalias` is what hwdb keys match).
  public static var parent: UMockdevDevice { devices[0] }
  /// The polled IIO accelerometer, `iio:device0`, upright.
  public static var polled: UMockdevDevice { devices[1] }
}

extension UMockdevDevice {
  /// The devices of a recording of a real driver in Tests/Fixtures/umockdev (the VM's
  /// `umockdev-record`): its binary attributes and links left out, and the uhid misc device, as
  /// the HID recordings' tests need them.
  public static func recording(_ fixture: String) throws -> [UMockdevDevice] {
    let recording = readFile("\(Built.packageRoot)/Tests/Fixtures/umockdev/\(fixture)")
    let kept = recording.split(separator: "\n", omittingEmptySubsequences: false).filter {
      !$0.hasPrefix("H: ") && !$0.hasPrefix("L: ")
    }
    return try parse(record: kept.joined(separator: "\n")).filter { $0.node != "uhid" }
  }

  /// Reads `umockdev-record` text (`P:`, `N:`, `E:` and `A:` lines, devices separated by blank
  /// lines; `\n` and `\\` escaped in attribute values): the inverse of `record`.
  ///
  /// - Throws: `TestFailure` naming the line that is not one of those.
  public static func parse(record text: String) throws -> [UMockdevDevice] {
    var devices: [UMockdevDevice] = []
    for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false)
      .enumerated()
    {
      let line = String(rawLine)
      if line.isEmpty { continue }
      let tag = line.prefix(3)
      let rest = String(line.dropFirst(3))
      if tag == "P: " {
        devices.append(UMockdevDevice(devpath: rest, properties: []))
        continue
      }
      guard !devices.isEmpty else { throw TestFailure("line \(index + 1): no P: line before it") }
      switch tag {
      case "N: ": devices[devices.count - 1].node = rest
      case "E: ", "A: ":
        guard let equals = rest.firstIndex(of: "=") else {
          throw TestFailure("line \(index + 1): no '=' in \(line)")
        }
        let key = String(rest[..<equals])
        let value = String(rest[rest.index(after: equals)...])
        if tag == "E: " {
          devices[devices.count - 1].properties.append((key, value))
        } else {
          devices[devices.count - 1].attributes.append((key, unescape(value)))
        }
      default: throw TestFailure("line \(index + 1): not a P:, N:, E: or A: line: \(line)")
      }
    }
    return devices
  }

  private static func unescape(_ value: String) -> String {
    var result = ""
    var escaping = false
    for c in value {
      if escaping {
        result.append(c == "n" ? "\n" : c)
        escaping = false
      } else if c == "\\" {
        escaping = true
      } else {
        result.append(c)
      }
    }
    return result
  }
}
