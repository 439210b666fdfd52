// Small numeric helpers of the detector.

/// `angle` wrapped into (-pi, pi].
@inline(__always)
func wrapRadians(_ angle: Double) -> Double {
  var a = angle
  while a > Double.pi { a -= 2 * Double.pi }
  while a <= -Double.pi { a += 2 * Double.pi }
  return a
}

@inline(__always)
func square(_ x: Double) -> Double { x * x }

/// Whether two orientations are a half turn apart.
func areOpposite(_ a: Orientation, _ b: Orientation) -> Bool {
  guard let x = a.clockwiseRotation, let y = b.clockwiseRotation else { return false }
  return (x - y + 360) % 360 == 180
}
