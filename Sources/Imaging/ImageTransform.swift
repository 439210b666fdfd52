/// One of the eight ways to turn and flip a picture without resampling it (the dihedral group
/// of the square): an optional left-right mirror, then a clockwise rotation by quarter turns.
///
/// The same eight values are the EXIF Orientation tag's 1...8 and TurboJPEG's `TJXOP_*`
/// lossless operations, so one type carries a rotation decision from the plan to the pixels,
/// the JPEG transform and the tag.
public struct ImageTransform: Hashable, Sendable, CaseIterable, CustomStringConvertible {
  /// Mirror left-right first (before rotating).
  public var mirrored: Bool
  /// Clockwise quarter turns applied after the mirror, 0...3.
  public var quarterTurns: Int

  /// Creates a transform; `quarterTurns` is reduced modulo 4.
  public init(quarterTurns: Int, mirrored: Bool = false) {
    self.quarterTurns = ((quarterTurns % 4) + 4) % 4
    self.mirrored = mirrored
  }

  /// A clockwise rotation by a multiple of 90 degrees (any sign), optionally after a mirror;
  /// `nil` for other angles.
  public init?(clockwiseDegrees degrees: Int, mirrored: Bool = false) {
    guard degrees % 90 == 0 else { return nil }
    self.init(quarterTurns: degrees / 90, mirrored: mirrored)
  }

  /// Leaves the picture as it is.
  public static let identity = ImageTransform(quarterTurns: 0)
  /// A left-right mirror.
  public static let mirror = ImageTransform(quarterTurns: 0, mirrored: true)

  /// All eight transforms.
  public static let allCases: [ImageTransform] =
    (0..<4).map { ImageTransform(quarterTurns: $0) }
    + (0..<4).map { ImageTransform(quarterTurns: $0, mirrored: true) }

  /// The clockwise rotation in degrees (0, 90, 180, 270).
  public var clockwiseDegrees: Int { quarterTurns * 90 }

  /// Whether width and height trade places.
  public var swapsDimensions: Bool { quarterTurns % 2 == 1 }

  /// `"rotate 90"`, `"mirror, rotate 270"`, `"none"`.
  public var description: String {
    switch (mirrored, quarterTurns) {
    case (false, 0): return "none"
    case (true, 0): return "mirror"
    case (false, _): return "rotate \(clockwiseDegrees)"
    case (true, _): return "mirror, rotate \(clockwiseDegrees)"
    }
  }

  /// `self` first, then `next`.
  ///
  /// A mirror reverses the sense of rotations before it (M R = R' M), which is why the turns of
  /// `self` change sign when `next` mirrors.
  public func then(_ next: ImageTransform) -> ImageTransform {
    let turns = next.quarterTurns + (next.mirrored ? -quarterTurns : quarterTurns)
    return ImageTransform(quarterTurns: turns, mirrored: mirrored != next.mirrored)
  }

  /// The transform that undoes this one.
  public var inverse: ImageTransform {
    // A mirror-then-rotate is its own inverse (a reflection); a rotation is undone by the
    // opposite rotation.
    mirrored ? self : ImageTransform(quarterTurns: -quarterTurns)
  }

  /// The picture size after the transform.
  public func outputSize(width: Int, height: Int) -> (width: Int, height: Int) {
    swapsDimensions ? (height, width) : (width, height)
  }

  /// Where the pixel at (x, y) of a `width`x`height` picture lands.
  public func map(x: Int, y: Int, width: Int, height: Int) -> (x: Int, y: Int) {
    var (px, py, w, h) = (x, y, width, height)
    if mirrored { px = w - 1 - px }
    for _ in 0..<quarterTurns {
      // One clockwise quarter turn: (x, y) -> (h - 1 - y, x), size w x h -> h x w.
      (px, py) = (h - 1 - py, px)
      (w, h) = (h, w)
    }
    return (px, py)
  }

  /// The EXIF Orientation value (1...8) that tells a viewer to apply this transform to the
  /// stored pixels to show them upright (EXIF 2.32, tag 0x0112).
  public var exifOrientation: Int {
    switch (mirrored, quarterTurns) {
    case (false, 0): return 1
    case (true, 0): return 2
    case (false, 2): return 3
    case (true, 2): return 4
    case (true, 3): return 5
    case (false, 1): return 6
    case (true, 1): return 7
    default: return 8  // (false, 3)
    }
  }

  /// The transform an EXIF Orientation value (1...8) asks a viewer to apply; `nil` otherwise.
  public init?(exifOrientation value: Int) {
    guard let match = ImageTransform.allCases.first(where: { $0.exifOrientation == value })
    else { return nil }
    self = match
  }
}
