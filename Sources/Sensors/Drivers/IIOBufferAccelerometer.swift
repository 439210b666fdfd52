import DeviceDiscovery

/// `iio-buffer-accel`: an IIO accelerometer read through its buffer (`BufferSampler`), the
/// kernel pushing time-stamped scans at the device's frequency.
public enum IIOBufferAccelerometer: SensorDriver {
  /// `iio-buffer-accel`.
  public static let name = "iio-buffer-accel"
  /// `iio`.
  public static let subsystems: Set<String> = ["iio"]

  /// An IIO accelerometer with x, y, z scan elements and a device node.
  public static func discover(_ device: UdevDevice, _ context: DiscoveryContext) -> [Sensor] {
    let facts = context.facts(of: device)
    guard facts.isAccelerometer, !facts.isInputAccelerometer, facts.hasScanElements,
      facts.devnode != nil,
      // A device that is a gyroscope too is `iio-buffer-imu`'s: one reader for its buffer.
      IIOBufferIMU.gyroscope(device, context) == nil
    else { return [] }
    return [Sensor.accelerometer(facts, context, driver: name)]
  }

  /// Not in `[sampling] mode = polled`.
  public static func isEnabled(by configuration: SensorsConfiguration) -> Bool {
    configuration.sampling.mode != .polled
  }

  /// Buffered, at the smallest frequency the device offers at or above `buffered-rate`.
  public static func plan(_ sensor: Sensor, _ configuration: SensorsConfiguration) -> (
    mode: SamplingMode, rate: Double
  ) {
    let rate = configuration.sampling.bufferedRate
    return (
      .buffered,
      sensor.accelerometer?.availableFrequencies?.smallest(atLeast: rate).value ?? rate
    )
  }

  /// Sets the buffer up: channels, trigger, frequency, still strategy.
  public static func open(
    _ sensor: Sensor, _ context: OpenContext, deliver: @escaping (SensorEvent) -> Void
  ) throws(SensorError) -> any SensorReader {
    guard let d = sensor.accelerometer else {
      throw SensorError(.unavailable, "\(sensor.sysname) is not an accelerometer")
    }
    let sampling = context.configuration.sampling
    // With a sensor in the base, the display's and the base's readings are paired for the
    // hinge angle (HingeParameters.maximumSkew): a sampler that goes silent while still would
    // make the pair stale, so both keep reporting (watermark or FIFO batches at most).
    return try BufferSampler(
      description: d, sampling: sampling,
      mayGoSilent: !context.paired && sampling.silentWhileStill, triggers: context.triggers,
      deviceParent: context.parent, loop: context.loop, logger: context.logger,
      deliver: deliver)
  }
}
