import CEvdev
import DBusKit
import DeviceDiscovery
import EvdevKit
import OrientCore
import OrientLog
import OrientWire
import Sensors
import SystemKit

/// What `org.orientd.Posture1` publishes.
public struct PostureState: Equatable, Sendable {
  /// The hinge angle is known: from a sensor that measures it (the kernel's hinge or lid angle
  /// sensor), or from a display and a base accelerometer.
  public var hasHinge = false
  /// The hinge angle (NaN while unreliable), its reliability and the posture.
  public var hinge = HingeState()
  /// Whether the machine is in tablet mode: a firmware switch's state where there is one,
  /// otherwise the posture's (`Posture.isTabletMode`).
  public var tabletMode = false
  /// Where `tabletMode` comes from: `switch` (a firmware `SW_TABLET_MODE` device), `hinge`
  /// (orientd's posture) or `none`.
  public var tabletModeSource = "none"

  /// Nothing known.
  public init() {}
}

/// The convertible side of the daemon: the base accelerometer, the hinge tracker, a firmware
/// tablet-mode switch (read) and orientd's own (uinput, written).
///
/// Where the kernel measures the hinge angle itself (`SensorKind.hinge`: Intel's HID custom
/// hinge sensor, ChromeOS's lid angle), that angle is the posture's and the base
/// accelerometer is not read; the two accelerometers are the fallback (iio-sensor-proxy issue
/// #318). The display accelerometer still tells tent from stand.
///
/// The base sensor is read only while the posture is wanted: a client holds a posture claim,
/// or orientd drives its own tablet-mode switch (which needs the posture all the time; set
/// `tablet-mode-switch = off` to read both sensors only for clients).
final class PostureController {
  /// The published state changed.
  var onChange: (() -> Void)?
  /// `wantsSensors` changed (start or stop the display sensor accordingly).
  var onWantsSensorsChanged: (() -> Void)?
  /// What is published.
  private(set) var state = PostureState()

  private let sensors: any SensorSource
  /// The base accelerometer present, read or not.
  private var baseSensor: AccelerometerDescription?
  /// The hinge angle sensor present, read or not: while there is one, the angle is its.
  private var hingeSensor: HingeAngleDescription?
  private let loop: EventLoop?
  private let watcher: DeviceWatcher?
  private var logger: Logger
  private var settings: PostureSettings
  private var tracker: HingeTracker
  private var clientsWant = false
  private var hasDisplay = false
  private var realSwitch: (device: InputDevice, watch: EventLoop.Watch)?
  /// Whether udev's input events are followed (the daemon's one `DeviceWatcher`): a firmware
  /// switch that appears later (a keyboard dock, a driver loaded late) or goes away is
  /// followed without a reload.
  private var followsInputHotplug = false
  private var virtualSwitch: UInputTabletModeSwitch?
  /// `begin()` has looked for a firmware switch: until then the sensor enumeration may already
  /// report both accelerometers, and orientd's own switch must not be made (and removed again
  /// a moment later) next to a firmware one it has not looked for yet.
  private var begun = false
  private var problems = LogOnce()
  /// Where `/dev/uinput` and `/dev/input` are (tests point them elsewhere).
  private let uinputPath: String
  private let inputDirectory: String

  /// A posture on `sensors`; firmware switches are looked for in `inputDirectory` and
  /// followed on `loop` and `watcher` (without them, as in unit tests, there are none).
  init(
    sensors: any SensorSource, loop: EventLoop?, watcher: DeviceWatcher?,
    settings: PostureSettings, logger: Logger, uinputPath: String = UInputClone.defaultPath,
    inputDirectory: String = "/dev/input"
  ) {
    self.sensors = sensors
    self.loop = loop
    self.watcher = watcher
    self.logger = logger
    self.settings = settings
    self.uinputPath = uinputPath
    self.inputDirectory = inputDirectory
    tracker = HingeTracker(parameters: settings.hinge)
  }

  /// Whether the display and base sensors must be read for the posture.
  var wantsSensors: Bool { (clientsWant || virtualSwitch != nil) && state.hasHinge }

  /// The kinds the posture reads now: the hinge angle sensor where there is one (and the
  /// display accelerometer for tent and stand), otherwise both accelerometers.
  var wantedKinds: Set<SensorKind> {
    guard wantsSensors else { return [] }
    return hingeSensor != nil ? [.accelerometer, .hinge] : [.accelerometer, .baseAccelerometer]
  }

  /// Whether the angle's source is being read (the hinge angle sensor, else the base sensor).
  var isReadingBase: Bool {
    sensors.isReading(hingeSensor != nil ? .hinge : .baseAccelerometer)
  }

  /// The base accelerometer appeared, changed or went away (`nil`).
  func baseChanged(_ sensor: AccelerometerDescription?) {
    guard sensor != baseSensor else { return }
    baseSensor = sensor
    hardwareChanged()
  }

  /// A reading of the base accelerometer (ignored while a hinge angle sensor serves).
  func base(_ reading: Reading) {
    guard hingeSensor == nil else { return }
    sample(.base, reading)
  }

  /// The hinge angle sensor appeared, changed or went away (`nil`).
  func hingeSensorChanged(_ sensor: HingeAngleDescription?) {
    guard sensor != hingeSensor else { return }
    if (sensor == nil) != (hingeSensor == nil) {
      // Another source: decide afresh (no reading of the old one is paired with the new).
      tracker.reset()
      logger.info(
        sensor.map { "hinge angle from \($0.sysname) (\($0.source))" }
          ?? "hinge angle sensor gone: the angle comes from the two accelerometers again")
    }
    hingeSensor = sensor
    hardwareChanged()
  }

  /// A reading of the hinge angle sensor (degrees).
  func measured(_ reading: Reading) {
    guard hingeSensor != nil, case .angle(let degrees) = reading.value else { return }
    track { $0.process(measuredAngle: degrees, time: reading.time.seconds) }
  }

  /// Follows input hotplug, looks for a firmware switch and sets up orientd's own as
  /// configured.
  func begin(hasDisplay: Bool) {
    self.hasDisplay = hasDisplay
    followInputHotplug()
    findRealSwitch()
    begun = true
    hardwareChanged()
  }

  /// Whether some client holds a posture claim.
  func setClaimed(_ claimed: Bool) {
    guard claimed != clientsWant else { return }
    clientsWant = claimed
    if claimed {
      // A new claim decides afresh, as the orientation's first claim does.
      tracker.reset()
    }
    applySensors()
  }

  /// The display sensor came or went.
  func displayChanged(present: Bool) {
    guard present != hasDisplay else { return }
    hasDisplay = present
    hardwareChanged()
  }

  /// A reading of the display sensor (fed only while the base is read).
  func lid(_ reading: Reading) {
    guard isReadingBase else { return }
    sample(.lid, reading)
  }

  /// A reload (SIGHUP): the new `[posture]` section, and firmware switches looked for again
  /// (in case an input event was missed).
  func reload(_ new: PostureSettings) {
    let hingeChanged = new.hinge != settings.hinge
    settings = new
    if hingeChanged { tracker = HingeTracker(parameters: parameters) }
    findRealSwitch()
    hardwareChanged()
  }

  /// Whether the orientation should read `normal` now (`laptop-orientation = normal`).
  var holdsOrientationNormal: Bool {
    settings.keepNormalInLaptop && state.hinge.posture == .laptop
  }

  /// Stops reading and removes orientd's switch.
  func shutdown() {
    virtualSwitch = nil
    realSwitch?.watch.cancel()
    realSwitch = nil
    followsInputHotplug = false
  }

  // MARK: -

  private func sample(_ part: HingePart, _ reading: Reading) {
    guard let acceleration = reading.acceleration else { return }
    track { $0.process(part, time: reading.time.seconds, acceleration) }
  }

  /// Feeds the tracker; logs and publishes what changed.
  private func track(_ feed: (inout HingeTracker) -> Void) {
    let before = state.hinge
    feed(&tracker)
    guard tracker.state != before else { return }
    if tracker.state.posture != before.posture {
      logger.info(
        "posture \(tracker.state.posture.rawValue) (hinge "
          + "\(FixedPoint.format(tracker.angle, decimals: 0)) degrees)")
    }
    if tracker.state.isReliable != before.isReliable {
      logger.debug(
        "hinge angle \(tracker.state.isReliable ? "reliable" : "unreliable: \(tracker.unreliability?.rawValue ?? "?")")"
      )
    }
    update()
  }

  /// The tracker's parameters: the configuration's, with the hinge axis from the base sensor's
  /// udev `ORIENTD_HINGE_AXIS` unless the configuration sets `hinge-axis`.
  private var parameters: HingeParameters {
    var p = settings.hinge
    if !settings.hingeAxisConfigured, let text = baseSensor?.facts.udevHingeAxis {
      if let axis = HingeParameters.axis(text) {
        p.hingeAxis = axis
      } else {
        problems.report(
          "axis \(text)", logger: logger,
          "ignoring udev ORIENTD_HINGE_AXIS=\"\(text)\": expected x, -x, y, -y, z, -z or three "
            + "numbers (logged once)")
      }
    }
    return p
  }

  /// Sensors, switches or settings changed: recompute what exists and what is read.
  private func hardwareChanged() {
    if tracker.parameters != parameters {
      tracker = HingeTracker(parameters: parameters)
      if !settings.hingeAxisConfigured, baseSensor?.facts.udevHingeAxis != nil {
        logger.info("hinge axis \(tracker.parameters.hingeAxis) from udev ORIENTD_HINGE_AXIS")
      }
    }
    let hadHinge = state.hasHinge
    state.hasHinge = hingeSensor != nil || (hasDisplay && baseSensor != nil)
    if state.hasHinge != hadHinge {
      tracker.reset()
      if !state.hasHinge { state.hinge = HingeState() }
    }
    var wanted: Bool
    switch settings.tabletModeSwitch {
    case .off: wanted = false
    case .on: wanted = state.hasHinge
    case .auto: wanted = state.hasHinge && realSwitch == nil
    }
    wanted = wanted && begun
    if wanted && virtualSwitch == nil {
      do {
        virtualSwitch = try UInputTabletModeSwitch(
          initial: state.hinge.posture.isTabletMode, uinputPath: uinputPath)
        logger.notice(
          "created a tablet-mode switch (\(virtualSwitch?.devnode ?? "uinput")), set from the "
            + "posture; both accelerometers are read while it exists "
            + "(tablet-mode-switch = off in [posture] to stop)")
      } catch {
        problems.report("uinput", logger: logger, "\(error); no tablet-mode switch (logged once)")
      }
    } else if !wanted && virtualSwitch != nil {
      virtualSwitch = nil
      logger.notice("removed orientd's tablet-mode switch")
    }
    applySensors()
    update()
  }

  private func applySensors() {
    if !wantsSensors && state.hinge.isReliable {
      // Not read any more: the last posture stays, the angle is no longer current.
      state.hinge.isReliable = false
      state.hinge.angle = .nan
    }
    // The daemon compares with what it does (it may have missed a change made while its
    // callback was not set yet, during enumeration).
    onWantsSensorsChanged?()
  }

  private func update() {
    var next = state
    next.hinge = state.hasHinge ? tracker.state : HingeState()
    if !isReadingBase, state.hasHinge {
      next.hinge.posture = state.hinge.posture
      next.hinge.isReliable = false
      next.hinge.angle = .nan
    }
    if let real = realSwitch {
      next.tabletMode = real.device.switchValue(UInt32(SW_TABLET_MODE)) != 0
      next.tabletModeSource = "switch"
    } else if next.hasHinge {
      next.tabletMode = next.hinge.posture.isTabletMode
      next.tabletModeSource = "hinge"
    } else {
      next.tabletMode = false
      next.tabletModeSource = "none"
    }
    if let virtualSwitch {
      do {
        try virtualSwitch.set(next.hinge.posture.isTabletMode)
      } catch {
        problems.report("write", logger: logger, "\(error) (logged once)")
      }
    }
    guard next != state else { return }
    state = next
    onChange?()
  }

  private func findRealSwitch() {
    realSwitch?.watch.cancel()
    realSwitch = nil
    guard let device = TabletModeSwitches.present(in: inputDirectory).first else { return }
    follow(device)
  }

  private func follow(_ device: InputDevice) {
    guard let loop else { return }
    do {
      let watch = try loop.watch(device.fileDescriptor, for: .readable) { [weak self] _ in
        self?.readRealSwitch()
      }
      realSwitch = (device, watch)
      logger.notice(
        "tablet-mode switch \(device.name) (\(device.path)): TabletMode follows it")
    } catch {
      logger.warning("cannot watch \(device.path): \(error); TabletMode follows the posture")
    }
  }

  /// Follows the `input` subsystem through the daemon's `DeviceWatcher`. It costs no wakeup
  /// while no input device comes or goes, so it runs as long as the daemon (`TabletMode` is
  /// published with or without a hinge).
  private func followInputHotplug() {
    guard !followsInputHotplug, let watcher else { return }
    followsInputHotplug = true
    watcher.subscribe(["input"]) { [weak self] batch in
      guard let self, self.followsInputHotplug else { return }
      switch batch {
      case .events(let devices): self.inputEvents(devices)
      case .present(_, lost: true):
        self.logger.notice("input events were lost; looking for tablet-mode switches again")
        self.findRealSwitch()
        self.hardwareChanged()
      case .present(_, lost: false): break
      }
    }
  }

  /// Input devices came or went: take a firmware switch that appeared when none is followed,
  /// fall back to the posture (and look for another switch) when the followed one went.
  private func inputEvents(_ devices: [UdevDevice]) {
    let followed = realSwitch?.device.path
    var lookAgain = false
    var added: [String] = []
    for device in devices {
      guard let node = device.devnode, node.hasPrefix(inputDirectory + "/event") else {
        continue
      }
      switch device.action {
      case .remove?:
        if realSwitch?.device.path == node {
          logger.notice(
            "tablet-mode switch \(realSwitch?.device.name ?? node) (\(node)) went away; "
              + "TabletMode follows the posture")
          realSwitch?.watch.cancel()
          realSwitch = nil
          lookAgain = true
        }
      // A node may answer its ioctls only by the "change" that follows its "add".
      case .add?, .change?: added.append(node)
      default: continue
      }
    }
    if lookAgain {
      findRealSwitch()
    } else if realSwitch == nil,
      let device = added.lazy.compactMap({ TabletModeSwitches.device(at: $0) }).first
    {
      follow(device)
    }
    if lookAgain || realSwitch?.device.path != followed { hardwareChanged() }
  }

  private func readRealSwitch() {
    guard let real = realSwitch else { return }
    do {
      _ = try real.device.readEvents()
    } catch {
      logger.notice("\(error); the tablet-mode switch is gone, TabletMode follows the posture")
      real.watch.cancel()
      realSwitch = nil
      hardwareChanged()
      return
    }
    update()
  }
}
