import Glibc
import OrientCore
import Sensors
import TestSupport
import Testing

/// Issue 8: faults injected into emulated sensors while the sensor layer (the `accel-probe`
/// helper) samples them. Each test checks that nothing crashes, no wrong reading gets through,
/// each problem is logged once, and the sensor recovers; the figures it measures are printed
/// (`swift test --filter SensorFaultTests` shows them) for the Reliability table in docs/reliability.md.
@Suite(.serialized, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct SensorFaultTests {
  var probe: String { get throws { try Built.executable("accel-probe") } }
  static let upright = Vector3(0, -9.80665, 0)
  static let format = IIOFixture.Format(
    type: "le:s16/16>>0", timestamp: true, extraEnabledChannel: false)

  /// The lines of `stderr` containing `text`.
  func logLines(_ transcript: UMockdevTranscript, _ text: String) -> [Substring] {
    transcript.stderr.split(separator: "\n").filter { $0.contains(text) }
  }

  /// Milliseconds from the end of step `step` to the first later stdout line matching
  /// `predicate`.
  func milliseconds(
    _ transcript: UMockdevTranscript, afterStep step: Int, until predicate: (String) -> Bool
  ) throws -> Double {
    let start = try #require(transcript.stepTimes[step], "no time for step \(step)")
    let index = try #require(
      transcript.lines.indices.first {
        transcript.lineTimes[$0] >= start && predicate(transcript.lines[$0])
      }, "no matching line after step \(step)")
    return Double(transcript.lineTimes[index] - start) / 1e6
  }

  /// Garbage that lasts makes the poller back off (fewer reads, one line saying so); the
  /// first valid reading restores the rate, and a later failure is logged again.
  @Test func readsThatKeepFailingBackOffAndRecover() throws {
    let parent = IIOFixture.parent()
    let device = IIOFixture.polled(parent: parent)
    var scenario = UMockdevScenario(devices: [parent, device])
    scenario.spawn([try probe, "--start"])
    scenario.expect("^sample ")
    scenario.send("status")
    scenario.expect("^status ")
    scenario.set(device, "in_accel_y_raw", "garbage\n")
    scenario.drain(4)
    scenario.send("status")
    scenario.expect("^status ")
    scenario.set(device, "in_accel_y_raw", "-1000\n")
    let recovered = scenario.steps.count - 1
    scenario.expect("^sample ")
    // A new, short failure after the recovery: logged again (its own episode).
    scenario.set(device, "in_accel_x_raw", "\n")
    scenario.drain(0.4)
    scenario.set(device, "in_accel_x_raw", "0\n")
    scenario.expect("^sample ")
    scenario.send("quit")
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(transcript.exitCodes == [0], "\(transcript.summary)")
    for s in IIOFixture.samples(transcript.lines) {
      #expect((s.v - SensorFaultTests.upright).magnitude < 1e-4, "\(s.v)")
    }
    let statuses = transcript.lines.filter { $0.hasPrefix("status ") }.compactMap {
      Int($0.split(separator: "=").last ?? "")
    }
    try #require(statuses.count >= 2, "\(transcript.summary)")
    let skippedIn4s = statuses[1] - statuses[0]
    // 30 Hz for 1 s, then 0.25 + 0.5 + 1 + 2 s apart: about 34 reads in 4 s, not 120.
    #expect(skippedIn4s > 0 && skippedIn4s <= 45, "\(skippedIn4s)")
    // One line per kind of problem per episode. (A poll between the driver's truncate and
    // write sees an empty value: "empty" is its own kind, logged once too.)
    let yLines = logLines(transcript, "skipping reading, in_accel_y_raw").count
    #expect(yLines == 1 || yLines == 2, "\(transcript.stderr)")
    #expect(logLines(transcript, "skipping reading, in_accel_x_raw").count == 1)
    // One backoff episode for the 4 s of garbage; the 0.4 s of the second failure is too short
    // for another, unless a loaded machine stretches it past 1 s. Each ends with one line.
    let backoffs = logLines(transcript, "reading less often").count
    #expect(backoffs == 1 || backoffs == 2, "\(transcript.stderr)")
    #expect(logLines(transcript, "reading at 30 Hz again").count == backoffs)
    #expect(
      logLines(transcript, "readings valid again").count == yLines + 1, "\(transcript.stderr)")
    let recovery = try milliseconds(transcript, afterStep: recovered) { $0.hasPrefix("sample ") }
    // At most one backed-off interval (2 s) plus scheduling.
    #expect(recovery < 2500)
    print(
      "fault readsThatKeepFailing: skipped \(skippedIn4s) readings in 4 s of garbage; "
        + "\(transcript.stderr.split(separator: "\n").count) log lines in all; "
        + "first valid reading \(Int(recovery)) ms after the fix")
  }

  /// The probe sampling a buffered device that delivers `scans` upright scans 30 ms apart
  /// (with `pauses` instead before some), then nothing; the script is the last step.
  func bufferedScenario(scans: Int, pauses: [Int: Int] = [:]) throws -> (
    UMockdevScenario, [UMockdevDevice]
  ) {
    let parent = IIOFixture.parent()
    let devices = IIOFixture.buffered(parent: parent, format: SensorFaultTests.format)
    let records = (0..<scans).map { _ in
      IIOFixture.record((0, -1000, 0), format: SensorFaultTests.format)
    }
    var scenario = UMockdevScenario(devices: [parent] + devices)
    scenario.spawn([try probe, "--start"])
    scenario.expect(#"^sensor \{.*"mode":"buffered".*"sampling":true"#)
    scenario.script(
      devices[0], devnode: "/dev/iio:device0", records: records.map(\.bytes),
      intervalMilliseconds: 30, timestampOffset: records[0].timestampOffset, pauses: pauses)
    return (scenario, devices)
  }

  /// A buffer that delivers nothing for two seconds, then resumes: logged once, re-armed, no
  /// fallback, and the scans after the stall are read. The device also lost its sampling
  /// frequency meanwhile (as a sensor hub powered up after a system resume): the re-arm writes
  /// it again.
  @Test func stalledBufferIsReArmedAndResumes() throws {
    var (scenario, devices) = try bufferedScenario(scans: 10, pauses: [5: 2200])
    scenario.expect("^sample ", count: 5, timeout: 20)
    scenario.dump(devices[0], ["sampling_frequency"], tag: "set")
    scenario.set(devices[0], "sampling_frequency", "15.620000\n")
    scenario.expect("^sample ", count: 5, timeout: 20)
    scenario.dump(devices[0], ["buffer/enable", "sampling_frequency"], tag: "resumed")
    scenario.send("quit")
    scenario.wait()
    scenario.dump(devices[0], ["buffer/enable"], tag: "after")
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(transcript.exitCodes == [0], "\(transcript.summary)")
    // One stall episode, logged once and ended once. (On a loaded machine the script may start
    // more than a second after the sampler: that wait is a stall too, its own episode.)
    let stall = logLines(transcript, "; re-enabling the buffer (")
    #expect(stall.count == 1 || stall.count == 2, "\(transcript.stderr)")
    #expect(logLines(transcript, ": scans flow again").count == stall.count, "\(transcript.stderr)")
    #expect(!transcript.stderr.contains("polling it instead"))
    #expect(!transcript.lines.contains { IIOFixture.sensor($0)?["mode"]?.stringValue == "polled" })
    #expect(transcript.dump("resumed")["buffer/enable"] == "1")
    let set = transcript.dump("set")["sampling_frequency"]
    #expect(set != nil && set != "15.620000", "the sampler set its own rate")
    #expect(transcript.dump("resumed")["sampling_frequency"] == set, "written again by the re-arm")
    #expect(transcript.dump("after")["buffer/enable"] == "0")
    // The gap between the 5th and the 6th sample as read: the stall.
    let sampleTimes = transcript.lines.indices.filter { transcript.lines[$0].hasPrefix("sample ") }
      .map { transcript.lineTimes[$0] }
    try #require(sampleTimes.count == 10)
    print(
      "fault stalledBuffer: \(stall.first ?? "") ; stall as seen by the reader "
        + "\((sampleTimes[5] - sampleTimes[4]) / 1_000_000) ms; "
        + "\(transcript.stderr.split(separator: "\n").count) log lines in all")
  }

  /// A buffer that stays silent is polled instead (mode auto), with one line for the stall
  /// and one for the switch; the polled readings are right.
  @Test func bufferThatStaysStalledFallsBackToPolling() throws {
    var (scenario, devices) = try bufferedScenario(scans: 3)
    let scripted = scenario.steps.count - 1
    scenario.expect("^sample ", count: 3)
    scenario.expect(#"^sensor \{.*"mode":"polled".*"sampling":true"#, timeout: 20)
    scenario.expect("^sample ", count: 3)
    scenario.send("quit")
    scenario.wait()
    scenario.dump(devices[0], ["buffer/enable", "scan_elements/in_accel_x_en"], tag: "after")
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(transcript.exitCodes == [0], "\(transcript.summary)")
    // The silence logged once (plus, on a loaded machine, the wait for the script to start).
    let stalls = logLines(transcript, "; re-enabling the buffer (").count
    #expect(stalls == logLines(transcript, ": scans flow again").count + 1, "\(transcript.stderr)")
    #expect(stalls <= 2)
    #expect(logLines(transcript, "polling it instead").count == 1, "\(transcript.stderr)")
    for s in IIOFixture.samples(transcript.lines) {
      #expect((s.v - SensorFaultTests.upright).magnitude < 1e-4, "\(s.v)")
    }
    #expect(
      transcript.dump("after") == ["buffer/enable": "0", "scan_elements/in_accel_x_en": "0"])
    let fallback = try milliseconds(transcript, afterStep: scripted) {
      IIOFixture.sensor($0)?["mode"]?.stringValue == "polled"
    }
    print(
      "fault bufferStaysStalled: polled after \(Int(fallback)) ms (3 records, then silence); "
        + "\(transcript.stderr.split(separator: "\n").count) log lines in all")
  }

  /// A driver switching its range rewrites `in_accel_scale` (and the raw counts) with no
  /// uevent: the implausible magnitude makes the manager re-read it, and readings are in
  /// m/s^2 again.
  @Test func scaleRewrittenWhileSamplingIsPickedUp() throws {
    let parent = IIOFixture.parent()
    let device = IIOFixture.polled(parent: parent)
    var scenario = UMockdevScenario(devices: [parent, device])
    scenario.spawn([try probe, "--start"])
    scenario.expect(#"^sample [0-9]+ -?0\.000000 -9\.806650 -?0\.000000$"#)
    // +-2 g to +-8 g: 250 counts per g instead of 1000.
    scenario.set(device, "in_accel_scale", "0.0392266\n")
    scenario.set(device, "in_accel_y_raw", "-250\n")
    let switched = scenario.steps.count - 1
    scenario.drain(0.5)
    scenario.expect(#"^sample [0-9]+ -?0\.000000 -9\.806650 -?0\.000000$"#)
    scenario.send("quit")
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(transcript.exitCodes == [0], "\(transcript.summary)")
    #expect(logLines(transcript, "re-read the calibration").count == 1, "\(transcript.stderr)")
    let samples = IIOFixture.samples(transcript.lines)
    // Readings with the old scale (4 g, or 1/4 g between the two writes) before the re-read:
    // at most `implausibleBeforeCheck`, and then only right ones.
    let wrong = samples.filter { abs($0.v.magnitude - 9.80665) > 1e-3 }
    #expect(wrong.count <= 5, "\(wrong.map(\.v))")
    #expect((samples.last.map { $0.v - SensorFaultTests.upright }?.magnitude ?? 1) < 1e-4)
    let lastWrong = try #require(samples.lastIndex { abs($0.v.magnitude - 9.80665) > 1e-3 })
    #expect(
      samples[(lastWrong + 1)...].allSatisfy {
        ($0.v - SensorFaultTests.upright).magnitude < 1e-4
      })
    let recovery = try milliseconds(transcript, afterStep: switched) {
      $0.contains(" -9.806650 ")
    }
    print(
      "fault scaleRewritten: \(wrong.count) readings with the old scale, right again "
        + "\(Int(recovery)) ms after the rewrite")
  }

  /// Fifty unplug/replug pairs as fast as the testbed sends them: the manager ends with the
  /// device sampled, the same descriptors open as before, and a bounded log.
  @Test func hotplugStormEndsWithTheRightDeviceAndNoLeaks() throws {
    let parent = IIOFixture.parent()
    let device = IIOFixture.polled(parent: parent)
    var scenario = UMockdevScenario(devices: [parent, device])
    scenario.spawn([try probe, "--start"])
    scenario.expect("^sample ")
    scenario.openFiles(tag: "before")
    let stormStart = scenario.steps.count - 1
    scenario.repeating(50) {
      $0.unplug(device)
      $0.hotplug([device])
    }
    let stormEnd = scenario.steps.count - 1
    // One calm replug after the storm. umockdev drops uevents silently when the program's
    // socket holds 10 (net.unix.max_dgram_qlen) where the kernel would report ENOBUFS (which
    // makes orientd enumerate again), so on a loaded machine the storm's last events may
    // never arrive; this pair always does.
    scenario.drain(0.5)
    scenario.unplug(device)
    scenario.hotplug([device])
    scenario.drain(1.5)
    scenario.openFiles(tag: "after")
    scenario.send("status")
    scenario.expect("^status ")
    scenario.send("quit")
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(transcript.exitCodes == [0], "\(transcript.summary)")
    let before = transcript.openFiles("before")
    let after = transcript.openFiles("after")
    #expect(before.count == after.count, "before \(before)\nafter \(after)")
    #expect(after.filter { $0.hasSuffix("_raw") }.count == 3, "\(after)")
    // The files of the device as it is now, not those of one that was removed.
    #expect(!after.contains { $0.hasSuffix("(deleted)") }, "\(after)")
    let lastSensor = try #require(transcript.lines.lastIndex { $0.hasPrefix("sensor ") })
    let sensor = try #require(IIOFixture.sensor(transcript.lines[lastSensor]))
    #expect(sensor["device"]?.stringValue == "iio:device0")
    #expect(sensor["sampling"]?.boolValue == true)
    #expect(transcript.lines[(lastSensor + 1)...].contains { $0.hasPrefix("sample ") })
    for s in IIOFixture.samples(transcript.lines) {
      #expect((s.v - SensorFaultTests.upright).magnitude < 1e-4, "\(s.v)")
    }
    let logCount = transcript.stderr.split(separator: "\n").count
    // The first 10 adds/removes, one line saying the rest go to debug level, and the sensor
    // choice and sampler restarts of each batch: not a line per uevent.
    #expect(logCount <= 60, "\(logCount) lines:\n\(transcript.stderr)")
    #expect(logLines(transcript, "logging them at debug level").count == 1)
    let times = transcript.stepTimes
    let seconds = Double((times[stormEnd] ?? 0) - (times[stormStart] ?? 0)) / 1e9
    let sensorLines = transcript.lines.filter { $0.hasPrefix("sensor ") }.count
    print(
      "fault hotplugStorm: 100 uevents in \(FixedPoint.format(seconds, decimals: 2)) s; "
        + "fds \(before.count) before, \(after.count) after; \(sensorLines) sensor changes "
        + "reported; \(logCount) log lines")
  }

  /// Uevents lost (the monitor's ENOBUFS): enumerating again reopens a device whose remove
  /// was lost (its add was not), forgets the device that went without a word, and a later add
  /// is followed as usual.
  @Test func enumeratingAgainAfterLostUevents() throws {
    let parent = IIOFixture.parent()
    let device = IIOFixture.polled(parent: parent)
    var scenario = UMockdevScenario(devices: [parent, device])
    scenario.spawn([try probe, "--start"])
    scenario.expect("^sample ")
    // Removed and back, but only the add was seen. The sampler's files were replaced under
    // it: it notices (SysfsAttribute, at most 250 ms later) and reads the new ones.
    scenario.unplugSilently(device)
    scenario.hotplug([device])
    scenario.drain(0.8)
    scenario.openFiles(tag: "stale")
    scenario.send("resync")
    scenario.expect(#"^sensor \{"device":"iio:device0".*"sampling":true"#)
    scenario.expect("^ok resync$")
    scenario.openFiles(tag: "fresh")
    // Gone without a word.
    scenario.unplugSilently(device)
    scenario.send("resync")
    scenario.expect("^sensor none$")
    scenario.expect("^ok resync$")
    scenario.openFiles(tag: "gone")
    scenario.hotplug([device])
    scenario.expect(#"^sensor \{"device":"iio:device0".*"sampling":true"#)
    scenario.expect("^sample ")
    scenario.send("quit")
    scenario.wait()
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(transcript.exitCodes == [0], "\(transcript.summary)")
    let stale = transcript.openFiles("stale")
    #expect(stale.filter { $0.hasSuffix("_raw") }.count == 3, "\(stale)")
    #expect(!stale.contains { $0.hasSuffix("(deleted)") }, "\(stale)")
    let fresh = transcript.openFiles("fresh")
    #expect(fresh.filter { $0.hasSuffix("_raw") }.count == 3, "\(fresh)")
    #expect(!fresh.contains { $0.hasSuffix("(deleted)") }, "\(fresh)")
    #expect(!transcript.openFiles("gone").contains { $0.contains("/sys/") })
    #expect(transcript.stderr.contains("is gone (found on enumerating again)"))
  }

  /// A sampler that cannot start (here `buffer/enable` cannot be written, in mode buffered)
  /// is retried, 1 s, then 2 s... later, logged once, and used as soon as it works.
  @Test func aSamplerThatFailsToStartIsRetried() throws {
    let directory = try TemporaryDirectory("retry")
    let config = directory.file("orientd.conf")
    try writeFile(config, "[sampling]\nmode = buffered\n")
    let parent = IIOFixture.parent()
    var devices = IIOFixture.buffered(parent: parent, format: SensorFaultTests.format)
    devices[0].attributes = devices[0].attributes.map {
      $0.0 == "buffer/enable" ? ("buffer/enable/unwritable", "") : $0
    }
    var scenario = UMockdevScenario(devices: [parent] + devices)
    scenario.spawn([try probe, "--config", config, "--start"])
    scenario.expect("^sensor none$")
    scenario.drain(2.5)  // retries at 1 s and 3 s: the first fails
    scenario.makeFile(devices[0], "buffer/enable", "0\n")
    let fixed = scenario.steps.count - 1
    scenario.expect(#"^sensor \{.*"mode":"buffered".*"sampling":true"#, timeout: 20)
    scenario.dump(devices[0], ["buffer/enable"], tag: "running")
    scenario.send("quit")
    scenario.wait()
    scenario.dump(devices[0], ["buffer/enable"], tag: "after")
    let transcript = try scenario.run()
    #expect(transcript.failure == nil, "\(transcript.summary)")
    #expect(transcript.exitCodes == [0], "\(transcript.summary)")
    #expect(logLines(transcript, "cannot enable the buffer").count == 1, "\(transcript.stderr)")
    #expect(transcript.stderr.contains("started at last (after "), "\(transcript.stderr)")
    #expect(transcript.dump("running")["buffer/enable"] == "1")
    #expect(transcript.dump("after")["buffer/enable"] == "0")
    let recovery = try milliseconds(transcript, afterStep: fixed) {
      IIOFixture.sensor($0)?["sampling"]?.boolValue == true
    }
    print(
      "fault samplerRetry: started \(Int(recovery)) ms after the fault went away "
        + "(\(logLines(transcript, "started at last").first ?? ""))")
  }
}
