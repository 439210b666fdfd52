import Glibc
import JSON
import OrientCore
import OrientDaemon
import OrientLog
import Sensors
import SystemKit

/// `orientd calibrate`: finds the mount matrix of the display accelerometer from a few poses,
/// prints it as an hwdb entry and a configuration block, and with `--write` installs it.
///
/// Readings come from the sensor layer (`SensorHub`) like `orientd record --raw`: the samples it delivers in
/// the display frame are turned back into the sensor's own axes with the inverse of the matrix
/// in force, so the result is the whole correction whatever applies today.
final class CalibrateCommand {
  private enum Stage: Equatable {
    case pose(Int)
    case applying
    case confirming
    case done
  }

  private let options: CalibrateOptions
  private let loop: EventLoop
  private let hub: SensorHub
  private let logger: Logger
  private var configuration: DaemonConfiguration
  private let output: CalibrateOutput
  private var stage = Stage.pose(0)
  private var window: StillnessWindow
  private var accepted: [(pose: CalibrationPose, reading: Vector3)] = []
  private var unmount: MountMatrix?
  private var status: SensorStatus?
  private var stageStart = Clock.monotonicNanoseconds()
  private var lastSample: Int64?
  private var lastReadout: Int64 = 0
  private var episodeReported = false
  private var result: CalibrationResult?
  private var exitStatus = ExitStatus.success
  private var input: [UInt8] = []
  private var inputWatch: EventLoop.Watch?
  private var description: AccelerometerDescription?
  private var applyDeadline: Int64 = 0

  /// Runs the command and returns its exit status.
  static func main(_ options: CalibrateOptions) -> ExitStatus {
    var logger = SensorCommandSupport.logger(verbose: options.verbose)
    // Sensor warnings would break the live readout; -v shows everything.
    if !options.verbose { logger.level = .error }
    let configuration: DaemonConfiguration
    do {
      // --write config may create the file.
      let path = options.configPath.flatMap { access($0, F_OK) == 0 ? $0 : nil }
      configuration =
        options.configPath != nil && path == nil
        ? DaemonConfiguration() : try DaemonConfiguration.load(path: path)
    } catch {
      SensorCommandSupport.fail(error.status, error.message)
    }
    signal(SIGPIPE, SIG_IGN)
    do {
      let loop = try EventLoop()
      let hub = try SensorHub(
        loop: loop, configuration: CalibrateCommand.sensors(configuration), logger: logger)
      let command = CalibrateCommand(
        options: options, loop: loop, hub: hub, logger: logger,
        configuration: configuration)
      return command.run()
    } catch {
      SensorCommandSupport.fail(.unavailable, "cannot read sensors: \(error)")
    }
  }

  /// The sensor configuration of `configuration` for calibrating: each pose is measured over
  /// seconds of stillness, and a silent still device has no readings.
  static func sensors(_ configuration: DaemonConfiguration) -> SensorsConfiguration {
    var sensors = configuration.sensors
    sensors.sampling.silentWhileStill = false
    return sensors
  }

  private init(
    options: CalibrateOptions, loop: EventLoop, hub: SensorHub, logger: Logger,
    configuration: DaemonConfiguration
  ) {
    self.options = options
    self.loop = loop
    self.hub = hub
    self.logger = logger
    self.configuration = configuration
    self.output = CalibrateOutput(json: options.json)
    self.window = StillnessWindow(length: options.hold + 0.5, tolerance: 0.6)
  }

  // MARK: - flow

  private func run() -> ExitStatus {
    let signals: EventLoop.Watch
    do {
      signals = try loop.handleSignals([SIGINT, SIGTERM]) { [weak self] signo in
        self?.finish(.failure, "interrupted (signal \(signo)); nothing was written")
      }
      try hub.begin()
    } catch {
      SensorCommandSupport.fail(.unavailable, "cannot read sensors: \(error)")
    }
    defer { signals.cancel() }
    if options.revert { return revert() }
    guard let chosen = hub.choice(of: .accelerometer).chosen?.accelerometer else {
      let present = hub.accelerometers.map(\.sysname)
      output.fail(
        "no display accelerometer found"
          + (present.isEmpty
            ? " (no IIO device has in_accel_{x,y,z}_raw or scan elements)"
            : " (present: \(present.joined(separator: ", ")), none usable for orientation)")
          + "; orientd --list-sensors shows what there is")
      return .unavailable
    }
    if let wanted = options.sensor, wanted != chosen.sysname, wanted != chosen.facts.name {
      output.fail(
        "--sensor \(wanted): orientd uses \(chosen.sysname) (\(chosen.facts.name ?? "no name")) "
          + "for orientation, so that is the one to calibrate; orientd --list-sensors says why")
      return .unavailable
    }
    description = chosen
    output.sensor(chosen)
    if let target = options.write {
      do {
        try preflight(target, chosen)
      } catch {
        output.fail(error.message)
        return error.status
      }
    }
    hub.onEvent = { [weak self] event in
      switch event {
      case .changed(.accelerometer, let status): self?.sensorChanged(status)
      case .reading(.accelerometer, let reading): self?.sampled(reading)
      default: break
      }
    }
    do {
      inputWatch = try loop.watch(0, for: .readable) { [weak self] _ in self?.readInput() }
    } catch {
      logger.info("stdin cannot be watched (\(error)); poses are confirmed by holding still")
    }
    let ticker: EventLoop.Timer
    do {
      ticker = try loop.makeTimer { [weak self] in self?.tick() }
      try ticker.schedule(after: .milliseconds(200), interval: .milliseconds(200))
    } catch {
      SensorCommandSupport.fail(.osError, "cannot make a timer: \(error)")
    }
    askForPose(0)
    hub.setWanted(.accelerometer, true)
    do {
      try loop.run()
    } catch {
      hub.stopAll()
      SensorCommandSupport.fail(.software, "event loop failed: \(error)")
    }
    hub.stopAll()
    ticker.cancel()
    inputWatch?.cancel()
    hub.onEvent = nil
    output.endLiveLine()
    return exitStatus
  }

  private func finish(_ status: ExitStatus, _ message: String? = nil) {
    guard stage != .done else { return }
    stage = .done
    exitStatus = status
    if let message {
      if status == .success { output.note(message) } else { output.fail(message) }
    }
    hub.stopAll()
    loop.stop()
  }

  private func askForPose(_ index: Int) {
    stage = .pose(index)
    window.reset()
    episodeReported = false
    stageStart = Clock.monotonicNanoseconds()
    let pose = CalibrationPose.allCases[index]
    output.ask(
      step: index + 1, of: CalibrationPose.allCases.count, pose: pose.rawValue,
      instruction: pose.instruction, hold: options.hold)
  }

  private func sensorChanged(_ new: SensorStatus?) {
    status = new
    unmount = new?.accelerometer?.mountMatrix.inverse
    if let d = new?.accelerometer { description = d }
    if new == nil, stage != .done {
      output.note("the accelerometer went away; waiting for it to come back")
    }
    if stage == .applying, let d = new?.accelerometer, let result, d.mountMatrix == result.matrix {
      applied(d)
    }
  }

  private func sampled(_ reading: Reading) {
    guard let acceleration = reading.acceleration else { return }
    lastSample = reading.time.nanoseconds
    let time = reading.time.seconds
    switch stage {
    case .pose(let index):
      guard let unmount else { return }
      window.add(time: time, unmount.apply(acceleration))
      let still = window.stillFor
      if still >= options.hold {
        evaluate(CalibrationPose.allCases[index], byEnter: false)
      } else {
        episodeReported = false
      }
      readout(still: still, hint: nil)
    case .confirming:
      window.add(time: time, acceleration)
      if window.stillFor >= options.hold { confirm(byEnter: false) }
      readout(still: window.stillFor, hint: nil)
    case .applying, .done:
      break
    }
  }

  private func readout(still: Double, hint: String?) {
    let now = Clock.monotonicNanoseconds()
    guard now - lastReadout >= 200_000_000, let value = window.latest else { return }
    lastReadout = now
    output.live(
      reading: value, still: still, frame: stage == .confirming ? "display" : "raw", hint: hint)
  }

  /// Takes the still readings as the pose, or says why not.
  private func evaluate(_ pose: CalibrationPose, byEnter: Bool) {
    let minimum = min(0.5, options.hold)
    let still = window.stillFor
    guard let mean = window.stillMean, still >= minimum, window.stillCount >= 3 else {
      if byEnter {
        let rejection: PoseRejection =
          window.count < 3
          ? .tooFewReadings(count: window.count)
          : .notStill(
            spread: window.recentSpread(seconds: minimum), tolerance: window.tolerance,
            seconds: minimum)
        output.rejected(pose: pose.rawValue, reason: rejection.description)
      }
      return
    }
    if let rejection = MountCalibration.check(mean, accepted: accepted, exact: options.exact) {
      if case .repeats = rejection, !byEnter {
        // Still in the previous pose: the person has not turned the device yet.
        return
      }
      if byEnter || !episodeReported {
        output.rejected(pose: pose.rawValue, reason: rejection.description)
        episodeReported = true
      }
      return
    }
    accepted.append((pose, mean))
    output.accepted(pose: pose.rawValue, reading: mean, by: byEnter ? "enter" : "hold")
    guard case .pose(let index) = stage else { return }
    if index + 1 < CalibrationPose.allCases.count {
      askForPose(index + 1)
    } else {
      derive()
    }
  }

  private func derive() {
    let derived: CalibrationResult
    do {
      derived = try MountCalibration.derive(accepted, exact: options.exact)
    } catch {
      finish(.dataError, "cannot derive a mount matrix: \(error.reason)")
      return
    }
    result = derived
    guard let description else { return }
    let forms = CalibrationForms(result: derived, description: description)
    output.result(derived, forms: forms, current: description)
    guard let target = options.write else {
      finish(.success)
      return
    }
    guard derived.isProperRotation else {
      finish(
        .dataError,
        "not writing a mirror-image matrix: redo the poses (the second one is the LEFT edge up, "
          + "a quarter turn clockwise); if the sensor really is mounted mirrored, write the entry "
          + "above by hand")
      return
    }
    do {
      try install(target, forms: forms, description: description)
    } catch {
      finish(error.status, error.message)
      return
    }
    stage = .applying
    applyDeadline = Clock.monotonicNanoseconds() + 15_000_000_000
    if let active = hub.status(of: .accelerometer)?.accelerometer,
      active.mountMatrix == derived.matrix
    {
      applied(active)
    }
  }

  private func applied(_ new: AccelerometerDescription) {
    output.applied(matrix: new.mountMatrix.description, source: "\(new.mountMatrixSource)")
    stage = .confirming
    window.reset()
    stageStart = Clock.monotonicNanoseconds()
    output.ask(
      step: CalibrationPose.allCases.count + 1, of: CalibrationPose.allCases.count + 1,
      pose: "check",
      instruction: "hold the device upright again, to check what orientd now reports",
      hold: options.hold)
  }

  private func confirm(byEnter: Bool) {
    guard let mean = window.stillMean, window.stillFor >= min(0.5, options.hold) else {
      if byEnter {
        output.rejected(
          pose: "check",
          reason: PoseRejection.notStill(
            spread: window.recentSpread(seconds: 0.5), tolerance: window.tolerance, seconds: 0.5
          ).description)
      }
      return
    }
    var detector = OrientationDetector(parameters: configuration.detector)
    var time = 0.0
    for _ in 0..<100 {
      _ = detector.process(Sample(time: time, acceleration: mean))
      time += 0.02
    }
    if detector.tilt.isFlat {
      // Still lying as in the last pose: the person has not picked the device up yet.
      if byEnter {
        output.rejected(
          pose: "check", reason: "the device is lying flat (\(detector.tilt)); hold it upright")
      }
      return
    }
    let orientation = detector.orientation
    output.confirmed(orientation: orientation.rawValue, tilt: detector.tilt.rawValue, reading: mean)
    if orientation == .normal {
      finish(.success, "orientd now reports 'normal' with the device upright: done")
    } else {
      finish(
        .dataError,
        "with the new matrix orientd reports '\(orientation)' (tilt \(detector.tilt)) while the "
          + "device is upright; undo with: orientd calibrate --revert, then calibrate again")
    }
  }

  private func tick() {
    let now = Clock.monotonicNanoseconds()
    switch stage {
    case .pose, .confirming:
      if lastSample == nil, now - stageStart > 5_000_000_000, status == nil || accepted.isEmpty {
        finish(
          .unavailable,
          "\(description?.sysname ?? "the accelerometer") gave no reading in 5 s"
            + " (orientd --list-sensors; is another program holding its buffer?)")
        return
      }
      if Double(now - stageStart) / 1e9 > options.timeout {
        let what: String
        if case .pose(let index) = stage {
          what = "the \(CalibrationPose.allCases[index]) pose"
        } else {
          what = "the check"
        }
        finish(
          .temporaryFailure,
          "no still reading for \(what) in \(FixedPoint.format(options.timeout, decimals: 0)) s "
            + "(the readings varied by \(FixedPoint.format(window.spread, decimals: 2)) m/s^2); "
            + "rest the device against something steady, or raise --timeout")
        return
      }
      if let value = window.latest, lastSample.map({ now - $0 > 300_000_000 }) ?? false {
        output.live(reading: value, still: window.stillFor, frame: "raw", hint: nil)
      }
    case .applying:
      if now > applyDeadline {
        let active = hub.status(of: .accelerometer)?.accelerometer
        let matrix = active?.mountMatrix.description ?? "none"
        let source = active.map { "\($0.mountMatrixSource)" } ?? "no sensor"
        finish(
          .unavailable,
          "wrote the entry, but after 15 s the sensor still has mount matrix \(matrix) from "
            + "\(source): another hwdb file or a [device] section may override it "
            + "(udevadm info \(description?.facts.syspath ?? "/sys/bus/iio/devices/...") | grep "
            + "ACCEL_); undo with orientd calibrate --revert")
      }
    case .done:
      break
    }
  }

  private func readInput() {
    var buffer = [UInt8](repeating: 0, count: 256)
    let n = buffer.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, $0.count) }
    if n <= 0 {
      if n == 0 || (errno != EINTR && errno != EAGAIN) {
        // End of input: holding still still confirms.
        inputWatch?.cancel()
        inputWatch = nil
      }
      return
    }
    for byte in buffer[0..<n] where byte == 0x0A {
      switch stage {
      case .pose(let index): evaluate(CalibrationPose.allCases[index], byEnter: true)
      case .confirming: confirm(byEnter: true)
      case .applying, .done: break
      }
    }
  }

  // MARK: - writing

  private func preflight(_ target: CalibrateOptions.Target, _ sensor: AccelerometerDescription)
    throws(InstallError)
  {
    switch target {
    case .hwdb:
      if case .configuration(let origin) = sensor.mountMatrixSource {
        throw InstallError(
          .dataError,
          "the matrix in force comes from the configuration (\(origin)), which takes precedence "
            + "over hwdb: remove that mount-matrix, or use --write config")
      }
      for program in ["systemd-hwdb", "udevadm"] where CalibrationInstall.locate(program) == nil {
        throw InstallError(
          .unavailable,
          "\(program) not found in PATH; it comes with systemd (Debian: udev); without it use "
            + "--write config")
      }
      guard sensor.facts.hwdbKey != nil else {
        throw InstallError(
          .unavailable,
          "\(sensor.sysname) has no parent device with a modalias, so no hwdb entry can match it;"
            + " use --write config")
      }
      try CalibrationInstall.checkWritable(options.hwdbFile)
    case .config:
      try CalibrationInstall.checkWritable(configPath)
    }
  }

  private var configPath: String { options.configPath ?? DaemonConfiguration.defaultPath }

  private func install(
    _ target: CalibrateOptions.Target, forms: CalibrationForms,
    description: AccelerometerDescription
  ) throws(InstallError) {
    switch target {
    case .hwdb:
      guard let entry = forms.hwdbEntry else {
        throw InstallError(.unavailable, "no hwdb key for \(description.sysname)")
      }
      let previous = try CalibrationInstall.read(options.hwdbFile)
      if let previous, !previous.hasPrefix(CalibrationInstall.marker) {
        throw InstallError(
          .cannotCreate,
          "\(options.hwdbFile) exists and was not written by orientd calibrate; not replacing "
            + "it (move it away, or pass --hwdb-file)")
      }
      try CalibrationInstall.writeAtomically(options.hwdbFile, entry + "\n")
      do {
        try CalibrationInstall.updateHwdb()
      } catch {
        // Put the old file back: the failed update left the compiled database as it was, so the
        // sources and the database agree again.
        do {
          if let previous {
            try CalibrationInstall.writeAtomically(options.hwdbFile, previous)
          } else {
            try CalibrationInstall.remove(options.hwdbFile)
          }
        } catch {
          throw InstallError(error.status, "\(error.message) (while undoing a failed write)")
        }
        throw InstallError(error.status, "\(error.message); \(options.hwdbFile) was not changed")
      }
      output.wrote(path: options.hwdbFile, what: "hwdb")
      if let problem = CalibrationInstall.trigger(description.facts.syspath) {
        output.note(problem)
      }
    case .config:
      let previous = try CalibrationInstall.read(configPath) ?? ""
      var text = CalibrationInstall.removingBlock(previous) ?? previous
      if !text.isEmpty && !text.hasSuffix("\n") { text += "\n" }
      if !text.isEmpty { text += "\n" }
      text += forms.configBlock + "\n"
      let parsed: DaemonConfiguration
      do {
        parsed = try DaemonConfiguration(parsing: text, source: configPath)
      } catch {
        throw InstallError(.dataError, "the new configuration would not parse: \(error)")
      }
      try CalibrationInstall.writeAtomically(configPath, text)
      output.wrote(path: configPath, what: "config")
      configuration = parsed
      hub.update(configuration: CalibrateCommand.sensors(parsed))
      output.note(
        "a running orientd reads it on SIGHUP (systemctl reload orientd, or kill -HUP)")
    }
  }

  private func revert() -> ExitStatus {
    var removed: [String] = []
    do throws(InstallError) {
      if let text = try CalibrationInstall.read(options.hwdbFile) {
        guard text.hasPrefix(CalibrationInstall.marker) else {
          throw InstallError(
            .dataError,
            "\(options.hwdbFile) was not written by orientd calibrate; not removing it")
        }
        guard CalibrationInstall.locate("systemd-hwdb") != nil else {
          throw InstallError(.unavailable, "systemd-hwdb not found in PATH; nothing was removed")
        }
        try CalibrationInstall.remove(options.hwdbFile)
        try CalibrationInstall.updateHwdb()
        removed.append(options.hwdbFile)
        let syspath = hub.choice(of: .accelerometer).chosen?.syspath
        if let problem = CalibrationInstall.trigger(syspath) { output.note(problem) }
        output.wrote(path: options.hwdbFile, what: "removed")
      }
      if let text = try CalibrationInstall.read(configPath),
        let without = CalibrationInstall.removingBlock(text)
      {
        try CalibrationInstall.writeAtomically(configPath, without)
        removed.append(configPath)
        output.wrote(path: configPath, what: "removed")
      }
    } catch {
      output.fail(error.message)
      return error.status
    }
    if removed.isEmpty {
      output.note(
        "nothing to revert: neither \(options.hwdbFile) nor \(configPath) holds an entry written "
          + "by orientd calibrate")
    } else {
      output.note("removed what orientd calibrate wrote: \(removed.joined(separator: ", "))")
    }
    return .success
  }
}
