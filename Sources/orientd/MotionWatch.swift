import DBusKit
import Glibc
import JSON
import OrientClient
import OrientCore
import OrientLog
import Sensors
import SystemKit

/// `orientd --watch --motion [--json]`: claims org.orientd.Motion1, prints the angular velocity
/// and the rotation whenever they change, releases on SIGINT, SIGTERM or a closed output.
enum MotionWatchCommand {
  /// Runs until stopped; returns 0, 69 when there is no bus or no orientd serving motion, 77
  /// when polkit refuses the claim.
  static func main(_ options: ClientCommandOptions) -> ExitStatus {
    signal(SIGPIPE, SIG_IGN)
    let logger = Logger(label: "orientd", level: options.verbose ? .debug : .notice)
    let loop: EventLoop
    let connection: DBusConnection
    do {
      loop = try EventLoop()
      connection = try DBusConnection(
        bus: options.session ? .session : .system, loop: loop, logger: logger.child("dbus"))
    } catch let error as DBusError {
      SensorCommandSupport.fail(.unavailable, "cannot connect to the bus: \(error.message)")
    } catch {
      SensorCommandSupport.fail(.osError, "cannot create the event loop: \(error)")
    }
    defer { connection.close() }
    var status = ExitStatus.success
    var stopping = false
    var stopTimer: EventLoop.Timer?
    let follower = MotionFollower(connection: connection, logger: logger)
    func stop(_ code: ExitStatus) {
      guard !stopping else { return }
      stopping = true
      status = code
      follower.stop { loop.stop() }
      stopTimer = try? loop.makeTimer { loop.stop() }
      try? stopTimer?.schedule(after: .milliseconds(1500))
    }
    let signals: EventLoop.Watch
    do {
      signals = try loop.handleSignals([SIGINT, SIGTERM]) { _ in stop(.success) }
    } catch {
      SensorCommandSupport.fail(.osError, "cannot handle signals: \(error)")
    }
    defer { signals.cancel() }
    connection.onDisconnect = {
      StandardStream.error.writeLine("orientd --watch: lost the connection to the bus")
      status = .unavailable
      stopping = true
      loop.stop()
    }
    follower.onChange = { reading in
      let text =
        options.json
        ? MotionFormat.json(reading, time: Clock.realtimeNanoseconds())
        : MotionFormat.line(reading, time: Clock.realtimeNanoseconds())
      if !StandardStream.output.writeLine(text) { stop(.success) }
    }
    follower.onFailure = { error in
      StandardStream.error.writeLine("orientd --watch --motion: \(error.message)")
      stop(error.kind == .accessDenied ? .noPermission : .unavailable)
    }
    follower.start()
    do {
      try loop.run()
    } catch {
      StandardStream.error.writeLine("orientd --watch: \(error)")
      return .software
    }
    stopTimer?.cancel()
    follower.onChange = nil
    follower.onFailure = nil
    connection.onDisconnect = nil
    return status
  }
}

/// How `--watch --motion` prints a reading.
enum MotionFormat {
  /// `{"time":..,"angular_velocity":[x,y,z],"rotation":[w,x,y,z],"rotation_source":..,
  /// "has_gyroscope":..,"has_rotation":..,"timestamp_us":..}`.
  static func json(_ r: MotionReading, time: Int64) -> String {
    let w = r.angularVelocity
    let q = r.rotation
    return JSONValue.object([
      ("time", .number((Double(time) / 1e6).rounded() / 1000)),
      ("angular_velocity", .array([w.x, w.y, w.z].map { .number(rounded($0)) })),
      ("rotation", .array([q.w, q.x, q.y, q.z].map { .number(rounded($0)) })),
      ("rotation_source", .string(r.rotationSource)),
      ("has_gyroscope", .bool(r.hasGyroscope)),
      ("has_rotation", .bool(r.hasRotation)),
      ("timestamp_us", .number(Double(r.timestamp))),
    ]).encoded()
  }

  /// `2026-12-05 08:00:00.123  angular velocity 0.0128 -0.0075 0.1001 rad/s, rotation 0.7071
  /// 0.7071 0 0 (fusion-6)`.
  static func line(_ r: MotionReading, time: Int64) -> String {
    let w = r.angularVelocity
    let q = r.rotation
    let rate = [w.x, w.y, w.z].map { format(rounded($0)) }.joined(separator: " ")
    let rotation = [q.w, q.x, q.y, q.z].map { format(rounded($0)) }.joined(separator: " ")
    let gyro = r.hasGyroscope ? "angular velocity \(rate) rad/s" : "no gyroscope"
    let rot = r.hasRotation ? "rotation \(rotation) (\(r.rotationSource))" : "no rotation"
    return "\(Clock.localTimestamp(time))  \(gyro), \(rot)"
  }

  /// Six decimals: below any sensor's resolution, and short lines.
  private static func rounded(_ x: Double) -> Double { (x * 1e6).rounded() / 1e6 }

  private static func format(_ x: Double) -> String { AvailableValues.format(x) }
}
