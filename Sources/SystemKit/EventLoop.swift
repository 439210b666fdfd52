import CLinuxShims
import Glibc

/// A single-threaded event loop over `epoll(7)`, `timerfd_create(2)` and `signalfd(2)`.
///
/// Everything a program does runs as a callback on the thread that calls `run()`: file
/// descriptor readiness, timers, signals and posted work. Nothing here starts a thread, and an
/// idle loop sleeps in `epoll_wait` with no timeout, so a program with no armed timer and no
/// ready descriptor never wakes up.
///
/// Registrations are owned by the returned `EventLoop.Watch`/`EventLoop.Timer` objects and are
/// removed when those are cancelled or deinitialised. Callbacks may add or cancel registrations
/// (including their own) while they run.
public final class EventLoop {
  /// Readiness conditions, over the C `EPOLL*` bits.
  public struct Events: OptionSet, Sendable {
    /// The C bits.
    public let rawValue: UInt32
    /// Creates events from C `EPOLL*` bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `EPOLLIN`.
    public static let readable = Events(rawValue: EPOLLIN.rawValue)
    /// `EPOLLOUT`.
    public static let writable = Events(rawValue: EPOLLOUT.rawValue)
    /// `EPOLLPRI`.
    public static let priority = Events(rawValue: EPOLLPRI.rawValue)
    /// `EPOLLERR` (always reported).
    public static let error = Events(rawValue: EPOLLERR.rawValue)
    /// `EPOLLHUP` (always reported).
    public static let hangup = Events(rawValue: EPOLLHUP.rawValue)
  }

  /// A descriptor being watched; cancelling (or releasing) it stops the callbacks.
  public final class Watch {
    fileprivate weak var loop: EventLoop?
    fileprivate let id: UInt64
    /// The descriptor being watched.
    public let fd: Int32

    fileprivate init(loop: EventLoop, id: UInt64, fd: Int32) {
      self.loop = loop
      self.id = id
      self.fd = fd
    }

    /// Changes the conditions watched for (`EPOLL_CTL_MOD`).
    public func update(_ events: Events) throws(SystemError) {
      try loop?.modify(id: id, fd: fd, events: events)
    }

    /// Stops watching; idempotent.
    public func cancel() { loop?.remove(id: id, fd: fd) }

    deinit { cancel() }
  }

  /// A `CLOCK_MONOTONIC` timer backed by a timerfd; disarmed until scheduled.
  public final class Timer {
    private let fd: FileDescriptor
    private var watch: Watch?

    fileprivate init(loop: EventLoop, handler: @escaping () -> Void) throws(SystemError) {
      let raw = try retryingInterrupts("timerfd_create") {
        timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
      }
      fd = FileDescriptor(owning: raw, path: "timerfd")
      let timerFD = fd
      watch = try loop.watch(raw, for: .readable) { _ in
        var expirations: UInt64 = 0
        let n = withUnsafeMutableBytes(of: &expirations) {
          Glibc.read(timerFD.rawValue, $0.baseAddress, 8)
        }
        if n == 8 { handler() }
      }
    }

    /// Arms the timer (`timerfd_settime`): first expiry after `after`, then every `interval`
    /// if given. Re-arming replaces the previous schedule; a zero or negative `after` expires
    /// as soon as possible (a zero `it_value` would disarm).
    public func schedule(after: Duration, interval: Duration? = nil) throws(SystemError) {
      var spec = itimerspec()
      spec.it_value = timespec(max(after, .nanoseconds(1)))
      if let interval, interval > .zero { spec.it_interval = timespec(interval) }
      let raw = fd.rawValue
      _ = try retryingInterrupts("timerfd_settime") { timerfd_settime(raw, 0, &spec, nil) }
    }

    /// Disarms the timer; it can be scheduled again.
    public func disarm() {
      var spec = itimerspec()
      _ = timerfd_settime(fd.rawValue, 0, &spec, nil)
    }

    /// Disarms the timer and removes it from the loop for good.
    public func cancel() {
      disarm()
      watch?.cancel()
      watch = nil
    }
  }

  private struct Registration {
    var fd: Int32
    var handler: (Events) -> Void
  }

  private let epoll: FileDescriptor
  private var registrations: [UInt64: Registration] = [:]
  private var nextID: UInt64 = 1
  private var posted: [() -> Void] = []
  private var stopRequested = false

  /// Creates an epoll instance (`epoll_create1(EPOLL_CLOEXEC)`).
  public init() throws(SystemError) {
    let fd = try retryingInterrupts("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
    epoll = FileDescriptor(owning: fd, path: "epoll")
  }

  /// Watches `fd` for `events` and calls `handler` with the conditions that occurred.
  ///
  /// - Returns: the registration; keep it as long as the callbacks are wanted.
  /// - Throws: `SystemError` from `epoll_ctl(EPOLL_CTL_ADD)`.
  public func watch(_ fd: Int32, for events: Events, _ handler: @escaping (Events) -> Void)
    throws(SystemError) -> Watch
  {
    let id = nextID
    nextID += 1
    var event = epoll_event(events: events.rawValue, data: epoll_data_t(u64: id))
    let ep = epoll.rawValue
    _ = try retryingInterrupts("epoll_ctl") { epoll_ctl(ep, EPOLL_CTL_ADD, fd, &event) }
    registrations[id] = Registration(fd: fd, handler: handler)
    return Watch(loop: self, id: id, fd: fd)
  }

  /// Creates a disarmed timer that calls `handler` on each expiry.
  public func makeTimer(_ handler: @escaping () -> Void) throws(SystemError) -> Timer {
    try Timer(loop: self, handler: handler)
  }

  /// Blocks `signals` for the whole process and delivers them to `handler` through a signalfd.
  ///
  /// Call this before starting any thread, so that no thread receives them asynchronously.
  /// Child processes inherit the blocked mask; `SubProcess` clears it before `exec`.
  public func handleSignals(_ signals: [Int32], _ handler: @escaping (Int32) -> Void)
    throws(SystemError) -> Watch
  {
    let raw = try retryingInterrupts("signalfd") {
      signals.withUnsafeBufferPointer { orient_block_signals_fd($0.baseAddress, Int32($0.count)) }
    }
    let fd = FileDescriptor(owning: raw, path: "signalfd")
    let size = orient_signalfd_siginfo_size()
    return try watch(raw, for: .readable) { _ in
      var info = [UInt8](repeating: 0, count: size)
      while true {
        let n = info.withUnsafeMutableBytes { Glibc.read(fd.rawValue, $0.baseAddress, size) }
        guard n == size else { break }
        let signo = info.withUnsafeBytes { orient_signalfd_signo($0.baseAddress) }
        handler(Int32(signo))
      }
    }
  }

  /// Runs `work` on the loop after the current callback returns, before the loop sleeps again.
  public func post(_ work: @escaping () -> Void) {
    posted.append(work)
  }

  /// Makes `run()` return after the current callback.
  public func stop() { stopRequested = true }

  /// Dispatches events until `stop()` is called.
  ///
  /// - Throws: `SystemError` if `epoll_wait` fails for a reason other than `EINTR`.
  public func run() throws(SystemError) {
    stopRequested = false
    while !stopRequested {
      try runOnce(timeoutMilliseconds: -1)
    }
  }

  /// Dispatches events until `condition()` holds or `timeout` elapses.
  ///
  /// - Returns: whether the condition became true.
  @discardableResult
  public func run(until condition: () -> Bool, timeout: Duration) throws(SystemError) -> Bool {
    let deadline = Clock.monotonic() + timeout
    stopRequested = false
    while !condition() {
      let left = deadline - Clock.monotonic()
      if left <= .zero || stopRequested { return condition() }
      let milliseconds = (left.nanoseconds + 999_999) / 1_000_000
      try runOnce(timeoutMilliseconds: Int32(min(milliseconds, 60_000)))
    }
    return true
  }

  /// Waits once (at most `timeoutMilliseconds`, -1 for no limit) and runs what is ready.
  public func runOnce(timeoutMilliseconds: Int32) throws(SystemError) {
    runPosted()
    if stopRequested { return }
    var events = [epoll_event](repeating: epoll_event(), count: 32)
    let timeout = posted.isEmpty ? timeoutMilliseconds : 0
    let ep = epoll.rawValue
    let n = epoll_wait(ep, &events, Int32(events.count), timeout)
    if n < 0 {
      if errno == EINTR { return }
      throw SystemError(errno: errno, operation: "epoll_wait")
    }
    for i in 0..<Int(n) {
      let id = events[i].data.u64
      // A callback earlier in this batch may have cancelled this registration.
      guard let registration = registrations[id] else { continue }
      registration.handler(Events(rawValue: events[i].events))
      runPosted()
    }
  }

  /// The number of live registrations (for tests and diagnostics).
  public var registrationCount: Int { registrations.count }

  private func runPosted() {
    while !posted.isEmpty {
      let work = posted
      posted.removeAll()
      for item in work { item() }
    }
  }

  fileprivate func modify(id: UInt64, fd: Int32, events: Events) throws(SystemError) {
    guard registrations[id] != nil else { return }
    var event = epoll_event(events: events.rawValue, data: epoll_data_t(u64: id))
    let ep = epoll.rawValue
    _ = try retryingInterrupts("epoll_ctl") { epoll_ctl(ep, EPOLL_CTL_MOD, fd, &event) }
  }

  fileprivate func remove(id: UInt64, fd: Int32) {
    guard registrations.removeValue(forKey: id) != nil else { return }
    var event = epoll_event()
    // EBADF/ENOENT here mean the descriptor was already closed, which removed it anyway.
    _ = epoll_ctl(epoll.rawValue, EPOLL_CTL_DEL, fd, &event)
  }
}
