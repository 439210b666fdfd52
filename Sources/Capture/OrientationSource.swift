import Glibc
import OrientCore
import OrientLog
import SystemKit

/// An orientation and where it came from (for messages and `--json`).
public struct OrientationReading: Equatable, Sendable {
  /// The orientation.
  public var orientation: Orientation
  /// `"--orientation"`, `"stdin:3"`, `"orientd"`, `"fallback"`.
  public var source: String

  /// Creates a reading.
  public init(_ orientation: Orientation, source: String) {
    self.orientation = orientation
    self.source = source
  }
}

/// Where the device orientation comes from, for capture and session alike, followed on an
/// event loop: `FixedOrientationSource` (`--orientation NAME`), `WatchLinesSource`
/// (`--orientation-from`), and for `--orientation auto` whatever the environment makes (orientcam
/// plugs in its D-Bus client of orientd there; without one, `UnreachableOrientationSource`).
///
/// A D-Bus source claims the accelerometer in `start(on:changed:)`, reads
/// `AccelerometerOrientation` into `current`, calls `changed` from its `PropertiesChanged`
/// handler, and gives the claim up in `stop()`, which a capture calls as soon as it has its last
/// orientation, so the sensor runs only for the capture. "No service", "no accelerometer" and an
/// `undefined` orientation are `problem`s of kind `.unavailable`: what `--orientation-fallback`
/// covers (see `OrientationResolver`).
public protocol OrientationSource: AnyObject {
  /// For messages: `--orientation`, `stdin`, a path, `orientd`.
  var label: String { get }
  /// The latest reading, once there is one.
  var current: OrientationReading? { get }
  /// Whether there is nothing to wait for now (the input ended; the service is missing or has
  /// no sensor): the caller then stops waiting for a first reading and uses
  /// `--orientation-fallback` or fails with `problem`. A source may still report readings later.
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

extension OrientationSource {
  /// No particular reason known.
  public var problem: CaptureError? { nil }
}

/// `--orientation NAME`: one reading, never changes.
public final class FixedOrientationSource: OrientationSource {
  /// `--orientation`.
  public let label = "--orientation"
  /// The fixed reading.
  public let current: OrientationReading?
  /// Always true: nothing more will come.
  public let hasEnded = true

  /// Creates the source.
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

/// `--orientation auto` without the D-Bus client: reports that orientd cannot be asked.
public final class UnreachableOrientationSource: OrientationSource {
  /// `orientd`.
  public let label = "orientd"
  /// Never.
  public let current: OrientationReading? = nil
  /// Nothing to wait for.
  public let hasEnded = true
  /// The reason given at creation.
  public let problem: CaptureError?

  /// Creates the source with the reason to report.
  public init(
    reason: String =
      "orientd not reachable: this orientcam was built without the D-Bus client for "
      + "org.orientd.Orientation1 / net.hadess.SensorProxy"
  ) {
    problem = CaptureError(.unavailable, reason)
  }

  /// Nothing to start.
  public func start(on loop: EventLoop, changed: @escaping (OrientationReading) -> Void) {}

  /// Nothing to stop.
  public func stop() {}
}

/// `--orientation-from -|FILE`: the lines `orientd --watch --json` prints, followed as they
/// arrive (the latest defined orientation wins; malformed lines are skipped with a warning).
///
/// A regular file is read to its end at start. A FIFO is opened read-write, so writers may come
/// and go without the source seeing an end. Stdin is never set `O_NONBLOCK` (that flag would
/// stay set for the caller's shell): each read waits for `poll(2)` to say it will not block. A
/// session, which also takes Enter and `q` from stdin, reads it itself and hands the JSON
/// lines to `take(line:)` (`Input.handedIn`).
public final class WatchLinesSource: OrientationSource {
  /// What the lines come from.
  public enum Input: Equatable, Sendable {
    /// A file or FIFO.
    case path(String)
    /// Standard input, read by the source.
    case standardInput
    /// Lines handed in with `take(line:)` (named `stdin`).
    case handedIn
  }

  /// `stdin` or the path.
  public let label: String
  /// The latest reading.
  public private(set) var current: OrientationReading?
  /// Whether the input ended.
  public private(set) var hasEnded = false
  private let input: Input
  private var parser: WatchLineParser
  private var reader: LineInput?
  private var changed: ((OrientationReading) -> Void)?
  private let logger: Logger
  private var reportedWarnings = 0

  /// A source over `input`.
  public init(_ input: Input, logger: Logger) {
    self.input = input
    if case .path(let path) = input { label = path } else { label = "stdin" }
    parser = WatchLineParser(label: label)
    self.logger = logger
  }

  /// Why there is no orientation (asked after waiting for one): silence and "undefined" are
  /// `.unavailable` (no reading, which `--orientation-fallback` covers), lines that are all
  /// malformed `.badData` (the wrong input).
  public var problem: CaptureError? {
    guard current == nil else { return nil }
    let wait = OrientationResolver.firstReadingTimeout.components.seconds
    var why = hasEnded ? "ended" : "gave nothing usable within \(wait) s"
    if parser.sawUndefined { why += " (only \"undefined\": no accelerometer reading yet)" }
    let malformed = !parser.warnings.isEmpty && !parser.sawUndefined
    return CaptureError(
      malformed ? .badData : .unavailable,
      "--orientation-from \(label): no orientation: the input \(why) after "
        + "\(parser.lineCount) line(s); expected lines from `orientd --watch --json`")
  }

  /// Opens the file, FIFO or stdin and starts following it.
  ///
  /// - Throws: `CaptureError.noInput` if it cannot be opened.
  public func start(on loop: EventLoop, changed: @escaping (OrientationReading) -> Void)
    throws(CaptureError)
  {
    self.changed = changed
    var descriptor: FileDescriptor
    switch input {
    case .handedIn: return
    case .standardInput: descriptor = FileDescriptor(owning: dup(0), path: "stdin")
    case .path(let path):
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
    }
    let lines = LineInput(descriptor: descriptor, label: label)
    reader = lines
    do {
      try lines.start(
        on: loop,
        line: { [weak self] line in self?.take(line: line) },
        end: { [weak self] in self?.finish() })
    } catch {
      throw CaptureError(.noInput, "--orientation-from \(label): \(error)")
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

/// Resolves `--orientation` for capture and session: starts the source, waits for a first
/// reading, and when there is none because no service or sensor is reachable, uses the
/// fallback the user allowed.
public final class OrientationResolver {
  /// The source followed.
  public let source: any OrientationSource
  /// `--orientation-fallback`, if given.
  public let fallback: Orientation?
  /// How long to wait for a first reading from a pipe or the bus.
  public static let firstReadingTimeout: Duration = .seconds(5)
  private let logger: Logger

  /// Creates a resolver.
  public init(source: any OrientationSource, fallback: Orientation?, logger: Logger) {
    self.source = source
    self.fallback = fallback
    self.logger = logger
  }

  /// Starts the source on `loop` and serves the loop until it has a first reading, has
  /// nothing more to wait for, `stopWaiting()` holds (a session told to end) or 5 s passed.
  ///
  /// - Throws: the source's start error, or `.software` when the loop fails.
  public func start(
    on loop: EventLoop, stopWaiting: @escaping () -> Bool = { false },
    changed: @escaping (OrientationReading) -> Void
  ) throws(CaptureError) {
    try source.start(on: loop, changed: changed)
    let source = self.source
    // A file read at once by work posted to the loop answers in the first turn.
    do {
      try loop.runOnce(timeoutMilliseconds: 0)
      if source.current == nil && !source.hasEnded && !stopWaiting() {
        try loop.run(
          until: { source.current != nil || source.hasEnded || stopWaiting() },
          timeout: OrientationResolver.firstReadingTimeout)
      }
    } catch {
      throw CaptureError(.software, "event loop failed: \(error)")
    }
  }

  /// The orientation to use now: the source's, else the fallback (`whileWaiting`: said to
  /// apply until the source has one).
  ///
  /// - Throws: the source's problem when there is no fallback (or it is not an availability
  ///   problem), with advice on `--orientation` and `--orientation-fallback`.
  public func resolve(whileWaiting: Bool = false) throws(CaptureError) -> OrientationReading {
    if let current = source.current { return current }
    let problem =
      source.problem
      ?? CaptureError(
        .unavailable,
        "\(source.label) gave no orientation"
          + (source.hasEnded ? " before it ended" : " within 5 s"))
    guard problem.kind == .unavailable else { throw problem }
    if let fallback {
      logger.warning(
        "\(problem.message); using --orientation-fallback \(fallback.rawValue)"
          + (whileWaiting ? " until there is one" : ""))
      return OrientationReading(fallback, source: "fallback")
    }
    throw CaptureError(
      .unavailable,
      "\(problem.message). Start orientd (or iio-sensor-proxy), give --orientation NAME, or "
        + "allow --orientation-fallback normal")
  }
}

/// Reads lines from a descriptor on an event loop (stdin, a FIFO, a regular file
/// read at once): each complete line is handed over without its newline (and `\r`).
public final class LineInput {
  private let descriptor: FileDescriptor
  /// For messages.
  public let label: String
  private var watch: EventLoop.Watch?
  private var pending: [UInt8] = []
  private var lineHandler: ((String) -> Void)?
  private var endHandler: (() -> Void)?
  private var ended = false

  /// Reads `descriptor` (owned: closed with the reader).
  public init(descriptor: FileDescriptor, label: String) {
    self.descriptor = descriptor
    self.label = label
  }

  /// Starts reading. A descriptor epoll cannot watch (a regular file, `/dev/null`) is read to
  /// its end at once.
  public func start(
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
    } catch  where error.code == .notPermitted {
      // Regular files are always "ready"; read them now, on the loop, in order.
      loop.post { [weak self] in self?.drain() }
    }
  }

  /// Stops reading; idempotent.
  public func stop() {
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
