import Glibc
import OrientCore
import Testing

/// `AccelerometerTilt` on the compatibility API follows iio-sensor-proxy 3.9's rule
/// (src/orientation.c `tilt_calc`), including its sign, which is the opposite of orientd's
/// own `Tilt`.
struct SensorProxyTiltTests {
  /// The readings of iio-sensor-proxy's own test_iio_poll_accel (raw counts; the scale does
  /// not matter to an angle) and what it asserts for them.
  @Test(arguments: [
    (Vector3(0, -25.6, 0), Tilt.vertical),
    (Vector3(-25.6, 0, -25.6), .tiltedDown),
    (Vector3(-25.6, 0, 72.4), .faceUp),
  ])
  func upstreamTestReadings(gravity: Vector3, tilt: Tilt) {
    #expect(Tilt.sensorProxy(gravity: gravity) == tilt)
  }

  /// Its bands in whole degrees: up to 20 vertical, below 70 tilted, from 70 flat; z > 0 up.
  @Test(arguments: [
    (20.0, Tilt.vertical), (21, .tiltedUp), (69, .tiltedUp), (70, .faceUp), (90, .faceUp),
    (-20, .vertical), (-21, .tiltedDown), (-70, .faceDown),
  ])
  func bands(degrees: Double, tilt: Tilt) {
    let r = degrees * Double.pi / 180
    #expect(Tilt.sensorProxy(gravity: Vector3(0, -9.8 * cos(r), 9.8 * sin(r))) == tilt)
  }

  /// No direction, no tilt.
  @Test func zeroIsUndefined() {
    #expect(Tilt.sensorProxy(gravity: Vector3(0, 0, 0)) == .undefined)
    #expect(Tilt.sensorProxy(gravity: Vector3(.nan, 0, 1)) == .undefined)
  }
}
