import Glibc
import SystemKit
import TestSupport
import TestThreads
import Testing

@Suite(.ownThreads) struct SysfsAttributeTests {
  /// Writes `value` to a new file and renames it over `path`, as umockdev's
  /// `umockdev_testbed_set_attribute()` (`g_file_set_contents`) does.
  private func replace(_ path: String, _ value: String) throws {
    try writeFile(path + ".new", value)
    #expect(rename(path + ".new", path) == 0)
  }

  /// A value written in place (what the kernel's sysfs shows) is read at once; a file renamed
  /// over the open one is read once the check interval has passed, from a fresh descriptor.
  @Test func aReplacedFileIsOpenedAgain() throws {
    let dir = try TemporaryDirectory("attr")
    let path = dir.file("in_accel_x_raw")
    try writeFile(path, "12\n")
    let attribute = try SysfsAttribute(path: path, checkInterval: .milliseconds(50))
    #expect(try attribute.readText() == "12")
    try writeFile(path, "13\n")
    #expect(try attribute.readText() == "13")
    #expect(attribute.reopenCount == 0)

    try replace(path, "-25\n")
    usleep(60_000)
    #expect(try attribute.readText() == "-25")
    #expect(attribute.reopenCount == 1)
    // The new file is followed in place as well.
    try writeFile(path, "7\n")
    #expect(try attribute.readText() == "7")
  }

  /// Within the interval the open file is read without a check (the fast path): the old
  /// value, until the interval has passed.
  @Test func theCheckIsAtMostOncePerInterval() throws {
    let dir = try TemporaryDirectory("attr")
    let path = dir.file("light")
    try writeFile(path, "(128,128)\n")
    let attribute = try SysfsAttribute(path: path, checkInterval: .seconds(3600))
    try replace(path, "(255,255)\n")
    #expect(try attribute.readText() == "(128,128)")
    #expect(attribute.reopenCount == 0)
  }

  /// A file removed with nothing in its place is the device gone: ENOENT from the reopen.
  @Test func aRemovedFileIsTheDeviceGone() throws {
    let dir = try TemporaryDirectory("attr")
    let path = dir.file("in_proximity_raw")
    try writeFile(path, "0\n")
    let attribute = try SysfsAttribute(path: path, checkInterval: .zero)
    #expect(unlink(path) == 0)
    #expect {
      _ = try attribute.readText()
    } throws: { error in
      (error as? SystemError)?.isDeviceGone == true
    }
  }
}
