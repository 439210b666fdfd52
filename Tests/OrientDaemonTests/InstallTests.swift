import Glibc
import TestSupport
import TestThreads
import Testing

/// scripts/install.sh staged into a DESTDIR, and the systemd unit it installs.
@Suite(.ownThreads) struct InstallTests {
  @Test(arguments: [
    (
      "/usr",
      [
        "/usr/bin/orientd", "/usr/share/dbus-1/system.d/orientd.conf",
        "/usr/share/dbus-1/system-services/org.orientd.Orientation1.service",
        "/usr/share/dbus-1/interfaces/org.orientd.Orientation1.xml",
        "/usr/share/dbus-1/interfaces/net.hadess.SensorProxy.xml",
        "/usr/share/polkit-1/actions/org.orientd.SensorProxy.policy",
        "/usr/share/polkit-1/rules.d/50-orientd-geoclue.rules",
        "/usr/lib/systemd/system/orientd.service", "/usr/lib/udev/rules.d/80-orientd.rules",
        "/usr/share/doc/orientd/orientd.conf.example",
        "/usr/share/doc/orientd/61-sensor-local.hwdb.example",
        "/usr/share/man/man8/orientd.8", "/usr/share/man/man5/orientd.conf.5",
        "/usr/share/man/man1/orientcam.1", "/usr/share/bash-completion/completions/orientd",
        "/usr/share/bash-completion/completions/orientcam",
      ]
    ),
    (
      "/usr/local",
      [
        "/usr/local/bin/orientd", "/etc/dbus-1/system.d/orientd.conf",
        "/usr/share/polkit-1/actions/org.orientd.SensorProxy.policy",
        "/usr/local/share/dbus-1/system-services/org.orientd.Orientation1.service",
        "/usr/local/lib/systemd/system/orientd.service", "/etc/udev/rules.d/80-orientd.rules",
        "/usr/local/share/man/man8/orientd.8",
        "/usr/local/share/bash-completion/completions/orientd",
      ]
    ),
  ])
  func stagesEveryFileWhereDebianReadsIt(prefix: String, expected: [String]) throws {
    let stage = try TemporaryDirectory("stage")
    let result = try ChildProcess.run(
      ["\(Built.packageRoot)/scripts/install.sh"],
      environment: [
        "DESTDIR": stage.path, "PREFIX": prefix, "SKIP_BUILD": "1",
        "BUILD_DIR": Built.productsDirectory,
      ], outputDirectory: stage.path, timeout: 120)
    #expect(result.status == 0, "\(result.stderr)")
    for path in expected {
      #expect(access(stage.path + path, F_OK) == 0, "\(path) missing:\n\(result.stdout)")
    }
    let unit = readFile("\(stage.path)\(prefix)/lib/systemd/system/orientd.service")
    #expect(unit.contains("ExecStart=\(prefix)/bin/orientd\n"))
    let activation = readFile(
      "\(stage.path)\(prefix)/share/dbus-1/system-services/org.orientd.Orientation1.service")
    #expect(activation.contains("Exec=\(prefix)/bin/orientd\n"))
    #expect(activation.contains("SystemdService=orientd.service"))
  }

  /// `systemd-analyze verify` accepts the unit (pointed at the built binary).
  @Test(
    .enabled(if: access("/usr/bin/systemd-analyze", X_OK) == 0 || runsInCI, "no systemd-analyze"))
  func theUnitVerifies() throws {
    let dir = try TemporaryDirectory("unit")
    let unit = readFile("\(Built.packageRoot)/systemd/orientd.service")
    let orientd = try Built.executable("orientd")
    let lines = unit.split(separator: "\n", omittingEmptySubsequences: false).map {
      $0.hasPrefix("ExecStart=") ? "ExecStart=\(orientd)" : String($0)
    }
    try writeFile(dir.file("orientd.service"), lines.joined(separator: "\n"))
    let verify = try ChildProcess.run(
      ["systemd-analyze", "verify", dir.file("orientd.service")], outputDirectory: dir.path)
    #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
    #expect(!unit.contains("PrivateNetwork=yes"), "it would cut orientd off udev's hotplug events")
    #expect(unit.contains("Type=dbus") && unit.contains("BusName=org.orientd.Orientation1"))
  }

  /// orientd's answer to losing the bus is exit status 69 (BusTests, BusFaultTests): the unit
  /// must restart it on that status, and its sandbox must not get looser.
  @Test(
    .enabled(if: access("/usr/bin/systemd-analyze", X_OK) == 0 || runsInCI, "no systemd-analyze"))
  func theUnitRestartsOnStatus69AndKeepsItsExposureScore() throws {
    let unit = readFile("\(Built.packageRoot)/systemd/orientd.service")
    let settings = unit.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    func values(_ key: String) -> [String] {
      settings.filter { $0.hasPrefix("\(key)=") }.map { String($0.dropFirst(key.count + 1)) }
    }
    // on-failure (or always) restarts after a non-zero exit status; 69 must not be declared a
    // success or exempted from restarting.
    #expect(values("Restart") == ["on-failure"])
    for key in ["RestartPreventExitStatus", "SuccessExitStatus"] {
      #expect(
        !values(key).contains { $0.split(separator: " ").contains("69") }, "\(key) names 69")
    }

    let dir = try TemporaryDirectory("unit")
    let orientd = try Built.executable("orientd")
    let lines = unit.split(separator: "\n", omittingEmptySubsequences: false).map {
      $0.hasPrefix("ExecStart=") ? "ExecStart=\(orientd)" : String($0)
    }
    try writeFile(dir.file("orientd.service"), lines.joined(separator: "\n"))
    let security = try ChildProcess.run(
      ["systemd-analyze", "security", "--offline=true", "--no-pager", dir.file("orientd.service")],
      outputDirectory: dir.path)
    let overall = (security.stdout + security.stderr).split(separator: "\n").first {
      $0.contains("Overall exposure level")
    }
    let score = overall.flatMap { line in
      line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }
    }
    print("systemd-analyze security --offline=true: \(overall ?? "no score")")
    #expect(score != nil, "\(security.stdout)\(security.stderr)")
    // 1.9 before IPAddressDeny=any and PrivateMounts=yes; what is left needs root, sysfs
    // writes, /dev/iio:* and netlink (see the comments in the unit).
    #expect((score ?? 10) <= 1.6, "\(overall ?? "")")
  }
}
