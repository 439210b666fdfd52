import Glibc
import JSON
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

/// Where the device orientation comes from at the moment of a capture.
///
/// Implementations: `FixedOrientationProvider` (`--orientation NAME`),
/// `WatchLinesProvider` (`--orientation-from`), and for `--orientation auto` whatever
/// `CaptureEnvironment.autoOrientation` makes (the D-Bus client of orientd plugs in there).
///
/// A D-Bus provider claims the accelerometer on its first `currentOrientation()` (or in its
/// initialiser), answers from the claim, and drops the claim in `release()`, which the capture
/// calls as soon as it has its last orientation, so the sensor runs only for the capture.
/// "No service", "no accelerometer" (`HasAccelerometer` false) and an `undefined` orientation
/// are all `CaptureError.unavailable`: that is what `--orientation-fallback` covers.
public protocol OrientationProvider: AnyObject {
  /// The current orientation.
  ///
  /// - Throws: `CaptureError.unavailable` when there is no service, no sensor or no reading,
  ///   `.badData` when the input holds no usable orientation.
  func currentOrientation() throws(CaptureError) -> OrientationReading

  /// Gives up whatever was claimed to answer (a D-Bus accelerometer claim); idempotent. The
  /// provider may be asked again later (a session), and then claims again.
  func release()
}

extension OrientationProvider {
  /// Nothing to release.
  public func release() {}
}

/// `--orientation NAME`: always the same.
public final class FixedOrientationProvider: OrientationProvider {
  private let reading: OrientationReading

  /// Creates the provider.
  public init(_ orientation: Orientation, source: String = "--orientation") {
    reading = OrientationReading(orientation, source: source)
  }

  /// The fixed orientation.
  public func currentOrientation() throws(CaptureError) -> OrientationReading { reading }
}

/// `--orientation auto` before the D-Bus client is plugged in: reports that orientd cannot be
/// asked. `CaptureEnvironment.autoOrientation` replaces it.
public final class UnreachableOrientationProvider: OrientationProvider {
  private let reason: String

  /// Creates the provider with the reason to report.
  public init(
    reason: String =
      "orientd not reachable: this orientcam was built without the D-Bus client for "
      + "org.orientd.Orientation1 / net.hadess.SensorProxy"
  ) {
    self.reason = reason
  }

  /// Always throws `CaptureError.unavailable`.
  public func currentOrientation() throws(CaptureError) -> OrientationReading {
    throw CaptureError(.unavailable, reason)
  }
}

/// Parses the lines `orientd --watch --json` prints, e.g.
/// `{"time":12.5,"orientation":"left-up","rotation":90,"tilt":"vertical"}`.
///
/// The latest line with a defined orientation wins. A line whose orientation is `undefined`
/// (no reading yet, flat since start) does not replace an earlier one. Malformed lines and
/// lines without an orientation are skipped with a warning naming the line; if no line gives an
/// orientation at all, the caller reports that as an error.
public struct WatchLineParser: Sendable {
  /// The latest defined orientation and its line number.
  public private(set) var latest: (orientation: Orientation, line: Int)?
  /// Warnings for skipped lines, `"stdin:3: ..."`.
  public private(set) var warnings: [String] = []
  /// Lines seen.
  public private(set) var lineCount = 0
  /// Whether any line said `undefined`.
  public private(set) var sawUndefined = false
  private let label: String
  private var pending: [UInt8] = []
  /// Set while the rest of an over-long line is skipped.
  private var overlong = false

  /// The longest line kept, in bytes: orientd's lines are under 100 bytes, and a stream that
  /// never sends a newline (the wrong file, `/dev/zero`) must not grow the buffer without bound.
  public static let maxLineLength = 64 * 1024

  /// Creates a parser; `label` names the input in warnings (`stdin`, a path).
  public init(label: String) { self.label = label }

  /// Feeds raw bytes; complete lines are parsed, a trailing partial line is kept (up to
  /// `maxLineLength` bytes; a longer line is skipped with a warning).
  public mutating func feed(_ bytes: some Sequence<UInt8>) {
    for byte in bytes {
      if byte == 0x0A {
        endLine()
      } else if overlong {
        continue
      } else if pending.count < WatchLineParser.maxLineLength {
        pending.append(byte)
      } else {
        overlong = true
        pending.removeAll()
      }
    }
  }

  /// Parses what is left after the input ended (a last line without a newline).
  public mutating func finish() {
    if !pending.isEmpty || overlong { endLine() }
    pending = []
  }

  private mutating func endLine() {
    if overlong {
      overlong = false
      lineCount += 1
      warnings.append(
        "\(label):\(lineCount): line longer than \(WatchLineParser.maxLineLength) bytes; ignored")
      return
    }
    let line = String(decoding: pending, as: UTF8.self)
    pending.removeAll(keepingCapacity: true)
    parse(line)
  }

  /// Parses one line.
  public mutating func parse(_ line: String) {
    lineCount += 1
    let here = "\(label):\(lineCount)"
    let trimmed = line.trimmingWhitespace()
    if trimmed.isEmpty { return }
    let value: JSONValue
    do { value = try JSONValue(parsing: trimmed) } catch {
      warnings.append("\(here): not JSON (\(error)); line ignored")
      return
    }
    guard case .object = value else {
      warnings.append("\(here): expected a JSON object like orientd --watch --json prints; ignored")
      return
    }
    if let name = value["orientation"]?.stringValue {
      guard let orientation = Orientation(rawValue: name) else {
        warnings.append("\(here): unknown orientation \"\(name)\"; line ignored")
        return
      }
      if orientation == .undefined {
        sawUndefined = true
        return
      }
      latest = (orientation, lineCount)
    } else if let degrees = value["rotation"]?.numberValue,
      let whole = Int(exactly: degrees),  // Int(1e300) would trap
      let orientation = Orientation(clockwiseRotation: whole)
    {
      latest = (orientation, lineCount)
    } else {
      warnings.append("\(here): no \"orientation\" member; line ignored")
    }
  }
}

extension String {
  /// Without leading and trailing spaces, tabs and carriage returns.
  func trimmingWhitespace() -> String {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
    guard let start = firstIndex(where: { !isSpace($0) }),
      let end = lastIndex(where: { !isSpace($0) })
    else { return "" }
    return String(self[start...end])
  }
}

/// `--orientation-from -|FILE`: the latest line of `orientd --watch --json` output.
///
/// A regular file is read to its end. A pipe or terminal is drained of what has arrived
/// without blocking (each read waits for `poll(2)` to say it will not block; stdin is never set
/// `O_NONBLOCK`, which would stay set for the caller's shell); if no usable line has arrived yet, it waits (up to `waitNanoseconds`)
/// for one or for end of input. Each capture drains again, so a session follows the pipe.
public final class WatchLinesProvider: OrientationProvider {
  private let descriptor: FileDescriptor
  private var parser: WatchLineParser
  private let label: String
  private let logger: Logger
  private let waitNanoseconds: Int64
  private var ended = false
  private var reportedWarnings = 0

  /// Opens `path` (`-` is stdin).
  ///
  /// - Throws: `CaptureError.noInput` if the file cannot be opened.
  public init(path: String, logger: Logger, waitNanoseconds: Int64 = 5_000_000_000)
    throws(CaptureError)
  {
    if path == "-" {
      descriptor = FileDescriptor(owning: dup(0), path: "stdin")
      label = "stdin"
    } else {
      do { descriptor = try FileDescriptor(path: path) } catch {
        throw CaptureError(.noInput, "--orientation-from \(path): cannot open (\(error.reason))")
      }
      label = path
    }
    parser = WatchLineParser(label: label)
    self.logger = logger
    self.waitNanoseconds = waitNanoseconds
    // No O_NONBLOCK: stdin's flags are shared with the caller (see `drain`).
  }

  /// Reads what has arrived and returns the latest orientation.
  ///
  /// - Throws: `CaptureError.badData` if the input ended (or stayed silent) without any line
  ///   giving an orientation.
  public func currentOrientation() throws(CaptureError) -> OrientationReading {
    drain()
    let deadline = Clock.monotonicNanoseconds() + waitNanoseconds
    while parser.latest == nil && !ended {
      let left = (deadline - Clock.monotonicNanoseconds()) / 1_000_000
      if left <= 0 { break }
      var pfd = pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)
      _ = poll(&pfd, 1, Int32(min(left, 1000)))
      drain()
    }
    for warning in parser.warnings.dropFirst(reportedWarnings) { logger.warning(warning) }
    reportedWarnings = parser.warnings.count
    guard let latest = parser.latest else {
      var why = ended ? "ended" : "gave nothing usable within \(waitNanoseconds / 1_000_000_000) s"
      if parser.sawUndefined { why += " (only \"undefined\": no accelerometer reading yet)" }
      // Silence and "undefined" mean no reading (which --orientation-fallback covers); lines
      // that are all malformed mean the wrong input.
      let malformed = !parser.warnings.isEmpty && !parser.sawUndefined
      throw CaptureError(
        malformed ? .badData : .unavailable,
        "--orientation-from \(label): no orientation: the input \(why) after "
          + "\(parser.lineCount) line(s); expected lines from `orientd --watch --json`")
    }
    return OrientationReading(latest.orientation, source: "\(label):\(latest.line)")
  }

  private func drain() {
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while !ended {
      let n: Int?
      do {
        n = try buffer.withUnsafeMutableBytes { raw throws(SystemError) in
          try descriptor.readIfReady(into: raw)
        }
      } catch {
        logger.warning("--orientation-from \(label): \(error)")
        ended = true
        break
      }
      guard let n else { return }  // nothing more for now
      if n == 0 {
        ended = true
        parser.finish()
        return
      }
      parser.feed(buffer[0..<n])
    }
  }
}

/// Resolves `--orientation` at capture time: asks the provider and, if that fails because no
/// service or sensor is reachable, uses the fallback the user allowed.
public final class OrientationResolver {
  /// The provider asked first.
  public let provider: any OrientationProvider
  /// `--orientation-fallback`, if given.
  public let fallback: Orientation?
  private let logger: Logger

  /// Creates a resolver.
  public init(provider: any OrientationProvider, fallback: Orientation?, logger: Logger) {
    self.provider = provider
    self.fallback = fallback
    self.logger = logger
  }

  /// The orientation to use now.
  ///
  /// - Throws: the provider's error when there is no fallback (or it is not an availability
  ///   problem), with advice on `--orientation` and `--orientation-fallback`.
  public func resolve() throws(CaptureError) -> OrientationReading {
    do {
      return try provider.currentOrientation()
    } catch  where error.kind == .unavailable {
      if let fallback {
        logger.warning("\(error.message); using --orientation-fallback \(fallback.rawValue)")
        return OrientationReading(fallback, source: "fallback")
      }
      throw CaptureError(
        .unavailable,
        "\(error.message). Start orientd (or iio-sensor-proxy), give --orientation NAME, or "
          + "allow --orientation-fallback normal")
    }
  }
}
