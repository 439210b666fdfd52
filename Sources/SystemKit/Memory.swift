import CLinuxShims

/// The C library's allocator.
public enum Memory {
  /// Serves every allocation of at least `bytes` with its own mapping, returned to the system
  /// when freed (`mallopt(M_MMAP_THRESHOLD)`). Fixing the threshold also turns off glibc's
  /// dynamic one, which after one large buffer is freed keeps the next ones of that size on the
  /// heap, resident for good.
  ///
  /// - Returns: whether the C library accepted the setting.
  @discardableResult
  public static func mapAllocations(atLeast bytes: Int32) -> Bool {
    orient_set_mmap_threshold(bytes) == 1
  }

  /// Gives the heap's free pages back to the system (`malloc_trim(0)`), after a burst that
  /// left them unused: glibc otherwise keeps them resident for the next allocations.
  ///
  /// - Returns: whether any memory was released.
  @discardableResult
  public static func trim() -> Bool { orient_malloc_trim() == 1 }
}
