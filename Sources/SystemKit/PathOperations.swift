import CLinuxShims
import Glibc

/// Calls on paths that Swift's Glibc module hides (GNU extensions), with their C names.
public enum PathOperations {
  /// `AT_EMPTY_PATH` for `linkat(2)`: link the descriptor itself.
  public static let atEmptyPath: Int32 = orient_at_empty_path()

  /// `renameat2(2)` with `RENAME_NOREPLACE`: renames `from` to `to` unless `to` exists.
  ///
  /// - Returns: 0, or the errno: `EEXIST` when `to` exists, `EINVAL` (or `ENOSYS`) where the
  ///   filesystem or kernel does not know the flag.
  public static func renameWithoutReplacing(_ from: String, _ to: String) -> Int32 {
    while true {
      if orient_rename_noreplace(from, to) == 0 { return 0 }
      if errno != EINTR { return errno }
    }
  }
}
