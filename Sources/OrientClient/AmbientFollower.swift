import DBusKit
import OrientLog

/// What `net.hadess.SensorProxy` says about the light, proximity and compass sensors (the
/// contract in docs/dbus-api.md; orientd and iio-sensor-proxy serve the same properties).
public struct AmbientValues: Equatable, Sendable {
  /// `HasAmbientLight`.
  public var hasLight = false
  /// `LightLevel`, in `lightUnit`.
  public var lightLevel = 0.0
  /// `LightLevelUnit`: `lux` or `vendor` (a percentage, as applesmc's).
  public var lightUnit = "lux"
  /// `HasProximity`.
  public var hasProximity = false
  /// `ProximityNear`.
  public var proximityNear = false
  /// `HasCompass` (on `/net/hadess/SensorProxy/Compass`).
  public var hasCompass = false
  /// `CompassHeading`: degrees from north, -1 while unknown.
  public var compassHeading = -1.0

  /// Nothing known.
  public init() {}

  /// Applies the properties of a `GetAll` answer or a `PropertiesChanged` (of either
  /// interface: their names do not overlap).
  public mutating func apply(_ properties: [String: DBusValue]) {
    if let v = properties["HasAmbientLight"]?.boolValue { hasLight = v }
    if let v = properties["LightLevel"]?.doubleValue { lightLevel = v }
    if let v = properties["LightLevelUnit"]?.stringValue { lightUnit = v }
    if let v = properties["HasProximity"]?.boolValue { hasProximity = v }
    if let v = properties["ProximityNear"]?.boolValue { proximityNear = v }
    if let v = properties["HasCompass"]?.boolValue { hasCompass = v }
    if let v = properties["CompassHeading"]?.doubleValue { compassHeading = v }
  }
}

/// Claims light, proximity and/or the compass on `net.hadess.SensorProxy` (orientd's
/// compatibility API, or iio-sensor-proxy itself), reads them and reports every change;
/// releases on `stop()`. orientd has no light API of its own (docs/dbus-api.md says why), so
/// this is how its clients follow these sensors too.
public final class AmbientFollower {
  /// A sensor kind of the contract.
  public enum Kind: String, CaseIterable, Sendable, Comparable {
    /// Ambient light: `ClaimLight`.
    case light
    /// Proximity: `ClaimProximity`.
    case proximity
    /// Compass: `ClaimCompass` on `/net/hadess/SensorProxy/Compass`.
    case compass

    /// The `Claim`/`Release` suffix.
    var method: String {
      switch self {
      case .light: "Light"
      case .proximity: "Proximity"
      case .compass: "Compass"
      }
    }

    var path: DBusObjectPath {
      self == .compass ? OrientService.compassPath : OrientService.sensorProxyPath
    }

    var interface: String {
      self == .compass ? AmbientFollower.compassInterface : AmbientFollower.busName
    }

    /// In `allCases` order.
    public static func < (a: Kind, b: Kind) -> Bool {
      (allCases.firstIndex(of: a) ?? 0) < (allCases.firstIndex(of: b) ?? 0)
    }
  }

  /// Called on the loop with the values once every claim is answered and the properties are
  /// read (`isReady`), then with each change.
  public var onChange: ((AmbientValues) -> Void)?
  /// Called on the loop when a claim or the first read fails (not on the service's later
  /// disappearance: the orientation client reports that).
  public var onFailure: ((OrientClientError) -> Void)?
  /// The latest values.
  public private(set) var values = AmbientValues()
  /// Whether the claims are answered and the first values read since `start()`.
  public private(set) var isReady = false
  /// The kinds followed.
  public let kinds: [Kind]

  private let connection: DBusConnection
  private let logger: Logger
  private var subscriptions: [DBusSubscription] = []
  private var claimed: Set<Kind> = []
  /// Increases with every start and stop, so that answers to an older start are ignored.
  private var generation = 0
  /// After `stop()` or a failure (not after `forget()`, nor once started again): a claim that
  /// succeeds only now is released at once, so that no claim outlives the follower's interest.
  private var releasesLateClaims = false
  private static let busName = "net.hadess.SensorProxy"
  private static let compassInterface = "net.hadess.SensorProxy.Compass"

  /// Follows `kinds` on `connection` (owned by the caller).
  public init(connection: DBusConnection, kinds: Set<Kind>, logger: Logger) {
    self.connection = connection
    self.kinds = kinds.sorted()
    self.logger = logger
  }

  deinit { for subscription in subscriptions { subscription.cancel() } }

  /// Subscribes, claims every kind, then reads the properties. The service answers a first
  /// claim after its first reading (orientd: at most about 1.5 s), so the values are fresh.
  public func start() {
    stopFollowing()
    releasesLateClaims = false
    generation += 1
    let current = generation
    values = AmbientValues()
    isReady = false
    let interfaces = Set(kinds.map(\.interface)).sorted()
    for interface in interfaces {
      let path = interface == AmbientFollower.busName ? Kind.light.path : Kind.compass.path
      do {
        subscriptions.append(
          try connection.subscribePropertiesChanged(
            sender: AmbientFollower.busName, path: path, interface: interface
          ) { [weak self] changed, _ in self?.changed(changed, generation: current) })
      } catch {
        fail(OrientClientError(error, talkingTo: AmbientFollower.busName), generation: current)
        return
      }
    }
    var waiting = kinds.count
    for kind in kinds {
      connection.call(
        destination: AmbientFollower.busName, path: kind.path, interface: kind.interface,
        member: "Claim\(kind.method)", timeoutMilliseconds: 10_000
      ) { [weak self] result in
        guard let self else { return }
        guard self.generation == current else {
          if case .success = result, self.releasesLateClaims { self.release(kind) }
          return
        }
        switch result {
        case .failure(let error):
          self.fail(self.claimError(error, kind), generation: current)
        case .success:
          self.claimed.insert(kind)
          waiting -= 1
          if waiting == 0 { self.read(interfaces, generation: current) }
        }
      }
    }
  }

  /// Releases the claims held (the service also releases a client that leaves the bus) and
  /// stops following.
  public func stop() {
    releaseClaims()
    generation += 1
    stopFollowing()
  }

  /// Forgets the claims without releasing them: the service that held them is gone.
  public func forget() {
    releasesLateClaims = false
    generation += 1
    stopFollowing()
  }

  /// Releases every claim held, and any that succeeds later (until the next `start()`).
  private func releaseClaims() {
    for kind in kinds where claimed.contains(kind) { release(kind) }
    releasesLateClaims = true
  }

  private func release(_ kind: Kind) {
    connection.call(
      destination: AmbientFollower.busName, path: kind.path, interface: kind.interface,
      member: "Release\(kind.method)"
    ) { _ in }
  }

  private func stopFollowing() {
    for subscription in subscriptions { subscription.cancel() }
    subscriptions = []
    claimed = []
    isReady = false
  }

  private func read(_ interfaces: [String], generation current: Int) {
    var waiting = interfaces.count
    for interface in interfaces {
      let path = interface == AmbientFollower.busName ? Kind.light.path : Kind.compass.path
      connection.call(
        destination: AmbientFollower.busName, path: path,
        interface: "org.freedesktop.DBus.Properties", member: "GetAll",
        arguments: [.string(interface)], timeoutMilliseconds: 10_000
      ) { [weak self] result in
        guard let self, self.generation == current else { return }
        switch result {
        case .failure(let error):
          self.fail(
            OrientClientError(error, talkingTo: AmbientFollower.busName), generation: current)
        case .success(let answer):
          if let properties = answer.first?.stringKeyedDictionary { self.values.apply(properties) }
          waiting -= 1
          if waiting == 0 {
            self.isReady = true
            self.onChange?(self.values)
          }
        }
      }
    }
  }

  private func changed(_ properties: [String: DBusValue], generation current: Int) {
    guard generation == current else { return }
    var next = values
    next.apply(properties)
    guard next != values else { return }
    values = next
    if isReady { onChange?(next) }
  }

  private func fail(_ error: OrientClientError, generation current: Int) {
    guard generation == current else { return }
    // One claim refused (or the first read failed): the others, held or still answered later,
    // are given back rather than kept until the client leaves the bus.
    releaseClaims()
    generation += 1
    stopFollowing()
    onFailure?(error)
  }

  /// The claim's error, saying what the user can do about it.
  private func claimError(_ error: DBusError, _ kind: Kind) -> OrientClientError {
    let service = AmbientFollower.busName
    switch error.name {
    case .serviceUnknown, .nameHasNoOwner:
      return OrientClientError(
        .serviceMissing,
        "\(service) is not on the bus (\(error.message)); the \(kind) sensor is served only "
          + "there: run orientd without --no-compat, or iio-sensor-proxy")
    case .accessDenied where kind == .compass:
      // iio-sensor-proxy before 3.6 (and orientd before the same change) gave the compass to
      // the geoclue user alone in its bus policy.
      return OrientClientError(
        .accessDenied,
        "\(service) refused ClaimCompass (\(error.message)): polkit "
          + "(net.hadess.SensorProxy.claim-sensor) does not allow it, or the service's bus "
          + "policy gives the compass to the geoclue user only (iio-sensor-proxy before 3.6)")
    case .accessDenied:
      return OrientClientError(
        .accessDenied,
        "\(service) refused Claim\(kind.method) (\(error.message)): the bus policy or polkit "
          + "(net.hadess.SensorProxy.claim-sensor) does not allow it")
    case .unknownMethod:
      return OrientClientError(
        .failed, "\(service) has no Claim\(kind.method) (\(error.message)): too old a service")
    default:
      return OrientClientError(error, talkingTo: service)
    }
  }
}
