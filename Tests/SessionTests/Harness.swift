import Glibc
import Imaging
import JPEGKit
import JSON
import TestSupport
import Testing

/// A FIFO the test writes into; it keeps a read-write descriptor so that neither the test nor
/// the session blocks opening it, whichever comes first.
final class Fifo {
  let path: String
  private let fd: Int32

  init(_ path: String) throws {
    guard mkfifo(path, 0o600) == 0 else { throw TestFailure("mkfifo \(path) failed") }
    fd = open(path, O_RDWR | O_CLOEXEC)
    guard fd >= 0 else { throw TestFailure("open \(path) failed") }
    self.path = path
  }

  func send(_ text: String) {
    var copy = text
    copy.withUTF8 { bytes in _ = write(fd, bytes.baseAddress, bytes.count) }
  }

  deinit { close(fd) }
}

/// A running `orientcam session --json`, its stdin a FIFO, its stdout parsed as events.
final class SessionProcess {
  let child: ChildProcess
  let stdin: Fifo
  let directory: TemporaryDirectory
  private(set) var ready: JSONValue = .null

  /// Starts `orientcam session ARGS --json` (wrapped, e.g. in umockdev-run) and waits for its
  /// `ready` event.
  init(
    _ arguments: [String], in directory: TemporaryDirectory, wrapper: [String] = [],
    environment: [String: String] = [:], waitForReady: Bool = true
  ) throws {
    self.directory = directory
    stdin = try Fifo(directory.file("stdin-\(UInt32.random(in: 0...UInt32.max))"))
    let command = wrapper + [try Built.executable("orientcam"), "session", "--json"] + arguments
    child = try ChildProcess(
      command, environment: environment, stdin: stdin.path, outputDirectory: directory.path)
    if waitForReady {
      ready = try waitFor("ready", timeout: 20)
    }
  }

  /// Every JSON line printed so far.
  var lines: [JSONValue] {
    child.standardOutput.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
  }

  /// The events named `name` so far.
  func events(_ name: String) -> [JSONValue] {
    lines.filter { $0["event"]?.stringValue == name }
  }

  /// Waits for an event (the `index`-th of that name matching `condition`).
  @discardableResult
  func waitFor(
    _ name: String, count: Int = 1, timeout: Double = 15,
    where condition: (JSONValue) -> Bool = { _ in true }
  ) throws -> JSONValue {
    var found: [JSONValue] = []
    let ok = TestSupport.waitFor(timeout: timeout) {
      found = events(name).filter(condition)
      return found.count >= count || !child.isRunning
    }
    found = events(name).filter(condition)
    guard ok, found.count >= count else {
      throw TestFailure(
        "no \(count) \"\(name)\" event(s) within \(timeout) s (running: \(child.isRunning))\n"
          + "stdout: \(child.standardOutput)\nstderr: \(child.standardError)")
    }
    return found[count - 1]
  }

  /// The session's own pid (the child may be a wrapper such as umockdev-run).
  var sessionPID: pid_t {
    pid_t(ready["pid"]?.numberValue ?? Double(child.pid))
  }

  /// Sends a signal to the session itself.
  func signal(_ signo: Int32) { kill(sessionPID, signo) }

  /// Waits for the process to exit; returns its status.
  func exitStatus(timeout: Double = 20) throws -> Int32 {
    guard let code = child.wait(timeout: timeout) else {
      child.killNow()
      throw TestFailure(
        "session did not end within \(timeout) s\nstdout: \(child.standardOutput)\n"
          + "stderr: \(child.standardError)")
    }
    return code
  }
}

/// Runs `orientcam` to completion.
func orientcam(_ arguments: [String], in directory: TemporaryDirectory, stdin: String = "/dev/null")
  throws -> (status: Int32, stdout: String, stderr: String)
{
  try ChildProcess.run(
    [try Built.executable("orientcam")] + arguments, stdin: stdin,
    outputDirectory: directory.path, timeout: 30)
}

/// Reads a whole file.
func readBytes(_ path: String) -> [UInt8] {
  guard let f = fopen(path, "rb") else { return [] }
  defer { fclose(f) }
  var out: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 65536)
  while true {
    let n = fread(&buffer, 1, buffer.count, f)
    if n <= 0 { break }
    out += buffer[0..<n]
  }
  return out
}

/// Decodes a photo and checks its size and that the test pattern in it is upright.
func expectUprightPhoto(
  _ path: String, width: Int, height: Int, sourceLocation: SourceLocation = #_sourceLocation
) throws {
  let image = try JPEGDecoder().decode(readBytes(path))
  #expect(
    image.width == width && image.height == height, "\(path): \(image.width)x\(image.height)",
    sourceLocation: sourceLocation)
  let probe = PatternProbe.probe(image)
  #expect(probe.transform == .identity, "\(path): \(probe)", sourceLocation: sourceLocation)
}

/// The names in a directory, without the test's own files (output captures, FIFOs).
func photoFiles(_ path: String) -> [String] {
  guard let dir = opendir(path) else { return [] }
  defer { closedir(dir) }
  var names: [String] = []
  while let entry = readdir(dir) {
    let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
    if name == "." || name == ".." || name.hasSuffix(".out") || name.hasSuffix(".err")
      || name.hasPrefix("stdin-") || name == "watch" || name.hasSuffix(".xwd")
      || name.hasSuffix(".json") || name.hasSuffix(".png")
    {
      continue
    }
    names.append(name)
  }
  return names.sorted()
}

/// The package's fixture folder for these tests.
var fixtures: String { "\(Built.packageRoot)/Tests/SessionTests/Fixtures" }
