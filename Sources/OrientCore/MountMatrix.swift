import TextFormats

/// The 3x3 matrix that turns an accelerometer's raw axes into the display frame.
///
/// The kernel (`in_accel_mount_matrix`, Documentation/ABI/testing/sysfs-bus-iio) and systemd's
/// hwdb (`ACCEL_MOUNT_MATRIX`, 60-sensor.hwdb) write it as `"x1, y1, z1; x2, y2, z2; x3, y3, z3"`,
/// row by row; it is applied as matrix x raw vector.
public struct MountMatrix: Equatable, Hashable, Sendable, CustomStringConvertible {
  /// The nine entries, row-major.
  public private(set) var entries: [Double]

  /// The identity matrix (no remapping).
  public static let identity = MountMatrix(validatedRows: [1, 0, 0, 0, 1, 0, 0, 0, 1])

  private init(validatedRows entries: [Double]) {
    self.entries = entries
  }

  /// Creates a matrix from nine row-major entries, validated like parsed text.
  public init(rows entries: [Double]) throws(MountMatrixError) {
    let text = MountMatrix.format(entries)
    guard entries.count == 9 else {
      throw MountMatrixError(input: text, reason: "expected 9 entries, got \(entries.count)")
    }
    try MountMatrix.validate(entries, input: text)
    self.entries = entries
  }

  /// Parses the kernel/hwdb text form.
  ///
  /// Spaces, `-0`, `+1` and decimals (`0.7071`) are accepted; a trailing newline is ignored.
  ///
  /// - Throws: `MountMatrixError` quoting `text` and saying what is wrong: not three rows, a row
  ///   without three values, a value that is not a number, a non-finite value, or an all-zero
  ///   row (which would lose an axis).
  public init(parsing input: String) throws(MountMatrixError) {
    // Quote the value as the user wrote it, without the newline sysfs adds.
    let text = String(input[...].trimming())
    let rows = text.split(separator: ";", omittingEmptySubsequences: false)
    guard rows.count == 3 else {
      throw MountMatrixError(
        input: text, reason: "expected 3 rows separated by ';', found \(rows.count)")
    }
    var entries: [Double] = []
    entries.reserveCapacity(9)
    for (r, row) in rows.enumerated() {
      let cells = row.split(separator: ",", omittingEmptySubsequences: false)
      guard cells.count == 3 else {
        throw MountMatrixError(
          input: text,
          reason: "row \(r + 1) has \(cells.count) value\(cells.count == 1 ? "" : "s"), expected 3")
      }
      for (c, cell) in cells.enumerated() {
        do {
          entries.append(try DecimalText.parseDouble(cell))
        } catch {
          let shown = cell.trimming()
          throw MountMatrixError(
            input: text, reason: "row \(r + 1) value \(c + 1) '\(shown)' is \(error)")
        }
      }
    }
    try MountMatrix.validate(entries, input: text)
    self.entries = entries
  }

  private static func validate(_ entries: [Double], input: String) throws(MountMatrixError) {
    for (i, value) in entries.enumerated() where !value.isFinite {
      throw MountMatrixError(
        input: input, reason: "row \(i / 3 + 1) value \(i % 3 + 1) is not a finite number")
    }
    for r in 0..<3 where entries[r * 3] == 0 && entries[r * 3 + 1] == 0 && entries[r * 3 + 2] == 0 {
      throw MountMatrixError(
        input: input, reason: "row \(r + 1) is all zeros, so that axis would always read 0")
    }
  }

  /// Applies the matrix to a raw reading: `M x v`.
  @inlinable
  public func apply(_ v: Vector3) -> Vector3 {
    entries.withUnsafeBufferPointer { m in
      Vector3(
        m[0] * v.x + m[1] * v.y + m[2] * v.z,
        m[3] * v.x + m[4] * v.y + m[5] * v.z,
        m[6] * v.x + m[7] * v.y + m[8] * v.z)
    }
  }

  /// The inverse matrix, or `nil` when the matrix is singular (its rows are not independent),
  /// so that `inverse.apply(apply(v)) == v`: it turns display-frame readings back into the
  /// sensor's own axes.
  public var inverse: MountMatrix? {
    let m = entries
    let c00 = m[4] * m[8] - m[5] * m[7]
    let c01 = m[5] * m[6] - m[3] * m[8]
    let c02 = m[3] * m[7] - m[4] * m[6]
    let determinant = m[0] * c00 + m[1] * c01 + m[2] * c02
    guard determinant.isFinite, abs(determinant) > 1e-12 else { return nil }
    let d = 1 / determinant
    return MountMatrix(validatedRows: [
      c00 * d, (m[2] * m[7] - m[1] * m[8]) * d, (m[1] * m[5] - m[2] * m[4]) * d,
      c01 * d, (m[0] * m[8] - m[2] * m[6]) * d, (m[2] * m[3] - m[0] * m[5]) * d,
      c02 * d, (m[1] * m[6] - m[0] * m[7]) * d, (m[0] * m[4] - m[1] * m[3]) * d,
    ])
  }

  /// Whether this is the identity matrix.
  public var isIdentity: Bool { self == .identity }

  /// The canonical text form, `"1, 0, 0; 0, 1, 0; 0, 0, 1"` (negative zero printed as 0).
  public var description: String { MountMatrix.format(entries) }

  private static func format(_ entries: [Double]) -> String {
    var rows: [String] = []
    var index = 0
    while index < entries.count {
      let row = entries[index..<min(index + 3, entries.count)].map { value -> String in
        if value == 0 { return "0" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
      }
      rows.append(row.joined(separator: ", "))
      index += 3
    }
    return rows.joined(separator: "; ")
  }
}

/// A mount matrix that could not be used, with the text and the reason.
public struct MountMatrixError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The text as given.
  public var input: String
  /// What is wrong with it.
  public var reason: String

  /// `invalid mount matrix "…": reason`.
  public var description: String { "invalid mount matrix \"\(input)\": \(reason)" }
}
