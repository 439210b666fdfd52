import Glibc
import Testing

@testable import OrientCore

/// Every ACCEL_MOUNT_MATRIX in systemd's hwdb (Debian's udev package) must parse, or be
/// rejected for a stated reason.
@Suite struct HwdbMountMatrixTests {
  static let path = "/lib/udev/hwdb.d/60-sensor.hwdb"

  static func values() -> [(line: Int, value: String)]? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var values: [(Int, String)] = []
    var buffer = [CChar](repeating: 0, count: 4096)
    var number = 0
    while fgets(&buffer, Int32(buffer.count), file) != nil {
      number += 1
      let line = String(
        decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      let trimmed = line.drop { $0 == " " || $0 == "\t" }
      let key = "ACCEL_MOUNT_MATRIX="
      guard trimmed.hasPrefix(key) else { continue }  // comments start with '#'
      values.append((number, String(trimmed.dropFirst(key.count))))
    }
    return values
  }

  @Test(
    .enabled(
      if: access(path, R_OK) == 0 || getenv("CI").map { String(cString: $0) } == "true",
      "\(path) is not installed (Debian package udev)"))
  func everyValueParsesOrIsRejectedWithAReason() throws {
    let values = try #require(HwdbMountMatrixTests.values())
    var parsed = 0
    var rejected: [String] = []
    for (line, value) in values {
      do {
        let matrix = try MountMatrix(parsing: value)
        parsed += 1
        #expect(matrix.entries.allSatisfy { [-1, 0, 1].contains($0) }, "line \(line): \(value)")
      } catch {
        #expect(!error.reason.isEmpty)
        rejected.append("line \(line): \(error)")
      }
    }
    print(
      "60-sensor.hwdb: \(values.count) ACCEL_MOUNT_MATRIX values, \(parsed) parsed, "
        + "\(rejected.count) rejected\(rejected.isEmpty ? "" : ":\n" + rejected.joined(separator: "\n"))"
    )
    #expect(values.count >= 100, "expected the hwdb to list many devices")
    #expect(rejected.isEmpty)
  }
}
