import OrientCore
import SystemKit
import TestThreads
import Testing

@testable import orientd

@Suite(.ownThreads) struct OptionsTests {
  @Test func replayOptions() throws {
    let options = try Options(arguments: [
      "replay", "rec.csv", "--json", "--set", "hysteresis=10", "--config=my.conf",
      "--set=filter-time-constant=0.1",
    ])
    var expected = ReplayOptions()
    expected.input = "rec.csv"
    expected.json = true
    expected.configPath = "my.conf"
    expected.overrides = [
      .init(key: "hysteresis", value: "10"), .init(key: "filter-time-constant", value: "0.1"),
    ]
    #expect(options.command == .replay(expected))
    #expect(try Options(arguments: ["replay"]).command == .replay(ReplayOptions()))
    var tilt = ReplayOptions()
    tilt.tilt = true
    #expect(try Options(arguments: ["replay", "--tilt"]).command == .replay(tilt))
    #expect(try Options(arguments: ["replay", "-"]).command == .replay(ReplayOptions()))
    #expect(try Options(arguments: ["--help"]).command == .help)
    #expect(try Options(arguments: ["replay", "--help"]).command == .help)
    #expect(try Options(arguments: ["--version"]).command == .version)
  }

  @Test func daemonAndClientModes() throws {
    #expect(try Options(arguments: []).command == .daemon(DaemonCommandOptions()))
    #expect(
      try Options(arguments: ["-v", "--config=/x.conf", "--session", "--no-compat"]).command
        == .daemon(
          DaemonCommandOptions(
            verbose: true, configPath: "/x.conf", session: true, compatibility: false)))
    #expect(
      try Options(arguments: ["--watch", "--json"]).command
        == .watch(ClientCommandOptions(json: true)))
    #expect(
      try Options(arguments: ["--proximity", "--watch", "--light", "--light"]).command
        == .watch(ClientCommandOptions(ambient: [.light, .proximity])))
    #expect(
      try Options(arguments: ["--session", "--get"]).command
        == .get(ClientCommandOptions(session: true)))
    var list = SensorCommandOptions()
    list.json = true
    list.configPath = "a.conf"
    #expect(
      try Options(arguments: ["--list-sensors", "--json", "--config", "a.conf"]).command
        == .listSensors(list))
    var record = SensorCommandOptions()
    record.duration = .seconds(2)
    record.verbose = true
    #expect(try Options(arguments: ["record", "--duration", "2", "-v"]).command == .record(record))
    for help in [["--watch", "--help"], ["record", "--help"], ["-h"], ["--get", "-h"]] {
      #expect(try Options(arguments: help).command == .help)
    }
    for version in [
      ["record", "--version"], ["replay", "--version"], ["--version"], ["--watch", "--version"],
    ] {
      #expect(try Options(arguments: version).command == .version)
    }
  }

  @Test(arguments: [
    (["--watch", "--get"], "--watch and --get cannot be combined"),
    (["--watch", "--config", "a"], "--config does not apply with --watch"),
    (["--get", "--no-compat"], "--no-compat does not apply with --get"),
    (["--json"], "--json does not apply for the daemon"),
    (["--list-sensors", "--session"], "--session does not apply with --list-sensors"),
    (["--watch", "extra"], "unexpected argument 'extra'"),
    (["--get", "--light"], "--light does not apply with --get"),
    (["--compass"], "--compass does not apply for the daemon"),
    (["--watch", "--proximity=1"], "--proximity takes no value"),
    (["record", "--json"], "unknown option '--json' for record"),
    (["--bogus"], "unknown option '--bogus'"),
    (["play"], "unknown command 'play'"),
    (["--version", "x"], "unexpected argument 'x'"),
    (["replay", "--fast"], "unknown option '--fast' for replay"),
    (["replay", "a.csv", "b.csv"], "replay takes one trace file"),
    (["replay", "--set"], "--set needs a value"),
    (["replay", "--set", "hysteresis"], "--set expects KEY=VALUE"),
    (["replay", "--set", "=3"], "--set expects KEY=VALUE"),
    (["replay", "--config"], "--config needs a value"),
    (["replay", "--json=yes"], "--json takes no value"),
  ])
  func usageErrors(arguments: [String], message: String) {
    #expect {
      _ = try Options(arguments: arguments)
    } throws: { error in
      (error as? UsageError)?.message.contains(message) == true
    }
  }

  @Test func usageListsEveryParameterWithItsDefault() {
    for key in DetectorParameters.Key.allCases {
      #expect(Options.usage.contains(key.rawValue))
    }
    #expect(Options.usage.contains("65"))
    #expect(Options.usage.contains("66"))
  }
}

@Suite(.ownThreads) struct ConfigKeysOptionTests {
  @Test func configKeysStandsAlone() throws {
    #expect(try Options(arguments: ["--config-keys"]).command == .configKeys)
    #expect(throws: UsageError.self) { try Options(arguments: ["--config-keys", "--json"]) }
    #expect(throws: UsageError.self) { try Options(arguments: ["--config-keys", "--get"]) }
    #expect(Options.usage.contains("--config-keys"))
  }
}

@Suite(.ownThreads) struct CalibrateOptionsTests {
  @Test func calibrateOptions() throws {
    var expected = CalibrateOptions()
    #expect(try Options(arguments: ["calibrate"]).command == .calibrate(expected))
    expected.json = true
    expected.exact = true
    expected.write = .hwdb
    expected.hold = 0.5
    expected.sensor = "iio:device1"
    #expect(
      try Options(arguments: [
        "calibrate", "--json", "--exact", "--write", "--hold=0.5", "--sensor", "iio:device1",
      ]).command == .calibrate(expected))
    expected.write = .config
    expected.configPath = "/tmp/o.conf"
    #expect(
      try Options(arguments: [
        "calibrate", "--json", "--exact", "--write", "config", "--hold", "0.5", "--sensor",
        "iio:device1", "--config", "/tmp/o.conf",
      ]).command == .calibrate(expected))
    var revert = CalibrateOptions()
    revert.revert = true
    revert.hwdbFile = "/tmp/x.hwdb"
    #expect(
      try Options(arguments: ["calibrate", "--revert", "--hwdb-file", "/tmp/x.hwdb"]).command
        == .calibrate(revert))
    #expect(try Options(arguments: ["calibrate", "--help"]).command == .help)
  }

  @Test(arguments: [
    (["calibrate", "--write", "disk"], "--write 'disk' must be 'hwdb' or 'config'"),
    (["calibrate", "--write=nowhere"], "must be 'hwdb' or 'config'"),
    (["calibrate", "--revert", "--write"], "--revert and --write cannot be combined"),
    (["calibrate", "--hold", "0"], "--hold '0' is not a positive number of seconds"),
    (["calibrate", "--timeout", "x"], "--timeout 'x' is not a positive number"),
    (["calibrate", "--duration", "2"], "unknown option '--duration' for calibrate"),
    (["calibrate", "extra"], "unexpected argument 'extra'"),
    (["calibrate", "--sensor"], "--sensor needs a value"),
  ])
  func calibrateUsageErrors(arguments: [String], message: String) {
    #expect {
      _ = try Options(arguments: arguments)
    } throws: { error in
      (error as? UsageError)?.message.contains(message) == true
    }
  }

  /// `orientd rotate` hands every argument, unparsed, to orientd-rotate.
  @Test func rotateArgumentsGoToOrientdRotate() throws {
    #expect(
      try Options(arguments: ["rotate", "--output", "eDP-1", "--bogus"]).command
        == .rotate(["--output", "eDP-1", "--bogus"]))
  }

  /// Beside orientd in the build tree, else PREFIX/libexec/orientd for PREFIX/bin.
  @Test func orientdRotateIsLookedForBesideThenInLibexec() {
    #expect(
      RotateLauncher.candidates(besides: "/usr/bin") == [
        "/usr/bin/orientd-rotate", "/usr/libexec/orientd/orientd-rotate",
      ])
    #expect(
      RotateLauncher.candidates(besides: "/src/.build/debug") == [
        "/src/.build/debug/orientd-rotate", "/src/.build/debug/../libexec/orientd/orientd-rotate",
      ])
  }
}
