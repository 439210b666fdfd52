import OrientCore

/// The rotation suggestion of `orientd rotate --suggest`, as a pure state machine (Android 9's
/// rotate button): while the rotation is locked, a turn the detector commits offers to rotate
/// once; the offer goes away after `timeout`, when the device turns back to what the screen
/// shows, or when the lock is lifted; accepting it rotates once and leaves the lock on.
///
/// No clock and no I/O: the caller passes the time in seconds, shows and withdraws the offer,
/// and calls `expire` when the `deadline` passes.
public struct RotationSuggestion: Sendable, Equatable {
  /// The offer being shown.
  public struct Offer: Equatable, Sendable {
    /// Identifies it (answers to older offers are ignored).
    public var id: Int
    /// The orientation it would rotate to.
    public var orientation: Orientation
    /// When it goes away by itself.
    public var deadline: Double
  }

  /// What the caller must do.
  public enum Action: Equatable, Sendable {
    /// Show this offer (replacing any shown one).
    case show(Offer)
    /// Take the offer down; the reason is for the log.
    case withdraw(id: Int, reason: String)
    /// The user accepted: rotate once to this orientation (the lock stays on).
    case rotate(Orientation)
  }

  /// How long an offer stays, in seconds.
  public var timeout: Double
  /// The offer being shown, if any.
  public private(set) var offer: Offer?
  private var nextID = 1

  /// Creates the machine with nothing offered.
  public init(timeout: Double = 5) { self.timeout = timeout }

  /// The device is in `orientation` at `now`; the screen shows `shown` and the rotation is
  /// `locked` or not.
  public mutating func update(
    orientation: Orientation, shown: Orientation?, locked: Bool, at now: Double
  ) -> [Action] {
    guard locked else { return withdraw("rotation unlocked") }
    guard orientation != .undefined, let shown, orientation != shown else {
      return withdraw("the device turned back to what the screen shows")
    }
    if let offer, offer.orientation == orientation { return [] }
    var actions = withdraw("the device turned to \(orientation)")
    let made = Offer(id: nextID, orientation: orientation, deadline: now + timeout)
    nextID += 1
    offer = made
    actions.append(.show(made))
    return actions
  }

  /// The user accepted offer `id`.
  public mutating func accept(_ id: Int) -> [Action] {
    guard let offer, offer.id == id else { return [] }
    self.offer = nil
    return [.rotate(offer.orientation)]
  }

  /// Offer `id` was closed by someone else (the notification dismissed).
  public mutating func dismissed(_ id: Int) {
    if offer?.id == id { offer = nil }
  }

  /// The deadline of offer `id` passed.
  public mutating func expire(_ id: Int) -> [Action] {
    guard offer?.id == id else { return [] }
    return withdraw("no answer within \(shortSeconds(timeout)) s")
  }

  private mutating func withdraw(_ reason: String) -> [Action] {
    guard let offer else { return [] }
    self.offer = nil
    return [.withdraw(id: offer.id, reason: reason)]
  }

  private func shortSeconds(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(value)
  }
}
