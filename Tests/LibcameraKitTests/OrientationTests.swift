import CLibcameraAPI
import Imaging
import LibcameraKit
import Testing

/// The plugin's function table (the tests run beside the built plugin).
let plugin: orient_lc_api = {
  do { return try LibcameraPlugin.api() } catch { fatalError("\(error)") }
}()

/// A small picture no turn or mirror maps onto itself: every pixel a different colour.
private let scene = RGBImage(
  width: 5, height: 3, pixels: (0..<15).flatMap { [UInt8($0 * 10), UInt8(200 - $0), 7] })

/// libcamera's Transform applied to pixels as transform.cpp describes it, written out here
/// rather than taken from `ImageTransform`: flips first (horizontal: x -> w-1-x, vertical:
/// y -> h-1-y), then the transpose (x, y) -> (y, x).
private func applyBits(_ bits: Int, to image: RGBImage) -> RGBImage {
  let (w, h) = (image.width, image.height)
  let transpose = bits & 4 != 0
  let (ow, oh) = transpose ? (h, w) : (w, h)
  var out = [UInt8](repeating: 0, count: ow * oh * 3)
  for y in 0..<h {
    for x in 0..<w {
      var (fx, fy) = (x, y)
      if bits & 1 != 0 { fx = w - 1 - fx }
      if bits & 2 != 0 { fy = h - 1 - fy }
      let (tx, ty) = transpose ? (fy, fx) : (fx, fy)
      for c in 0..<3 { out[(ty * ow + tx) * 3 + c] = image.pixels[(y * w + x) * 3 + c] }
    }
  }
  return RGBImage(width: ow, height: oh, pixels: out)
}

@Suite struct TransformTests {
  @Test("libcamera's Transform values are the ImageTransforms its documentation draws")
  func bitsAreTheSameTransforms() {
    for transform in LibcameraTransform.allCases {
      #expect(
        scene.transformed(transform.imageTransform) == applyBits(transform.rawValue, to: scene),
        "\(transform)")
    }
    // transform.h: Rot90 takes A-B/C-D to C-A/D-B, "rotation by 90 degrees clockwise".
    #expect(LibcameraTransform.rot90.imageTransform == ImageTransform(quarterTurns: 1))
    #expect(LibcameraTransform.rot270.imageTransform == ImageTransform(quarterTurns: 3))
  }

  @Test("composition and inverse agree with libcamera's own operator* and operator-")
  func arithmeticMatchesLibcamera() {
    for a in LibcameraTransform.allCases {
      #expect((-a).rawValue == Int(plugin.transform_inverse(Int32(a.rawValue))), "-\(a)")
      for b in LibcameraTransform.allCases {
        let theirs = plugin.transform_compose(Int32(a.rawValue), Int32(b.rawValue))
        #expect((a * b).rawValue == Int(theirs), "\(a) * \(b)")
      }
    }
    #expect(plugin.transform_compose(8, 0) == -1)
  }

  @Test(
    "transformFromRotation as libcamera computes it",
    arguments: [0, 90, 180, 270, -90, 450, 45])
  func fromRotation(degrees: Int) {
    let theirs = Int(plugin.transform_from_rotation(Int32(degrees)))
    #expect(LibcameraTransform(fromRotation: degrees)?.rawValue ?? -1 == theirs)
  }
}

/// What a camera's pipeline does, simulated from the libcamera source of each generation.
enum Pipeline: CustomStringConvertible, CaseIterable {
  /// 0.0.x: uvcvideo, vimc, simple, rkisp1, imx8-isi force `transform` to Identity.
  case forcesIdentity
  /// 0.0.x: ipu3 and raspberrypi combine the transform with `transformFromRotation(Rotation)`
  /// and flip the sensor (`sensorFlips`), or leave everything to the application.
  case combines(sensorFlips: Bool)
  /// 0.2 and later: the sensor flipped by `flips` (any flip a pipeline may choose; 0: none),
  /// `orientation` reporting the result.
  case orientation(flips: Int)

  static let allCases: [Pipeline] =
    [.forcesIdentity, .combines(sensorFlips: true), .combines(sensorFlips: false)]
    + (0...3).map { .orientation(flips: $0) }

  var description: String {
    switch self {
    case .forcesIdentity: return "0.0.x uvcvideo/vimc/simple/rkisp1"
    case .combines(let flips): return "0.0.x ipu3/raspberrypi, sensor flips \(flips)"
    case .orientation(let flips): return "0.2 orientation, sensor flip \(flips)"
    }
  }

  /// What raspberrypi.cpp/ipu3.cpp's validate() does with a requested transform: the
  /// transform it reports and the flips it sets on the sensor (libcamera's arithmetic itself).
  static func validate(requested: Int, rotation: Int, sensorFlips: Bool) -> (
    reported: Int, combined: Int
  ) {
    let fromRotation = Int(plugin.transform_from_rotation(Int32(rotation)))
    var transform = requested
    var combined = Int(plugin.transform_compose(Int32(transform), Int32(fromRotation)))
    if combined & 4 != 0 {
      transform ^= 4
      combined &= ~4
    }
    if !sensorFlips && combined != 0 {
      transform = Int(plugin.transform_inverse(Int32(fromRotation)))
      combined = 0
    }
    return (transform, combined)
  }

  /// The frames it delivers from the sensor's picture `raw`, and what it reports, when libcamera
  /// reports `rotation` (the bridge's request: Identity, or Rotate0; and its Rot180 probe).
  func deliver(_ raw: RGBImage, rotation: Int?) -> (RGBImage, PipelineApplied) {
    switch self {
    case .forcesIdentity:
      return (raw, .transform(.identity, combinedWithRotation: false))
    case .combines(let flips):
      let probe = Pipeline.validate(requested: 3, rotation: rotation ?? 0, sensorFlips: flips)
      let real = Pipeline.validate(requested: 0, rotation: rotation ?? 0, sensorFlips: flips)
      let transform = LibcameraTransform(rawValue: real.reported) ?? .identity
      return (
        applyBits(real.combined, to: raw),
        .transform(transform, combinedWithRotation: probe.reported != 0)
      )
    case .orientation(let flips):
      let delivered = applyBits(flips, to: raw)
      // The EXIF Orientation that shows the frame upright for the Rotation libcamera reports.
      let upright = raw.transformed(ImageTransform(quarterTurns: -((rotation ?? 0) / 90)))
      let exif = (1...8).first {
        ImageTransform(exifOrientation: $0).map { delivered.transformed($0) } == upright
      }
      return (delivered, .orientation(exif: exif ?? 0))
    }
  }
}

/// A sensor mounted at `mounting` (the true counter-clockwise correction), libcamera reporting
/// `reported`, the user maybe overriding with `--sensor-rotation`.
struct Mounting: CustomStringConvertible {
  var mounting: Int
  var reported: Int?
  var override: Int?

  var description: String {
    "mounted \(mounting), reported \(reported.map(String.init) ?? "none"), "
      + "--sensor-rotation \(override.map(String.init) ?? "none")"
  }

  static let all: [Mounting] = [0, 90, 180, 270].flatMap { (m: Int) -> [Mounting] in
    // libcamera right; libcamera silent (vimc) or wrong, corrected by --sensor-rotation (which
    // is clockwise); libcamera right and the override agreeing.
    let clockwise: Int = (360 - m) % 360
    let wrong: Int = (m + 90) % 360
    return [
      Mounting(mounting: m, reported: m, override: nil),
      Mounting(mounting: m, reported: nil, override: clockwise),
      Mounting(mounting: m, reported: wrong, override: clockwise),
      Mounting(mounting: m, reported: m, override: clockwise),
    ]
  }
}

@Suite struct OrientationArithmeticTests {
  @Test(
    "the remaining turn makes every pipeline's frames show the scene upright",
    arguments: Pipeline.allCases, Mounting.all)
  func framesComeOutUpright(pipeline: Pipeline, mounting: Mounting) {
    // The sensor sees the scene turned clockwise by its mounting correction.
    let raw = scene.transformed(ImageTransform(quarterTurns: mounting.mounting / 90))
    let (frame, applied) = pipeline.deliver(raw, rotation: mounting.reported)
    let correction = LibcameraOrientation.correction(
      location: .back, rotation: mounting.reported, override: mounting.override, applied: applied)
    #expect(frame.transformed(correction.remaining) == scene, "\(pipeline), \(mounting)")
  }

  @Test(
    "front cameras face the user; back, external and unknown do not",
    arguments: [LibcameraLocation.front, .back, .external, nil])
  func location(location: LibcameraLocation?) {
    let correction = LibcameraOrientation.correction(
      location: location, rotation: 270, override: nil,
      applied: .transform(.identity, combinedWithRotation: false))
    #expect(correction.facesUser == (location == .front))
    #expect(correction.remaining == ImageTransform(quarterTurns: 1))
  }

  @Test("named cases: vimc with --sensor-rotation, an ipu3 sensor at 90, libcamera 0.2")
  func namedCases() {
    // vimc reports nothing and forces Identity: --sensor-rotation 90 is a quarter turn clockwise.
    #expect(
      LibcameraOrientation.correction(
        location: nil, rotation: nil, override: 90,
        applied: .transform(.identity, combinedWithRotation: false)
      ).remaining == ImageTransform(quarterTurns: 1))
    // ipu3 with Rotation 90 and sensor flips: validate() reports Transpose and flips the sensor
    // vertically; what is left is a turn with a mirror (the flip undone), not a transpose.
    let ipu3 = LibcameraOrientation.correction(
      location: .back, rotation: 90, override: nil,
      applied: .transform(.transpose, combinedWithRotation: true))
    #expect(ipu3.remaining == ImageTransform(quarterTurns: 1, mirrored: true))
    // raspberrypi with Rotation 180 and flips: the sensor did it all.
    #expect(
      LibcameraOrientation.correction(
        location: .back, rotation: 180, override: nil,
        applied: .transform(.identity, combinedWithRotation: true)
      ).remaining == .identity)
    // 0.2: the orientation is the answer (EXIF 8: turn 270 clockwise).
    #expect(
      LibcameraOrientation.correction(
        location: .front, rotation: 90, override: nil, applied: .orientation(exif: 8)
      ).remaining == ImageTransform(quarterTurns: 3))
  }
}
