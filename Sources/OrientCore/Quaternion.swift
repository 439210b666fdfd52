#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A quaternion `w + xi + yj + zk` of `Double`s; unit quaternions are rotations.
///
/// orientd's rotations turn display-frame vectors into the earth frame (see docs/motion.md):
/// `q.rotate(v)` is `q v q*`. Products compose like matrices: `(a * b).rotate(v)` is
/// `a.rotate(b.rotate(v))`. A value type with no allocation, for the per-sample fusion.
public struct Quaternion: Equatable, Hashable, Sendable, CustomStringConvertible {
  /// The real part.
  public var w: Double
  /// The i component.
  public var x: Double
  /// The j component.
  public var y: Double
  /// The k component.
  public var z: Double

  /// Creates a quaternion from its components (real part first).
  @inlinable
  public init(w: Double, x: Double, y: Double, z: Double) {
    self.w = w
    self.x = x
    self.y = y
    self.z = z
  }

  /// The identity rotation.
  public static let identity = Quaternion(w: 1, x: 0, y: 0, z: 0)

  /// The rotation by `angle` radians about `axis` (right-handed; the axis need not be unit
  /// length; a zero axis gives the identity).
  @inlinable
  public init(axis: Vector3, angle: Double) {
    let n = axis.magnitude
    guard n > 0, angle.isFinite else {
      self = .identity
      return
    }
    let s = sin(angle / 2) / n
    self.init(w: cos(angle / 2), x: axis.x * s, y: axis.y * s, z: axis.z * s)
  }

  /// The rotation whose axis is `v`'s direction and whose angle is `v`'s length in radians
  /// (the exponential map; a gyroscope's angular velocity times a time step).
  @inlinable
  public init(rotationVector v: Vector3) {
    let angle = v.magnitude
    if angle < 1e-9 {
      // sin(a/2)/a -> 1/2 near zero; keep it a unit quaternion.
      let q = Quaternion(w: 1, x: v.x / 2, y: v.y / 2, z: v.z / 2)
      self = q.normalized
      return
    }
    let s = sin(angle / 2) / angle
    self.init(w: cos(angle / 2), x: v.x * s, y: v.y * s, z: v.z * s)
  }

  /// The smallest rotation that turns direction `from` into direction `to` (neither zero).
  public init(from: Vector3, to: Vector3) {
    let a = from * (1 / from.magnitude)
    let b = to * (1 / to.magnitude)
    let d = a.dot(b)
    if d < -0.999999 {
      // Opposite: any axis perpendicular to a.
      var axis = Vector3(0, -a.z, a.y)
      if axis.magnitude < 1e-6 { axis = Vector3(-a.z, 0, a.x) }
      self.init(axis: axis, angle: Double.pi)
      return
    }
    let c = a.cross(b)
    self = Quaternion(w: 1 + d, x: c.x, y: c.y, z: c.z).normalized
  }

  /// The rotation of a proper rotation matrix given row by row (`m` turns vectors `v` into
  /// `m v`), by Shepperd's method; `nil` unless `m` has nine entries and determinant near 1.
  public init?(rotationMatrix m: [Double]) {
    guard m.count == 9 else { return nil }
    let det =
      m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2]
      * (m[3] * m[7] - m[4] * m[6])
    guard abs(det - 1) < 0.1 else { return nil }
    let trace = m[0] + m[4] + m[8]
    let q: Quaternion
    if trace > 0 {
      let s = (trace + 1).squareRoot() * 2
      q = Quaternion(w: s / 4, x: (m[7] - m[5]) / s, y: (m[2] - m[6]) / s, z: (m[3] - m[1]) / s)
    } else if m[0] > m[4] && m[0] > m[8] {
      let s = (1 + m[0] - m[4] - m[8]).squareRoot() * 2
      q = Quaternion(w: (m[7] - m[5]) / s, x: s / 4, y: (m[1] + m[3]) / s, z: (m[2] + m[6]) / s)
    } else if m[4] > m[8] {
      let s = (1 + m[4] - m[0] - m[8]).squareRoot() * 2
      q = Quaternion(w: (m[2] - m[6]) / s, x: (m[1] + m[3]) / s, y: s / 4, z: (m[5] + m[7]) / s)
    } else {
      let s = (1 + m[8] - m[0] - m[4]).squareRoot() * 2
      q = Quaternion(w: (m[3] - m[1]) / s, x: (m[2] + m[6]) / s, y: (m[5] + m[7]) / s, z: s / 4)
    }
    self = q.normalized
  }

  /// The Euclidean norm.
  @inlinable
  public var norm: Double { (w * w + x * x + y * y + z * z).squareRoot() }

  /// Scaled to unit length (the identity for a zero or non-finite quaternion).
  @inlinable
  public var normalized: Quaternion {
    let n = norm
    guard n > 0, n.isFinite else { return .identity }
    let s = 1 / n
    return Quaternion(w: w * s, x: x * s, y: y * s, z: z * s)
  }

  /// The conjugate `w - xi - yj - zk`: the inverse rotation of a unit quaternion.
  @inlinable
  public var conjugate: Quaternion { Quaternion(w: w, x: -x, y: -y, z: -z) }

  /// Whether every component is finite.
  @inlinable
  public var isFinite: Bool { w.isFinite && x.isFinite && y.isFinite && z.isFinite }

  /// The same rotation with a non-negative real part (q and -q are one rotation).
  @inlinable
  public var canonical: Quaternion { w < 0 ? Quaternion(w: -w, x: -x, y: -y, z: -z) : self }

  /// The Hamilton product.
  @inlinable
  public static func * (a: Quaternion, b: Quaternion) -> Quaternion {
    Quaternion(
      w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
      x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
      y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
      z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w)
  }

  /// `q v q*` for a unit quaternion: `v` rotated.
  @inlinable
  public func rotate(_ v: Vector3) -> Vector3 {
    // v + 2 r x (r x v + w v), with r the vector part (no full products).
    let r = Vector3(x, y, z)
    let t = r.cross(v) * 2
    return v + t * w + r.cross(t)
  }

  /// The rotation angle in radians, 0...pi.
  @inlinable
  public var angle: Double {
    let v = (x * x + y * y + z * z).squareRoot()
    return 2 * atan2(v, abs(w))
  }

  /// The angle in radians, 0...pi, of the rotation that takes `self` to `other`.
  @inlinable
  public func angle(to other: Quaternion) -> Double {
    (conjugate * other).angle
  }

  /// The rotation vector (axis times angle in radians, angle at most pi): the logarithm map.
  public var rotationVector: Vector3 {
    let q = canonical
    let v = (q.x * q.x + q.y * q.y + q.z * q.z).squareRoot()
    guard v > 1e-12 else { return Vector3(2 * q.x, 2 * q.y, 2 * q.z) }
    let a = 2 * atan2(v, q.w)
    return Vector3(q.x, q.y, q.z) * (a / v)
  }

  /// `"[w, x, y, z]"`.
  public var description: String { "[\(w), \(x), \(y), \(z)]" }
}

extension Vector3 {
  /// Scaled to unit length (the zero vector stays zero).
  @inlinable
  public var normalized: Vector3 {
    let m = magnitude
    return m > 0 ? self * (1 / m) : self
  }

  /// The angle in radians between two non-zero vectors, 0...pi.
  @inlinable
  public func angle(to b: Vector3) -> Double {
    atan2(cross(b).magnitude, dot(b))
  }
}
