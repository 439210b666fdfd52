import Glibc
import OrientCore
import OrientLog
import Sensors
import SystemKit

/// `orientd record [--duration S] [--config FILE] [-v]`: samples the chosen display sensor and
/// prints CSV `t,x,y,z` (seconds since the first sample, m/s^2 in the display frame) until
/// interrupted or the duration ends; the input format of `orientd replay`.
///
/// SIGINT and SIGTERM stop sampling through the event loop, so the device's sysfs settings are
/// restored before exit. Sensor changes are logged on stderr.
enum RecordCommand {
  /// Runs the command; returns 0 after a clean stop, 69 if no sample was ever recorded because
  /// there was no display accelerometer.
  static func main(_ options: SensorCommandOptions) -> ExitStatus {
    var configuration = SensorCommandSupport.loadConfiguration(options.configPath)
    // A recording of a still device holds its readings, not the silence of a hub or trigger.
    configuration.sampling.silentWhileStill = false
    let logger = SensorCommandSupport.logger(verbose: options.verbose)
    // A closed pipe must end the recording cleanly (restoring sysfs), not kill the process.
    signal(SIGPIPE, SIG_IGN)

    do {
      let loop = try EventLoop()
      let hub = try SensorHub(loop: loop, configuration: configuration, logger: logger)
      var first: MonotonicTime?
      var samples = 0
      // --base: the base accelerometer too, each line naming its sensor.
      // --motion: the gyroscope and the rotation sensor too, as a motion trace.
      let kinds: [SensorKind] =
        (options.base ? [.accelerometer, .baseAccelerometer] : [.accelerometer])
        + (options.motion ? [.gyroscope, .rotation, .magnetometer] : [])
      var sawSensor = false
      var announced: String?
      func finish() {
        hub.stopAll()
        loop.stop()
      }
      // Signals first, before anything could start a thread.
      let signals = try loop.handleSignals([SIGINT, SIGTERM]) { signo in
        logger.info("signal \(signo): stopping")
        finish()
      }
      // --raw: back into the sensor's own axes (scale and offset applied, no mount matrix), for
      // working out a hwdb matrix even while a wrong one applies.
      var unmount: MountMatrix?
      func displayChanged(_ status: SensorStatus?) {
        let d = status?.accelerometer
        if options.raw {
          unmount = d?.mountMatrix.inverse
          if let d, unmount == nil {
            logger.error("the mount matrix of \(d.sysname) has no inverse; printing it applied")
          }
        }
        if let status, let d {
          sawSensor = true
          let text =
            "recording \(d.sysname) (\(status.mode.rawValue), "
            + "\(AvailableValues.format(status.rate)) Hz)"
          if status.isSampling, text != announced { logger.notice(text) }
          if status.isSampling { announced = text }
        } else {
          announced = nil
          logger.notice("no display accelerometer; waiting for one")
        }
      }
      func write(_ reading: Reading, sensor: String?) {
        let start = first ?? reading.time
        first = start
        let t = (reading.time - start).seconds
        if options.motion {
          guard let event = MotionEvents.event(reading, time: t, base: sensor == "base") else {
            return
          }
          samples += 1
          if !StandardStream.output.writeLine(String(MotionTraceWriter.line(event).dropLast())) {
            finish()
          }
          return
        }
        guard let acceleration = reading.acceleration else { return }
        samples += 1
        let v = unmount?.apply(acceleration) ?? acceleration
        let values = [t, v.x, v.y, v.z].enumerated().map { i, value in
          FixedPoint.format(value, decimals: i == 0 ? 3 : 4)
        }
        let line = (sensor.map { [values[0], $0] + values.dropFirst() } ?? values)
          .joined(separator: ",")
        if !StandardStream.output.writeLine(line) {
          logger.info("output closed: stopping")
          finish()
        }
      }
      hub.onEvent = { event in
        switch event {
        case .changed(.accelerometer, let status): displayChanged(status)
        case .reading(.accelerometer, let reading):
          write(reading, sensor: options.base ? "display" : nil)
        case .reading(.baseAccelerometer, let reading) where options.base:
          write(reading, sensor: "base")
        case .reading(.gyroscope, let reading), .reading(.rotation, let reading),
          .reading(.magnetometer, let reading):
          write(reading, sensor: nil)
        case .changed(let kind, let status?)
        where kind == .gyroscope || kind == .rotation || kind == .magnetometer:
          if status.isSampling { logger.notice("recording \(kind.noun) \(status.sensor.sysname)") }
        default: break
        }
      }
      var timer: EventLoop.Timer?
      if let duration = options.duration {
        let t = try loop.makeTimer { finish() }
        try t.schedule(after: duration)
        timer = t
      }
      if options.motion {
        StandardStream.output.writeLine(String(MotionTraceWriter.header.dropLast()))
      } else {
        StandardStream.output.writeLine(options.base ? "t,sensor,x,y,z" : "t,x,y,z")
      }
      try hub.begin()
      if options.base, hub.status(of: .baseAccelerometer) == nil {
        logger.notice("no base accelerometer yet; waiting for one")
      }
      if hub.status(of: .accelerometer) == nil {
        logger.notice("no display accelerometer yet; waiting for one")
      }
      sawSensor = sawSensor || hub.status(of: .accelerometer) != nil
      for kind in kinds { hub.setWanted(kind, true) }
      do {
        try loop.run()
      } catch {
        // The sensor may be sampling: put its sysfs settings back before giving up.
        hub.stopAll()
        SensorCommandSupport.fail(.software, "event loop failed: \(error)")
      }
      hub.stopAll()
      timer?.cancel()
      signals.cancel()
      // The callbacks capture `hub` (through finish()): break the cycle so that nothing is
      // left unreachable at exit (LeakSanitizer reported the whole graph).
      hub.onEvent = nil
      logger.info("recorded \(samples) samples, skipped \(hub.readingsSkipped(.accelerometer))")
      return samples == 0 && !sawSensor ? .unavailable : .success
    } catch {
      SensorCommandSupport.fail(.unavailable, "cannot record: \(error)")
    }
  }
}

/// A reading as a motion trace's event (`orientd record --motion`).
enum MotionEvents {
  /// The event of `reading` at `time` seconds since the first; `base` for the base
  /// accelerometer's.
  static func event(_ reading: Reading, time: Double, base: Bool) -> MotionTraceEvent? {
    switch reading.value {
    case .acceleration(let a):
      return .acceleration(base ? .base : .lid, Sample(time: time, acceleration: a))
    case .angularVelocity(let w): return .gyro(time: time, w)
    case .rotation(let q): return .rotation(time: time, q)
    case .magneticField(let m): return .magneticField(time: time, m)
    case .light, .proximity, .heading, .angle: return nil
    }
  }
}
