/// What the daemon serves and clients claim, one sensor per kind: the claim table, the readers
/// and the published state are per kind.
///
/// Adding a kind is one case here with its arm in `choose` (which of the sensors present serves
/// it) and `noun`, drivers that list it in their sensors' `kinds`, and the consumer that
/// publishes its readings (OrientDaemon's `ClaimTarget.kinds` says which claims want it).
public enum SensorKind: String, CaseIterable, Hashable, Sendable, Comparable,
  CustomStringConvertible
{
  /// The display accelerometer: orientation and tilt.
  case accelerometer
  /// A convertible's base (keyboard) accelerometer: with the display's, the hinge angle.
  case baseAccelerometer = "base-accelerometer"
  /// Ambient light (`LightLevel`).
  case light
  /// Proximity (`ProximityNear`).
  case proximity
  /// A magnetometer's heading (`CompassHeading`).
  case compass
  /// A hinge angle the hardware measures itself (Intel's HID custom hinge sensor, ChromeOS's
  /// lid angle): where present, the posture's angle.
  case hinge
  /// A gyroscope's angular velocity (`org.orientd.Motion1`).
  case gyroscope
  /// A device-rotation sensor's quaternion (`org.orientd.Motion1`).
  case rotation
  /// A magnetometer's field vector: the fused rotation's heading (`org.orientd.Motion1`).
  case magnetometer

  /// What the log calls its sensor.
  public var noun: String {
    switch self {
    case .accelerometer: "accelerometer"
    case .baseAccelerometer: "base accelerometer"
    case .light: "light sensor"
    case .proximity: "proximity sensor"
    case .compass: "compass sensor"
    case .hinge: "hinge angle sensor"
    case .gyroscope: "gyroscope"
    case .rotation: "rotation sensor"
    case .magnetometer: "magnetometer"
    }
  }

  /// The name.
  public var description: String { rawValue }

  /// Declaration order.
  public static func < (a: SensorKind, b: SensorKind) -> Bool {
    (allCases.firstIndex(of: a) ?? 0) < (allCases.firstIndex(of: b) ?? 0)
  }

  /// The result of choosing: the sensor to use and why the others are not used.
  public struct Choice: Equatable, Sendable {
    /// The sensor to read, if any.
    public var chosen: Sensor?
    /// One line per sensor not chosen, with the reason.
    public var notChosen: [String]

    /// Creates a choice.
    public init(chosen: Sensor?, notChosen: [String] = []) {
      self.chosen = chosen
      self.notChosen = notChosen
    }
  }

  /// Chooses this kind's sensor among `candidates` (the sensors that list this kind),
  /// deterministically.
  public func choose(_ candidates: [Sensor], mode: SamplingConfiguration.Mode) -> Choice {
    switch self {
    case .accelerometer:
      // The display sensor: SensorChoice's rules (base sensors never, stated locations first,
      // IIO before input, the lowest device number).
      let outcome = SensorChoice.choose(candidates.compactMap(\.accelerometer), mode: mode)
      let chosen = outcome.chosen.flatMap { d in
        candidates.first { $0.syspath == d.facts.syspath }
      }
      return Choice(chosen: chosen, notChosen: outcome.notChosen)
    case .baseAccelerometer:
      // The lowest-numbered accelerometer located in the base.
      let bases = candidates.filter { $0.accelerometer?.location == .base }
      return Choice(chosen: bases.min { Sensor.deviceOrder($0, $1) })
    case .light, .proximity, .compass:
      // IIO first; then applesmc's coarse percentage; an input switch last (a number with a
      // near level says more than a switch); then by device path.
      func order(_ sensor: Sensor) -> (Int, String) {
        switch sensor.ambient?.driver {
        case .inputSwitch?: (2, sensor.syspath)
        case .hwmonLight?: (1, sensor.syspath)
        default: (0, sensor.syspath)
        }
      }
      return Choice(chosen: candidates.min { order($0) < order($1) })
    case .hinge:
      // The lowest device number, as for the base accelerometer.
      return Choice(chosen: candidates.min { Sensor.deviceOrder($0, $1) })
    case .gyroscope, .rotation, .magnetometer:
      // A device that can be buffered first (full rate, kernel timestamps); then an absolute
      // heading before a relative one; then by device path.
      func order(_ sensor: Sensor) -> (Int, Int, String) {
        let d = sensor.motion
        return (
          d?.scanElements.isEmpty == false ? 0 : 1, d?.headingIsAbsolute == true ? 0 : 1,
          sensor.syspath
        )
      }
      return Choice(chosen: candidates.min { order($0) < order($1) })
    }
  }
}

extension Sensor {
  /// By device number (`iio:device2` before `iio:device10`), then sysfs path.
  static func deviceOrder(_ a: Sensor, _ b: Sensor) -> Bool {
    let an = a.accelerometer?.facts.deviceNumber ?? Int.max
    let bn = b.accelerometer?.facts.deviceNumber ?? Int.max
    return (an, a.sysname, a.syspath) < (bn, b.sysname, b.syspath)
  }
}
