import Sensors
import Glibc
import OrientCore
import OrientLog
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
      let manager = try SensorManager(loop: loop, configuration: configuration, logger: logger)
      var first: Int64?
      var samples = 0
      // --base: the base accelerometer too, each line naming its sensor.
      let base = options.base ? BaseAccelerometer(manager: manager, logger: logger) : nil
      var sawSensor = false
      var announced: String?
      func finish() {
        manager.stop()
        base?.stop()
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
      manager.onSensorChange = { status in
        if options.raw {
          unmount = status?.description.mountMatrix.inverse
          if let status, unmount == nil {
            logger.error(
              "the mount matrix of \(status.description.sysname) has no inverse; printing it applied"
            )
          }
        }
        if let status {
          sawSensor = true
          let text =
            "recording \(status.description.sysname) (\(status.mode.rawValue), "
            + "\(AvailableValues.format(status.rate)) Hz)"
          if status.isSampling, text != announced { logger.notice(text) }
          if status.isSampling { announced = text }
        } else {
          announced = nil
          logger.notice("no display accelerometer; waiting for one")
        }
      }
      func write(_ sample: AccelerometerSample, sensor: String?) {
        let start = first ?? sample.timestamp
        first = start
        samples += 1
        let t = Double(sample.timestamp - start) / 1e9
        let v = unmount?.apply(sample.acceleration) ?? sample.acceleration
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
      manager.onSample = { sample in write(sample, sensor: base == nil ? nil : "display") }
      base?.onSample = { sample in write(sample, sensor: "base") }
      var timer: EventLoop.Timer?
      if let duration = options.duration {
        let t = try loop.makeTimer { finish() }
        try t.schedule(after: duration)
        timer = t
      }
      StandardStream.output.writeLine(base == nil ? "t,x,y,z" : "t,sensor,x,y,z")
      try manager.begin()
      if let base {
        if base.sensor == nil { logger.notice("no base accelerometer yet; waiting for one") }
        base.start()
      }
      if manager.active == nil { logger.notice("no display accelerometer yet; waiting for one") }
      sawSensor = sawSensor || manager.active != nil
      manager.start()
      do {
        try loop.run()
      } catch {
        // The sensor may be sampling: put its sysfs settings back before giving up.
        manager.stop()
        SensorCommandSupport.fail(.software, "event loop failed: \(error)")
      }
      manager.stop()
      timer?.cancel()
      signals.cancel()
      // The callbacks capture `manager` (through finish()): break the cycle so that nothing is
      // left unreachable at exit (LeakSanitizer reported the whole manager graph).
      manager.onSample = nil
      manager.onSensorChange = nil
      base?.stop()
      base?.onSample = nil
      logger.info("recorded \(samples) samples, skipped \(manager.readingsSkipped)")
      return samples == 0 && !sawSensor ? .unavailable : .success
    } catch {
      SensorCommandSupport.fail(.unavailable, "cannot record: \(error)")
    }
  }
}
