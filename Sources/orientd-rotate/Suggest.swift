import DBusKit
import OrientCore
import OrientLog
import ScreenRotation
import SystemKit

/// `orientd rotate --suggest`: while the rotation is locked, a turn of the device offers a
/// desktop notification (`org.freedesktop.Notifications` on the session bus) with a "Rotate"
/// action, which turns the screen once; the offer goes away after `--suggest-timeout`, when
/// the device turns back, or on unlock (`RotationSuggestion` decides).
final class SuggestionController {
  private var machine: RotationSuggestion
  private let loop: EventLoop
  private let logger: Logger
  private let connection: DBusConnection?
  private var subscriptions: [DBusSubscription] = []
  private var timer: EventLoop.Timer?
  /// The server's notification id for each shown offer.
  private var notifications: [Int: UInt32] = [:]
  /// Called when the user accepts: rotate once to this orientation.
  var onRotate: (Orientation) -> Void = { _ in }

  static let path = (try? DBusObjectPath("/org/freedesktop/Notifications")) ?? .root
  static let interface = "org.freedesktop.Notifications"

  /// Connects to the session bus; without one, suggestions are logged and not shown.
  init(timeoutSeconds: Double, loop: EventLoop, logger: Logger) {
    machine = RotationSuggestion(timeout: timeoutSeconds)
    self.loop = loop
    self.logger = logger
    var made: DBusConnection?
    do {
      made = try DBusConnection(bus: .session, loop: loop, logger: logger)
    } catch {
      logger.warning(
        "--suggest: no session bus (\(error.message)); rotation suggestions cannot be shown")
    }
    connection = made
    guard let bus = made else { return }
    for member in ["ActionInvoked", "NotificationClosed"] {
      do {
        subscriptions.append(
          try bus.subscribe(
            DBusMatchRule(
              sender: nil, path: SuggestionController.path,
              interface: SuggestionController.interface, member: member)
          ) { [weak self] message in self?.signal(member, message) })
      } catch {
        logger.warning("--suggest: cannot follow \(member): \(error.message)")
      }
    }
  }

  /// The device orientation, what the screen shows and the lock, after any change.
  func update(orientation: Orientation, shown: Orientation?, locked: Bool) {
    perform(machine.update(orientation: orientation, shown: shown, locked: locked, at: now()))
  }

  /// Takes everything down (orientd rotate stops).
  func close() {
    perform(machine.update(orientation: .undefined, shown: nil, locked: false, at: now()))
    timer?.cancel()
    for subscription in subscriptions { subscription.cancel() }
    subscriptions = []
    connection?.flush()
    connection?.close()
  }

  private func now() -> Double { Double(Clock.monotonicNanoseconds()) / 1e9 }

  private func perform(_ actions: [RotationSuggestion.Action]) {
    for action in actions {
      switch action {
      case .show(let offer):
        show(offer)
      case .withdraw(let id, let reason):
        logger.notice("rotation suggestion withdrawn: \(reason)")
        timer?.disarm()
        if let notification = notifications.removeValue(forKey: id) {
          connection?.call(
            destination: SuggestionController.interface, path: SuggestionController.path,
            interface: SuggestionController.interface, member: "CloseNotification",
            arguments: [.uint32(notification)]
          ) { _ in }
        }
      case .rotate(let orientation):
        timer?.disarm()
        logger.notice("rotation suggestion accepted: turning to \(orientation) once")
        onRotate(orientation)
      }
    }
  }

  private func show(_ offer: RotationSuggestion.Offer) {
    logger.notice("rotation locked; suggesting \(offer.orientation)")
    if timer == nil {
      timer = try? loop.makeTimer { [weak self] in self?.expired() }
    }
    try? timer?.schedule(after: .milliseconds(Int(machine.timeout * 1000)))
    guard let connection else { return }
    let hints: [(String, DBusValue)] = [
      ("urgency", .byte(1)), ("transient", .boolean(true)), ("category", .string("device")),
    ]
    connection.call(
      destination: SuggestionController.interface, path: SuggestionController.path,
      interface: SuggestionController.interface, member: "Notify",
      arguments: [
        .string("orientd rotate"), .uint32(0), .string("object-rotate-right"),
        .string("Rotate the screen?"),
        .string(
          "The device is held \(SuggestionController.describe(offer.orientation)); the rotation "
            + "is locked."),
        .strings(["rotate", "Rotate"]),
        .stringVariantDictionary(ordered: hints),
        .int32(Int32(machine.timeout * 1000)),
      ]
    ) { [weak self] result in
      guard let self else { return }
      switch result {
      case .success(let values):
        guard let id = values.first?.uint32Value else { return }
        if self.machine.offer?.id == offer.id {
          self.notifications[offer.id] = id
        } else {
          // Withdrawn before the server answered.
          connection.call(
            destination: SuggestionController.interface, path: SuggestionController.path,
            interface: SuggestionController.interface, member: "CloseNotification",
            arguments: [.uint32(id)]
          ) { _ in }
        }
      case .failure(let error):
        self.logger.warning("--suggest: cannot show a notification: \(error.message)")
      }
    }
  }

  private func expired() {
    guard let offer = machine.offer else { return }
    perform(machine.expire(offer.id))
  }

  private func signal(_ member: String, _ message: DBusMessage) {
    guard let values = try? message.arguments(), let id = values.first?.uint32Value,
      let offer = notifications.first(where: { $0.value == id })?.key
    else { return }
    if member == "ActionInvoked", values.count > 1, values[1].stringValue == "rotate" {
      notifications[offer] = nil
      perform(machine.accept(offer))
      // A server may leave the notification up after the action: take it down.
      connection?.call(
        destination: SuggestionController.interface, path: SuggestionController.path,
        interface: SuggestionController.interface, member: "CloseNotification",
        arguments: [.uint32(id)]
      ) { _ in }
    } else if member == "NotificationClosed" {
      notifications[offer] = nil
      machine.dismissed(offer)
    }
  }

  /// The orientation as the notification says it.
  static func describe(_ orientation: Orientation) -> String {
    switch orientation {
    case .normal: return "upright"
    case .leftUp: return "with its left edge up"
    case .rightUp: return "with its right edge up"
    case .bottomUp: return "upside down"
    case .undefined: return "flat"
    }
  }
}
