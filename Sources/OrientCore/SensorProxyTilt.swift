#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension Tilt {
  /// iio-sensor-proxy 3.9's tilt of a gravity vector (its `tilt_calc` in src/orientation.c),
  /// which `AccelerometerTilt` on the compatibility API reports so that its clients see the
  /// values they were written against: the angle atan2(z, sqrt(x^2 + y^2)) rounded to whole
  /// degrees; up to 20 from vertical `vertical`, below 70 `tilted-up` (z > 0) or
  /// `tilted-down`, from 70 `face-up` (z > 0) or `face-down`; no hysteresis.
  ///
  /// Its sign is the opposite of orientd's own `Tilt` (the detector's, in the Linux IIO
  /// convention where an upright display reads (0, -g, 0) and one lying face up (0, 0, -g)):
  /// iio-sensor-proxy calls z > 0 up, and its own tests assert it (z = 72.4 with x = -25.6,
  /// y = 0 is `face-up`). The thresholds differ too (orientd: 25 and 75 degrees, with
  /// hysteresis).
  public static func sensorProxy(gravity g: Vector3) -> Tilt {
    let horizontal = (g.x * g.x + g.y * g.y).squareRoot()
    guard g.x.isFinite, g.y.isFinite, g.z.isFinite, horizontal > 0 || g.z != 0 else {
      return .undefined
    }
    let degrees = (atan2(g.z, horizontal) * 180 / .pi).rounded()
    if abs(degrees) <= 20 { return .vertical }
    if abs(degrees) < 70 { return degrees > 0 ? .tiltedUp : .tiltedDown }
    return degrees > 0 ? .faceUp : .faceDown
  }
}
