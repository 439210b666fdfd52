import Glibc

/// The emulated light, proximity and compass sensors of the tests and `scripts/demo.sh`, from
/// their one source, `Tests/Fixtures/umockdev/ambient.umockdev`: an LTR303 light sensor (raw
/// with scale 0.5 and offset 10: 100 counts = 55 lux), an STK3310 proximity sensor (near level
/// 128), a HID sensor hub compass (`magn_3d`, 900 x 0.1 = 90 degrees) and applesmc's hwmon
/// `light` attribute `(128,128)`.
public enum EmulatedAmbient {
  /// The fixture's path in the package.
  public static var path: String { "\(Built.packageRoot)/Tests/Fixtures/umockdev/ambient.umockdev" }

  /// The fixture's devices in file order.
  public static let devices: [UMockdevDevice] = {
    do {
      let devices = try UMockdevDevice.parse(record: readFile(path))
      guard devices.count == 6 else {
        throw TestFailure("expected 6 devices, found \(devices.count)")
      }
      return devices
    } catch {
      fatalError("\(path): \(error) (the emulated ambient sensors of the tests)")
    }
  }()

  /// The IIO light sensor and its I2C parent.
  public static var light: [UMockdevDevice] { [devices[0], devices[1]] }
  /// The IIO proximity sensor and its I2C parent.
  public static var proximity: [UMockdevDevice] { [devices[2], devices[3]] }
  /// The IIO compass.
  public static var compass: UMockdevDevice { devices[4] }
  /// applesmc with its `light` attribute.
  public static var applesmc: UMockdevDevice { devices[5] }
}

extension PrivateBus {
  /// The arguments that run a command as `nobody` (uid 65534): a user that is neither root
  /// nor geoclue, in no login session.
  public static let nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

  /// Lets every user reach the bus socket (the directory is root's, mode 0700, by default).
  public func openToEveryUser() {
    chmod(directory.path, 0o755)
    chmod(directory.file("bus.sock"), 0o777)
  }
}
