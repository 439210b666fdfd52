import Glibc
import TestSupport
import TestThreads
import Testing

@testable import SystemKit

@Suite(.ownThreads) struct EventLoopTests {
  @Test func timerFiresAndPostedWorkRuns() throws {
    let loop = try EventLoop()
    var fired = 0
    var posted = false
    let timer = try loop.makeTimer {
      fired += 1
      loop.post { posted = true }
    }
    try timer.schedule(after: .milliseconds(1), interval: .milliseconds(1))
    let done = try loop.run(until: { fired >= 3 && posted }, timeout: .seconds(2))
    #expect(done)
    timer.cancel()
    #expect(loop.registrationCount == 0)
  }

  @Test func pipeReadabilityIsReportedAndWatchCanCancelItself() throws {
    let loop = try EventLoop()
    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    let reader = FileDescriptor(owning: fds[0], path: "pipe-r")
    let writer = FileDescriptor(owning: fds[1], path: "pipe-w")
    var received: [UInt8] = []
    var watch: EventLoop.Watch?
    watch = try loop.watch(reader.rawValue, for: .readable) { _ in
      var buffer = [UInt8](repeating: 0, count: 16)
      let n = try? buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
      received += buffer[0..<(n ?? 0)]
      watch?.cancel()
    }
    try writer.writeAll("hi")
    try loop.run(until: { !received.isEmpty }, timeout: .seconds(1))
    #expect(received == Array("hi".utf8))
    #expect(loop.registrationCount == 0)
  }

  @Test func idleLoopTimesOutWithoutCallbacks() throws {
    let loop = try EventLoop()
    let start = Clock.monotonicNanoseconds()
    let done = try loop.run(until: { false }, timeout: .milliseconds(50))
    #expect(!done)
    #expect(Clock.monotonicNanoseconds() - start >= 50_000_000)
  }

  @Test func signalsArriveThroughSignalfd() throws {
    let loop = try EventLoop()
    var got: [Int32] = []
    let watch = try loop.handleSignals([SIGUSR2]) { got.append($0) }
    // The test runner has other threads that do not block SIGUSR2: direct it at this one,
    // which blocked it and reads the signalfd.
    pthread_kill(pthread_self(), SIGUSR2)
    try loop.run(until: { !got.isEmpty }, timeout: .seconds(1))
    #expect(got == [SIGUSR2])
    watch.cancel()
  }
}

@Suite(.ownThreads) struct SysfsTests {
  @Test func readStripsTheKernelNewline() throws {
    let path = "/tmp/orientd-sysfs-test-\(getpid())"
    defer { unlink(path) }
    let fd = try FileDescriptor(path: path, options: [.writeOnly, .create, .truncate])
    try fd.writeAll("-512\n")
    fd.close()
    #expect(try Sysfs.read(path) == "-512")
  }

  @Test func missingAttributeThrowsENOENTNamingThePath() {
    let path = "/tmp/orientd-no-such-attribute-\(getpid())"
    #expect {
      _ = try Sysfs.read(path)
    } throws: { error in
      guard let error = error as? SystemError else { return false }
      return error.code == .noSuchFileOrDirectory && error.description.contains(path)
    }
  }
}

@Suite(.ownThreads) struct PrivateBusFixtureTests {
  @Test func privateBusAnswersBusctl() throws {
    let bus = try PrivateBus(openPolicy: true)
    let result = try ChildProcess.run(
      [
        "busctl", "--address=\(bus.address)", "call", "org.freedesktop.DBus",
        "/org/freedesktop/DBus",
        "org.freedesktop.DBus", "GetId",
      ],
      outputDirectory: bus.directory.path, timeout: 20)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.hasPrefix("s \""))
  }
}

/// `Duration`, the one time type of timers and delays, in the units the kernel takes.
@Suite(.ownThreads) struct DurationTests {
  @Test func nanosecondsAndSeconds() {
    #expect(Duration.seconds(1.5).nanoseconds == 1_500_000_000)
    #expect(Duration.milliseconds(250).seconds == 0.25)
    #expect(Duration.nanoseconds(-3).nanoseconds == -3)
    #expect(Duration.seconds(Int64.max).nanoseconds == .max, "saturates instead of trapping")
  }

  @Test func aZeroDelayStillFires() throws {
    let loop = try EventLoop()
    var fired = false
    let timer = try loop.makeTimer { fired = true }
    try timer.schedule(after: .zero)
    #expect(try loop.run(until: { fired }, timeout: .seconds(2)))
    timer.cancel()
  }
}
