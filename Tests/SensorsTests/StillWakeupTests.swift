import OrientCore
import TestSupport
import TestThreads
import Testing

@testable import Sensors

/// How a buffered sampler keeps a still device from waking orientd, on the sysfs shapes of the
/// drivers that offer a way (umockdev testbeds; the emulated node delivers its scans whatever
/// the trigger, so what is checked is what orientd writes and when, not the chip's behaviour).
@Suite(
  .ownThreads, .serialized, .enabled(if: UMockdevScenario.isAvailable, "umockdev is not installed"))
struct StillWakeupTests {
  var probe: String { get throws { try Built.executable("accel-probe") } }

  static let format = IIOFixture.Format(
    type: "le:s16/32>>0", timestamp: true, extraEnabledChannel: false)
  /// Scans stamped 10.3 ms apart: the 99th (index 98, 1.009 s) is the first a second after
  /// the first, where `settle-time = 1` finds the device still, well clear of the boundary.
  static let step = 10_300_000
  static let stillScans = 99

  /// The probe on `devices`, `stillScans` still scans then, after a pause, `moving` scans of a
  /// turn; `dumps` the attributes before, when still, after the turn and after stopping.
  func run(
    _ devices: [UMockdevDevice], attributes: [String], moving: Int = 4, afterTurn: Int? = nil,
    quietAfterwards: Double = 0
  ) throws -> UMockdevTranscript {
    let device = devices[1]
    let still = [(Int, Int, Int)](
      repeating: IIOFixture.raw(.normal), count: StillWakeupTests.stillScans)
    let turn = [(Int, Int, Int)](repeating: IIOFixture.raw(.leftUp), count: moving)
    let encoded = (still + turn).map { IIOFixture.record($0, format: StillWakeupTests.format) }
    var scenario = UMockdevScenario(devices: devices)
    scenario.dump(device, attributes, tag: "before")
    scenario.spawn([try probe, "-v"])
    scenario.expect(#"^sensor \{.*"mode":"buffered""#)
    scenario.send("start")
    scenario.expect("^ok start$")
    scenario.script(
      device, devnode: "/dev/iio:device0", records: encoded.map(\.bytes), intervalMilliseconds: 2,
      timestampOffset: encoded[0].timestampOffset, timestampStep: StillWakeupTests.step,
      pauses: [StillWakeupTests.stillScans: 400])
    scenario.expect("^sample ", count: StillWakeupTests.stillScans)
    // The probe answers on the loop that delivered the scan, so after the switch it made.
    scenario.send("status")
    scenario.expect("^status ")
    scenario.dump(device, attributes, tag: "still")
    scenario.expect("^sample ", count: afterTurn ?? moving)
    scenario.send("status")
    scenario.expect("^status ")
    scenario.dump(device, attributes, tag: "moving")
    if quietAfterwards > 0 { scenario.drain(quietAfterwards) }
    scenario.send("stop")
    scenario.expect("^ok stop$")
    scenario.dump(device, attributes, tag: "stopped")
    scenario.send("quit")
    scenario.wait()
    return try scenario.run()
  }

  @Test func stillSwitchesToTheAnyMotionTriggerAndAScanSwitchesBack() throws {
    let parent = IIOFixture.parent()
    // bmc150: its data-ready trigger and its any-motion trigger, siblings.
    let devices = [parent] + IIOFixture.buffered(parent: parent, format: StillWakeupTests.format)
    let t = try run(devices, attributes: ["trigger/current_trigger", "buffer/enable"])
    #expect(t.failure == nil, "\(t.summary)")
    #expect(
      t.dump("still")["trigger/current_trigger"] == "bmc150_accel-any-motion-dev0", "\(t.summary)")
    #expect(t.dump("still")["buffer/enable"] == "1")
    #expect(t.dump("moving")["trigger/current_trigger"] == "bmc150_accel-dev0", "\(t.summary)")
    #expect(t.dump("stopped") == t.dump("before"))
    #expect(t.stderr.contains("while still: motion trigger"), "\(t.stderr)")
  }

  /// A display sensor's still wakeups depend on a base sensor (paired readings must not go
  /// stale): a base that appears while the display is read (a detachable keyboard) makes the
  /// sampler start afresh without the silent motion trigger, and one that goes brings it back.
  @Test func aBaseSensorThatComesAndGoesRechoosesTheStillWakeups() throws {
    let parent = IIOFixture.parent()
    let devices = [parent] + IIOFixture.buffered(parent: parent, format: StillWakeupTests.format)
    let baseParent = IIOFixture.parent("/devices/platform/i2c-1/i2c-BOSC0200:00")
    let base = IIOFixture.polled(
      number: 3, parent: baseParent, properties: [("ACCEL_LOCATION", "base")])
    var scenario = UMockdevScenario(devices: devices)
    scenario.spawn([try probe, "-v"])
    scenario.expect(#"^sensor \{.*"mode":"buffered""#)
    scenario.send("start")
    scenario.expect("^ok start$")
    scenario.hotplug([baseParent, base])
    scenario.drain(1)
    scenario.unplug(base)
    scenario.drain(1)
    scenario.send("stop")
    scenario.expect("^ok stop$")
    scenario.send("quit")
    scenario.wait()
    let t = try scenario.run()
    #expect(t.failure == nil, "\(t.summary)")
    // The sampler's start line ends in "; while still: STRATEGY".
    let strategies = t.stderr.split(separator: "\n").compactMap { line -> String? in
      let parts = line.split(separator: "while still: ", omittingEmptySubsequences: false)
      return parts.count == 2 ? String(parts[1]) : nil
    }
    #expect(strategies.count == 3, "\(t.stderr)")
    #expect(strategies.first == "motion trigger", "\(t.stderr)")
    #expect(strategies.dropFirst().first.map { $0 != "motion trigger" } == true, "\(t.stderr)")
    #expect(strategies.last == "motion trigger", "\(t.stderr)")
    #expect(t.stderr.contains("a base accelerometer appeared"))
    #expect(t.stderr.contains("a base accelerometer went away"))
  }

  @Test func hubSensitivityIsSetFromTheNoiseAndSilenceIsNoStall() throws {
    let parent = IIOFixture.parent()
    var devices = [parent] + IIOFixture.buffered(parent: parent, format: StillWakeupTests.format)
    // hid-sensor-accel-3d's attribute; the scale says the hub counts thousandths of g.
    devices[1].attributes.append(("in_accel_hysteresis", "0.000000\n"))
    // One scan for the turn, as a hub with a sensitivity sends it: the rest is repeated by
    // orientd for settle-time (more than 10 readings at 31.26 Hz), then 3.5 s of silence,
    // longer than three stall periods (1 s each).
    let t = try run(
      devices, attributes: ["in_accel_hysteresis", "trigger/current_trigger"], moving: 1,
      afterTurn: 12, quietAfterwards: 3.5)
    #expect(t.failure == nil, "\(t.summary)")
    // 0.08 m/s^2 (the floor of the threshold: these scans have no noise) in g.
    #expect(t.dump("still")["in_accel_hysteresis"] == "0.008158", "\(t.summary)")
    // The data-ready trigger stays: the hub decides when to report.
    #expect(t.dump("still")["trigger/current_trigger"] == "bmc150_accel-dev0")
    #expect(t.dump("stopped") == t.dump("before"))
    let turned = IIOFixture.samples(t.lines).filter { IIOFixture.classify($0.v) == .leftUp }
    #expect(turned.count >= 12, "\(t.summary)")
    #expect(!t.stderr.contains("no scan from"), "\(t.stderr)")
    #expect(!t.stderr.contains("polling it instead"), "\(t.stderr)")
    #expect(t.stderr.contains("while still: hub sensitivity"), "\(t.stderr)")
  }

  /// With the hub silent by request, a stall is a polled read that moved while no report came:
  /// one that agrees with the last report is no stall; one that moved is (after three checks
  /// the owner polls instead).
  @Test func aSilentHubIsCheckedByAPolledRead() throws {
    let parent = IIOFixture.parent()
    var devices = [parent] + IIOFixture.buffered(parent: parent, format: StillWakeupTests.format)
    let device = devices[1]
    let leftUp = IIOFixture.raw(.leftUp)
    devices[1].attributes =
      devices[1].attributes.filter { !$0.0.hasSuffix("_raw") } + [
        ("in_accel_hysteresis", "0.000000\n"), ("in_accel_x_raw", "\(leftUp.0)\n"),
        ("in_accel_y_raw", "\(leftUp.1)\n"), ("in_accel_z_raw", "\(leftUp.2)\n"),
      ]
    let still = [(Int, Int, Int)](
      repeating: IIOFixture.raw(.normal), count: StillWakeupTests.stillScans)
    let encoded = (still + [leftUp]).map { IIOFixture.record($0, format: StillWakeupTests.format) }
    var scenario = UMockdevScenario(devices: devices)
    scenario.spawn([try probe, "-v", "--quiet-check", "0.5"])
    scenario.expect(#"^sensor \{.*"mode":"buffered""#)
    scenario.send("start")
    scenario.expect("^ok start$")
    // The turn comes 0.1 s after the device is found still, before the first check (0.5 s).
    scenario.script(
      device, devnode: "/dev/iio:device0", records: encoded.map(\.bytes), intervalMilliseconds: 2,
      timestampOffset: encoded[0].timestampOffset, timestampStep: StillWakeupTests.step,
      pauses: [StillWakeupTests.stillScans: 100])
    scenario.expect("^sample ", count: StillWakeupTests.stillScans + 1)
    // Three checks agree with the last report (left-up): silence is no stall.
    scenario.drain(1.8)
    scenario.send("status")
    scenario.expect("^status ")
    let bottomUp = IIOFixture.raw(.bottomUp)
    scenario.set(device, "in_accel_x_raw", "\(bottomUp.0)\n")
    scenario.set(device, "in_accel_y_raw", "\(bottomUp.1)\n")
    // The device moved and the hub said nothing: after three checks, polled readings.
    scenario.expect("^sample [0-9]+ -?0\\.000000 9\\.80665", timeout: 20)
    scenario.send("stop")
    scenario.expect("^ok stop$")
    scenario.send("quit")
    scenario.wait()
    let t = try scenario.run()
    #expect(t.failure == nil, "\(t.summary)")
    let statusIndex = try #require(t.lines.firstIndex { $0.hasPrefix("status ") })
    let stderr = t.stderr
    #expect(stderr.contains("the hub sent nothing although the sensor moved"), "\(stderr)")
    #expect(stderr.contains("polling it instead"), "\(stderr)")
    // Nothing before the move: the held repeats and the checks that agreed are no stall.
    #expect(
      !t.lines[..<statusIndex].contains { $0.contains(#""mode":"polled""#) }, "\(t.summary)")
  }

  @Test func hardwareFIFOBatchesWithTheTriggerDetached() throws {
    let parent = IIOFixture.parent()
    var devices = [parent] + IIOFixture.buffered(parent: parent, format: StillWakeupTests.format)
    devices.remove(at: 2)  // no any-motion trigger
    devices[1].attributes += [
      ("buffer/hwfifo_enabled", "0\n"), ("buffer/hwfifo_watermark", "0\n"),
      ("buffer/hwfifo_watermark_min", "1\n"), ("buffer/hwfifo_watermark_max", "32\n"),
    ]
    let t = try run(devices, attributes: ["trigger/current_trigger", "buffer/watermark"])
    #expect(t.failure == nil, "\(t.summary)")
    // bmc150 fills its FIFO only with no trigger attached; 31.26 Hz / 5 Hz = 6 scans a batch.
    #expect(t.dump("still")["trigger/current_trigger"] == "", "\(t.summary)")
    #expect(t.dump("still")["buffer/watermark"] == "6", "\(t.summary)")
    #expect(t.dump("moving")["trigger/current_trigger"] == "bmc150_accel-dev0", "\(t.summary)")
    #expect(t.dump("moving")["buffer/watermark"] == "1")
    #expect(t.dump("stopped") == t.dump("before"))
    #expect(t.stderr.contains("while still: hardware FIFO"), "\(t.stderr)")
  }

  @Test func motionEventsAreFoundAndWithoutAnEventDescriptorTheWatermarkIsUsed() throws {
    let parent = IIOFixture.parent()
    var devices = [parent] + IIOFixture.buffered(parent: parent, format: StillWakeupTests.format)
    devices.remove(at: 2)
    // kxcjk-1013's and mma8452's shapes; free fall (falling) is not motion starting.
    devices[1].attributes += [
      ("events/in_accel_thresh_either_en", "0\n"), ("events/in_accel_thresh_either_value", "1\n"),
      ("events/in_accel_x_mag_rising_en", "0\n"), ("events/in_accel_x&y&z_mag_falling_en", "0\n"),
    ]
    let t = try run(devices, attributes: ["buffer/watermark", "events/in_accel_thresh_either_en"])
    #expect(t.failure == nil, "\(t.summary)")
    // The emulated node is a pty: IIO_GET_EVENT_FD_IOCTL fails, so the events cannot be read.
    #expect(
      t.stderr.contains(
        "has motion events (in_accel_thresh_either_en, in_accel_x_mag_rising_en) but no event descriptor"
      ), "\(t.stderr)")
    #expect(t.dump("still")["buffer/watermark"] == "6", "\(t.summary)")
    #expect(t.dump("still")["events/in_accel_thresh_either_en"] == "0")
    #expect(t.dump("stopped") == t.dump("before"))
  }

  @Test func sysfsShapes() {
    // HID hubs: g (9.80665 x 10^-3 per count), m/s^2 (10^-2), and the attribute's text.
    #expect(abs(HubSensitivity.unitOfHysteresis(scale: 0.00980665) - 9.80665) < 1e-9)
    #expect(abs(HubSensitivity.unitOfHysteresis(scale: 0.01) - 1) < 1e-9)
    #expect(abs(HubSensitivity.unitOfHysteresis(scale: 0.0098) - 9.8) < 1e-9)
    let g = HubSensitivity(path: "h", relative: false, unit: 9.80665)
    #expect(g.text(forThreshold: 0.08) == "0.008158")
    let percent = HubSensitivity(path: "h", relative: true, unit: 9.80665)
    #expect(percent.text(forThreshold: 0.0980665) == "1.000000")
    let triggers = [
      TriggerInfo(name: "kxcjk1013-any-motion-dev3", parentSyspath: "/p"),
      TriggerInfo(name: "kxcjk1013-dev3", parentSyspath: "/p"),
      TriggerInfo(name: "other-any-motion-dev1", parentSyspath: "/q"),
    ]
    #expect(
      MotionWakeups.trigger(
        deviceName: "kxcjk1013", deviceNumber: 3, deviceParent: nil, triggers: triggers)
        == "kxcjk1013-any-motion-dev3")
    #expect(
      MotionWakeups.trigger(
        deviceName: "renamed", deviceNumber: 9, deviceParent: "/p", triggers: triggers)
        == "kxcjk1013-any-motion-dev3")
    #expect(
      MotionWakeups.trigger(
        deviceName: "x", deviceNumber: 0, deviceParent: "/r", triggers: triggers)
        == nil)
    #expect(
      MotionWakeups.events(in: [
        "in_accel_x_roc_rising_en", "in_accel_x_roc_rising_value", "in_accel_x&y&z_mag_falling_en",
        "in_accel_thresh_either_en", "in_illuminance_thresh_rising_en",
      ]) == ["in_accel_thresh_either_en", "in_accel_x_roc_rising_en"])
  }
}
