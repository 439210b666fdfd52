import Capture
import Glibc
import OrientCore
import OrientLog
import SystemKit

/// Where a session's orientation comes from, followed on the session's event loop.
///
/// This is the seam for orientd: a feed that claims the accelerometer over D-Bus, reads
/// `AccelerometerOrientation` and calls `changed` from its `PropertiesChanged` handler plugs
/// in through `SessionEnvironment.autoOrientation` (see there). The feeds here are
/// `FixedOrientationFeed` (`--orientation NAME`), `WatchLinesFeed` (`--orientation-from`) and
/// `PollingOrientationFeed` (any capture `OrientationProvider`, asked on a timer).
public protocol OrientationFeed: AnyObject {
  /// For messages: `--orientation`, `stdin`, a path, `orientd`.
  var label: String { get }
  /// The latest reading, once there is one.
  var current: OrientationReading? { get }
  /// Whether there is nothing to wait for now (the input ended; the service is missing or has
  /// no sensor): the session then stops waiting for a first reading and uses
  /// `--orientation-fallback` or fails with `problem`. A feed may still report readings later.
  var hasEnded: Bool { get }
  /// Why there is no reading, for the user (nil when there is one or nothing is known).
  var problem: CaptureError? { get }
  /// Starts following on `loop`; `changed` is called on the loop whenever the orientation
  /// changes (also for the first reading).
  ///
  /// - Throws: `CaptureError` when the source cannot be opened or reached.
  func start(on loop: EventLoop, changed: @escaping (OrientationReading) -> Void)
    throws(CaptureError)
  /// Stops following and gives up any claim; idempotent. Called on every exit path.
  func stop()
}

extension OrientationFeed {
  /// No particular reason known.
  public var problem: CaptureError? { nil }
}

/// `--orientation NAME`: one reading, never changes.
public final class FixedOrientationFeed: OrientationFeed {
  /// `--orientation`.
  public let label = "--orientation"
  /// The fixed reading.
  public let current: OrientationReading?
  /// Always true: nothing more will come.
  public let hasEnded = true

  /// Creates the feed.
  public init(_ orientation: Orientation) {
    current = OrientationReading(orientation, source: "--orientation")
  }

  /// Reports the reading once.
  public func start(on loop: EventLoop, changed: @escaping (OrientationReading) -> Void) {
    if let current { changed(current) }
  }

  /// Nothing to stop.
  public func stop() {}
}

/// `--orientation-from -|FILE`: the lines `orientd --watch --json` prints, followed as they
/// arrive (the latest defined orientation wins; malformed lines are skipped with a warning).
///
/// A regular file is read to its end at start. A FIFO is opened read-write, so writers may come
/// and go without the session seeing an end. For `-` the session reads stdin itself (where it
/// also takes Enter and `q`) and hands the JSON lines to `take(line:)`.
public final class WatchLinesFeed: OrientationFeed {
  /// `stdin` or the path.
  public let label: String
  /// The latest reading.
  public private(set) var current: OrientationReading?
  /// Whether the input ended.
  public private(set) var hasEnded = false
  private let path: String?
  private var parser: WatchLineParser
  private var reader: LineInput?
  private var changed: ((OrientationReading) -> Void)?
  private let logger: Logger
  private var reportedWarnings = 0

  /// A feed over `path`, or (`nil`) over lines the session passes in.
  public init(path: String?, logger: Logger) {
    self.path = path
    label = path ?? "stdin"
    parser = WatchLineParser(label: path ?? "stdin")
    self.logger = logger
  }

  /// Opens the file or FIFO and starts following it.
  ///
  /// - Throws: `CaptureError.noInput` if it cannot be opened.
  public func start(on loop: EventLoop, changed: @escaping (OrientationReading) -> Void)
    throws(CaptureError)
  {
    self.changed = changed
    guard let path else { return }
    var descriptor: FileDescriptor
    do {
      descriptor = try FileDescriptor(path: path, options: [.readOnly, .nonBlocking])
      var status = stat()
      if fstat(descriptor.rawValue, &status) == 0, status.st_mode & S_IFMT == S_IFIFO {
        // Keep a writer end ourselves: a FIFO then never reports end of input when the
        // program writing to it (orientd --watch) restarts.
        descriptor = try FileDescriptor(path: path, options: [.readWrite, .nonBlocking])
      }
    } catch {
      throw CaptureError(.noInput, "--orientation-from \(path): cannot open (\(error.reason))")
    }
    let input = LineInput(descriptor: descriptor, label: path)
    reader = input
    do {
      try input.start(
        on: loop,
        line: { [weak self] line in self?.take(line: line) },
        end: { [weak self] in self?.finish() })
    } catch {
      throw CaptureError(.noInput, "--orientation-from \(path): \(error)")
    }
  }

  /// Parses one line (without its newline).
  public func take(line: String) {
    parser.parse(line)
    for warning in parser.warnings.dropFirst(reportedWarnings) { logger.warning(warning) }
    reportedWarnings = parser.warnings.count
    guard let latest = parser.latest else { return }
    let reading = OrientationReading(latest.orientation, source: "\(label):\(latest.line)")
    let isChange = current?.orientation != reading.orientation
    current = reading
    if isChange { changed?(reading) }
  }

  /// Marks the input as ended (the last orientation stays in force).
  public func finish() {
    hasEnded = true
    reader = nil
  }

  /// Stops reading.
  public func stop() {
    reader?.stop()
    reader = nil
  }
}

/// Any capture `OrientationProvider` (for example a D-Bus client that answers
/// `currentOrientation()` from its claim) asked every `interval` on a loop timer, reporting
/// changes. The provider's `release()` is called by `stop()`.
public final class PollingOrientationFeed: OrientationFeed {
  /// For messages.
  public let label: String
  /// The latest reading.
  public private(set) var current: OrientationReading?
  /// Set when the provider fails with anything but "unavailable".
  public private(set) var hasEnded = false
  /// The latest failure, if the provider could not answer.
  public private(set) var lastError: CaptureError?
  /// The latest failure.
  public var problem: CaptureError? { lastError }
  private let provider: any OrientationProvider
  private let interval: Int64
  private var timer: EventLoop.Timer?

  /// Creates the feed.
  public init(provider: any OrientationProvider, label: String, intervalNanoseconds: Int64) {
    self.provider = provider
    self.label = label
    interval = intervalNanoseconds
  }

  /// Asks once now (so a first reading is there at once), then on every tick.
  ///
  /// - Throws: `CaptureError` from the first question when it is not just "unavailable".
  public func start(on loop: EventLoop, changed: @escaping (OrientationReading) -> Void)
    throws(CaptureError)
  {
    let ask = { [weak self] () throws(CaptureError) in
      guard let self else { return }
      let reading = try self.provider.currentOrientation()
      let isChange = self.current?.orientation != reading.orientation
      self.current = reading
      if isChange { changed(reading) }
    }
    do { try ask() } catch  where error.kind == .unavailable { lastError = error }
    do {
      timer = try loop.makeTimer { [weak self] in
        do throws(CaptureError) { try ask() } catch {
          self?.lastError = error
        }
      }
      try timer?.schedule(afterNanoseconds: interval, intervalNanoseconds: interval)
    } catch {
      throw CaptureError(.software, "\(label): cannot start the orientation timer: \(error)")
    }
  }

  /// Stops asking and releases the provider's claim.
  public func stop() {
    timer?.cancel()
    timer = nil
    provider.release()
  }
}

/// Reads lines from a descriptor on an event loop (stdin, a FIFO, a regular file
/// read at once): each complete line is handed over without its newline (and `\r`).
final class LineInput {
  private let descriptor: FileDescriptor
  let label: String
  private var watch: EventLoop.Watch?
  private var pending: [UInt8] = []
  private var lineHandler: ((String) -> Void)?
  private var endHandler: (() -> Void)?
  private var ended = false

  init(descriptor: FileDescriptor, label: String) {
    self.descriptor = descriptor
    self.label = label
  }

  /// Starts reading. A descriptor epoll cannot watch (a regular file, `/dev/null`) is read to
  /// its end at once.
  func start(
    on loop: EventLoop, line: @escaping (String) -> Void, end: @escaping () -> Void
  ) throws(SystemError) {
    lineHandler = line
    endHandler = end
    // No O_NONBLOCK here: for stdin it would be set on the description the caller's shell
    // shares, and stay set after this process ends. `drain` polls before each read instead.
    do {
      watch = try loop.watch(descriptor.rawValue, for: .readable) { [weak self] _ in
        self?.drain()
      }
    } catch  where error.errno == EPERM {
      // Regular files are always "ready"; read them now, on the loop, in order.
      loop.post { [weak self] in self?.drain() }
    }
  }

  func stop() {
    watch?.cancel()
    watch = nil
  }

  private func drain() {
    var buffer = [UInt8](repeating: 0, count: 16_384)
    while !ended {
      let n: Int?
      do {
        n = try buffer.withUnsafeMutableBytes { raw throws(SystemError) in
          try descriptor.readIfReady(into: raw)
        }
      } catch {
        finish()
        return
      }
      guard let n else { return }
      if n == 0 {
        finish()
        return
      }
      for byte in buffer[0..<n] {
        if byte == 0x0A {
          var line = pending
          if line.last == 0x0D { line.removeLast() }
          pending.removeAll(keepingCapacity: true)
          lineHandler?(String(decoding: line, as: UTF8.self))
          if ended { return }
        } else if pending.count < 65_536 {
          pending.append(byte)
        }
      }
    }
  }

  private func finish() {
    guard !ended else { return }
    if !pending.isEmpty {
      let line = String(decoding: pending, as: UTF8.self)
      pending.removeAll()
      lineHandler?(line)
    }
    ended = true
    stop()
    endHandler?()
  }
}
