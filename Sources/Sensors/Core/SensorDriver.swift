import DeviceDiscovery
import OrientLog
import SystemKit

/// One way of reading one family of sensors (iio-sensor-proxy's `SensorDriver`, src/drivers.h):
/// each driver is a small file in Drivers/, and `SensorDrivers.all` lists them.
///
/// - `discover` looks at one device udev reported and describes the sensors this driver could
///   read on it (none if it is not one of its);
/// - `open` starts reading one of them at the rate the configuration asks for, delivering
///   each reading calibrated; the reader's `stop()` closes everything and restores every sysfs
///   setting it changed.
///
/// Nothing is opened before `open`: discovery reads udev properties and sysfs attributes only.
public protocol SensorDriver {
  /// Its name, as iio-sensor-proxy names the same driver where it has one (`iio-poll-accel`).
  static var name: String { get }
  /// The udev subsystems its devices are in.
  static var subsystems: Set<String> { get }
  /// The sensors this driver can read on `device`.
  static func discover(_ device: UdevDevice, _ context: DiscoveryContext) -> [Sensor]
  /// Starts reading `sensor`; `deliver` runs on the loop with each event, the first reading as
  /// soon as there is one.
  ///
  /// - Throws: `SensorError` (`gone` when the device vanished while being opened).
  static func open(
    _ sensor: Sensor, _ context: OpenContext, deliver: @escaping (SensorEvent) -> Void
  ) throws(SensorError) -> any SensorReader
  /// How it would read `sensor` with `configuration` and at what rate (before it is opened).
  static func plan(_ sensor: Sensor, _ configuration: SensorsConfiguration) -> (
    mode: SamplingMode, rate: Double
  )
  /// Whether `configuration` lets it be used (`[sampling] mode`). True by default.
  static func isEnabled(by configuration: SensorsConfiguration) -> Bool
  /// What the log says when the driver before it failed to open and it takes over.
  static var takeOverNote: String { get }
  /// What the log says when the driver before it stalled and it takes over.
  static var stallNote: String { get }
}

extension SensorDriver {
  /// Always.
  public static func isEnabled(by configuration: SensorsConfiguration) -> Bool { true }
  /// `reading it through NAME instead`.
  public static var takeOverNote: String { "reading it through \(name) instead" }
  /// `reading it through NAME instead`.
  public static var stallNote: String { takeOverNote }
}

/// A running reader (`SensorDriver.open`).
public protocol SensorReader: AnyObject {
  /// How it reads.
  var mode: SamplingMode { get }
  /// Readings per second it aims for (the device's frequency in buffered mode, 0 for events).
  var rate: Double { get }
  /// The trigger it attached, if any.
  var trigger: String? { get }
  /// Readings skipped as garbage so far.
  var skipped: Int { get }
  /// Whether it chose how to keep a still device quiet from whether a base accelerometer was
  /// present (`OpenContext.paired`): it is opened afresh when one comes or goes.
  var dependsOnPairing: Bool { get }
  /// Stops reading, closes its descriptors and restores sysfs; idempotent.
  func stop()
  /// Writes again every setting it made (sampling frequency, hysteresis, trigger, scan
  /// elements; a buffer is switched off around it): after a system resume a device may have
  /// lost them at its power-up, or wait for them before it reports again.
  func rearm()
  /// Asks for at least `rate` readings a second of `kind`: the fastest any consumer needs now
  /// (0: none says, the reader's own default). A reader that can choose its rate takes the
  /// slowest the device offers at or above it (the fastest it offers when none is), retuning
  /// a running device, and `rate` then says what it took; one that cannot ignores the request.
  /// A reader of several kinds (one buffer for an accelerometer and a gyroscope) runs at the
  /// fastest rate asked for any of them. Stopping restores the device's own setting.
  func request(rate: Double, for kind: SensorKind)
}

extension SensorReader {
  /// Nothing to write again.
  public func rearm() {}
  /// Ignored: the reader runs at its own rate.
  public func request(rate: Double, for kind: SensorKind) {}
  /// None.
  public var trigger: String? { nil }
  /// None.
  public var skipped: Int { 0 }
  /// No.
  public var dependsOnPairing: Bool { false }
}

/// What drivers see while discovering: the configuration, and what one pass has read about a
/// device already (two drivers of one family describe the same device once).
public final class DiscoveryContext {
  /// The configuration sensors are described with.
  public let configuration: SensorsConfiguration
  /// Problems found (a tagged sensor without the attribute to read it), each logged once.
  public private(set) var problems: [String] = []
  private var facts: [String: DeviceFacts] = [:]
  private var ambient: [String: [AmbientDescription]] = [:]

  /// A context for one pass over devices.
  public init(configuration: SensorsConfiguration) {
    self.configuration = configuration
  }

  /// `DeviceFacts.gather(device)`, once per device and pass.
  public func facts(of device: UdevDevice) -> DeviceFacts {
    if let known = facts[device.syspath] { return known }
    let gathered = DeviceFacts.gather(device)
    facts[device.syspath] = gathered
    return gathered
  }

  /// The ambient sensors of `device` (`AmbientDescription.describe`), once per device and pass.
  public func ambient(of device: UdevDevice) -> [AmbientDescription] {
    if let known = ambient[device.syspath] { return known }
    var found: [AmbientDescription] = []
    let syspath = device.syspath
    if device.subsystem == "iio" || Sysfs.exists("\(syspath)/light") {
      let (sensors, problems) = AmbientDescription.describe(
        syspath: syspath, sysname: device.sysname, subsystem: device.subsystem ?? "",
        devnode: device.devnode, property: { device.property($0) },
        read: { Sysfs.readIfPresent("\(syspath)/\($0)") })
      found = sensors
      self.problems += problems
    }
    ambient[syspath] = found
    return found
  }
}

/// What a driver needs to open a sensor.
public struct OpenContext {
  /// The loop the reader runs on.
  public var loop: EventLoop
  /// Its logger.
  public var logger: Logger
  /// How to read (rates, intervals, adaptive sampling).
  public var configuration: SensorsConfiguration
  /// The IIO trigger devices present.
  public var triggers: [TriggerInfo]
  /// The parent device of the sensor's device (triggers of the same chip).
  public var parent: String?
  /// Whether a base accelerometer is present: a display accelerometer's readings are paired
  /// with it for the hinge angle, so it must not go silent while still.
  public var paired: Bool
  /// Readings a second the consumer asks for (`SensorReader.request(rate:for:)`, 0: none):
  /// a reader that can choose its rate opens at it rather than retuning just after.
  public var requestedRate: Double
  /// The readers of devices whose one buffer serves two kinds (`IIOBufferIMU`): the hub's, so
  /// that both kinds' slots share one; without it a reader serves one kind.
  public var sharedBuffers: SharedBuffers?

  /// Creates a context.
  public init(
    loop: EventLoop, logger: Logger, configuration: SensorsConfiguration,
    triggers: [TriggerInfo] = [], parent: String? = nil, paired: Bool = false,
    requestedRate: Double = 0, sharedBuffers: SharedBuffers? = nil
  ) {
    self.sharedBuffers = sharedBuffers
    self.loop = loop
    self.logger = logger
    self.configuration = configuration
    self.triggers = triggers
    self.parent = parent
    self.paired = paired
    self.requestedRate = requestedRate
  }
}

/// The driver table: every way orientd reads a sensor, in the order discovery tries them (for
/// one device and kind, the first is preferred).
public enum SensorDrivers {
  /// Every driver.
  public static let all: [any SensorDriver.Type] = [
    IIOBufferIMU.self, IIOBufferAccelerometer.self, IIOPollAccelerometer.self,
    InputAccelerometer.self,
    IIOPollLight.self, IIOBufferLight.self, HwmonLight.self,
    IIOPollProximity.self, InputProximity.self,
    IIOPollCompass.self, IIOBufferCompass.self,
    IIOPollHinge.self,
    IIOBufferGyroscope.self, IIOPollGyroscope.self, IIOBufferRotation.self, IIOPollRotation.self,
    IIOPollMagnetometer.self,
  ]

  /// The driver called `name`.
  public static func named(_ name: String) -> (any SensorDriver.Type)? {
    all.first { $0.name == name }
  }

  /// Every subsystem a driver reads, in table order.
  public static var subsystems: [String] {
    var seen = Set<String>()
    return ["iio", "input", "hwmon", "platform"].filter { name in
      all.contains { $0.subsystems.contains(name) } && seen.insert(name).inserted
    } + all.flatMap { $0.subsystems.sorted() }.filter { seen.insert($0).inserted }
  }
}
