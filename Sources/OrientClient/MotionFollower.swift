import DBusKit
import OrientCore
import OrientLog
import OrientWire

/// What `org.orientd.Motion1` says (see dbus/org.orientd.Motion1.xml).
public struct MotionReading: Equatable, Sendable {
  /// A gyroscope is present.
  public var hasGyroscope = false
  /// A rotation is available.
  public var hasRotation = false
  /// `sensor`, `fusion-9`, `fusion-6` or `none`.
  public var rotationSource = "none"
  /// rad/s, display frame.
  public var angularVelocity = Vector3.zero
  /// Display frame to earth frame.
  public var rotation = Quaternion.identity
  /// CLOCK_MONOTONIC microseconds of the sample, 0 before the first.
  public var timestamp: UInt64 = 0

  /// Nothing known.
  public init() {}

  /// Applies the properties of a `GetAll` answer or a `PropertiesChanged`.
  public mutating func apply(_ properties: [String: DBusValue]) {
    if let v = MotionProperty.hasGyroscope.value(in: properties)?.boolValue { hasGyroscope = v }
    if let v = MotionProperty.hasRotation.value(in: properties)?.boolValue { hasRotation = v }
    if let v = MotionProperty.rotationSource.value(in: properties)?.stringValue {
      rotationSource = v
    }
    if let f = MotionProperty.angularVelocity.value(in: properties)?.doubles, f.count == 3 {
      angularVelocity = Vector3(f[0], f[1], f[2])
    }
    if let f = MotionProperty.rotation.value(in: properties)?.doubles, f.count == 4 {
      rotation = Quaternion(w: f[0], x: f[1], y: f[2], z: f[3])
    }
    if let v = MotionProperty.motionTimestamp.value(in: properties)?.uint64Value {
      timestamp = v
    }
  }
}

extension DBusValue {
  /// A structure of doubles' fields.
  fileprivate var doubles: [Double]? {
    guard let fields = structureFields else { return nil }
    let values = fields.compactMap(\.doubleValue)
    return values.count == fields.count ? values : nil
  }
}

/// Follows `org.orientd.Motion1` on a connection: subscribes, claims (polkit action
/// `org.orientd.motion.read`), reads the properties and reports every change.
public final class MotionFollower {
  /// Called on the loop with the reading once claimed and read, then with each change.
  public var onChange: ((MotionReading) -> Void)?
  /// Called on the loop when the claim or the first read fails.
  public var onFailure: ((OrientClientError) -> Void)?
  /// The latest reading.
  public private(set) var reading = MotionReading()
  /// Whether the claim is answered and the properties read.
  public private(set) var isReady = false

  private let connection: DBusConnection
  private let logger: Logger
  private var subscription: DBusSubscription?
  private var isClaimed = false
  private static let target = ClaimTarget.motion

  /// Follows on `connection` (owned by the caller).
  public init(connection: DBusConnection, logger: Logger) {
    self.connection = connection
    self.logger = logger
  }

  deinit { subscription?.cancel() }

  /// Subscribes, claims, then reads the properties (orientd answers a claim after the first
  /// sample, so they are fresh).
  public func start() {
    let t = MotionFollower.target
    do {
      subscription = try connection.subscribePropertiesChanged(
        sender: t.busName, path: t.path, interface: t.interface
      ) { [weak self] changed, _ in self?.changed(changed) }
    } catch {
      onFailure?(OrientClientError(error, talkingTo: t.busName))
      return
    }
    connection.call(
      destination: t.busName, path: t.path, interface: t.interface, member: t.claimMethod,
      timeoutMilliseconds: 10_000
    ) { [weak self] result in
      guard let self else { return }
      switch result {
      case .failure(let error): self.fail(self.claimError(error))
      case .success:
        self.isClaimed = true
        self.read()
      }
    }
  }

  /// Releases the claim (orientd also releases a client that leaves the bus).
  public func stop(then done: @escaping () -> Void = {}) {
    subscription?.cancel()
    subscription = nil
    guard isClaimed else { return done() }
    isClaimed = false
    let t = MotionFollower.target
    connection.call(
      destination: t.busName, path: t.path, interface: t.interface, member: t.releaseMethod,
      timeoutMilliseconds: 1_000
    ) { _ in done() }
  }

  private func read() {
    let t = MotionFollower.target
    connection.call(
      destination: t.busName, path: t.path, interface: Wire.propertiesInterface,
      member: "GetAll", arguments: [.string(t.interface)], timeoutMilliseconds: 10_000
    ) { [weak self] result in
      guard let self else { return }
      switch result {
      case .failure(let error): self.fail(OrientClientError(error, talkingTo: t.busName))
      case .success(let answer):
        if let properties = answer.first?.stringKeyedDictionary { self.reading.apply(properties) }
        self.isReady = true
        self.onChange?(self.reading)
      }
    }
  }

  private func changed(_ properties: [String: DBusValue]) {
    var next = reading
    next.apply(properties)
    guard next != reading else { return }
    reading = next
    if isReady { onChange?(next) }
  }

  private func fail(_ error: OrientClientError) {
    subscription?.cancel()
    subscription = nil
    onFailure?(error)
  }

  private func claimError(_ error: DBusError) -> OrientClientError {
    let t = MotionFollower.target
    switch error.name {
    case .serviceUnknown, .nameHasNoOwner:
      return OrientClientError(
        .serviceMissing, "\(t.busName) is not on the bus (\(error.message)): is orientd running?")
    case .accessDenied:
      return OrientClientError(
        .accessDenied,
        "\(t.busName) refused \(t.interface).Claim (\(error.message)): polkit "
          + "(\(Wire.motionReadAction)) allows motion to the active local session only")
    case Wire.noMotionSensorError:
      // Reported as missing hardware (exit 69), like --get without an accelerometer.
      return OrientClientError(
        .noAccelerometer, "this machine has no gyroscope or rotation sensor (\(error.message))")
    case .unknownMethod, .unknownObject, .unknownInterface:
      return OrientClientError(
        .serviceMissing,
        "\(t.busName) serves no \(t.interface) (\(error.message)): too old an orientd")
    default:
      return OrientClientError(error, talkingTo: t.busName)
    }
  }
}
