import Glibc
import OrientCore
import SystemKit
import TextFormats

/// Why a raw sysfs reading was not used.
public enum RawValueProblem: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
  /// The attribute read back nothing (or only blanks).
  case empty
  /// The text is not a decimal integer (the payload holds up to 32 bytes of it, for the log).
  case notANumber(String)
  /// The integer does not fit in 64 bits.
  case overflow
  /// The read itself failed with this `errno` (EIO from a failing bus, for example).
  case readError(Errno)

  /// A short phrase for messages.
  public var description: String {
    switch self {
    case .empty: return "empty value"
    case .notANumber(let text): return "not a number: \"\(text)\""
    case .overflow: return "integer out of range"
    case .readError(let code): return "read error: \(code)"
    }
  }

  /// A stable key per kind of problem, for `LogOnce` (the text of garbage is not part of it).
  public var kind: String {
    switch self {
    case .empty: return "empty"
    case .notANumber: return "garbage"
    case .overflow: return "overflow"
    case .readError(let code): return "errno-\(code.rawValue)"
    }
  }
}

/// Pure parsers for the text the kernel writes in IIO sysfs attributes.
///
/// All of them are bounded (they look at no more than `maxBytes`) and never trap, whatever the
/// input; they are fuzz targets.
public enum SysfsValue {
  /// Attribute text longer than this is refused (the kernel writes at most a page; IIO scalars
  /// are a few bytes).
  public static let maxBytes = 4096

  /// Parses a raw channel value (`in_accel_x_raw`) as the kernel writes it: optional blanks,
  /// an optional sign, decimal digits, then only blanks, newlines or NULs.
  ///
  /// Unlike C `atoi` (which iio-sensor-proxy uses), `-25.6`, `12abc` or an empty read are
  /// refused rather than read as a number.
  public static func parseRaw(_ bytes: some Collection<UInt8>) -> Result<Int64, RawValueProblem> {
    var index = bytes.startIndex
    var seen = 0
    func skipBlanks() {
      while index != bytes.endIndex, seen < maxBytes {
        let c = bytes[index]
        guard c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == 0 else { return }
        index = bytes.index(after: index)
        seen += 1
      }
    }
    skipBlanks()
    if index == bytes.endIndex { return .failure(.empty) }
    let textStart = index
    var negative = false
    if bytes[index] == 0x2D || bytes[index] == 0x2B {
      negative = bytes[index] == 0x2D
      index = bytes.index(after: index)
      seen += 1
    }
    var value: Int64 = 0
    var digits = 0
    var overflow = false
    while index != bytes.endIndex, seen < maxBytes {
      let c = bytes[index]
      guard c >= 0x30 && c <= 0x39 else { break }
      let (m, o1) = value.multipliedReportingOverflow(by: 10)
      let (s, o2) = m.subtractingReportingOverflow(Int64(c - 0x30))
      if o1 || o2 { overflow = true } else { value = s }
      digits += 1
      index = bytes.index(after: index)
      seen += 1
    }
    skipBlanks()
    guard digits > 0, index == bytes.endIndex else {
      var shownBytes = Array(bytes[textStart...].prefix(32))
      while let last = shownBytes.last, last == 0x0A || last == 0x20 || last == 0 || last == 0x0D {
        shownBytes.removeLast()
      }
      let shown = shownBytes.map { c -> Character in
        (c >= 0x20 && c < 0x7F) ? Character(Unicode.Scalar(c)) : "?"
      }
      return .failure(.notANumber(String(shown)))
    }
    if overflow { return .failure(.overflow) }
    if negative { return .success(value) }
    let (positive, o) = Int64(0).subtractingReportingOverflow(value)
    return o ? .failure(.overflow) : .success(positive)
  }

  /// Parses a polled reading (`in_accel_x_raw`): an integer as `parseRaw` reads it, or, since
  /// some drivers (and test beds) write them, a decimal such as `-25.6`, read exactly rather
  /// than truncated as C `atoi` would. Exponents, `inf` and `nan` are refused.
  public static func parseReading(_ bytes: some Collection<UInt8>) -> Result<
    Double, RawValueProblem
  > {
    let integer = parseRaw(bytes)
    switch integer {
    case .success(let value): return .success(Double(value))
    case .failure(.notANumber(let shown)):
      guard bytes.count <= maxBytes, !bytes.contains(where: { $0 == 0x65 || $0 == 0x45 }),
        let value = try? DecimalText.parseDouble(
          String(decoding: bytes.filter { $0 != 0 }, as: UTF8.self))
      else { return .failure(.notANumber(shown)) }
      return .success(value)
    case .failure(let problem): return .failure(problem)
    }
  }

  /// Parses a decimal attribute (`in_accel_scale`, `sampling_frequency`) independently of the
  /// process locale; the trailing newline is allowed.
  public static func parseDecimal(_ text: String) throws(DecimalText.Problem) -> Double {
    guard text.utf8.count <= maxBytes else { throw .notANumber }
    return try DecimalText.parseDouble(text)
  }

  /// Parses an integer attribute such as `scan_elements/in_accel_x_index` or `buffer/length`.
  public static func parseInteger(_ text: String) -> Int64? {
    guard text.utf8.count <= maxBytes else { return nil }
    return try? parseRaw(text.utf8).get()
  }

  /// Parses a boolean attribute such as `buffer/enable` or `scan_elements/*_en` (`0`/`1`).
  public static func parseFlag(_ text: String) -> Bool? {
    parseInteger(text).map { $0 != 0 }
  }
}

/// The values a device accepts for an attribute, from `*_available`.
///
/// IIO writes either a list (`"1.5625 3.125 6.25 12.5"`) or a range in brackets
/// (`"[min step max]"`, `IIO_AVAIL_RANGE`).
public enum AvailableValues: Equatable, Sendable {
  /// Discrete values, each with the text the kernel wrote (written back verbatim).
  case list([(text: String, value: Double)])
  /// Every `minimum + k * step` up to `maximum`.
  case range(minimum: Double, step: Double, maximum: Double)

  /// Parses the attribute text; `nil` when it is empty or any item is not a number.
  public init?(parsing text: String) {
    guard text.utf8.count <= SysfsValue.maxBytes else { return nil }
    let trimmed = text[...].trimming(Padding.whitespaceAndNUL)
    if trimmed.hasPrefix("[") && trimmed.hasSuffix("]") {
      let parts = trimmed.dropFirst().dropLast().split(whereSeparator: { $0 == " " || $0 == "\t" })
      guard parts.count == 3,
        let lo = try? DecimalText.parseDouble(parts[0]),
        let step = try? DecimalText.parseDouble(parts[1]),
        let hi = try? DecimalText.parseDouble(parts[2]),
        lo <= hi, step >= 0
      else { return nil }
      self = .range(minimum: lo, step: step, maximum: hi)
      return
    }
    var items: [(text: String, value: Double)] = []
    for part in trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }) {
      guard let value = try? DecimalText.parseDouble(part) else { return nil }
      items.append((String(part), value))
    }
    guard !items.isEmpty else { return nil }
    self = .list(items)
  }

  /// The smallest accepted value that is at least `target`, or the largest one if none is.
  ///
  /// - Returns: the text to write and its value.
  public func smallest(atLeast target: Double) -> (text: String, value: Double) {
    switch self {
    case .list(let items):
      let sorted = items.sorted { $0.value < $1.value }
      if let hit = sorted.first(where: { $0.value >= target }) { return hit }
      // A non-empty list was checked in init; fall back to the target if it somehow is not.
      return sorted.last ?? (AvailableValues.format(target), target)
    case .range(let lo, let step, let hi):
      var value = target <= lo ? lo : hi
      if target > lo && target < hi {
        value = step > 0 ? lo + (((target - lo) / step).rounded(.up)) * step : target
        value = min(value, hi)
      }
      return (AvailableValues.format(value), value)
    }
  }

  /// The values, for display (a range is shown as its bounds).
  public var displayValues: [Double] {
    switch self {
    case .list(let items): return items.map(\.value)
    case .range(let lo, _, let hi): return [lo, hi]
    }
  }

  /// The text as it would appear in sysfs (for display).
  public var text: String {
    switch self {
    case .list(let items): return items.map(\.text).joined(separator: " ")
    case .range(let lo, let step, let hi):
      return "[\(format(lo)) \(format(step)) \(format(hi))]"
    }
  }

  private func format(_ v: Double) -> String { AvailableValues.format(v) }

  /// Formats a value for writing to sysfs: integers without a fraction, others with up to six
  /// decimals (the precision IIO prints), without exponent notation.
  public static func format(_ v: Double) -> String {
    guard v.isFinite else { return "0" }
    if v == v.rounded(), abs(v) < 1e15 { return String(Int64(v)) }
    return FixedPoint.format(v, decimals: 6, trimZeros: true)
  }

  /// Compares lists by value and text.
  public static func == (lhs: AvailableValues, rhs: AvailableValues) -> Bool {
    switch (lhs, rhs) {
    case (.list(let a), .list(let b)):
      return a.count == b.count
        && zip(a, b).allSatisfy { $0.text == $1.text && $0.value == $1.value }
    case (.range(let a, let b, let c), .range(let d, let e, let f)):
      return a == d && b == e && c == f
    default: return false
    }
  }
}

/// Fixed-point decimal formatting without Foundation or the C locale.
public enum FixedPoint {
  /// Formats `value` with exactly `decimals` digits after the point (rounded half away from
  /// zero), optionally dropping trailing zeros. Values beyond +-1e15 use Swift's description.
  public static func format(_ value: Double, decimals: Int, trimZeros: Bool = false) -> String {
    guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
    let places = max(0, min(decimals, 9))
    guard abs(value) < 1e15 else { return String(value) }
    var scale: Int64 = 1
    for _ in 0..<places { scale *= 10 }
    let scaled = (abs(value) * Double(scale)).rounded(.toNearestOrAwayFromZero)
    guard scaled < 9e18 else { return String(value) }
    let units = Int64(scaled)
    let whole = units / scale
    var fraction = places > 0 ? String(units % scale) : ""
    while fraction.count < places { fraction = "0" + fraction }
    if trimZeros { while fraction.hasSuffix("0") { fraction.removeLast() } }
    let sign = value < 0 && units != 0 ? "-" : ""
    return fraction.isEmpty ? "\(sign)\(whole)" : "\(sign)\(whole).\(fraction)"
  }
}

/// The clock the kernel stamps buffered scans with (`current_timestamp_clock`).
public enum TimestampClock: String, CaseIterable, Sendable {
  /// `CLOCK_REALTIME`, the kernel's default.
  case realtime
  /// `CLOCK_MONOTONIC`, the one orientd works in.
  case monotonic
  /// `CLOCK_MONOTONIC_RAW`.
  case monotonicRaw = "monotonic_raw"
  /// `CLOCK_REALTIME_COARSE`.
  case realtimeCoarse = "realtime_coarse"
  /// `CLOCK_MONOTONIC_COARSE`.
  case monotonicCoarse = "monotonic_coarse"
  /// `CLOCK_BOOTTIME`.
  case boottime
  /// `CLOCK_TAI`.
  case tai

  /// Parses the attribute text (trailing newline allowed).
  public init?(attribute text: String) {
    self.init(rawValue: String(text[...].trimming(Padding.whitespaceAndNUL)))
  }

  /// The C clock id (`CLOCK_*` from time.h).
  public var clockID: Int32 {
    switch self {
    case .realtime: return 0
    case .monotonic: return 1
    case .monotonicRaw: return 4
    case .realtimeCoarse: return 5
    case .monotonicCoarse: return 6
    case .boottime: return 7
    case .tai: return 11
    }
  }
}
