import DeviceDiscovery
import OrientCore
import SystemKit

extension DeviceFacts {
  /// Reads what orientd needs from a udev device: udev properties through libudev, sysfs
  /// attributes fresh from the files (libudev caches attribute values).
  public static func gather(_ device: UdevDevice) -> DeviceFacts {
    if device.subsystem == "input" { return gatherInput(device) }
    let path = device.syspath
    var facts = DeviceFacts(syspath: path, sysname: device.sysname)
    facts.devnode = device.devnode
    func read(_ attribute: String) -> String? {
      Sysfs.readIfPresent("\(path)/\(attribute)")
    }
    facts.name = read("name")
    facts.label = read("label")
    facts.locationAttribute = read("location")
    facts.modalias =
      device.nearestProperty("MODALIAS")?.value ?? nearestModaliasAttribute(device)
    facts.hwdbKey = hwdbKey(device, label: facts.label)
    facts.udevLocation = device.property("ACCEL_LOCATION")
    facts.udevMountMatrix = device.property("ACCEL_MOUNT_MATRIX")
    facts.udevHingeAxis = device.property("ORIENTD_HINGE_AXIS")
    for attribute in ["in_accel_mount_matrix", "mount_matrix", "in_mount_matrix"] {
      if let text = read(attribute) { facts.sysfsMountMatrices.append(SysfsText(attribute, text)) }
    }
    facts.hasRawAttributes = ["x", "y", "z"].allSatisfy {
      Sysfs.exists("\(path)/in_accel_\($0)_raw")
    }
    facts.hasScanElements = ["x", "y", "z"].allSatisfy {
      Sysfs.exists("\(path)/scan_elements/in_accel_\($0)_en")
    }
    facts.scale = calibrationAttributes("scale", read: read)
    facts.offset = calibrationAttributes("offset", read: read)
    for attribute in ["in_accel_sampling_frequency", "sampling_frequency"] {
      if let text = read(attribute) {
        facts.samplingFrequency = SysfsText(attribute, text)
        if let available = read("\(attribute)_available") {
          facts.samplingFrequencyAvailable = SysfsText("\(attribute)_available", available)
        }
        break
      }
    }
    return facts
  }

  /// `in_accel_<what>` if present, otherwise whichever of `in_accel_{x,y,z}_<what>` exist.
  private static func calibrationAttributes(
    _ what: String, read: (String) -> String?
  ) -> [SysfsText] {
    if let shared = read("in_accel_\(what)") { return [SysfsText("in_accel_\(what)", shared)] }
    return ["x", "y", "z"].compactMap { axis in
      read("in_accel_\(axis)_\(what)").map { SysfsText("in_accel_\(axis)_\(what)", $0) }
    }
  }

  /// The hwdb key as 60-sensor.rules builds it: the label (or the cros-ec location mapped to
  /// one), the `modalias` attribute of the nearest parent that has one (its `MODALIAS`
  /// property, which holds the same text, when the attribute cannot be read), and
  /// `/sys/class/dmi/id/modalias` (`dmi:*` when the machine has no DMI data).
  private static func hwdbKey(_ device: UdevDevice, label: String?) -> String? {
    guard
      let modalias = nearestModaliasAttribute(device) ?? device.nearestProperty("MODALIAS")?.value
    else { return nil }
    // udev substitutes $attr{} values with unsafe characters replaced: the key must be built
    // the same way, or a match line made from it misses (QEMU's DMI product has parentheses).
    let udev = SensorHwdbMatch.udevSubstituted
    var prefix = "sensor:"
    if let label, !label.isEmpty {
      prefix += "\(udev(label)):"
    } else if let location = Sysfs.readIfPresent("\(device.syspath)/location") {
      prefix += location == "base" ? "accel-base:" : (location == "lid" ? "accel-display:" : "")
    }
    let dmi = Sysfs.readIfPresent("/sys/class/dmi/id/modalias").map(udev) ?? "dmi:*"
    return "\(prefix)modalias:\(udev(modalias)):\(dmi)"
  }

  private static func nearestModaliasAttribute(_ device: UdevDevice) -> String? {
    var current: UdevDevice? = device
    while let d = current {
      if let value = Sysfs.readIfPresent("\(d.syspath)/modalias"), !value.isEmpty { return value }
      current = d.parent
    }
    return nil
  }
}
