import DBusKit
import OrientCore
import OrientLog
import OrientWire

/// What `org.orientd.Posture1` says (see dbus/org.orientd.Posture1.xml).
public struct PostureReading: Equatable, Sendable {
  /// A display and a base accelerometer are present.
  public var hasHinge = false
  /// Degrees, NaN while unreliable.
  public var hingeAngle = Double.nan
  /// Whether `hingeAngle` can be trusted.
  public var hingeAngleReliable = false
  /// The posture.
  public var posture = Posture.undefined
  /// Tablet mode (keyboard unusable).
  public var tabletMode = false
  /// `switch`, `hinge` or `none`.
  public var tabletModeSource = "none"

  /// Nothing known.
  public init() {}

  /// Applies the properties of a `GetAll` answer or a `PropertiesChanged`.
  public mutating func apply(_ properties: [String: DBusValue]) {
    if let v = PostureProperty.hasHinge.value(in: properties)?.boolValue { hasHinge = v }
    if let v = PostureProperty.hingeAngle.value(in: properties)?.doubleValue { hingeAngle = v }
    if let v = PostureProperty.hingeAngleReliable.value(in: properties)?.boolValue {
      hingeAngleReliable = v
    }
    if let v = PostureProperty.posture.value(in: properties)?.stringValue {
      posture = Posture(rawValue: v) ?? .undefined
    }
    if let v = PostureProperty.tabletMode.value(in: properties)?.boolValue { tabletMode = v }
    if let v = PostureProperty.tabletModeSource.value(in: properties)?.stringValue {
      tabletModeSource = v
    }
  }

  /// Equal when every field is, NaN angles being equal.
  public static func == (a: PostureReading, b: PostureReading) -> Bool {
    a.hasHinge == b.hasHinge && a.hingeAngleReliable == b.hingeAngleReliable
      && a.posture == b.posture && a.tabletMode == b.tabletMode
      && a.tabletModeSource == b.tabletModeSource
      && (a.hingeAngle == b.hingeAngle || (a.hingeAngle.isNaN && b.hingeAngle.isNaN))
  }
}

/// Follows orientd's `org.orientd.Posture1` on a connection: reads it, claims the posture once
/// the machine has a hinge (so the base accelerometer is read only on convertibles), and
/// reports every change. An orientd without the interface (older) is simply not followed.
public final class PostureFollower {
  /// Called on the loop with each new reading (only while the machine has a hinge).
  public var onChange: ((PostureReading) -> Void)?
  /// The latest reading.
  public private(set) var reading = PostureReading()
  /// Whether a posture claim is held.
  public private(set) var isClaimed = false

  private let connection: DBusConnection
  private let logger: Logger
  private var subscription: DBusSubscription?
  private static let busName = ClaimTarget.posture.busName
  private static let interface = ClaimTarget.posture.interface
  private static let path = ClaimTarget.posture.path

  /// Follows on `connection` (owned by the caller).
  public init(connection: DBusConnection, logger: Logger) {
    self.connection = connection
    self.logger = logger
  }

  deinit { subscription?.cancel() }

  /// Subscribes, reads the properties and claims when there is a hinge.
  public func start() {
    do {
      subscription = try connection.subscribePropertiesChanged(
        sender: PostureFollower.busName, path: PostureFollower.path,
        interface: PostureFollower.interface
      ) { [weak self] changed, _ in self?.changed(changed) }
    } catch {
      logger.debug("cannot follow \(PostureFollower.interface): \(error)")
      return
    }
    connection.call(
      destination: PostureFollower.busName, path: PostureFollower.path,
      interface: Wire.propertiesInterface, member: "GetAll",
      arguments: [.string(PostureFollower.interface)]
    ) { [weak self] result in
      guard let self else { return }
      switch result {
      case .success(let values):
        if let properties = values.first?.stringKeyedDictionary { self.changed(properties) }
      case .failure(let error):
        // An orientd without the posture interface: nothing to follow.
        self.logger.debug("no posture: \(error.message)")
        self.subscription?.cancel()
        self.subscription = nil
      }
    }
  }

  /// Releases the posture claim (the daemon also releases a client that leaves the bus).
  public func release() {
    guard isClaimed else { return }
    isClaimed = false
    connection.call(
      destination: PostureFollower.busName, path: PostureFollower.path,
      interface: PostureFollower.interface, member: ClaimTarget.posture.releaseMethod
    ) { _ in }
  }

  private func changed(_ properties: [String: DBusValue]) {
    var next = reading
    next.apply(properties)
    let was = reading
    reading = next
    if next.hasHinge && !isClaimed { claim() }
    if next != was, next.hasHinge || was.hasHinge { onChange?(next) }
  }

  private func claim() {
    isClaimed = true
    connection.call(
      destination: PostureFollower.busName, path: PostureFollower.path,
      interface: PostureFollower.interface, member: ClaimTarget.posture.claimMethod
    ) { [weak self] result in
      if case .failure(let error) = result {
        self?.logger.notice("cannot claim the posture: \(error.message)")
        self?.isClaimed = false
      }
    }
  }
}
