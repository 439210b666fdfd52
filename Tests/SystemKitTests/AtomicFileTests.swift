import Glibc
import SystemKit
import TestSupport
import TestThreads
import Testing

@Suite(.ownThreads) struct AtomicFileWriterTests {
  /// Both ways of getting a name: O_TMPFILE + linkat, and the hidden named file + link/rename
  /// used where the filesystem has no O_TMPFILE.
  @Test(arguments: [true, false])
  func neverReplacesUnlessAsked(_ unnamed: Bool) throws {
    let dir = try TemporaryDirectory("atomic")
    let path = dir.file("a.jpg")
    try AtomicFileWriter.write([1, 2, 3], to: path, overwrite: false, unnamed: unnamed)
    #expect(readBytes(path) == [1, 2, 3])
    let error = #expect(throws: AtomicFileWriter.Failure.self) {
      try AtomicFileWriter.write([4], to: path, overwrite: false, unnamed: unnamed)
    }
    #expect(error?.errno == EEXIST)
    #expect(readBytes(path) == [1, 2, 3])
    try AtomicFileWriter.write([5, 6], to: path, overwrite: true, unnamed: unnamed)
    #expect(readBytes(path) == [5, 6])
    #expect(listing(dir.path) == ["a.jpg"])  // no temporary file left behind
    let missing = #expect(throws: AtomicFileWriter.Failure.self) {
      try AtomicFileWriter.write(
        [7], to: dir.file("no/such/dir.jpg"), overwrite: false, unnamed: unnamed)
    }
    #expect(missing?.errno == ENOENT)
  }
}

/// The contents of a file, empty if unreadable.
private func readBytes(_ path: String) -> [UInt8] {
  guard let file = try? FileDescriptor(path: path), let bytes = try? file.readToEnd() else {
    return []
  }
  return bytes
}

/// The names in a folder, sorted, without `.` and `..`.
private func listing(_ directory: String) -> [String] {
  guard let dir = opendir(directory) else { return [] }
  defer { closedir(dir) }
  var names: [String] = []
  while let entry = readdir(dir) {
    let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
    if name != "." && name != ".." { names.append(name) }
  }
  return names.sorted()
}
