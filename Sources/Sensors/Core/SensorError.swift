import EvdevKit
import SystemKit

/// Why a sensor could not be opened or read: one type for every driver, with one notion of
/// "the device is gone" (`code == .gone`), instead of each reader's own.
public struct SensorError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The class of failure.
  public enum Code: Sendable, Equatable {
    /// The device disappeared (ENODEV, ENOENT, ENXIO, a hang-up): forget it until udev
    /// announces it again.
    case gone
    /// This driver cannot read the device (a buffer refused, a node busy, an attribute
    /// unreadable): another driver may, or a retry later.
    case unavailable
  }

  /// The class.
  public var code: Code
  /// What failed, naming the device and the attribute or node.
  public var message: String

  /// Creates an error.
  public init(_ code: Code, _ message: String) {
    self.code = code
    self.message = message
  }

  /// A system call's failure: `gone` for the errors that mean the device disappeared.
  public init(_ error: SystemError, _ context: String? = nil) {
    self.init(
      error.isDeviceGone ? .gone : .unavailable,
      context.map { "\($0): \(error)" } ?? error.description)
  }

  /// An input device's failure: `gone` when the node does not exist.
  public init(_ error: EvdevError) {
    self.init(error.kind == .notFound ? .gone : .unavailable, error.description)
  }

  /// Whether the device disappeared.
  public var isDeviceGone: Bool { code == .gone }

  /// The message.
  public var description: String { message }
}
