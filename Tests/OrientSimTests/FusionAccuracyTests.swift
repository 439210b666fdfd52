import Glibc
import OrientCore
import OrientSim
import Testing

/// The fusion's accuracy where a user would see it: on simulated motion against the truth, and
/// on real IMU recordings against each device's own orientation (scikit-kinematics' test data,
/// fetched into a cache by scripts/fetch-imu-data.sh; skipped with a message when it cannot be
/// had). The full tables are motion-bench's (docs/motion.md).
@Suite struct FusionAccuracyTests {
  static func rms(_ values: [Double]) -> Double { FusionScore.rms(values) }

  static func score(_ scenario: FusionScenario, magnetometer: Bool) -> FusionScore {
    let bench = FusionBenchmark(seed: 7, repetitions: 1)
    let path = scenario.runs(seed: 7, repetitions: 1)[0]
    let samples = bench.samples(of: path, index: 0, scenario: scenario, profile: .fast)
    var filter = OrientdFusionFilter()
    return FusionBenchmark.score(
      &filter, over: samples, magnetometer: magnetometer, warmUp: FusionScenario.warmUp)
  }

  @Test func heldInTheHandTheVerticalAndNorthAreRightWithinAFewDegrees() {
    let s = Self.score(.handheld, magnetometer: true)
    #expect(Self.rms(s.inclination) < 3, "inclination rms \(Self.rms(s.inclination))")
    #expect(Self.rms(s.heading) < 4, "heading rms \(Self.rms(s.heading))")
  }

  @Test func turnedAboutEveryAxisItStaysWithinAFewDegrees() {
    let s = Self.score(.turns, magnetometer: true)
    #expect(Self.rms(s.inclination) < 5, "inclination rms \(Self.rms(s.inclination))")
    #expect(Self.rms(s.heading) < 10, "heading rms \(Self.rms(s.heading))")
  }

  @Test func onADeskTheHeadingDoesNotDriftWithoutAMagnetometer() {
    // The BMI160-class gyroscope is off by up to 3 deg/s: unlearnt, that is 170 degrees a
    // minute of heading.
    let s = Self.score(.desk, magnetometer: false)
    #expect((percentile(s.heading, 100) ?? 99) < 1, "drift \(percentile(s.heading, 100) ?? 0)")
  }

  @Test func aMagnetNearbyDoesNotTiltTheVertical() {
    let s = Self.score(.magnet, magnetometer: true)
    #expect((percentile(s.inclination, 99) ?? 99) < 5)
    // While the magnet is near (twice 10-14 s) the heading runs on the gyroscope alone.
    #expect(Self.rms(s.heading) < 12, "heading rms \(Self.rms(s.heading))")
  }

  // MARK: - Real recordings

  /// The cached data folder, fetched once if missing (nil when it cannot be had).
  static let dataFolder: String? = {
    let script =
      String(#filePath.dropLast("Tests/OrientSimTests/FusionAccuracyTests.swift".count))
      + "scripts/fetch-imu-data.sh"
    guard let pipe = popen("'\(script)' 2>/dev/null", "r") else { return nil }
    var line = [CChar](repeating: 0, count: 4096)
    let got = fgets(&line, Int32(line.count), pipe) != nil
    let status = pclose(pipe)
    guard got, status == 0 else { return nil }
    let path = String(
      decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return path.hasSuffix("\n") ? String(path.dropLast()) : path
  }()

  static func read(_ path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      let n = fread(&chunk, 1, chunk.count, file)
      if n <= 0 { break }
      bytes += chunk[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  @Test(
    .enabled(
      if: dataFolder != nil,
      "scikit-kinematics' recordings cannot be had (scripts/fetch-imu-data.sh: no pip or network)"
    ))
  func onRealRecordingsTheVerticalAgreesWithEachDevicesOwnFusion() throws {
    let folder = try #require(Self.dataFolder)
    let (recordings, errors) = IMURecordings.load { Self.read(folder + "/" + $0) }
    #expect(errors.isEmpty, "\(errors)")
    #expect(recordings.count == 4)
    for recording in recordings {
      var filter = OrientdFusionFilter()
      let result = RecordingEvaluation.evaluate(recording, filter: &filter, magnetometer: false)
      // The reference itself fits the accelerometer at rest (else it was read wrongly).
      #expect(result.restAgreement < 3, "\(recording.name): reference \(result.restAgreement)")
      #expect(result.inclination.count > recording.samples.count / 2)
      let rms = Self.rms(result.inclination)
      #expect(rms < 5, "\(recording.name): inclination rms \(rms) degrees")
    }
  }

  @Test func theRecordingReadersReadEachFormat() throws {
    // Two rows of each format, as the files have them.
    let files: [String: String] = [
      "data_xsens.txt": """
      // Start Time: 0
      // Sample rate: 50.0Hz
      Counter\tAcc_X\tAcc_Y\tAcc_Z\tGyr_X\tGyr_Y\tGyr_Z\tMag_X\tMag_Y\tMag_Z\tQuat_w\tQuat_x\tQuat_y\tQuat_z
      """
        + (0..<60).map { " \(65530 + $0)\t0\t0\t9.81\t0.1\t0\t0\t0.5\t0\t-0.8\t1\t0\t0\t0\t" }
        .joined(separator: "\n")
    ]
    let (recordings, errors) = IMURecordings.load { files[$0] }
    #expect(errors.count == 3)  // the other three devices' files are missing
    #expect(errors.allSatisfy { $0.reason == "missing" })
    let xsens = try #require(recordings.first)
    #expect(xsens.name == "xsens-mtx")
    #expect(xsens.samples.count == 60)
    // The counter wraps at 65536 and time goes on.
    #expect(abs((xsens.samples.last?.time ?? 0) - 59 / 50) < 1e-9)
    // Acceleration in orientd's convention: lying face up reads (0, 0, -g).
    #expect(xsens.samples[0].acceleration == Vector3(0, 0, -9.81))
    #expect(abs(xsens.rate - 50) < 1e-9)
  }
}
