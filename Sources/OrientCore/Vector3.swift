/// A 3-vector of `Double`s: an acceleration in m/s^2, or a raw reading before calibration.
public struct Vector3: Equatable, Hashable, Sendable, CustomStringConvertible {
  /// The components.
  public var x: Double
  /// The second component.
  public var y: Double
  /// The third component.
  public var z: Double

  /// Creates a vector from its components.
  @inlinable
  public init(_ x: Double, _ y: Double, _ z: Double) {
    self.x = x
    self.y = y
    self.z = z
  }

  /// The zero vector.
  public static let zero = Vector3(0, 0, 0)

  /// The Euclidean length.
  @inlinable
  public var magnitude: Double { (x * x + y * y + z * z).squareRoot() }

  /// Whether all three components are finite (not NaN or infinite).
  @inlinable
  public var isFinite: Bool { x.isFinite && y.isFinite && z.isFinite }

  /// Component-wise sum.
  @inlinable
  public static func + (a: Vector3, b: Vector3) -> Vector3 {
    Vector3(a.x + b.x, a.y + b.y, a.z + b.z)
  }

  /// Component-wise difference.
  @inlinable
  public static func - (a: Vector3, b: Vector3) -> Vector3 {
    Vector3(a.x - b.x, a.y - b.y, a.z - b.z)
  }

  /// Scales by a scalar.
  @inlinable
  public static func * (a: Vector3, s: Double) -> Vector3 { Vector3(a.x * s, a.y * s, a.z * s) }

  /// The dot product.
  @inlinable
  public func dot(_ other: Vector3) -> Double { x * other.x + y * other.y + z * other.z }

  /// `"(x, y, z)"`.
  public var description: String { "(\(x), \(y), \(z))" }
}

/// Standard gravity in m/s^2 (the value the kernel's IIO scale factors assume).
public let standardGravity = 9.80665
