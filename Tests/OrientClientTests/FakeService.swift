import DBusKit
import Glibc
import OrientCore
import OrientLog
import OrientWire
import SystemKit
import TestSupport

/// Runs the loop in short slices until `condition` holds or `timeout` seconds (stretched by
/// `testTimeoutScale`) pass.
@discardableResult
func pump(_ loop: EventLoop, timeout: Double = 10, until condition: () -> Bool) throws -> Bool {
  let deadline = monotonicSeconds() + timeout * testTimeoutScale
  while !condition() {
    if monotonicSeconds() > deadline { return false }
    try loop.runOnce(timeoutMilliseconds: 5)
  }
  return true
}

/// Runs a program while the loop keeps serving the fake service.
func runWhileServing(
  _ arguments: [String], environment: [String: String], loop: EventLoop, directory: String,
  timeout: Double = 20
) throws -> (status: Int32, stdout: String, stderr: String) {
  let child = try ChildProcess(arguments, environment: environment, outputDirectory: directory)
  guard try pump(loop, timeout: timeout, until: { !child.isRunning }) else {
    child.killNow()
    throw TestFailure("timed out: \(child.commandLine)\n\(child.standardError)")
  }
  return (child.exitCode ?? -1, child.standardOutput, child.standardError)
}

let quietLogger = Logger(label: "test", level: .critical)

/// A stand-in for orientd (or iio-sensor-proxy) on a private bus: the orientation properties,
/// Claim/Release bookkeeping, and PropertiesChanged to claimers, driven by the test.
final class FakeService {
  let loop: EventLoop
  let connection: DBusConnection
  let api: String
  var hasAccelerometer = true
  var orientation = Orientation.normal
  var tilt = Tilt.vertical
  var claims = Set<String>()
  var claimCalls = 0
  var releaseCalls = 0
  /// Makes Claim fail with this error.
  var claimError: DBusError?

  /// Exports the orientd API (`sensorProxy` false) or the iio-sensor-proxy one, and owns its
  /// name.
  init(bus: PrivateBus, loop: EventLoop, sensorProxy: Bool = false) throws {
    self.loop = loop
    connection = try DBusConnection(bus: .address(bus.address), loop: loop, logger: quietLogger)
    api = sensorProxy ? Wire.sensorProxyName : Wire.orientdName
    try connection.export([interface(sensorProxy: sensorProxy)], at: path)
    guard try connection.requestName(api, flags: [.doNotQueue]) == .primaryOwner else {
      throw TestFailure("cannot own \(api)")
    }
  }

  deinit { connection.close() }

  var path: DBusObjectPath {
    (try? DBusObjectPath(
      api == Wire.sensorProxyName ? Wire.sensorProxyPath.rawValue : Wire.orientationPath.rawValue))
      ?? .root
  }

  /// Changes the orientation and tells the claimers.
  func turn(_ new: Orientation, tilt newTilt: Tilt? = nil) throws {
    orientation = new
    var names = [api == Wire.sensorProxyName ? "AccelerometerOrientation" : "Orientation"]
    if api != Wire.sensorProxyName { names.append("Rotation") }
    if let newTilt {
      tilt = newTilt
      names.append(api == Wire.sensorProxyName ? "AccelerometerTilt" : "Tilt")
    }
    try connection.emitPropertiesChanged(
      path: path, interface: api, names: names, destinations: Array(claims))
  }

  private func interface(sensorProxy: Bool) -> DBusInterface {
    let claim = DBusMethod(sensorProxy ? "ClaimAccelerometer" : "Claim") {
      [unowned self] (invocation) throws(DBusError) -> [DBusValue] in
      self.claimCalls += 1
      if let error = self.claimError { throw error }
      self.claims.insert(invocation.sender)
      return []
    }
    let release = DBusMethod(sensorProxy ? "ReleaseAccelerometer" : "Release") {
      [unowned self] (invocation) throws(DBusError) -> [DBusValue] in
      self.releaseCalls += 1
      self.claims.remove(invocation.sender)
      return []
    }
    var properties = [
      DBusProperty("HasAccelerometer", .boolean) { [unowned self] in .boolean(self.hasAccelerometer)
      }
    ]
    if sensorProxy {
      properties += [
        DBusProperty("AccelerometerOrientation", .string) { [unowned self] in
          .string(self.orientation.rawValue)
        },
        DBusProperty("AccelerometerTilt", .string) { [unowned self] in .string(self.tilt.rawValue)
        },
      ]
      return DBusInterface(
        api, methods: [claim, release], properties: properties,
        readOnlyPropertyError: .invalidArgs)
    }
    properties += [
      DBusProperty("Orientation", .string) { [unowned self] in .string(self.orientation.rawValue) },
      DBusProperty("Rotation", .uint32) { [unowned self] in
        .uint32(UInt32(self.orientation.clockwiseRotation ?? 0))
      },
      DBusProperty("Tilt", .string) { [unowned self] in .string(self.tilt.rawValue) },
      DBusProperty("Sensor", .stringVariantDictionary) {
        .stringVariantDictionary(["device": .string("iio:device0"), "rate": .double(20)])
      },
    ]
    let reading = DBusMethod(
      "GetReading",
      out: [
        DBusArgument("x", .double), DBusArgument("y", .double), DBusArgument("z", .double),
        DBusArgument("timestamp", .uint64),
      ]
    ) { (_) throws(DBusError) -> [DBusValue] in
      [.double(0.5), .double(-9.7), .double(0.25), .uint64(123_456)]
    }
    return DBusInterface(api, methods: [claim, release, reading], properties: properties)
  }
}
