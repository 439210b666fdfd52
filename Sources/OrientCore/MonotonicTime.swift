/// A point on `CLOCK_MONOTONIC`: the one time type along a sample's way, from the kernel's
/// scan timestamp (or the time of a polled read) through the sensor layer to the detector and
/// the hinge tracker.
///
/// Nanoseconds, as the kernel gives them; `seconds` for the pure core's arithmetic.
public struct MonotonicTime: Hashable, Comparable, Sendable, CustomStringConvertible {
  /// Nanoseconds since boot (`CLOCK_MONOTONIC`).
  public var nanoseconds: Int64

  /// The time `nanoseconds` after boot.
  public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

  /// The time `duration` after boot (what `SystemKit.Clock.monotonic()` returns).
  public init(_ duration: Duration) {
    let (seconds, attoseconds) = duration.components
    nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
  }

  /// Seconds since boot.
  public var seconds: Double { Double(nanoseconds) / 1e9 }

  /// Microseconds since boot (orientd's `GetReading` timestamp), 0 for a time before boot.
  public var microseconds: UInt64 { UInt64(max(0, nanoseconds / 1000)) }

  /// The time `duration` later.
  public static func + (time: MonotonicTime, duration: Duration) -> MonotonicTime {
    MonotonicTime(nanoseconds: time.nanoseconds + MonotonicTime(duration).nanoseconds)
  }

  /// The time `duration` earlier.
  public static func - (time: MonotonicTime, duration: Duration) -> MonotonicTime {
    MonotonicTime(nanoseconds: time.nanoseconds - MonotonicTime(duration).nanoseconds)
  }

  /// The time from `b` to `a`.
  public static func - (a: MonotonicTime, b: MonotonicTime) -> Duration {
    .nanoseconds(a.nanoseconds - b.nanoseconds)
  }

  /// Earlier first.
  public static func < (a: MonotonicTime, b: MonotonicTime) -> Bool {
    a.nanoseconds < b.nanoseconds
  }

  /// The nanoseconds, as `orientd record` and the probe print them.
  public var description: String { String(nanoseconds) }
}
