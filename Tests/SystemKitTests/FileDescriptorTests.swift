import Glibc
import SystemKit
import TestSupport
import TestThreads
import Testing

@Suite(.ownThreads) struct FileDescriptorTests {
  /// `O_TMPFILE` comes from the C headers of the machine built for (it differs between
  /// architectures): it includes `O_DIRECTORY`, and opening a folder with it gives an unnamed
  /// regular file (no links) that can be written.
  @Test func temporaryFileIsUnnamed() throws {
    let dir = try TemporaryDirectory("fd")
    #expect(FileDescriptor.OpenOptions.temporaryFile.rawValue & O_DIRECTORY == O_DIRECTORY)
    let fd = try FileDescriptor(path: dir.path, options: [.writeOnly, .temporaryFile])
    try fd.writeAll("unnamed")
    var status = stat()
    #expect(fstat(fd.rawValue, &status) == 0)
    #expect(status.st_mode & S_IFMT == S_IFREG)
    #expect(status.st_nlink == 0 && status.st_size == 7)
  }

  /// `readIfReady` reads only what has arrived, without `O_NONBLOCK` on the descriptor.
  @Test func readIfReadyLeavesTheDescriptorBlocking() throws {
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    let reader = FileDescriptor(owning: ends[0], path: "pipe")
    let writer = FileDescriptor(owning: ends[1], path: "pipe")
    var buffer = [UInt8](repeating: 0, count: 16)
    let empty = try buffer.withUnsafeMutableBytes { try reader.readIfReady(into: $0) }
    #expect(empty == nil)
    try writer.writeAll("abc")
    let three = try buffer.withUnsafeMutableBytes { try reader.readIfReady(into: $0) }
    #expect(three == 3 && buffer.prefix(3) == [97, 98, 99])
    writer.close()
    let end = try buffer.withUnsafeMutableBytes { try reader.readIfReady(into: $0) }
    #expect(end == 0)
    #expect(fcntl(reader.rawValue, F_GETFL) & O_NONBLOCK == 0)
  }

  /// renameat2(RENAME_NOREPLACE): renames, but never over an existing name.
  @Test func renameWithoutReplacing() throws {
    let dir = try TemporaryDirectory("fd")
    try writeFile(dir.file("a"), "a")
    try writeFile(dir.file("b"), "b")
    #expect(PathOperations.renameWithoutReplacing(dir.file("a"), dir.file("b")) == EEXIST)
    #expect(readFile(dir.file("b")) == "b")
    #expect(PathOperations.renameWithoutReplacing(dir.file("a"), dir.file("c")) == 0)
    #expect(readFile(dir.file("c")) == "a" && access(dir.file("a"), F_OK) != 0)
  }
}
