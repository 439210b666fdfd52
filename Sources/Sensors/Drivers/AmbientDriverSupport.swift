import DeviceDiscovery

// What the light, proximity and compass drivers share: each picks its sensors out of what
// `AmbientDescription.describe` found on a device (once per device and discovery pass) and
// reads them with the shared polled-attribute or buffered-channel reader.

/// An ambient sensor of `kind` read `way` on `device`, if the description found one.
func ambientSensors(
  _ device: UdevDevice, _ context: DiscoveryContext, kind: SensorKind, driver name: String,
  _ way: (AmbientDriver) -> Bool
) -> [Sensor] {
  context.ambient(of: device).filter { $0.kind == kind && way($0.driver) }
    .map { Sensor.ambient($0, driver: name) }
}

/// Polls the sensor's attribute every `light-interval` (or `proximity-interval`).
func openPolled(
  _ sensor: Sensor, _ context: OpenContext, deliver: @escaping (SensorEvent) -> Void
) throws(SensorError) -> any SensorReader {
  guard let info = sensor.ambient else {
    throw SensorError(.unavailable, "\(sensor.sysname) is not an ambient sensor")
  }
  return try PolledAttributeReader(
    sysname: info.sysname, paths: [AmbientAttributeParser.path(of: info)],
    interval: context.configuration.ambient.interval(for: info.kind),
    parser: AmbientAttributeParser(info), loop: context.loop, logger: context.logger,
    deliver: deliver)
}

/// Reads the sensor's scan element through the buffer.
func openBuffered(
  _ sensor: Sensor, _ context: OpenContext, deliver: @escaping (SensorEvent) -> Void
) throws(SensorError) -> any SensorReader {
  guard let info = sensor.ambient else {
    throw SensorError(.unavailable, "\(sensor.sysname) is not an ambient sensor")
  }
  return try BufferedChannelReader(
    info, triggers: context.triggers, loop: context.loop, logger: context.logger,
    deliver: deliver)
}

func pollPlan(_ sensor: Sensor, _ configuration: SensorsConfiguration) -> (
  mode: SamplingMode, rate: Double
) {
  let kind = sensor.ambient?.kind ?? .light
  return (.polled, 1 / max(configuration.ambient.interval(for: kind).seconds, 0.001))
}

func isPolled(_ driver: AmbientDriver) -> Bool {
  if case .iioPoll = driver { return true }
  return false
}

func isBuffered(_ driver: AmbientDriver) -> Bool {
  if case .iioBuffer = driver { return true }
  return false
}
