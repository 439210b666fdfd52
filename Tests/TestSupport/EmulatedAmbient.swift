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
  /// A private bus with the project's policy, except that the compass, which
  /// dbus/orientd.conf grants to the `geoclue` user only, is granted to root (the tests' user)
  /// by the same rules.
  public static func compassGrantedToRoot() throws -> (PrivateBus, TemporaryDirectory) {
    let policy = try TemporaryDirectory("policy")
    let text = readFile("\(Built.packageRoot)/dbus/orientd.conf")
    guard text.contains("<policy user=\"geoclue\">") else {
      throw TestFailure("dbus/orientd.conf has no <policy user=\"geoclue\"> for the compass")
    }
    try writeFile(
      policy.file("orientd.conf"),
      text.replacing("<policy user=\"geoclue\">", with: "<policy user=\"root\">"))
    return (try PrivateBus(policyDirectory: policy.path), policy)
  }
}
