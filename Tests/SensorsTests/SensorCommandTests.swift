import TestSupport
import TestThreads
import Testing

/// `orientd --list-sensors` and `orientd record`: usage and configuration errors, and an empty
/// machine.
@Suite(.ownThreads) struct SensorCommandTests {
  @Test(
    arguments: [
      (["record", "--bogus"], "unknown option '--bogus'"),
      (["record", "--duration"], "--duration needs a value"),
      (["record", "--duration", "-3"], "not a positive number"),
      (["record", "--json"], "unknown option '--json'"),
      (["--list-sensors", "--duration", "1"], "unknown option '--duration'"),
    ])
  func usageErrorsExit64(arguments: [String], message: String) throws {
    let directory = try TemporaryDirectory("cli")
    let result = try ChildProcess.run(
      [try Built.executable("orientd")] + arguments, outputDirectory: directory.path)
    #expect(result.status == 64)
    #expect(result.stderr.contains(message), "\(result.stderr)")
  }

  @Test func unreadableConfigurationExits66() throws {
    let directory = try TemporaryDirectory("cli")
    for command in [["record"], ["--list-sensors"]] {
      let result = try ChildProcess.run(
        [try Built.executable("orientd")] + command + ["--config", "/nonexistent/orientd.conf"],
        outputDirectory: directory.path)
      #expect(result.status == 66)
      #expect(result.stderr.contains("/nonexistent/orientd.conf"), "\(result.stderr)")
    }
  }

  @Test func badConfigurationExits65WithFileAndLine() throws {
    let directory = try TemporaryDirectory("cli")
    let path = directory.file("orientd.conf")
    try writeFile(path, "[sampling]\nmode = sometimes\n")
    for command in [["record"], ["--list-sensors"]] {
      let result = try ChildProcess.run(
        [try Built.executable("orientd")] + command + ["--config", path],
        outputDirectory: directory.path)
      #expect(result.status == 65)
      #expect(
        result.stderr.contains("\(path):2: mode 'sometimes' is not one of auto, buffered, polled"))
    }
  }

  @Test(.enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
  func noAccelerometerAtAll() throws {
    let other = UMockdevDevice(
      devpath: "/devices/platform/als/iio:device0", properties: [("SUBSYSTEM", "iio")],
      attributes: [("name", "als\n"), ("in_illuminance_raw", "10\n")])
    var scenario = UMockdevScenario(devices: [other])
    scenario.spawn([try Built.executable("orientd"), "--list-sensors"])
    scenario.wait()
    scenario.spawn([try Built.executable("orientd"), "record", "--duration", "0.2"])
    scenario.wait()
    let transcript = try scenario.run()
    // --list-sensors has the light sensor to show (exit 69 is for no sensor of any kind);
    // record needs an accelerometer.
    #expect(transcript.exitCodes == [0, 69], "\(transcript.summary)")
    #expect(transcript.lines.first?.hasPrefix("No accelerometer found") == true)
    #expect(transcript.lines.last == "t,x,y,z")
  }
}
