import Glibc
import Testing

@testable import OrientCore

/// The 48 signed axis permutations (24 proper rotations, 24 mirror images), row-major.
func signedPermutations() -> [[Double]] {
  let orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]
  var result: [[Double]] = []
  for order in orders {
    for signs in 0..<8 {
      var m = [Double](repeating: 0, count: 9)
      for row in 0..<3 { m[row * 3 + order[row]] = (signs >> row) & 1 == 1 ? -1 : 1 }
      result.append(m)
    }
  }
  return result
}

/// What a sensor mounted with `matrix` (display = M x raw) reads in `pose`: M^-1 x gravity.
func rawReading(_ matrix: MountMatrix, _ pose: CalibrationPose, noise: Vector3 = .zero) -> Vector3 {
  let inverse = matrix.inverse ?? .identity
  return inverse.apply(pose.displayDirection * standardGravity) + noise
}

@Suite struct CalibrationTests {
  static let proper = signedPermutations().filter { MountCalibration.determinant($0) > 0 }
  static let mirrored = signedPermutations().filter { MountCalibration.determinant($0) < 0 }

  @Test func thereAre24ProperMountsAnd24Mirrored() {
    #expect(CalibrationTests.proper.count == 24)
    #expect(CalibrationTests.mirrored.count == 24)
  }

  @Test(arguments: signedPermutations())
  func derivesEverySignedPermutationFromThreeNoisyPoses(entries: [Double]) throws {
    let truth = try MountMatrix(rows: entries)
    let noises = [Vector3(0.3, -0.2, 0.25), Vector3(-0.4, 0.1, 0.3), Vector3(0.2, 0.35, -0.15)]
    let poses = zip(CalibrationPose.allCases, noises).map { pose, noise in
      (pose: pose, reading: rawReading(truth, pose, noise: noise))
    }
    var accepted: [(pose: CalibrationPose, reading: Vector3)] = []
    for item in poses {
      #expect(MountCalibration.check(item.reading, accepted: accepted, exact: false) == nil)
      accepted.append(item)
    }
    let result = try MountCalibration.derive(poses, exact: false)
    #expect(result.matrix == truth)
    #expect(result.isProperRotation == (MountCalibration.determinant(entries) > 0))
    #expect(result.residuals.allSatisfy { $0.degrees < 5 })
    // The value round-trips through the project's parser.
    #expect(try MountMatrix(parsing: result.matrix.description) == truth)
  }

  /// A rotation about a unit axis by `degrees` (Rodrigues).
  static func rotation(axis: Vector3, degrees: Double) -> [Double] {
    let a = axis * (1 / axis.magnitude)
    let t = degrees * Double.pi / 180
    let c = cos(t)
    let s = sin(t)
    let k = 1 - c
    return [
      c + a.x * a.x * k, a.x * a.y * k - a.z * s, a.x * a.z * k + a.y * s,
      a.y * a.x * k + a.z * s, c + a.y * a.y * k, a.y * a.z * k - a.x * s,
      a.z * a.x * k - a.y * s, a.z * a.y * k + a.x * s, c + a.z * a.z * k,
    ]
  }

  @Test(arguments: [
    (Vector3(0, 0, 1), 30.0), (Vector3(1, 0, 0), 17.0), (Vector3(1, 1, 1), 123.0),
    (Vector3(-2, 0.5, 1), 250.0), (Vector3(0, 1, 0), 45.0),
  ])
  func exactFindsTheNearestRotationForAnOddAngle(axis: Vector3, degrees: Double) throws {
    let truth = try MountMatrix(rows: CalibrationTests.rotation(axis: axis, degrees: degrees))
    let noises = [Vector3(0.05, -0.02, 0.03), Vector3(-0.04, 0.01, 0.02), .zero]
    let poses = zip(CalibrationPose.allCases, noises).map { pose, noise in
      (pose: pose, reading: rawReading(truth, pose, noise: noise))
    }
    let result = try MountCalibration.derive(poses, exact: true)
    #expect(result.exact)
    #expect(result.isProperRotation)
    for (got, want) in zip(result.matrix.entries, truth.entries) {
      #expect(abs(got - want) < 0.01, "\(result.matrix) vs \(truth)")
    }
    // Orthonormal to the rounding of 4 decimals.
    let m = result.matrix.entries
    #expect(abs(MountCalibration.determinant(m) - 1) < 1e-3)
    #expect(result.residuals.allSatisfy { $0.degrees < 1 })
  }

  @Test func exactReportsAMirror() throws {
    let truth = try MountMatrix(rows: [-1, 0, 0, 0, 1, 0, 0, 0, 1])
    let poses = CalibrationPose.allCases.map { (pose: $0, reading: rawReading(truth, $0)) }
    let result = try MountCalibration.derive(poses, exact: true)
    #expect(!result.isProperRotation)
    #expect(result.matrix == truth)
  }

  @Test func offAxisReadingNeedsExact() {
    let tilted = Vector3(0.5, -0.8, 0.2) * (standardGravity / Vector3(0.5, -0.8, 0.2).magnitude)
    #expect(
      MountCalibration.check(tilted, accepted: [], exact: false)?.description.contains("--exact")
        == true)
    #expect(MountCalibration.check(tilted, accepted: [], exact: true) == nil)
  }

  @Test func rejectsRepeatsOppositesAndWrongTurnsWithTheReason() {
    let g = standardGravity
    let first = [(pose: CalibrationPose.normal, reading: Vector3(0, -g, 0))]
    let same = MountCalibration.check(Vector3(0.5, -g, 0), accepted: first, exact: false)
    #expect(same.map { if case .repeats(.normal, _) = $0 { true } else { false } } == true)
    #expect(same?.description.contains("the normal pose again") == true)
    let flipped = MountCalibration.check(Vector3(0, g, 0), accepted: first, exact: false)
    #expect(flipped?.description.contains("upside down") == true)
    let half = Vector3(g * 0.5, -g * 0.866, 0)
    let wrong = MountCalibration.check(half, accepted: first, exact: true)
    #expect(wrong?.description.contains("expected about 90") == true)
    let weak = MountCalibration.check(Vector3(0, -3, 0), accepted: [], exact: false)
    #expect(weak?.description.contains("not about 9.81") == true)
    #expect(MountCalibration.check(Vector3(g, 0, 0), accepted: first, exact: false) == nil)
  }

  @Test func deriveRejectsMissingAndCollinearPoses() {
    let g = standardGravity
    #expect(throws: CalibrationError.self) {
      try MountCalibration.derive([(pose: .normal, reading: Vector3(0, -g, 0))], exact: false)
    }
    let collinear: [(pose: CalibrationPose, reading: Vector3)] = [
      (.normal, Vector3(0, -g, 0)), (.leftUp, Vector3(0, g, 0)), (.faceUp, Vector3(0, 0, -g)),
    ]
    #expect(throws: CalibrationError.self) {
      try MountCalibration.derive(collinear, exact: false)
    }
    #expect(throws: CalibrationError.self) {
      try MountCalibration.derive(collinear, exact: true)
    }
  }

  @Test func stillnessNeedsTheWholeWindowSteady() {
    var window = StillnessWindow(length: 2, tolerance: 0.5)
    for i in 0...60 {
      window.add(time: Double(i) / 30, Vector3(0.1 * Double(i % 3), -9.8, 0))
    }
    #expect(window.stillFor >= 1.99)
    #expect(window.stillCount >= 60)
    #expect(abs((window.stillMean?.y ?? 0) + 9.8) < 1e-9)
    window.add(time: 61.0 / 30, Vector3(3, -9, 0))
    #expect(window.stillFor < 0.01)
    #expect(window.spread > 0.5)
    window.reset()
    #expect(window.count == 0 && window.stillFor == 0 && window.stillMean == nil)
  }
}

@Suite struct HwdbTests {
  @Test(arguments: [
    (
      "sensor:modalias:acpi:MXC6655:MXC6655::dmi:bvnAMI:bvr5.11:bd07/01/2020:svnExampleVendor:"
        + "pnExampleTablet10:pvrV1:rvnExample:rnT10:cvnExample:ct32:cvrV1:",
      "sensor:modalias:acpi:MXC6655*:dmi:*:svnExampleVendor:pnExampleTablet10:*"
    ),
    (
      "sensor:accel-display:modalias:acpi:BOSC0200:BOSC0200::dmi:bvnX:svnAcme:pnFlip3:pvr1:",
      "sensor:accel-display:modalias:acpi:BOSC0200*:dmi:*:svnAcme:pnFlip3:*"
    ),
    (
      "sensor:modalias:platform:HID-SENSOR-200073:dmi:*",
      "sensor:modalias:platform:HID-SENSOR-200073*"
    ),
    ("sensor:modalias:i2c:mxc4005:dmi:bvnX:bvr1:", "sensor:modalias:i2c:mxc4005*:dmi:*"),
  ])
  func matchLineGlobsTheKeyLikeSystemdsEntries(key: String, pattern: String) throws {
    let split = try #require(SensorHwdbMatch.split(key: key))
    let made = SensorHwdbMatch.pattern(for: split)
    #expect(made == pattern)
    #expect(fnmatch(made, key, 0) == 0)
  }

  @Test(arguments: [
    (
      "dmi:bvnSeaBIOS:svnQEMU:pnStandardPC(i440FX+PIIX,1996):pvrpc-i440fx-7.2:",
      "dmi:bvnSeaBIOS:svnQEMU:pnStandardPC_i440FX+PIIX,1996_:pvrpc-i440fx-7.2:"
    ),
    ("acpi:MXC6655:MXC6655:\n", "acpi:MXC6655:MXC6655:"),
    ("svnA*B[c]", "svnA_B_c_"),
    ("tab\there", "tab here"),
    ("caf\u{E9}/x\\x41", "caf\u{E9}/x\\x41"),
  ])
  func keyValuesAreSubstitutedAsUdevDoes(raw: String, substituted: String) {
    #expect(SensorHwdbMatch.udevSubstituted(raw) == substituted)
  }

  @Test func patternDoesNotMatchAnotherMachineOrSensor() throws {
    let key = "sensor:modalias:acpi:MXC6655:MXC6655::dmi:bvnA:svnAcme:pnTab:pvr1:"
    let pattern = SensorHwdbMatch.pattern(for: try #require(SensorHwdbMatch.split(key: key)))
    #expect(
      fnmatch(pattern, "sensor:modalias:acpi:MXC6655:MXC6655::dmi:bvnA:svnAcme:pnTab2:", 0) != 0)
    #expect(
      fnmatch(pattern, "sensor:modalias:acpi:KIOX000A:KIOX000A::dmi:bvnA:svnAcme:pnTab:", 0) != 0)
  }

  @Test func parsesRecordsAndRoundTripsText() throws {
    let text = """
      # comment
      sensor:modalias:acpi:MXC6655*:dmi:*:svnA:pnB:*
      sensor:modalias:acpi:MXC6656*:dmi:*:svnA:pnB:*
       ACCEL_MOUNT_MATRIX=0, 1, 0; -1, 0, 0; 0, 0, 1
       ACCEL_LOCATION=display

      sensor:accel-base:modalias:acpi:BOSC0200*:dmi:*
       ACCEL_LOCATION=base
      """
    let records = try HwdbRecord.parse(text)
    #expect(records.count == 2)
    #expect(records[0].matches.count == 2)
    #expect(records[0].line == 2)
    #expect(try MountMatrix(parsing: records[0].property("ACCEL_MOUNT_MATRIX") ?? "") != .identity)
    #expect(records[1].property("ACCEL_LOCATION") == "base")
    #expect(try HwdbRecord.parse(records[0].text) == [records[0].withLine(1)])
  }

  @Test(arguments: [
    (" ACCEL_LOCATION=base\n", 1, "no match line"),
    ("sensor:x*\n  ACCEL_LOCATION=base\n", 2, "exactly one space"),
    ("sensor:x*\n ACCEL_LOCATION\n", 2, "KEY=VALUE"),
    ("sensor:x*\n A=1\nsensor:y*\n B=2\n", 3, "blank line"),
    ("sensor:x*\n", 1, "no properties"),
  ])
  func rejectsMalformedFilesAtTheLine(text: String, line: Int, reason: String) {
    #expect {
      _ = try HwdbRecord.parse(text)
    } throws: { error in
      guard let error = error as? HwdbError else { return false }
      return error.line == line && error.reason.contains(reason)
    }
  }
}

extension HwdbRecord {
  fileprivate func withLine(_ line: Int) -> HwdbRecord {
    var copy = self
    copy.line = line
    return copy
  }
}
