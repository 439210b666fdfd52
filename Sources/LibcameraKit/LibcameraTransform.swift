import Imaging

/// libcamera's 2D plane transform (`libcamera::Transform`, transform.h): three bits, a
/// horizontal flip (1), a vertical flip (2) and a transpose about the main diagonal (4), the
/// flips applied first. The same eight values as `ImageTransform`, in libcamera's encoding, so
/// what a pipeline reports can be reasoned about with orientcam's own turns.
///
/// Pure arithmetic: composition and inverse follow libcamera's `operator*` and `operator-`
/// (checked against the library itself in LibcameraKitTests).
public struct LibcameraTransform: RawRepresentable, Hashable, Sendable, CaseIterable,
  CustomStringConvertible
{
  /// The numeric value, 0...7.
  public let rawValue: Int

  /// Wraps a numeric value; `nil` outside 0...7.
  public init?(rawValue: Int) {
    guard (0...7).contains(rawValue) else { return nil }
    self.rawValue = rawValue
  }

  private init(bits: Int) { rawValue = bits & 7 }

  /// `Transform::Identity`.
  public static let identity = LibcameraTransform(bits: 0)
  /// `Transform::HFlip`.
  public static let hFlip = LibcameraTransform(bits: 1)
  /// `Transform::VFlip`.
  public static let vFlip = LibcameraTransform(bits: 2)
  /// `Transform::Rot180` (`HVFlip`).
  public static let rot180 = LibcameraTransform(bits: 3)
  /// `Transform::Transpose`.
  public static let transpose = LibcameraTransform(bits: 4)
  /// `Transform::Rot270`: 270 degrees clockwise.
  public static let rot270 = LibcameraTransform(bits: 5)
  /// `Transform::Rot90`: 90 degrees clockwise.
  public static let rot90 = LibcameraTransform(bits: 6)
  /// `Transform::Rot180Transpose`: the transpose about the other diagonal.
  public static let rot180Transpose = LibcameraTransform(bits: 7)

  /// All eight, by value.
  public static let allCases: [LibcameraTransform] = (0...7).map { LibcameraTransform(bits: $0) }

  /// libcamera's `transformToString` names (`identity`, `hflip`, `rot90`, ...).
  public var description: String {
    ["identity", "hflip", "vflip", "hvflip", "transpose", "rot270", "rot90", "rot180transpose"][
      rawValue]
  }

  /// The same transform as an `ImageTransform` (a mirror, then clockwise quarter turns).
  public var imageTransform: ImageTransform {
    switch rawValue {
    case 0: return .identity
    case 1: return ImageTransform(quarterTurns: 0, mirrored: true)
    case 2: return ImageTransform(quarterTurns: 2, mirrored: true)
    case 3: return ImageTransform(quarterTurns: 2)
    case 4: return ImageTransform(quarterTurns: 3, mirrored: true)
    case 5: return ImageTransform(quarterTurns: 3)
    case 6: return ImageTransform(quarterTurns: 1)
    default: return ImageTransform(quarterTurns: 1, mirrored: true)
    }
  }

  /// The libcamera transform equal to an `ImageTransform`.
  public init(_ transform: ImageTransform) {
    self = LibcameraTransform.allCases.first { $0.imageTransform == transform } ?? .identity
  }

  /// `lhs * rhs` as libcamera composes: `rhs` first, then `lhs`.
  public static func * (lhs: LibcameraTransform, rhs: LibcameraTransform) -> LibcameraTransform {
    LibcameraTransform(rhs.imageTransform.then(lhs.imageTransform))
  }

  /// The inverse (`operator-`).
  public static prefix func - (transform: LibcameraTransform) -> LibcameraTransform {
    LibcameraTransform(transform.imageTransform.inverse)
  }

  /// `transformFromRotation`: what libcamera's 0.0.x pipelines make of a `properties::Rotation`
  /// value. It reads the angle clockwise (the property is a counter-clockwise correction); for
  /// 0 and 180 the two agree. `nil` unless a multiple of 90.
  public init?(fromRotation degrees: Int) {
    guard degrees % 90 == 0 else { return nil }
    switch ((degrees % 360) + 360) % 360 {
    case 0: self = .identity
    case 90: self = .rot90
    case 180: self = .rot180
    default: self = .rot270
    }
  }

  /// Whether the transform swaps width and height.
  public var transposes: Bool { rawValue & 4 != 0 }
}
