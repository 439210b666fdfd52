import Glibc
import OrientCore
import OrientDaemon
import Sensors
import TestSupport
import TestThreads
import Testing

/// The configuration file: every section, errors with file and line, SIGHUP.
@Suite(.ownThreads) struct ConfigurationTests {
  static let example = """
    # /etc/orientd.conf
    [detector]
    hysteresis = 10
    filter-time-constant = 0.05

    [sampling]
    mode = polled
    poll-rate = 25

    [device "tablet"]
    match-name = mxc4005
    mount-matrix = 0, 1, 0; -1, 0, 0; 0, 0, 1
    location = display
    """

  @Test func everySectionIsRead() throws {
    let configuration = try DaemonConfiguration(parsing: Self.example, source: "test.conf")
    #expect(configuration.detector.hysteresis == 10)
    #expect(configuration.detector.filterTimeConstant == 0.05)
    #expect(configuration.accelerometer.sampling.mode == .polled)
    #expect(configuration.accelerometer.sampling.pollRate == 25)
    #expect(configuration.accelerometer.sampling.adaptive.enabled)
    #expect(configuration.accelerometer.devices.first?.matchName == "mxc4005")
    #expect(configuration.source == "test.conf")
    #expect(
      try DaemonConfiguration(parsing: "", source: "empty")
        == {
          var empty = DaemonConfiguration()
          empty.source = "empty"
          return empty
        }())
  }

  @Test(arguments: [
    ("[detector]\nhysteresis = 100\n", "x.conf:"),
    ("[sampling]\nmode = sometimes\n", "x.conf:2: mode 'sometimes'"),
    ("[sampling]\nadaptive = maybe\n", "x.conf:2: adaptive 'maybe' must be on or off"),
    ("[sampling]\n\nstill-rate = 0\n", "x.conf:3: still-rate 0 Hz is outside"),
    ("[sampling]\nsettle-time = soon\n", "x.conf:2: settle-time 'soon'"),
    ("[sampling]\nhysteresis = 9\n", "x.conf:2: hysteresis 9 m/s^2 is outside"),
    ("[sampling]\nhysteresis = some\n", "x.conf:2: hysteresis 'some'"),
    ("[camera]\nx = 1\n", "x.conf:1: unknown section [camera]"),
    ("hysteresis = 10\n", "x.conf:1: 'hysteresis' is outside any section"),
    ("[detector]\nfoo = 1\n", "x.conf:2:"),
    ("[device \"a\"]\nlocation = display\n", "needs match-name"),
  ])
  func mistakesNameTheFileAndLine(text: String, message: String) {
    #expect {
      _ = try DaemonConfiguration(parsing: text, source: "x.conf")
    } throws: { error in
      "\(error)".contains(message)
    }
  }

  /// The installed example (docs/orientd.conf.example) parses and shows the defaults.
  @Test func theExampleFileShowsTheDefaults() throws {
    let path = "\(Built.packageRoot)/docs/orientd.conf.example"
    let example = try DaemonConfiguration.load(path: path)
    #expect(example.detector == DetectorParameters())
    #expect(example.accelerometer == AccelerometerConfiguration())
    #expect(example.posture == PostureSettings())
    #expect(example.face == FaceSettings())
    #expect(example.motion == MotionSettings())
  }

  @Test func ambientPollIntervals() throws {
    let configuration = try DaemonConfiguration(
      parsing: "[sampling]\nlight-interval = 1\nproximity-interval = 0.7\n", source: "t.conf")
    #expect(configuration.ambient.lightInterval == .seconds(1))
    #expect(configuration.ambient.proximityInterval == .milliseconds(700))
    #expect {
      _ = try DaemonConfiguration(
        parsing: "[sampling]\nproximity-interval = 0.01\n", source: "t.conf")
    } throws: { "\($0)".contains("t.conf:2: proximity-interval 0.01 s is outside 0.05 ... 10") }
  }

  @Test func loadingFromDisk() throws {
    let dir = try TemporaryDirectory("conf")
    // No --config and no /etc/orientd.conf: the defaults.
    #expect(
      try DaemonConfiguration.load(path: nil, defaultPath: dir.file("absent.conf"))
        == DaemonConfiguration())
    try writeFile(dir.file("orientd.conf"), Self.example)
    let loaded = try DaemonConfiguration.load(path: nil, defaultPath: dir.file("orientd.conf"))
    #expect(loaded.accelerometer.sampling.pollRate == 25)
    #expect {
      _ = try DaemonConfiguration.load(path: dir.file("missing.conf"))
    } throws: { ($0 as? DaemonConfigurationError)?.status == .noInput }
    try writeFile(dir.file("bad.conf"), "[sampling]\nrate = fast\n")
    #expect {
      _ = try DaemonConfiguration.load(path: dir.file("bad.conf"))
    } throws: { error in
      guard let error = error as? DaemonConfigurationError else { return false }
      return error.status == .dataError && error.message.contains("bad.conf:2:")
    }
  }

  @Test func theDaemonRefusesABadFileAndExitsWithItsStatus() throws {
    let dir = try TemporaryDirectory("conf")
    try writeFile(dir.file("bad.conf"), "[detector]\nhysteresis = lots\n")
    let orientd = try Built.executable("orientd")
    let bad = try ChildProcess.run(
      [orientd, "--config", dir.file("bad.conf")], outputDirectory: dir.path)
    #expect(bad.status == 65)
    #expect(bad.stderr.contains("\(dir.file("bad.conf")):2:"), "\(bad.stderr)")
    let missing = try ChildProcess.run(
      [orientd, "--config", dir.file("none.conf")], outputDirectory: dir.path)
    #expect(missing.status == 66)
    #expect(missing.stderr.contains("none.conf"))
  }

  @Test func adaptiveKeysAreRead() throws {
    let text = "[sampling]\nadaptive = off\nstill-rate = 2.5\nsettle-time = 3\n"
    let sampling = try DaemonConfiguration(parsing: text, source: "a.conf").accelerometer.sampling
    #expect(!sampling.adaptive.enabled)
    #expect(sampling.adaptive.stillRate == 2.5)
    #expect(sampling.adaptive.settleTime == 3)
    #expect(sampling.hysteresis == .auto)
    let hub = "[sampling]\nhysteresis = 0.15\n"
    let fixed = try DaemonConfiguration(parsing: hub, source: "h.conf").accelerometer.sampling
    #expect(fixed.hysteresis == .fixed(0.15))
    let off = try DaemonConfiguration(parsing: "[sampling]\nhysteresis = off\n", source: "o.conf")
    #expect(off.accelerometer.sampling.hysteresis == .off)
  }

  /// A claimed, still sensor is read at the still rate; the first turn is still reported and
  /// brings the full rate back. With `adaptive = off` it is never slowed.
  @Test(.enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
  func adaptiveSamplingSlowsAStillSensorAndATurnStillComesThrough() throws {
    let dir = try TemporaryDirectory("adaptive")
    let path = dir.file("orientd.conf")
    try writeFile(path, "[sampling]\nmode = polled\nstill-rate = 4\nsettle-time = 0.5\n")
    let fixture = try DaemonFixture(["--config", path])
    let watch = try fixture.start([try Built.executable("orientd"), "--watch"])
    #expect(waitFor(timeout: 10) { watch.standardOutput.contains("normal") })
    #expect(
      waitFor(timeout: 15) { fixture.log.contains("still, reading at 4 Hz") }, "\(fixture.log)")
    try fixture.turn(.leftUp)
    #expect(waitFor(timeout: 10) { watch.standardOutput.lines.last?.contains("left-up") == true })
    #expect(fixture.log.contains("moving, reading at 30 Hz"))
    #expect(try fixture.testbed.stopProgram() == 0)

    try writeFile(path, "[sampling]\nmode = polled\nadaptive = off\nsettle-time = 0.5\n")
    let steady = try DaemonFixture(["--config", path])
    let client = try steady.start([try Built.executable("orientd"), "--watch"])
    #expect(waitFor(timeout: 10) { client.standardOutput.contains("normal") })
    // 60 polls at 30 Hz: two seconds, four times the settle time.
    #expect(steady.waitForPolls(60))
    #expect(!steady.log.contains("still, reading at"))
    #expect(try steady.testbed.stopProgram() == 0)
  }

  @Test(.enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
  func sighupReloadsAndKeepsTheOldConfigurationOnErrors() throws {
    let dir = try TemporaryDirectory("conf")
    let path = dir.file("orientd.conf")
    try writeFile(path, "[sampling]\nmode = polled\npoll-rate = 20\n")
    let fixture = try DaemonFixture(["--config", path])
    let watch = try fixture.start([try Built.executable("orientd"), "--watch"])
    #expect(waitFor(timeout: 10) { watch.standardOutput.contains("normal") })
    #expect(try fixture.property("Sensor").contains("\"rate\" d 20"))

    try writeFile(path, "[sampling]\nmode = polled\npoll-rate = 50\n[detector]\nhysteresis = 5\n")
    kill(fixture.testbed.programPID, SIGHUP)
    #expect(
      waitFor(timeout: 10) { (try? fixture.property("Sensor").contains("\"rate\" d 50")) == true },
      "\(fixture.log)")
    #expect(fixture.log.contains("reloaded the configuration from \(path)"))

    try writeFile(path, "[sampling]\npoll-rate = never\n")
    kill(fixture.testbed.programPID, SIGHUP)
    #expect(
      waitFor(timeout: 10) { fixture.log.contains("keeping the previous configuration") })
    #expect(fixture.log.contains("\(path):2:"))
    #expect(try fixture.property("Sensor").contains("\"rate\" d 50"))
    // Only the ambient poll intervals changed: the accelerometer's sampler is left running.
    let starts = { fixture.log.components(separatedBy: " polled at ").count }
    let startsBefore = starts()
    try writeFile(
      path,
      "[sampling]\nmode = polled\npoll-rate = 50\nproximity-interval = 0.7\n"
        + "[detector]\nhysteresis = 5\n")
    kill(fixture.testbed.programPID, SIGHUP)
    #expect(
      waitFor(timeout: 10) {
        fixture.log.components(separatedBy: "reloaded the configuration from").count == 3
      }, "\(fixture.log)")
    #expect(starts() == startsBefore, "\(fixture.log)")
    // Still sampling and turning.
    try fixture.turn(.leftUp)
    #expect(waitFor(timeout: 10) { watch.standardOutput.lines.last?.contains("left-up") == true })
    #expect(try fixture.testbed.stopProgram() == 0)
    #expect(fixture.log.contains("SIGTERM: shutting down"))
  }
}
