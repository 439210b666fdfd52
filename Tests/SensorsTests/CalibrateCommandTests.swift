import Glibc
import JSON
import OrientCore
import TestSupport
import TestThreads
import Testing

/// `orientd calibrate` against emulated accelerometers mounted every way, driven through the
/// poses by the test as a person would turn the device.
@Suite(.ownThreads, .serialized) struct CalibrateCommandTests {
  /// The 24 proper signed axis permutations and one mirror image.
  static let mounts: [[Double]] = {
    let orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]
    var proper: [[Double]] = []
    for order in orders {
      for signs in 0..<8 {
        var m = [Double](repeating: 0, count: 9)
        for row in 0..<3 { m[row * 3 + order[row]] = (signs >> row) & 1 == 1 ? -1 : 1 }
        let det =
          m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6])
          + m[2] * (m[3] * m[7] - m[4] * m[6])
        if det > 0 { proper.append(m) }
      }
    }
    return proper + [[0, 1, 0, 1, 0, 0, 0, 0, 1]]
  }()

  static let dmiModalias =
    "dmi:bvnExampleBIOS:bvr1.0:bd01/01/2024:svnExampleVendor:pnExampleTablet10:pvr1:"
    + "rvnExampleVendor:rnBoard:cvnExampleVendor:ct32:cvr1:"

  /// The machine's DMI data, as /sys/class/dmi/id has it.
  static let dmi = UMockdevDevice(
    devpath: "/devices/virtual/dmi/id", properties: [("SUBSYSTEM", "dmi")],
    attributes: [("modalias", dmiModalias + "\n"), ("sys_vendor", "ExampleVendor\n")])

  /// Raw counts a sensor mounted with `matrix` reads in a pose (1 g = 1000 counts).
  static func counts(_ matrix: MountMatrix, _ pose: CalibrationPose) -> (Int, Int, Int) {
    let inverse = matrix.inverse ?? .identity
    let v = inverse.apply(pose.displayDirection * Double(IIOFixture.countsPerG))
    return (Int(v.x.rounded()), Int(v.y.rounded()), Int(v.z.rounded()))
  }

  static func set(
    _ scenario: inout UMockdevScenario, _ sensor: UMockdevDevice, _ value: (Int, Int, Int)
  ) {
    scenario.set(sensor, "in_accel_x_raw", "\(value.0)\n")
    scenario.set(sensor, "in_accel_y_raw", "\(value.1)\n")
    scenario.set(sensor, "in_accel_z_raw", "\(value.2)\n")
  }

  static func configuration(_ directory: TemporaryDirectory, extra: String = "") throws -> String {
    let path = directory.file("orientd.conf")
    try writeFile(path, "[sampling]\nmode = polled\npoll-rate = 100\n" + extra)
    return path
  }

  static func events(_ transcript: UMockdevTranscript, _ name: String) -> [JSONValue] {
    transcript.lines.compactMap { try? JSONValue(parsing: $0) }.filter {
      $0["event"]?.stringValue == name
    }
  }

  @Test(.enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
  func derivesEveryMountFromThePosesAndBuildsAMatchingHwdbEntry() throws {
    let directory = try TemporaryDirectory("calibrate")
    let config = try CalibrateCommandTests.configuration(directory)
    let parent = IIOFixture.parent()
    // A wrong matrix is in force from udev: the raw readings must be taken without it.
    let sensor = IIOFixture.polled(
      parent: parent, properties: [("ACCEL_MOUNT_MATRIX", "0, 1, 0; -1, 0, 0; 0, 0, 1")])
    var scenario = UMockdevScenario(devices: [parent, sensor, CalibrateCommandTests.dmi])
    let truths = try CalibrateCommandTests.mounts.map { try MountMatrix(rows: $0) }
    for truth in truths {
      CalibrateCommandTests.set(&scenario, sensor, CalibrateCommandTests.counts(truth, .normal))
      scenario.spawn([
        try Built.executable("orientd"), "calibrate", "--json", "--hold", "0.3", "--timeout", "20",
        "--config", config,
      ])
      scenario.expect(#""event":"pose".*"step":2"#)
      CalibrateCommandTests.set(&scenario, sensor, CalibrateCommandTests.counts(truth, .leftUp))
      scenario.expect(#""event":"pose".*"step":3"#)
      CalibrateCommandTests.set(&scenario, sensor, CalibrateCommandTests.counts(truth, .faceUp))
      scenario.expect(#""event":"result""#)
      scenario.wait()
    }
    let transcript = try scenario.run(timeout: 400)
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(
      transcript.exitCodes == Array(repeating: 0, count: truths.count), "\(transcript.summary)")
    let sensors = CalibrateCommandTests.events(transcript, "sensor")
    let results = CalibrateCommandTests.events(transcript, "result")
    try #require(results.count == truths.count, "\(transcript.summary)")
    let key = try #require(sensors.first?["hwdb_key"]?.stringValue)
    #expect(key == "sensor:modalias:acpi:MXC6655::\(CalibrateCommandTests.dmiModalias)")
    #expect(sensors.first?["matrix_source"]?.stringValue == "udev ACCEL_MOUNT_MATRIX")
    for (truth, result) in zip(truths, results) {
      let proper = MountCalibration.determinant(truth.entries) > 0
      let matrix = try MountMatrix(parsing: result["matrix"]?.stringValue ?? "")
      #expect(matrix == truth)
      #expect(result["proper_rotation"]?.boolValue == proper, "\(truth)")
      #expect(result["property"]?.stringValue == "ACCEL_MOUNT_MATRIX=\(truth)")
      // The hwdb entry parses, sets that matrix, and its match line globs this sensor's key
      // (udev's hwdb matches with fnmatch(3)) but not another machine's.
      let records = try HwdbRecord.parse(result["hwdb"]?.stringValue ?? "")
      try #require(records.count == 1)
      #expect(try MountMatrix(parsing: records[0].property("ACCEL_MOUNT_MATRIX") ?? "") == truth)
      let pattern = try #require(records[0].matches.first)
      #expect(pattern == "sensor:modalias:acpi:MXC6655*:dmi:*:svnExampleVendor:pnExampleTablet10:*")
      #expect(fnmatch(pattern, key, 0) == 0)
      #expect(fnmatch(pattern, key.replacingAll("pnExampleTablet10", "pnOther"), 0) != 0)
      // The configuration form parses with orientd's own parser and names the matrix.
      let block = result["config"]?.stringValue ?? ""
      #expect(block.contains("mount-matrix = \(truth)"))
      #expect(block.contains("match-modalias = acpi:MXC6655*"))
      // Every orientation now reads what the detector expects.
      let rows = result["orientations"]?.arrayValue ?? []
      let reported = rows.map { ($0["pose"]?.stringValue ?? "", $0["reported"]?.stringValue ?? "") }
      for (pose, said) in reported
      where ["normal", "left-up", "bottom-up", "right-up"].contains(pose) {
        #expect(pose == said, "\(truth): \(pose) reads as \(said)")
      }
    }
  }

  @Test(.enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
  func enterConfirmsAndRepeatsAndShakingAreRejectedWithTheReason() throws {
    let directory = try TemporaryDirectory("calibrate")
    let config = try CalibrateCommandTests.configuration(directory)
    let parent = IIOFixture.parent()
    let sensor = IIOFixture.polled(parent: parent, raw: (0, -1000, 0))
    var scenario = UMockdevScenario(devices: [parent, sensor])
    // Holding still would take 60 s: every pose here is confirmed with Enter.
    scenario.spawn([
      try Built.executable("orientd"), "calibrate", "--json", "--hold", "60", "--config", config,
    ])
    scenario.expect(#""event":"reading""#, count: 8)
    scenario.send("\n")
    scenario.expect(#""event":"accepted".*"by":"enter""#)
    scenario.expect(#""event":"reading""#, count: 8)
    scenario.send("\n")
    scenario.expect(#""event":"rejected".*normal pose again"#)
    CalibrateCommandTests.set(&scenario, sensor, (0, 1000, 0))
    scenario.expect(#""event":"reading""#, count: 8)
    scenario.send("\n")
    scenario.expect(#""event":"rejected".*upside down"#)
    scenario.repeating(12) { inner in
      inner.set(sensor, "in_accel_x_raw", "600\n")
      inner.sleep(0.04)
      inner.set(sensor, "in_accel_x_raw", "1000\n")
      inner.sleep(0.04)
    }
    scenario.send("\n")
    scenario.expect(#""event":"rejected".*not still"#)
    scenario.signal("INT")
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(transcript.exitCodes == [1], "\(transcript.summary)")
    #expect(transcript.stderr.contains("interrupted"), "\(transcript.stderr)")
  }

  @Test(.enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
  func noSensorNoStillReadingAndUnwritableTargetsFailCleanly() throws {
    let directory = try TemporaryDirectory("calibrate")
    let config = try CalibrateCommandTests.configuration(directory)
    let parent = IIOFixture.parent()
    let sensor = IIOFixture.polled(parent: parent)
    var scenario = UMockdevScenario(devices: [parent, sensor])
    let orientd = try Built.executable("orientd")
    // 1. A shaking device: no still reading before the timeout.
    scenario.spawn([orientd, "calibrate", "--config", config, "--timeout", "1", "--hold", "0.5"])
    scenario.repeating(20) { inner in
      inner.set(sensor, "in_accel_y_raw", "-600\n")
      inner.sleep(0.04)
      inner.set(sensor, "in_accel_y_raw", "-1000\n")
      inner.sleep(0.04)
    }
    scenario.wait()
    // 2. No systemd-hwdb: refused before any pose, nothing written.
    let hwdb = directory.file("hwdb.d/61-sensor-orientd.hwdb")
    scenario.spawn(
      [orientd, "calibrate", "--write", "--hwdb-file", hwdb, "--config", config],
      environment: ["PATH": directory.file("empty-bin")])
    scenario.wait()
    // 3. A directory that cannot be written.
    scenario.spawn([
      orientd, "calibrate", "--write", "config", "--config", "/proc/orientd-calibrate/x.conf",
    ])
    scenario.wait()
    // 4. No accelerometer at all.
    scenario.unplug(sensor)
    scenario.sleep(0.2)
    scenario.spawn([orientd, "calibrate", "--json", "--config", config])
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(transcript.exitCodes == [75, 69, 73, 69], "\(transcript.summary)")
    let stderr = transcript.events.filter { $0["event"]?.stringValue == "stderr" }
      .compactMap { $0["text"]?.stringValue }.joined()
    #expect(stderr.contains("no still reading for the normal pose"), "\(stderr)")
    #expect(stderr.contains("systemd-hwdb not found in PATH"), "\(stderr)")
    #expect(stderr.contains("cannot "), "\(stderr)")
    #expect(stderr.contains("no display accelerometer found"), "\(stderr)")
    #expect(access(hwdb, F_OK) != 0)
    #expect(transcript.lines.contains { $0.contains(#""event":"error""#) })
  }

  @Test(.enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
  func writeConfigAppliesTheMatrixConfirmsAndRevertRemovesIt() throws {
    let directory = try TemporaryDirectory("calibrate")
    let config = try CalibrateCommandTests.configuration(directory, extra: "# kept\n")
    let parent = IIOFixture.parent()
    let truth = try MountMatrix(parsing: "0, -1, 0; 0, 0, 1; -1, 0, 0")
    let sensor = IIOFixture.polled(
      parent: parent, raw: CalibrateCommandTests.counts(truth, .normal))
    var scenario = UMockdevScenario(devices: [parent, sensor])
    let orientd = try Built.executable("orientd")
    scenario.spawn([
      orientd, "calibrate", "--json", "--hold", "0.3", "--write", "config", "--config", config,
    ])
    scenario.expect(#""event":"pose".*"step":2"#)
    CalibrateCommandTests.set(&scenario, sensor, CalibrateCommandTests.counts(truth, .leftUp))
    scenario.expect(#""event":"pose".*"step":3"#)
    CalibrateCommandTests.set(&scenario, sensor, CalibrateCommandTests.counts(truth, .faceUp))
    scenario.expect(#""event":"applied""#)
    CalibrateCommandTests.set(&scenario, sensor, CalibrateCommandTests.counts(truth, .normal))
    scenario.expect(#""event":"confirmed""#)
    scenario.wait()
    scenario.spawn([orientd, "--list-sensors", "--json", "--config", config])
    scenario.wait()
    scenario.spawn([orientd, "calibrate", "--revert", "--json", "--config", config])
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(transcript.exitCodes == [0, 0, 0], "\(transcript.summary)")
    let confirmed = CalibrateCommandTests.events(transcript, "confirmed").first
    #expect(confirmed?["orientation"]?.stringValue == "normal", "\(transcript.summary)")
    let applied = CalibrateCommandTests.events(transcript, "applied").first
    #expect(applied?["matrix"]?.stringValue == truth.description)
    #expect(applied?["matrix_source"]?.stringValue?.hasPrefix("configuration \(config):") == true)
    let listing = transcript.lines.first { $0.hasPrefix(#"{"sensors""#) } ?? ""
    #expect(listing.contains(truth.description), "\(listing)")
    let removed = CalibrateCommandTests.events(transcript, "removed")
    #expect(removed.first?["path"]?.stringValue == config)
    let after = readFile(config)
    #expect(after == "[sampling]\nmode = polled\npoll-rate = 100\n# kept\n", "\(after)")
  }
}

extension String {
  fileprivate func replacingAll(_ target: String, _ replacement: String) -> String {
    var result = ""
    var rest = self[...]
    while let range = rest.firstRange(of: target) {
      result += rest[..<range.lowerBound] + replacement
      rest = rest[range.upperBound...]
    }
    return result + rest
  }
}
