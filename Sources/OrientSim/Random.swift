#if canImport(Glibc)
  import Glibc
#endif

/// A small, fast, seedable generator (xoshiro256**, seeded through SplitMix64), so that every
/// synthetic trace is the same on every machine and Swift version.
///
/// The standard library's generator is not seedable; these algorithms are public domain
/// (Blackman and Vigna) and re-implemented here.
public struct SimRandom: RandomNumberGenerator, Sendable {
  private var s0: UInt64
  private var s1: UInt64
  private var s2: UInt64
  private var s3: UInt64

  /// Seeds the state from one 64-bit seed with SplitMix64.
  public init(seed: UInt64) {
    var x = seed
    func splitMix() -> UInt64 {
      x &+= 0x9E37_79B9_7F4A_7C15
      var z = x
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
    s0 = splitMix()
    s1 = splitMix()
    s2 = splitMix()
    s3 = splitMix()
  }

  /// A generator for a sub-stream: the same parent seed and label always give the same stream.
  public init(seed: UInt64, stream: UInt64) {
    self.init(seed: seed ^ (stream &* 0xD1B5_4A32_D192_ED03) &+ stream)
  }

  /// The next 64 random bits.
  public mutating func next() -> UInt64 {
    let result = rotate(s1 &* 5, 7) &* 9
    let t = s1 << 17
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = rotate(s3, 45)
    return result
  }

  /// A uniform `Double` in [0, 1).
  public mutating func unit() -> Double {
    Double(next() >> 11) * 0x1.0p-53
  }

  /// A uniform `Double` in [low, high).
  public mutating func uniform(_ low: Double, _ high: Double) -> Double {
    low + (high - low) * unit()
  }

  /// A uniform `Double` in the range (a one-point range gives its value).
  public mutating func uniform(_ range: ClosedRange<Double>) -> Double {
    uniform(range.lowerBound, range.upperBound)
  }

  /// A standard normal deviate (Box-Muller).
  public mutating func gaussian() -> Double {
    let u1 = max(unit(), 1e-300)
    let u2 = unit()
    return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
  }

  /// +1 or -1 with equal probability.
  public mutating func sign() -> Double {
    next() & 1 == 0 ? 1 : -1
  }

  /// One element of a non-empty array.
  public mutating func pick<T>(_ items: [T]) -> T {
    items[Int(next() % UInt64(items.count))]
  }

  private func rotate(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }
}
