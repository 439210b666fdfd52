import DBusKit
import OrientCore
import OrientWire

/// A D-Bus service that reports the device orientation, and how to talk to it.
///
/// orientd serves both; iio-sensor-proxy serves only `net.hadess.SensorProxy`. Clients prefer
/// orientd's own API (it has tilt as the daemon computes it, the rotation, the sensor and the
/// gravity vector) and fall back to the compatibility one.
public enum OrientService: Sendable, CaseIterable, CustomStringConvertible {
  /// orientd's own API: `org.orientd.Orientation1` at `/org/orientd/Orientation1`.
  case orientd
  /// iio-sensor-proxy's API (also served by orientd): `net.hadess.SensorProxy`.
  case sensorProxy

  /// The well-known bus name.
  public var busName: String { claim.busName }

  /// The object path.
  public var path: DBusObjectPath { claim.path }

  /// The interface name (the same as the bus name for both).
  public var interface: String { claim.interface }

  /// The method that claims the accelerometer.
  public var claimMethod: String { claim.claimMethod }

  /// The method that releases the claim.
  public var releaseMethod: String { claim.releaseMethod }

  /// The claim of the orientation through this service's API.
  public var claim: ClaimTarget { self == .orientd ? .orientd : .sensorProxy }

  /// The property holding the orientation wire name.
  public var orientationProperty: String {
    self == .orientd
      ? OrientdProperty.orientation.rawValue : SensorProxyProperty.accelerometerOrientation.rawValue
  }

  /// The property holding the tilt wire name.
  public var tiltProperty: String {
    self == .orientd
      ? OrientdProperty.tilt.rawValue : SensorProxyProperty.accelerometerTilt.rawValue
  }

  /// The bus name.
  public var description: String { busName }

  /// `/org/orientd/Orientation1`.
  public static let orientdPath = Wire.orientationPath
  /// `/net/hadess/SensorProxy`.
  public static let sensorProxyPath = Wire.sensorProxyPath
  /// `/net/hadess/SensorProxy/Compass`.
  public static let compassPath = Wire.compassPath
}

/// What a service reports about the device orientation.
public struct OrientState: Equatable, Sendable {
  /// The service the state came from.
  public var service: OrientService
  /// Whether the service has a display accelerometer.
  public var hasAccelerometer = false
  /// The orientation (`undefined` with no sensor or no reading yet).
  public var orientation: Orientation = .undefined
  /// The tilt (`undefined` when unknown, also from an iio-sensor-proxy older than 3.6).
  public var tilt: Tilt = .undefined
  /// orientd's `Sensor` description (device, name, mode, rate, ...); empty from
  /// iio-sensor-proxy or when there is no sensor.
  public var sensor: [String: DBusValue] = [:]
  /// orientd's `SuggestedOrientation`: the accelerometer's orientation while a face kept
  /// `orientation` from turning to it (`nil`: none, or iio-sensor-proxy).
  public var suggestedOrientation: Orientation?

  /// Creates the state of a service before anything is known.
  public init(service: OrientService) {
    self.service = service
  }

  /// The clockwise device rotation in degrees (0, 90, 180, 270), `nil` while undefined.
  public var rotation: Int? { orientation.clockwiseRotation }

  /// Which parts of the state a property update touched.
  public struct Fields: OptionSet, Sendable {
    /// The bits.
    public let rawValue: Int
    /// Creates fields from bits.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `HasAccelerometer`.
    public static let hasAccelerometer = Fields(rawValue: 1)
    /// `Orientation` / `Rotation` / `AccelerometerOrientation`.
    public static let orientation = Fields(rawValue: 2)
    /// `Tilt` / `AccelerometerTilt`.
    public static let tilt = Fields(rawValue: 4)
    /// `Sensor`.
    public static let sensor = Fields(rawValue: 8)
    /// `SuggestedOrientation`.
    public static let suggestion = Fields(rawValue: 16)
  }

  /// Applies property values (from `GetAll` or `PropertiesChanged`).
  ///
  /// - Returns: the fields whose value actually changed. Unknown wire names count as
  ///   `undefined`; properties of other types are ignored.
  @discardableResult
  public mutating func apply(_ properties: [String: DBusValue]) -> Fields {
    var changed: Fields = []
    if let value = OrientdProperty.hasAccelerometer.value(in: properties)?.boolValue,
      value != hasAccelerometer
    {
      hasAccelerometer = value
      changed.insert(.hasAccelerometer)
    }
    if let name = properties[service.orientationProperty]?.stringValue {
      let value = Orientation(rawValue: name) ?? .undefined
      if value != orientation {
        orientation = value
        changed.insert(.orientation)
      }
    }
    if let name = properties[service.tiltProperty]?.stringValue {
      let value = Tilt(rawValue: name) ?? .undefined
      if value != tilt {
        tilt = value
        changed.insert(.tilt)
      }
    }
    if service == .orientd,
      let value = OrientdProperty.sensor.value(in: properties)?.stringKeyedDictionary,
      value != sensor
    {
      sensor = value
      changed.insert(.sensor)
    }
    if service == .orientd,
      let name = OrientdProperty.suggestedOrientation.value(in: properties)?.stringValue
    {
      let value = Orientation(rawValue: name).flatMap { $0 == .undefined ? nil : $0 }
      if value != suggestedOrientation {
        suggestedOrientation = value
        changed.insert(.suggestion)
      }
    }
    return changed
  }
}

/// orientd's `GetReading()`: the filtered gravity vector and the time of its last sample.
public struct GravityReading: Equatable, Sendable {
  /// m/s^2, display frame (upright reads about (0, -9.8, 0)).
  public var x: Double
  /// m/s^2.
  public var y: Double
  /// m/s^2.
  public var z: Double
  /// `CLOCK_MONOTONIC` time of the last sample in the estimate, in microseconds.
  public var timestampMicroseconds: UInt64

  /// Creates a reading.
  public init(x: Double, y: Double, z: Double, timestampMicroseconds: UInt64) {
    self.x = x
    self.y = y
    self.z = z
    self.timestampMicroseconds = timestampMicroseconds
  }
}

/// Why the orientation could not be obtained, with a message that says what to do.
public struct OrientClientError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The class of failure.
  public enum Kind: Sendable, Equatable {
    /// Neither orientd nor iio-sensor-proxy is on the bus (or it did not appear in time).
    case serviceMissing
    /// The service runs but has no display accelerometer (`HasAccelerometer` false).
    case noAccelerometer
    /// The bus policy refused the call or the connection.
    case accessDenied
    /// No bus to connect to, or the connection was lost.
    case noBus
    /// The service answered something unexpected or not in time.
    case failed
  }

  /// The class.
  public var kind: Kind
  /// What went wrong and what to do.
  public var message: String

  /// Creates an error.
  public init(_ kind: Kind, _ message: String) {
    self.kind = kind
    self.message = message
  }

  /// The message.
  public var description: String { message }

  /// Classifies a D-Bus error from talking to `service`.
  init(_ error: DBusError, talkingTo service: String) {
    switch error.name {
    case .serviceUnknown, .nameHasNoOwner:
      self.init(.serviceMissing, "\(service) is not running on the bus (\(error.message))")
    case .accessDenied:
      self.init(
        .accessDenied,
        "the bus policy does not allow calling \(service) (\(error.message)); is "
          + "/usr/share/dbus-1/system.d/orientd.conf installed?")
    case .disconnected, .noServer, .badAddress:
      self.init(.noBus, "lost the bus while talking to \(service): \(error.message)")
    default:
      self.init(.failed, "\(service): \(error)")
    }
  }
}
