import DeviceDiscovery
import SystemKit
import TextFormats

// What the gyroscope and rotation drivers share: describing a device (`MotionDescription`)
// and opening the polled or buffered motion reader.

/// The motion sensor of `kind` on `device` that `driver` reads (`buffered`: through the
/// buffer, else by polling `_raw`), if there is one.
func motionSensors(
  _ device: UdevDevice, kind: SensorKind, driver name: String, buffered: Bool
) -> [Sensor] {
  guard device.subsystem == "iio" else { return [] }
  let syspath = device.syspath
  let read = { (attribute: String) -> String? in
    Sysfs.readIfPresent("\(syspath)/\(attribute)").map { String($0.trimming()) }
  }
  let description: MotionDescription?
  switch kind {
  case .rotation:
    description = MotionDescription.rotation(
      syspath: syspath, sysname: device.sysname, devnode: device.devnode, read: read)
  case .magnetometer:
    description = MotionDescription.magnetometer(
      syspath: syspath, sysname: device.sysname, read: read, property: { device.property($0) })
  default:
    description = MotionDescription.gyroscope(
      syspath: syspath, sysname: device.sysname, devnode: device.devnode, read: read,
      property: { device.property($0) })
  }
  guard let d = description, buffered ? !d.scanElements.isEmpty : d.hasRaw else { return [] }
  // A chip with the accelerometer on the same IIO device (BMI160, BMI260) has one buffer for
  // both (a second open is EBUSY): `iio-buffer-imu` reads the two kinds from it, this driver
  // only gyroscopes alone on their device.
  if buffered, name != IIOBufferIMU.name,
    read("in_accel_x_raw") != nil || read("scan_elements/in_accel_x_en") != nil
  {
    return []
  }
  return [
    Sensor(
      kinds: [kind], syspath: syspath, sysname: device.sysname, drivers: [name],
      detail: .motion(d))
  ]
}

/// Opens the polled reader of a motion sensor.
func openMotionPolled(
  _ sensor: Sensor, _ context: OpenContext, deliver: @escaping (SensorEvent) -> Void
) throws(SensorError) -> any SensorReader {
  guard let d = sensor.motion else {
    throw SensorError(.unavailable, "\(sensor.sysname) is not a gyroscope or rotation sensor")
  }
  let reader = try PolledAttributeReader(
    sysname: d.sysname, paths: MotionValues.paths(d),
    interval: PolledAttributeReader<MotionAttributeParser>.interval(
      rate: d.pollRate(for: context.requestedRate)),
    parser: MotionAttributeParser(info: d), loop: context.loop, logger: context.logger,
    deliver: deliver)
  // The poll interval follows the rate asked for, up to the device's frequency.
  reader.ratePolicy = (d.kind, d.pollRate(for:))
  return reader
}

/// Opens the buffered reader of a motion sensor.
func openMotionBuffered(
  _ sensor: Sensor, _ context: OpenContext, deliver: @escaping (SensorEvent) -> Void
) throws(SensorError) -> any SensorReader {
  guard let d = sensor.motion else {
    throw SensorError(.unavailable, "\(sensor.sysname) is not a gyroscope or rotation sensor")
  }
  return try MotionBufferReader(
    d, triggers: context.triggers, parent: context.parent,
    requestedRate: context.requestedRate, loop: context.loop, logger: context.logger,
    deliver: deliver)
}
