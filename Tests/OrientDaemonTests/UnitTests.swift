import DBusKit
import OrientCore
import OrientDaemon
import OrientWire
import TestThreads
import Testing

/// The daemon's pure parts: claim bookkeeping and which properties a change announces.
@Suite(.ownThreads) struct UnitTests {
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
    #expect(claims.isClaimed(.orientd) && claims.isClaimed(.sensorProxy))
    #expect(!claims.isClaimed(.posture) && !claims.isClaimed(.motion))
    #expect(claims.holds(":1.1", .orientd) && !claims.holds(":1.2", .orientd))
    #expect(claims.wantedKinds == [.accelerometer])
    let stillHolds = claims.release(":1.1", .orientd)
    #expect(!stillHolds, "still holds the compatibility claim")
    let gone = claims.release(":1.1", .sensorProxy)
    #expect(gone)
    let never = claims.release(":1.9", .orientd)
    #expect(never, "releasing without a claim succeeds")
    #expect(!claims.isClaimed(.orientd) && claims.isClaimed(.sensorProxy))
    claims.vanished(":1.2")
    #expect(claims.isEmpty && claims.clientCount == 0)
    #expect(!claims.isClaimed(.sensorProxy) && claims.wantedKinds.isEmpty)
  }

  /// The names `Name`'s object server announces for a change from `old` to `new`.
  func announced<Name: PublishedProperty>(
    _: Name.Type, _ old: PublishedState, _ new: PublishedState
  ) -> [String] {
    func values(_ state: PublishedState) -> [Name: DBusValue] {
      Dictionary(uniqueKeysWithValues: Name.allCases.map { ($0, $0.value(in: state)) })
    }
    return Name.announced(from: values(old), to: values(new)).map(\.rawValue)
  }

  @Test func onlyTheChangedPropertiesAreAnnounced() {
    var old = PublishedState()
    var new = old
    new.hasAccelerometer = true
    new.sensor = ["device": .string("iio:device0")]
    #expect(announced(OrientdProperty.self, old, new) == ["HasAccelerometer", "Sensor"])
    // iio-sensor-proxy's clients get the orientation with HasAccelerometer.
    #expect(
      announced(SensorProxyProperty.self, old, new)
        == ["HasAccelerometer", "AccelerometerOrientation"])
    #expect(OrientdProperty.hasAccelerometer.isBroadcastOnChange)
    #expect(SensorProxyProperty.hasAccelerometer.isBroadcastOnChange)
    #expect(!OrientdProperty.orientation.isBroadcastOnChange)

    old = new
    new.orientation = .leftUp
    #expect(announced(OrientdProperty.self, old, new) == ["Orientation", "Rotation"])
    #expect(announced(SensorProxyProperty.self, old, new) == ["AccelerometerOrientation"])
    #expect(new.rotation == 90)

    // Undefined and normal are both rotation 0: Rotation still travels with Orientation.
    var normal = PublishedState()
    normal.orientation = .normal
    #expect(
      announced(OrientdProperty.self, PublishedState(), normal) == ["Orientation", "Rotation"])

    old = new
    new.tilt = .faceUp
    #expect(announced(OrientdProperty.self, old, new) == ["Tilt"])
    // AccelerometerTilt is iio-sensor-proxy's tilt (Tilt.sensorProxy), published apart.
    #expect(announced(SensorProxyProperty.self, old, new).isEmpty)
    old = new
    new.sensorProxyTilt = .faceDown
    #expect(announced(SensorProxyProperty.self, old, new) == ["AccelerometerTilt"])
    #expect(announced(OrientdProperty.self, old, new).isEmpty)
    #expect(announced(OrientdProperty.self, new, new).isEmpty)

    // The sensor goes away: everything but the tilt's absence is announced at once.
    #expect(
      announced(OrientdProperty.self, new, PublishedState())
        == ["HasAccelerometer", "Orientation", "Rotation", "Tilt", "Sensor"])
    #expect(
      announced(SensorProxyProperty.self, new, PublishedState())
        == ["HasAccelerometer", "AccelerometerOrientation", "AccelerometerTilt"])
    #expect(announced(CompassProperty.self, new, PublishedState()).isEmpty)
    #expect(PublishedState().rotation == 0)

    // The camera's use is announced to everyone; the suggestion to claimers.
    var face = PublishedState()
    face.cameraInUse = true
    #expect(announced(OrientdProperty.self, PublishedState(), face) == ["CameraInUse"])
    #expect(OrientdProperty.cameraInUse.isBroadcastOnChange)
    face.suggestedOrientation = .leftUp
    #expect(OrientdProperty.suggestedOrientation.value(in: face) == .string("left-up"))
    #expect(OrientdProperty.suggestedOrientation.value(in: PublishedState()) == .string(""))
    #expect(!OrientdProperty.suggestedOrientation.isBroadcastOnChange)
  }
}
