import OrientLog
import SystemKit

/// The steps of reading an IIO device through its buffer (`/dev/iio:deviceN`), shared by the
/// accelerometer's `BufferSampler` and the ambient sensors' `BufferedChannelReader`. Each
/// change is recorded in `journal`; a failing step restores what was recorded and says why.
struct BufferSetup {
  /// The IIO device's sysfs path.
  let syspath: String
  /// Its name for messages (`iio:device3`).
  let device: String
  let journal: SysfsJournal
  let logger: Logger

  var scanDirectory: String { "\(syspath)/scan_elements" }

  /// Restores the settings changed so far; the error to throw.
  func fail(_ reason: String, _ error: SystemError? = nil) -> SensorError {
    let gone = error?.isDeviceGone ?? false
    journal.restore(deviceGone: gone)
    return SensorError(gone ? .gone : .unavailable, reason)
  }

  /// Opens the node non-blocking and takes over a buffer left enabled with no reader.
  func openNode(_ devnode: String) throws(SensorError) -> FileDescriptor {
    let enablePath = "\(syspath)/buffer/enable"
    let wasEnabled =
      Sysfs.readIfPresent(enablePath).flatMap { SysfsValue.parseFlag($0) } ?? false
    // Closed by its deinit if set-up fails later. The kernel lets one reader open the node
    // at a time (EBUSY otherwise): that is how a buffer in use by another program shows.
    let node: FileDescriptor
    do {
      node = try FileDescriptor(path: devnode, options: [.readOnly, .nonBlocking])
    } catch {
      let why =
        error.code == .resourceBusy
        ? "another program has it open (buffer/enable is \(wasEnabled ? 1 : 0))" : error.reason
      throw fail("\(device): cannot open \(devnode): \(why)", error)
    }
    if wasEnabled {
      // Enabled, yet nobody holds the node: left behind by a program that died (or by
      // iio-sensor-proxy 3.0, which never disables it). Taking it over and leaving it
      // disabled afterwards stops the sensor from sampling for nobody; this is the one
      // setting not put back as found.
      logger.notice(
        "\(device): buffer was left enabled with no reader; taking it over (it stays disabled "
          + "when sampling stops)")
      do {
        try Sysfs.write(enablePath, "0\n")
      } catch {
        throw fail("\(device): cannot disable the abandoned buffer: \(error)", error)
      }
    }
    return node
  }

  /// Enables exactly the channels `wanted` (and the timestamp, if `timestamp` and the device
  /// has one), disabling any other enabled channel, and lays out the record from each
  /// channel's `_type` and `_index`.
  func enableChannels(_ wanted: [String], timestamp: Bool) throws(SensorError)
    -> ScanLayout
  {
    let present = Sysfs.list(scanDirectory).filter { $0.hasSuffix("_en") }.map {
      String($0.dropLast(3))
    }
    var wanted = wanted
    if timestamp, present.contains(ScanLayout.timestampChannel) {
      wanted.append(ScanLayout.timestampChannel)
    }
    var channels: [ScanChannel] = []
    do {
      for name in present {
        let on = wanted.contains(name)
        let path = "\(scanDirectory)/\(name)_en"
        if SysfsValue.parseFlag(try Sysfs.read(path)) != on {
          try journal.set(path, on ? "1" : "0")
        }
      }
      for name in wanted {
        let typeText = try Sysfs.read("\(scanDirectory)/\(name)_type")
        let indexText = try Sysfs.read("\(scanDirectory)/\(name)_index")
        let type: ScanElementType
        do {
          type = try ScanElementType(parsing: typeText)
        } catch {
          throw fail("\(device): scan_elements/\(name)_type: \(error)")
        }
        guard let index = SysfsValue.parseInteger(indexText), index >= 0, index < 4096 else {
          throw fail("\(device): scan_elements/\(name)_index \"\(indexText)\" is not an index")
        }
        channels.append(ScanChannel(name: name, index: Int(index), type: type))
      }
    } catch let error as SystemError {
      throw fail("\(device): setting up scan elements: \(error)", error)
    } catch let error as SensorError {
      throw error
    } catch {
      throw fail("\(device): setting up scan elements: \(error)")
    }
    do {
      return try ScanLayout(channels: channels)
    } catch {
      throw fail("\(device): \(error)")
    }
  }
}

extension BufferSetup {
  /// Attaches the device's own trigger when it takes one and has none (`TriggerChoice`: the
  /// `<name>-dev<N>` convention, or one of the same parent device).
  ///
  /// - Returns: the trigger attached, if any.
  func attachTrigger(
    deviceName: String?, deviceNumber: Int?, deviceParent: String?, triggers: [TriggerInfo]
  ) throws(SensorError) -> String? {
    let triggerPath = "\(syspath)/trigger/current_trigger"
    guard let current = Sysfs.readIfPresent(triggerPath) else { return nil }
    guard current.isEmpty else {
      logger.debug("\(device): keeping current trigger \(current)")
      return nil
    }
    guard
      let (trigger, reason) = TriggerChoice.choose(
        deviceName: deviceName, deviceNumber: deviceNumber, deviceParent: deviceParent,
        triggers: triggers)
    else {
      logger.info("\(device): no trigger of its own found; trying without one")
      return nil
    }
    do {
      try journal.set(triggerPath, trigger.name)
    } catch {
      throw fail("\(device): cannot attach trigger \(trigger.name): \(error)", error)
    }
    logger.info("\(device): attached trigger \(trigger.name) (\(reason))")
    return trigger.name
  }

  /// Sets the buffer length (where the device has one) and enables the buffer.
  func enableBuffer(length: Int?, node: FileDescriptor) throws(SensorError) {
    do {
      if let length, Sysfs.exists("\(syspath)/buffer/length") {
        try journal.set("\(syspath)/buffer/length", String(length))
      }
      discardPending(node)
      try journal.set("\(syspath)/buffer/enable", "1")
    } catch {
      throw fail("\(device): cannot enable the buffer: \(error)", error)
    }
  }
}

extension BufferSetup {
  /// Reads and drops whatever `node` holds before the buffer is enabled: scans from before
  /// (a buffer taken over from a program that died, or a previous reader of this device with
  /// other channels) are not readings of now, and one of another layout would shift every
  /// scan after it. The kernel empties its FIFO when the scan size changes; an emulated node
  /// (umockdev) keeps what was written to it, so this is where both behave alike. At most
  /// 64 KiB; a read error is left for the reader to meet.
  func discardPending(_ node: FileDescriptor) {
    var scratch = [UInt8](repeating: 0, count: 4096)
    var dropped = 0
    while dropped < 1 << 16 {
      let count = scratch.withUnsafeMutableBytes { raw in try? node.read(into: raw) }
      guard let count, count > 0 else { break }
      dropped += count
    }
    if dropped > 0 {
      logger.debug("\(device): dropped \(dropped) bytes the node held before the buffer was on")
    }
  }
}

/// A running buffer's on/off switch: the kernel takes a new watermark or trigger only while
/// the buffer is disabled, so every such change is `buffer/enable` 0, the change, then 1 (the
/// one place this sequence is written), and a buffer is never left disabled by a failed change.
struct BufferSwitch {
  /// The IIO device's sysfs path.
  let syspath: String

  var enablePath: String { "\(syspath)/buffer/enable" }

  /// `buffer/enable` 0, `change`, then 1; on failure the buffer is enabled again (best effort)
  /// and the error thrown.
  func cycle(_ change: () throws(SystemError) -> Void) throws(SystemError) {
    do {
      try Sysfs.write(enablePath, "0")
      try change()
      try Sysfs.write(enablePath, "1")
    } catch {
      if !error.isDeviceGone { try? Sysfs.write(enablePath, "1") }
      throw error
    }
  }

  /// Enables or disables the buffer (motion events: off while still, on at the first event).
  func set(_ enabled: Bool) throws(SystemError) {
    try Sysfs.write(enablePath, enabled ? "1" : "0")
  }
}
