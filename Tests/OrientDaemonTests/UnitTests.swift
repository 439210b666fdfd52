import DBusKit
import OrientCore
import OrientDaemon
import Testing

/// The daemon's pure parts: claim bookkeeping and which properties a change announces.
@Suite struct UnitTests {
  @Test func claimsPerClientAndAPI() {
    var claims = ClaimSet()
    #expect(claims.isEmpty)
    let first = claims.claim(":1.1", .orientd)
    #expect(first, "a new client: start tracking it")
    let again = claims.claim(":1.1", .orientd)
    #expect(!again, "claiming twice is harmless")
    let other = claims.claim(":1.1", .sensorProxy)
    #expect(!other, "the same client through the other API")
    let second = claims.claim(":1.2", .sensorProxy)
    #expect(second)
    #expect(claims.clientCount == 2 && claims.claimCount == 3)
    #expect(claims.claimers(.orientd) == [":1.1"])
    #expect(claims.claimers(.sensorProxy) == [":1.1", ":1.2"])
    let stillHolds = claims.release(":1.1", .orientd)
    #expect(!stillHolds, "still holds the compatibility claim")
    let gone = claims.release(":1.1", .sensorProxy)
    #expect(gone)
    let never = claims.release(":1.9", .orientd)
    #expect(never, "releasing without a claim succeeds")
    claims.vanished(":1.2")
    #expect(claims.isEmpty && claims.clientCount == 0)
  }

  @Test func onlyTheChangedPropertiesAreAnnounced() {
    var old = PublishedState()
    var new = old
    new.hasAccelerometer = true
    new.sensor = ["device": .string("iio:device0")]
    var changed = new.changedProperties(since: old)
    #expect(changed.orientd == ["HasAccelerometer", "Sensor"])
    // iio-sensor-proxy's clients get the orientation with HasAccelerometer.
    #expect(changed.sensorProxy == ["HasAccelerometer", "AccelerometerOrientation"])

    old = new
    new.orientation = .leftUp
    changed = new.changedProperties(since: old)
    #expect(changed.orientd == ["Orientation", "Rotation"])
    #expect(changed.sensorProxy == ["AccelerometerOrientation"])
    #expect(new.rotation == 90)

    old = new
    new.tilt = .faceUp
    changed = new.changedProperties(since: old)
    #expect(changed.orientd == ["Tilt"] && changed.sensorProxy == ["AccelerometerTilt"])
    #expect(new.changedProperties(since: new).orientd.isEmpty)

    // The sensor goes away: everything but the tilt's absence is announced at once.
    changed = PublishedState().changedProperties(since: new)
    #expect(changed.orientd == ["HasAccelerometer", "Orientation", "Rotation", "Tilt", "Sensor"])
    #expect(
      changed.sensorProxy == ["HasAccelerometer", "AccelerometerOrientation", "AccelerometerTilt"])
    #expect(PublishedState().rotation == 0)
  }
}
