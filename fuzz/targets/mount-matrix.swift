// Mount matrices as the kernel (in_accel_mount_matrix), systemd's hwdb (ACCEL_MOUNT_MATRIX) and
// orientd.conf (mount-matrix =) write them: `OrientCore.MountMatrix(parsing:)`.
//
// Invariants: an accepted matrix has nine finite entries and no all-zero row; its canonical
// text re-parses to the same matrix and is a fixed point of format-then-parse; building it from
// its entries gives the same value; a rejected text is rejected with a message that quotes it.
import OrientCore

/// libFuzzer's entry point: checks one input against the invariants above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMountMatrix(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let text = inputText(data, size)
  let matrix: MountMatrix
  do {
    matrix = try MountMatrix(parsing: text)
  } catch {
    require(!error.reason.isEmpty, "an error without a reason for \(text.debugDescription)")
    require(
      error.description.hasPrefix("invalid mount matrix"), "odd message \(error.description)")
    return 0
  }
  let e = matrix.entries
  require(e.count == 9, "\(e.count) entries from \(text.debugDescription)")
  require(e.allSatisfy(\.isFinite), "a non-finite entry from \(text.debugDescription)")
  for r in 0..<3 {
    require(
      e[r * 3] != 0 || e[r * 3 + 1] != 0 || e[r * 3 + 2] != 0,
      "row \(r + 1) all zero accepted from \(text.debugDescription)")
  }
  let canonical = matrix.description
  let again: MountMatrix
  do {
    again = try MountMatrix(parsing: canonical)
  } catch {
    require(false, "canonical text \(canonical.debugDescription) does not parse: \(error)")
    return 0
  }
  require(again == matrix, "\(canonical) re-parses to \(again), not \(matrix)")
  require(again.description == canonical, "format is not a fixed point: \(again) vs \(canonical)")
  require((try? MountMatrix(rows: e)) == matrix, "init(rows:) disagrees for \(canonical)")
  // A trailing newline (as sysfs writes it) and surrounding blanks change nothing.
  require(
    (try? MountMatrix(parsing: " \(canonical)\n")) == matrix, "newline changes \(canonical)")
  return 0
}
