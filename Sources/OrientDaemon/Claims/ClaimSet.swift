import OrientWire
import Sensors

/// Who holds a claim, per target, keyed by the caller's unique bus name: the one claim table
/// for every kind (the orientation through either API, the posture, light, proximity,
/// compass).
///
/// Claiming twice is a no-op, releasing without a claim succeeds, and a client that leaves the
/// bus loses all its claims (`vanished`). Pure bookkeeping: the daemon decides what a change
/// means (start or stop sampling).
public struct ClaimSet: Equatable, Sendable {
  private var holders: [ClaimTarget: Set<String>] = [:]

  /// No claims.
  public init() {}

  /// Adds a claim.
  ///
  /// - Returns: whether `name` held no claim in any API before (start tracking it).
  @discardableResult
  public mutating func claim(_ name: String, _ api: ClaimTarget) -> Bool {
    let new = !holds(name)
    holders[api, default: []].insert(name)
    return new
  }

  /// Removes a claim.
  ///
  /// - Returns: whether `name` now holds no claim at all (stop tracking it).
  @discardableResult
  public mutating func release(_ name: String, _ api: ClaimTarget) -> Bool {
    holders[api]?.remove(name)
    return !holds(name)
  }

  /// Removes every claim of a client that left the bus.
  public mutating func vanished(_ name: String) {
    for api in ClaimTarget.allCases { holders[api]?.remove(name) }
  }

  /// Whether `name` holds a claim in any API.
  public func holds(_ name: String) -> Bool {
    ClaimTarget.allCases.contains { holders[$0]?.contains(name) == true }
  }

  /// Whether `name` holds a claim of `api`.
  public func holds(_ name: String, _ api: ClaimTarget) -> Bool {
    holders[api]?.contains(name) == true
  }

  /// Whether anybody holds a claim of `api`. Constant time: the claim path asks this on
  /// every claim and release, where sorting the claimers (`claimers(_:)`) cost 1000 clients
  /// a third of the daemon's time (docs/benchmark.md, "Claims").
  public func isClaimed(_ api: ClaimTarget) -> Bool { holders[api]?.isEmpty == false }

  /// The claimers of one API, sorted (the destinations of its `PropertiesChanged`).
  public func claimers(_ api: ClaimTarget) -> [String] { (holders[api] ?? []).sorted() }

  /// The number of distinct clients holding a claim.
  public var clientCount: Int {
    ClaimTarget.allCases.reduce(into: Set<String>()) { $0.formUnion(holders[$1] ?? []) }.count
  }

  /// The number of claims, counting a client once per API.
  public var claimCount: Int { ClaimTarget.allCases.reduce(0) { $0 + (holders[$1]?.count ?? 0) } }

  /// Whether nobody holds a claim: then nothing is sampled.
  public var isEmpty: Bool { claimCount == 0 }
}

extension ClaimTarget {
  /// The sensor kinds a claim of this target reads (the posture's base accelerometer is added
  /// by the posture itself, only on a convertible: `PostureController.wantedKinds`).
  public var kinds: Set<SensorKind> {
    switch self {
    case .orientd, .sensorProxy, .posture: [.accelerometer]
    case .light: [.light]
    case .proximity: [.proximity]
    case .compass: [.compass]
    // The display accelerometer corrects the fused rotation's inclination.
    case .motion: [.gyroscope, .rotation, .magnetometer, .accelerometer]
    }
  }

  /// The kind whose first reading after it starts answers a held claim of this target.
  public var holdKind: SensorKind {
    switch self {
    case .orientd, .sensorProxy, .posture: .accelerometer
    case .light: .light
    case .proximity: .proximity
    case .compass: .compass
    case .motion: .gyroscope
    }
  }
}

extension ClaimSet {
  /// The kinds some claim reads.
  public var wantedKinds: Set<SensorKind> {
    ClaimTarget.allCases.filter(isClaimed).reduce(into: []) { $0.formUnion($1.kinds) }
  }
}
