import JSON
import OrientCore
import Sensors
import TestSupport
import TestThreads
import Testing

/// Real orientd code (`orientd record`, `orientd --list-sensors`, and the `accel-probe` helper
/// around SensorHub) against emulated accelerometers in umockdev testbeds.
@Suite(
  .ownThreads, .serialized, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct SensorIntegrationTests {
  var orientd: String { get throws { try Built.executable("orientd") } }
  var probe: String { get throws { try Built.executable("accel-probe") } }

  @Test func polledDeviceTurnsThroughAllFourOrientations() throws {
    let parent = IIOFixture.parent()
    let device = IIOFixture.polled(parent: parent)
    var scenario = UMockdevScenario(devices: [parent, device])
    scenario.spawn([try orientd, "record"])
    scenario.expect(#"^[0-9.]+,0\.0000,-9\.8067,0\.0000$"#)  // normal: the first reading
    for orientation in [Orientation.leftUp, .bottomUp, .rightUp, .normal] {
      let raw = IIOFixture.raw(orientation)
      // Through zero (ignored as no gravity), so that no diagonal is ever read.
      scenario.set(device, "in_accel_x_raw", "0\n")
      scenario.set(device, "in_accel_y_raw", "0\n")
      scenario.set(device, "in_accel_x_raw", "\(raw.0)\n")
      scenario.set(device, "in_accel_y_raw", "\(raw.1)\n")
      let g = try #require(orientation.uprightGravity)
      let x = FixedPointText.format(g.x)
      let y = FixedPointText.format(g.y)
      scenario.expect("^[0-9.]+,\(x),\(y),0\\.0000$")
    }
    scenario.signal("TERM")
    scenario.wait()
    scenario.dump(device, ["in_accel_sampling_frequency"], tag: "after")
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(transcript.exitCodes == [0], "\(transcript.summary)")
    #expect(transcript.lines.first == "t,x,y,z")
    var seen: [Orientation] = []
    for (_, v) in IIOFixture.csv(transcript.lines) {
      guard let o = IIOFixture.classify(v) else { continue }
      if seen.last != o { seen.append(o) }
    }
    #expect(seen == [.normal, .leftUp, .bottomUp, .rightUp, .normal])
    // The frequency raised to 50 Hz (lowest >= 30) while recording is back at 12.5.
    #expect(transcript.dump("after")["in_accel_sampling_frequency"] == "12.500000")
  }

  @Test func recordRawShowsTheSensorsOwnAxesUnderAMountMatrix() throws {
    // The hwdb matrix turns the sensor's (1 g along x) into the display's (0, -g, 0)... with
    // --raw the reading is back in the sensor's axes, whatever matrix applies.
    let parent = IIOFixture.parent()
    let device = IIOFixture.polled(
      parent: parent, raw: (1000, 0, 0),
      properties: [("ACCEL_MOUNT_MATRIX", "0, 1, 0; -1, 0, 0; 0, 0, 1")])
    for (arguments, expected) in [
      (["record", "--duration", "0.3"], #"^[0-9.]+,0\.0000,-9\.8067,0\.0000$"#),
      (["record", "--raw", "--duration", "0.3"], #"^[0-9.]+,9\.8067,0\.0000,0\.0000$"#),
    ] {
      var scenario = UMockdevScenario(devices: [parent, device])
      scenario.spawn([try orientd] + arguments)
      scenario.expect(expected)
      scenario.wait()
      let transcript = try scenario.run()
      #expect(transcript.failure == nil, "\(arguments): \(transcript.summary)")
    }
  }

  static let formats = [
    IIOFixture.Format(type: "le:s16/32>>0", timestamp: true, extraEnabledChannel: false),
    IIOFixture.Format(type: "le:s12/16>>4", timestamp: true, extraEnabledChannel: true),
    IIOFixture.Format(type: "be:s14/16>>2", timestamp: false, extraEnabledChannel: false),
  ]

  @Test(arguments: formats)
  func bufferedDeviceDecodesRecordedScans(format: IIOFixture.Format) throws {
    let parent = IIOFixture.parent()
    let devices = IIOFixture.buffered(parent: parent, format: format)
    let device = devices[0]
    let values: [(Int, Int, Int)] = [
      IIOFixture.raw(.normal), IIOFixture.raw(.leftUp), IIOFixture.raw(.bottomUp),
      IIOFixture.raw(.rightUp), (-1, 1, -2047 / (format.type.contains("12") ? 2 : 1)),
      (5, -5, 1000),
    ]
    let encoded = values.map { IIOFixture.record($0, format: format) }
    let watched =
      [
        "buffer/enable", "buffer/length", "trigger/current_trigger", "current_timestamp_clock",
        "sampling_frequency", "scan_elements/in_accel_x_en", "scan_elements/in_accel_y_en",
        "scan_elements/in_accel_z_en",
      ] + (format.timestamp ? ["scan_elements/in_timestamp_en"] : [])
      + (format.extraEnabledChannel ? ["scan_elements/in_temp_en"] : [])
    var scenario = UMockdevScenario(devices: [parent] + devices)
    scenario.dump(device, watched, tag: "before")
    scenario.spawn([try probe])
    scenario.expect(#"^sensor \{.*"mode":"buffered""#)
    scenario.send("start")
    scenario.expect("^ok start$")
    scenario.dump(device, watched, tag: "running")
    scenario.openFiles(tag: "running")
    scenario.script(
      device, devnode: "/dev/iio:device0", records: encoded.map(\.bytes), intervalMilliseconds: 40,
      timestampOffset: encoded[0].timestampOffset)
    scenario.expect("^sample ", count: values.count)
    scenario.send("stop")
    scenario.expect("^ok stop$")
    scenario.dump(device, watched, tag: "stopped")
    scenario.openFiles(tag: "stopped")
    scenario.send("start")
    scenario.expect("^ok start$")
    scenario.dump(device, ["buffer/enable"], tag: "restarted")
    scenario.send("quit")
    scenario.wait()
    scenario.dump(device, watched, tag: "exited")
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(transcript.exitCodes == [0], "\(transcript.summary)")

    // Decoded values, in order, scaled: counts * 0.00980665.
    let samples = IIOFixture.samples(transcript.lines)
    try #require(samples.count == values.count, "\(transcript.summary)")
    for (sample, value) in zip(samples, values) {
      let expected = Vector3(Double(value.0), Double(value.1), Double(value.2)) * 0.00980665
      #expect((sample.v - expected).magnitude < 1e-5, "\(sample.v) != \(expected)")
    }
    if format.timestamp {
      // Kernel timestamps (10 ms apart as stamped), not arrival times (40 ms apart).
      let steps = zip(samples.dropFirst(), samples).map { $0.t - $1.t }
      #expect(steps.allSatisfy { $0 == 10_000_000 }, "\(steps)")
    }
    // While running: exactly the accel channels and the timestamp, the own data-ready
    // trigger, monotonic stamps, 31.26 Hz (lowest >= 30), a small buffer, enabled.
    let running = transcript.dump("running")
    #expect(running["buffer/enable"] == "1")
    #expect(running["buffer/length"] == "8")
    #expect(running["trigger/current_trigger"] == "bmc150_accel-dev0")
    #expect(running["current_timestamp_clock"] == (format.timestamp ? "monotonic" : "realtime"))
    #expect(running["sampling_frequency"] == "31.260000")
    #expect(running["scan_elements/in_accel_x_en"] == "1")
    if format.extraEnabledChannel { #expect(running["scan_elements/in_temp_en"] == "0") }
    #expect(transcript.openFiles("running").contains { $0.hasPrefix("/dev/pts/") })
    // Stopped: everything as before, nothing open.
    #expect(transcript.dump("stopped") == transcript.dump("before"), "\(transcript.summary)")
    #expect(
      !transcript.openFiles("stopped").contains {
        $0.hasPrefix("/dev/pts/") || $0.contains("/sys/")
      })
    #expect(transcript.dump("restarted")["buffer/enable"] == "1")
    #expect(transcript.dump("exited") == transcript.dump("before"))
  }

  @Test func hotplugAddAndRemoveWhileRunning() throws {
    let parent = IIOFixture.parent()
    let polled = IIOFixture.polled(parent: parent)
    let format = IIOFixture.Format(
      type: "le:s16/16>>0", timestamp: true, extraEnabledChannel: false)
    let buffered = IIOFixture.buffered(number: 1, parent: parent, format: format)
    var scenario = UMockdevScenario(devices: [])
    scenario.spawn([try probe])
    scenario.expect("^sensor none$")
    scenario.send("start")
    scenario.expect("^ok start$")
    // A sensor appears: used without a restart, first reading at once.
    scenario.hotplug([parent, polled])
    scenario.expect(#"^sensor \{"device":"iio:device0".*"sampling":true"#)
    scenario.expect("^sample ", count: 3)
    // Removed (uevent first): consumers told there is none, nothing left open.
    scenario.unplug(polled)
    scenario.expect("^sensor none$")
    scenario.openFiles(tag: "after-remove")
    // Back again, then unplugged while being read (files vanish before the uevent).
    scenario.hotplug([polled])
    scenario.expect("^sample ", count: 3)
    scenario.unplug(polled, filesFirst: true)
    scenario.expect("^sensor none$")
    // A buffered one appears and vanishes mid-stream.
    scenario.hotplug(buffered)
    scenario.expect(#"^sensor \{"device":"iio:device1".*"mode":"buffered".*"sampling":true"#)
    let records = (0..<40).map { i in
      IIOFixture.record((0, -1000 + i, 0), format: format)
    }
    scenario.script(
      buffered[0], devnode: "/dev/iio:device1", records: records.map(\.bytes),
      intervalMilliseconds: 25, timestampOffset: records[0].timestampOffset)
    scenario.expect("^sample ", count: 3)
    scenario.unplug(buffered[0], filesFirst: true)
    scenario.expect("^sensor none$")
    scenario.openFiles(tag: "after-buffered")
    scenario.send("status")
    scenario.expect("^status started=true")
    scenario.send("quit")
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(transcript.exitCodes == [0], "\(transcript.summary)")
    for tag in ["after-remove", "after-buffered"] {
      let open = transcript.openFiles(tag)
      #expect(
        !open.contains { $0.contains("/sys/") || $0.hasPrefix("/dev/pts/") }, "\(tag): \(open)")
    }
    #expect(!transcript.stderr.contains("error"), "\(transcript.stderr)")
  }

  @Test func baseOnlyMachineHasNoOrientation() throws {
    let parent = IIOFixture.parent()
    let base = IIOFixture.polled(parent: parent, attributes: [("label", "accel-base\n")])
    var list = UMockdevScenario(devices: [parent, base])
    list.spawn([try orientd, "--list-sensors"])
    list.wait()
    list.spawn([try probe])
    list.expect("^sensor none$")
    list.send("start")
    list.expect("^ok start$")
    list.drain(0.5)
    list.send("status")
    list.expect("^status ")
    // A display sensor (hwdb says so) appears next to it: that one is used.
    let lid = IIOFixture.polled(
      number: 1, parent: IIOFixture.parent("/devices/platform/i2c-1/i2c-BOSC0200:00"),
      properties: [("ACCEL_LOCATION", "display")])
    list.hotplug([IIOFixture.parent("/devices/platform/i2c-1/i2c-BOSC0200:00"), lid])
    list.expect(
      #"^sensor \{"device":"iio:device1".*"location":"display","location_source":"udev ACCEL_LOCATION""#
    )
    list.expect("^sample ")
    list.send("quit")
    list.wait()
    let transcript = try list.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(transcript.exitCodes == [0, 0], "\(transcript.summary)")
    #expect(transcript.lines.contains("  location:         base (sysfs label)"))
    #expect(
      transcript.lines.contains(
        "Would use none: no display accelerometer (orientation stays undefined)."))
    #expect(
      transcript.lines.contains {
        $0.contains("iio:device0: base sensor (sysfs label), never used")
      })
    #expect(transcript.lines.contains("status started=true delivered=0 skipped=0"))
    // No sample came from the base sensor: the only samples are the lid's, after it appeared.
    let firstSample = try #require(transcript.lines.firstIndex { $0.hasPrefix("sample ") })
    let lidFound = try #require(
      transcript.lines.firstIndex { IIOFixture.sensor($0)?["device"]?.stringValue == "iio:device1" }
    )
    #expect(firstSample > lidFound)
  }

  struct MatrixCase: CustomStringConvertible, Sendable {
    var description: String
    var properties: [(String, String)] = []
    var attributes: [(String, String)] = []
    var config: String?
    var source: String
    var matrix: String
    var problem: String?
  }

  static let matrixCases = [
    MatrixCase(
      description: "hwdb only", properties: [("ACCEL_MOUNT_MATRIX", "0, 1, 0; -1, 0, 0; 0, 0, 1")],
      source: "udev ACCEL_MOUNT_MATRIX", matrix: "0, 1, 0; -1, 0, 0; 0, 0, 1"),
    MatrixCase(
      description: "sysfs only",
      attributes: [("in_accel_mount_matrix", "-1, 0, 0; 0, -1, 0; 0, 0, 1\n")],
      source: "sysfs in_accel_mount_matrix", matrix: "-1, 0, 0; 0, -1, 0; 0, 0, 1"),
    MatrixCase(
      description: "older sysfs name",
      attributes: [("mount_matrix", "0, -1, 0; 1, 0, 0; 0, 0, 1\n")],
      source: "sysfs mount_matrix", matrix: "0, -1, 0; 1, 0, 0; 0, 0, 1"),
    MatrixCase(
      description: "hwdb beats sysfs",
      properties: [("ACCEL_MOUNT_MATRIX", "0, 1, 0; -1, 0, 0; 0, 0, 1")],
      attributes: [("in_accel_mount_matrix", "-1, 0, 0; 0, -1, 0; 0, 0, 1\n")],
      source: "udev ACCEL_MOUNT_MATRIX", matrix: "0, 1, 0; -1, 0, 0; 0, 0, 1"),
    MatrixCase(
      description: "invalid hwdb falls back to sysfs",
      properties: [("ACCEL_MOUNT_MATRIX", "0, 1, 0; 0, 0, 0; 0, 0, 1")],
      attributes: [("in_mount_matrix", "-1, 0, 0; 0, -1, 0; 0, 0, 1\n")],
      source: "sysfs in_mount_matrix", matrix: "-1, 0, 0; 0, -1, 0; 0, 0, 1",
      problem:
        "ignoring mount matrix from udev ACCEL_MOUNT_MATRIX: invalid mount matrix \\\"0, 1, 0; 0, 0, 0; 0, 0, 1\\\": row 2 is all zeros"
    ),
    MatrixCase(
      description: "invalid everything is identity",
      properties: [("ACCEL_MOUNT_MATRIX", "1, 0, 0; 0, 1, 0")],
      source: "identity (no matrix found)", matrix: "1, 0, 0; 0, 1, 0; 0, 0, 1",
      problem: "expected 3 rows separated by ';', found 2"),
    MatrixCase(
      description: "configuration beats hwdb",
      properties: [("ACCEL_MOUNT_MATRIX", "0, 1, 0; -1, 0, 0; 0, 0, 1")],
      config:
        "[device \"lid\"]\nmatch-modalias = acpi:MXC6655*\nmount-matrix = 1, 0, 0; 0, -1, 0; 0, 0, -1\n",
      source: "configuration CONFIG:3", matrix: "1, 0, 0; 0, -1, 0; 0, 0, -1"),
  ]

  @Test(arguments: matrixCases)
  func mountMatrixSources(_ c: MatrixCase) throws {
    let directory = try TemporaryDirectory("matrix")
    let parent = IIOFixture.parent()
    let device = IIOFixture.polled(
      parent: parent, properties: c.properties, attributes: c.attributes)
    var scenario = UMockdevScenario(devices: [parent, device])
    var argv = [try orientd, "--list-sensors", "--json"]
    if let config = c.config {
      try writeFile(directory.file("orientd.conf"), config)
      argv += ["--config", directory.file("orientd.conf")]
    }
    scenario.spawn(argv)
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.exitCodes == [0], "\(transcript.summary)")
    let document = try JSONValue(parsing: try #require(transcript.lines.first))
    let sensor = try #require(document["sensors"]?.arrayValue?.first)
    let source = c.source.replacingOccurrences("CONFIG", directory.file("orientd.conf"))
    #expect(sensor["mount_matrix_source"]?.stringValue == source)
    #expect(sensor["mount_matrix"]?.stringValue == c.matrix)
    // What a local hwdb entry has to match (no DMI data in the testbed).
    #expect(sensor["hwdb_key"]?.stringValue == "sensor:modalias:acpi:MXC6655::dmi:*")
    // The 0.1 spellings, written beside the snake_case keys until 0.3.
    #expect(sensor["mountMatrixSource"] == sensor["mount_matrix_source"])
    #expect(sensor["hwdbKey"] == sensor["hwdb_key"])
    if let problem = c.problem {
      let problems = sensor["problems"]?.arrayValue?.compactMap(\.stringValue) ?? []
      #expect(
        problems.contains { $0.contains(problem.replacingOccurrences("\\\"", "\"")) }, "\(problems)"
      )
    }
  }

  /// The quirk workflow of docs/sensors.md: a sideways device, a hwdb entry added, `udevadm trigger`
  /// (a change uevent): the new matrix is used without restarting.
  @Test func hwdbChangeAtRunTimeFixesASidewaysDevice() throws {
    let parent = IIOFixture.parent()
    // Mounted sideways: upright, the sensor reads +1 g on x.
    let device = IIOFixture.polled(parent: parent, raw: (1000, 0, 0))
    var scenario = UMockdevScenario(devices: [parent, device])
    scenario.spawn([try orientd, "record"])
    scenario.expect(#"^[0-9.]+,9\.8067,0\.0000,0\.0000$"#)
    // The matrix udev/61-sensor-local.hwdb.example gives for "reads (9.8, 0, 0) upright".
    scenario.property(device, "ACCEL_MOUNT_MATRIX", "0, 1, 0; -1, 0, 0; 0, 0, 1")
    scenario.uevent(device, "change")
    scenario.expect(#"^[0-9.]+,0\.0000,-9\.8067,0\.0000$"#)
    scenario.signal("INT")
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(transcript.exitCodes == [0])
    #expect(transcript.stderr.contains("accelerometer changed: iio:device0"))
    #expect(transcript.stderr.contains("(udev ACCEL_MOUNT_MATRIX)"))
  }

  @Test func garbageRawValuesAreSkippedAndLoggedOnce() throws {
    let parent = IIOFixture.parent()
    let device = IIOFixture.polled(parent: parent)
    var scenario = UMockdevScenario(devices: [parent, device])
    scenario.spawn([try probe, "--start"])
    scenario.expect("^sample ")
    // (`-25.6` is a valid reading since issue 12: decimals are read as such.)
    for garbage in ["abc\n", "", "99999999999999999999999\n", "1e3\n", "\n", "12abc\n"] {
      scenario.set(device, "in_accel_y_raw", garbage)
      scenario.drain(0.25)
    }
    scenario.set(device, "in_accel_y_raw", "-1000\n")
    scenario.drain(0.1)
    scenario.send("status")
    scenario.expect("^status ")
    scenario.set(device, "in_accel_z_raw", "junk\n")
    scenario.drain(0.25)
    scenario.set(device, "in_accel_z_raw", "0\n")
    scenario.expect("^sample ")
    scenario.send("quit")
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(transcript.exitCodes == [0])
    // Never a bogus reading: every sample is the upright vector.
    let samples = IIOFixture.samples(transcript.lines)
    #expect(samples.count >= 2)
    for s in samples { #expect((s.v - Vector3(0, -9.80665, 0)).magnitude < 1e-4, "\(s.v)") }
    let status = try #require(transcript.lines.first { $0.hasPrefix("status ") })
    let skipped = Int(status.split(separator: "=").last ?? "") ?? 0
    #expect(skipped >= 6, "\(status)")
    // One warning per kind of problem per episode, not one per reading: garbage, empty and
    // overflow on y, garbage on z. (A poll landing between the driver's truncate and write
    // may see one extra "empty", which is skipped and logged like any other.)
    let warnings = transcript.stderr.split(separator: "\n").filter {
      $0.contains("skipping reading")
    }
    #expect(warnings.count >= 4 && warnings.count <= 6, "\(warnings)")
    #expect(skipped > warnings.count)
    #expect(transcript.stderr.contains("readings valid again (after "))
  }

  /// A read that fails (here EISDIR: the attribute is a directory; on hardware EIO from the
  /// bus) skips the reading and is logged once; the sensor is not dropped.
  @Test func failingReadsAreSkippedAndLoggedOnce() throws {
    let parent = IIOFixture.parent()
    var device = IIOFixture.polled(parent: parent)
    device.attributes = device.attributes.filter { $0.0 != "in_accel_z_raw" }
    device.attributes.append(("in_accel_z_raw/not-a-value", "0\n"))
    var scenario = UMockdevScenario(devices: [parent, device])
    scenario.spawn([try probe, "--start"])
    scenario.expect("^ok start$")
    scenario.drain(0.5)
    scenario.send("status")
    scenario.expect("^status ")
    scenario.send("quit")
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(transcript.exitCodes == [0])
    #expect(IIOFixture.samples(transcript.lines).isEmpty)
    let status = try #require(transcript.lines.first { $0.hasPrefix("status ") })
    #expect(!status.hasSuffix("skipped=0"), "\(status)")
    let warnings = transcript.stderr.split(separator: "\n").filter {
      $0.contains("in_accel_z_raw: read error: Is a directory")
    }
    #expect(warnings.count == 1, "\(transcript.stderr)")
  }

  /// Adaptive sampling in buffered mode: a still stream raises `buffer/watermark` (to the scans
  /// in one still interval: 31.26 Hz / 5 Hz = 6) so the kernel wakes the reader rarely; a
  /// departing scan lowers it to 1 again, and stopping restores the value found.
  @Test func stillBufferedDeviceRaisesTheWatermarkAndAMoveLowersIt() throws {
    let parent = IIOFixture.parent()
    let format = IIOFixture.Format(
      type: "le:s16/32>>0", timestamp: true, extraEnabledChannel: false)
    var devices = IIOFixture.buffered(parent: parent, format: format)
    // Without its any-motion trigger (which would be used instead: StillWakeupTests).
    devices.remove(at: 1)
    let device = devices[0]
    // 1.5 s of still scans (stamped 10 ms apart), then a turn.
    let still = [(Int, Int, Int)](repeating: IIOFixture.raw(.normal), count: 150)
    let moving = [(Int, Int, Int)](repeating: IIOFixture.raw(.leftUp), count: 4)
    let encoded = (still + moving).map { IIOFixture.record($0, format: format) }
    var scenario = UMockdevScenario(devices: [parent] + devices)
    scenario.dump(device, ["buffer/watermark"], tag: "before")
    scenario.spawn([try probe])
    scenario.expect(#"^sensor \{.*"mode":"buffered""#)
    scenario.send("start")
    scenario.expect("^ok start$")
    scenario.script(
      device, devnode: "/dev/iio:device0", records: encoded.map(\.bytes), intervalMilliseconds: 2,
      timestampOffset: encoded[0].timestampOffset, pauses: [150: 300])
    scenario.expect("^sample ", count: 150)
    scenario.dump(device, ["buffer/watermark"], tag: "still")
    scenario.expect("^sample ", count: 4)
    scenario.dump(device, ["buffer/watermark"], tag: "moving")
    scenario.send("stop")
    scenario.expect("^ok stop$")
    scenario.dump(device, ["buffer/watermark"], tag: "stopped")
    scenario.send("quit")
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(transcript.dump("still")["buffer/watermark"] == "6", "\(transcript.summary)")
    #expect(transcript.dump("moving")["buffer/watermark"] == "1", "\(transcript.summary)")
    #expect(transcript.dump("stopped") == transcript.dump("before"))
  }

  @Test func stoppedMeansNothingOpenAndSettingsRestored() throws {
    let parent = IIOFixture.parent()
    let device = IIOFixture.polled(parent: parent)
    var scenario = UMockdevScenario(devices: [parent, device])
    scenario.spawn([try probe])
    scenario.expect("^sensor ")
    scenario.openFiles(tag: "idle")
    scenario.send("start")
    scenario.expect("^sample ")
    scenario.openFiles(tag: "sampling")
    scenario.dump(device, ["in_accel_sampling_frequency"], tag: "sampling")
    scenario.send("stop")
    scenario.expect("^ok stop$")
    scenario.openFiles(tag: "stopped")
    scenario.dump(device, ["in_accel_sampling_frequency"], tag: "stopped")
    scenario.drain(0.3)
    scenario.send("status")
    scenario.expect("^status started=false")
    scenario.send("quit")
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(
      !transcript.openFiles("idle").contains { $0.contains("/sys/") || $0.contains("timerfd") })
    #expect(transcript.openFiles("sampling").filter { $0.hasSuffix("_raw") }.count == 3)
    #expect(
      !transcript.openFiles("stopped").contains { $0.contains("/sys/") || $0.contains("timerfd") })
    #expect(transcript.dump("sampling")["in_accel_sampling_frequency"] == "50")
    #expect(transcript.dump("stopped")["in_accel_sampling_frequency"] == "12.500000")
    // No sample after the stop was acknowledged.
    let stopIndex = try #require(transcript.lines.firstIndex(of: "ok stop"))
    #expect(!transcript.lines[stopIndex...].contains { $0.hasPrefix("sample ") })
  }

  @Test func abandonedBufferIsTakenOverAndLeftDisabled() throws {
    let parent = IIOFixture.parent()
    let format = IIOFixture.Format(
      type: "le:s16/16>>0", timestamp: true, extraEnabledChannel: false)
    var devices = IIOFixture.buffered(parent: parent, format: format)
    devices[0].attributes = devices[0].attributes.map {
      $0.0 == "buffer/enable" ? ($0.0, "1\n") : $0
    }
    let records = (0..<3).map { _ in IIOFixture.record((0, -1000, 0), format: format) }
    var scenario = UMockdevScenario(devices: [parent] + devices)
    scenario.spawn([try probe, "--start"])
    scenario.expect(#"^sensor \{.*"mode":"buffered".*"sampling":true"#)
    scenario.script(
      devices[0], devnode: "/dev/iio:device0", records: records.map(\.bytes),
      intervalMilliseconds: 20, timestampOffset: records[0].timestampOffset)
    scenario.expect("^sample ", count: 3)
    scenario.send("quit")
    scenario.wait()
    scenario.dump(devices[0], ["buffer/enable", "scan_elements/in_accel_x_en"], tag: "after")
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(transcript.stderr.contains("buffer was left enabled with no reader; taking it over"))
    #expect(transcript.dump("after") == ["buffer/enable": "0", "scan_elements/in_accel_x_en": "0"])
  }

  @Test func unusableBufferFallsBackToPolling() throws {
    let parent = IIOFixture.parent()
    // A scan type orientd cannot lay out: the buffer is refused, the _raw files are polled.
    let format = IIOFixture.Format(
      type: "le:s16/24>>0", timestamp: true, extraEnabledChannel: false)
    let devices = IIOFixture.buffered(parent: parent, format: format)
    var scenario = UMockdevScenario(devices: [parent] + devices)
    scenario.spawn([try probe, "--start"])
    scenario.expect(#"^sensor \{.*"mode":"polled".*"sampling":true"#)
    scenario.expect("^sample ")
    scenario.send("quit")
    scenario.wait()
    scenario.dump(
      devices[0], ["buffer/enable", "scan_elements/in_accel_x_en", "trigger/current_trigger"],
      tag: "after")
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(
      transcript.stderr.contains(
        "scan_elements/in_accel_x_type: invalid scan element type \"le:s16/24>>0\": storage bits 24"
      ), "\(transcript.stderr)")
    #expect(transcript.stderr.contains("; polling instead"))
    #expect(
      transcript.dump("after") == [
        "buffer/enable": "0", "scan_elements/in_accel_x_en": "0", "trigger/current_trigger": "",
      ])
  }

  @Test func severalDisplaySensorsAreChosenDeterministically() throws {
    let a = IIOFixture.parent("/devices/platform/i2c-0/i2c-A:00")
    let b = IIOFixture.parent("/devices/platform/i2c-1/i2c-B:00")
    let three = IIOFixture.polled(number: 3, parent: a, name: "first")
    let one = IIOFixture.polled(number: 1, parent: b, name: "second")
    var scenario = UMockdevScenario(devices: [a, three, b, one])
    scenario.spawn([try orientd, "--list-sensors", "--json"])
    scenario.wait()
    scenario.spawn([try orientd, "record", "--duration", "0.3"])
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.exitCodes == [0, 0], "\(transcript.summary)")
    let document = try JSONValue(parsing: try #require(transcript.lines.first))
    #expect(document["chosen"]?.stringValue == "iio:device1")
    #expect(
      document["not_chosen"]?.arrayValue?.first?.stringValue
        == "iio:device3: another display sensor (higher device number)")
    #expect(transcript.stderr.contains("using iio:device1 (second) for orientation"))
    #expect(transcript.stderr.contains("not used: iio:device3: another display sensor"))
  }
}

/// The CSV number format of `orientd record` for expected values.
enum FixedPointText {
  static func format(_ value: Double) -> String {
    let text = Sensors.FixedPoint.format(value, decimals: 4)
    return text.replacingOccurrences(".", "\\.")
  }
}

extension String {
  func replacingOccurrences(_ target: String, _ replacement: String) -> String {
    var out = ""
    var index = startIndex
    while index < endIndex {
      if self[index...].hasPrefix(target) {
        out += replacement
        index = self.index(index, offsetBy: target.count)
      } else {
        out.append(self[index])
        index = self.index(after: index)
      }
    }
    return out
  }
}
