import Imaging
import JPEGKit
import OrientCore
import SystemKit

/// A frame as a source delivered it, before any rotation.
public struct Frame: Sendable {
  /// A JPEG image (MJPEG cameras, files) or raw pixels.
  public enum Content: Sendable {
    /// A complete JPEG file.
    case jpeg([UInt8])
    /// Uncompressed pixels.
    case raw(RawFrame)
  }

  /// The data.
  public var content: Content
  /// Width as delivered.
  public var width: Int
  /// Height as delivered.
  public var height: Int
  /// `CLOCK_MONOTONIC` nanoseconds when the frame was taken (for trigger-to-frame timing).
  public var monotonicNanoseconds: Int64
  /// Wall-clock nanoseconds when the frame was taken (for EXIF and the file name).
  public var realtimeNanoseconds: Int64
  /// The frame's own Orientation tag (files only): how to show it upright as stored.
  public var storedTransform: ImageTransform
  /// For messages: `"/dev/video0 frame 12"`, `"photos/a.jpg"`.
  public var label: String
  /// The pixel format as delivered (`MJPG`, `YUYV`, `JPEG file`), for reports.
  public var formatName: String
  /// Make/Model of this frame when it differs from the source's (a file's own EXIF).
  public var identity: CameraIdentity?

  /// Creates a frame.
  public init(
    content: Content, width: Int, height: Int, monotonicNanoseconds: Int64,
    realtimeNanoseconds: Int64, storedTransform: ImageTransform = .identity, label: String,
    formatName: String
  ) {
    self.content = content
    self.width = width
    self.height = height
    self.monotonicNanoseconds = monotonicNanoseconds
    self.realtimeNanoseconds = realtimeNanoseconds
    self.storedTransform = storedTransform
    self.label = label
    self.formatName = formatName
  }
}

/// Who took the picture, for EXIF Make and Model.
public struct CameraIdentity: Equatable, Sendable {
  /// EXIF Make.
  public var make: String
  /// EXIF Model.
  public var model: String

  /// Creates an identity.
  public init(make: String, model: String) {
    self.make = make
    self.model = model
  }
}

/// How a source delivers its frames, which decides how a session waits for them.
public enum FrameDelivery: Equatable, Sendable {
  /// Frames arrive on their own (a streaming camera): `descriptor` becomes readable when one is
  /// ready, and `FrameSource.frameIfReady()` takes it without waiting. A photo is taken from
  /// the first frame exposed after its trigger.
  case streaming(descriptor: Int32)
  /// A frame is made or read when `FrameSource.nextFrame()` asks (the pattern, files).
  case onDemand
}

/// The mounting correction for a source's frames: a mirror (rare: flips a libcamera pipeline
/// left), then a clockwise turn.
public struct SensorCorrection: Equatable, Sendable {
  /// Degrees clockwise (0, 90, 180, 270).
  public var rotation: Int
  /// Mirror left-right before turning.
  public var mirrored: Bool
  /// Where it comes from, for messages (`--sensor-rotation`, `the driver`, `libcamera`).
  public var origin: String

  /// Creates a correction.
  public init(rotation: Int, mirrored: Bool = false, origin: String) {
    self.rotation = rotation
    self.mirrored = mirrored
    self.origin = origin
  }
}

/// Where frames come from: a camera, the test pattern or JPEG files. A source stays open
/// between frames, so a session can take many photos without reopening the device.
public protocol FrameSource: AnyObject {
  /// For messages and reports: `/dev/video0`, `pattern`, `file:photos/*.jpg`.
  var name: String { get }
  /// EXIF Make/Model.
  var identity: CameraIdentity { get }
  /// How many frames it can still deliver (`nil`: unlimited).
  var remainingFrames: Int? { get }
  /// How frames come (on demand by default); a closed source delivers on demand and fails.
  var delivery: FrameDelivery { get }
  /// The size frames are delivered at, when known before the first one (`nil` for files).
  var frameSize: (width: Int, height: Int)? { get }
  /// The mounting correction the device reports, in degrees clockwise (`nil`: none reported;
  /// `--sensor-rotation` or 0 applies).
  var reportedSensorRotation: Int? { get }
  /// The mounting correction to apply to its frames: `override` (`--sensor-rotation`,
  /// clockwise) instead of what the device reports. A libcamera source also takes what its
  /// pipeline already did into account.
  func sensorCorrection(override: Int?) -> SensorCorrection
  /// Whether the system says the camera faces the user (libcamera's Location front): photos
  /// are then taken as with `--mirror`.
  var facesUser: Bool { get }
  /// The next frame.
  func nextFrame() throws(CaptureError) -> Frame
  /// The next frame if one is ready, without waiting (`nil`: none yet). On-demand sources
  /// are always ready: this is `nextFrame()`.
  func frameIfReady() throws(CaptureError) -> Frame?
  /// A frame for a preview window between photos, without using up a frame a photo would take:
  /// the pattern draws a fresh one, files show their first file (until it has been shown once),
  /// a streaming camera none (its preview is the frames it streams).
  func previewFrame() throws(CaptureError) -> Frame?
  /// Tells the source how the device is held now. Only a simulated source uses it (the test
  /// pattern, unless `pattern:ORIENTATION` fixed how it is held).
  func deviceHeld(_ orientation: Orientation)
  /// Releases the device; idempotent. Further `nextFrame` calls fail.
  func close()
}

extension FrameSource {
  /// On demand.
  public var delivery: FrameDelivery { .onDemand }
  /// Not known.
  public var frameSize: (width: Int, height: Int)? { nil }
  /// None.
  public var reportedSensorRotation: Int? { nil }
  /// `override`, else `reportedSensorRotation`, else none; never mirrored.
  public func sensorCorrection(override: Int?) -> SensorCorrection {
    if let override { return SensorCorrection(rotation: override, origin: "--sensor-rotation") }
    if let reported = reportedSensorRotation {
      return SensorCorrection(rotation: reported, origin: "the driver")
    }
    return SensorCorrection(rotation: 0, origin: "none")
  }
  /// Not known.
  public var facesUser: Bool { false }
  /// Always ready: the next frame.
  public func frameIfReady() throws(CaptureError) -> Frame? { try nextFrame() }
  /// None.
  public func previewFrame() throws(CaptureError) -> Frame? { nil }
  /// Real devices see what they see.
  public func deviceHeld(_ orientation: Orientation) {}
}

/// Parsed `--source` values.
public enum SourceSpec: Equatable, Sendable, CustomStringConvertible {
  /// `v4l2` (the first camera) or `v4l2:/dev/videoN`.
  case camera(path: String?)
  /// `pattern` (a camera in a device held as the capture believes) or `pattern:ORIENTATION`
  /// (held that way whatever the capture believes, to show what a wrong orientation does).
  case pattern(held: Orientation?)
  /// `file:PATH`, where PATH may be a glob (`file:shots/*.jpg`).
  case file(String)
  /// `libcamera` (its first camera) or `libcamera:ID` (a camera's id as `orientcam list` shows
  /// it, or its number N in that list, from 1).
  case libcamera(id: String?)

  /// Parses a `--source` value.
  ///
  /// - Throws: `CaptureError.usage` with the accepted forms.
  public init(parsing text: String) throws(CaptureError) {
    let usage =
      "--source takes v4l2[:/dev/videoN], libcamera[:ID], pattern[:ORIENTATION] or file:PATH"
    if text == "v4l2" {
      self = .camera(path: nil)
    } else if text.hasPrefix("v4l2:") {
      let path = String(text.dropFirst(5))
      guard path.hasPrefix("/") else {
        throw CaptureError(.usage, "\(usage); \"\(path)\" is not a device path like /dev/video0")
      }
      self = .camera(path: path)
    } else if text == "pattern" {
      self = .pattern(held: nil)
    } else if text.hasPrefix("pattern:") {
      let name = String(text.dropFirst(8))
      guard let o = Orientation(rawValue: name), o != .undefined else {
        throw CaptureError(
          .usage, "\(usage); \"\(name)\" is not one of normal, left-up, bottom-up, right-up")
      }
      self = .pattern(held: o)
    } else if text.hasPrefix("file:"), text.count > 5 {
      self = .file(String(text.dropFirst(5)))
    } else if text == "libcamera" {
      self = .libcamera(id: nil)
    } else if text.hasPrefix("libcamera:"), text.count > 10 {
      self = .libcamera(id: String(text.dropFirst(10)))
    } else {
      throw CaptureError(.usage, "\(usage), not \"\(text)\"")
    }
  }

  /// The spelling accepted by `init(parsing:)`.
  public var description: String {
    switch self {
    case .camera(let path): return path.map { "v4l2:\($0)" } ?? "v4l2"
    case .pattern(let held): return held.map { "pattern:\($0.rawValue)" } ?? "pattern"
    case .file(let path): return "file:\(path)"
    case .libcamera(let id): return id.map { "libcamera:\($0)" } ?? "libcamera"
    }
  }
}

/// The built-in test pattern, as a camera in a device held in some orientation would see it.
///
/// The scene (the upright `TestPattern`) is turned counter-clockwise by the device's rotation
/// (clockwise for a front camera, `facesUser`) and the camera's mounting, into a sensor frame of the configured size, and delivered in the
/// configured pixel format (MJPEG frames are encoded like a camera's). A correct pipeline
/// therefore always produces an upright pattern.
public final class PatternSource: FrameSource {
  /// `pattern` or `pattern:ORIENTATION`.
  public let name: String
  /// Make "orientcam", Model "test pattern".
  public let identity = CameraIdentity(make: "orientcam", model: "test pattern")
  /// Unlimited.
  public var remainingFrames: Int? { nil }
  /// The sensor frame size.
  public let size: (width: Int, height: Int)
  /// The delivered format.
  public let format: PixelFormat
  /// The orientation the simulated device is held in; a session may change it between frames.
  public var heldOrientation: Orientation
  /// Whether `deviceHeld(_:)` changes `heldOrientation` (`pattern`: it follows what the
  /// capture believes), or it stays fixed (`pattern:ORIENTATION`).
  public let followsDevice: Bool
  /// The simulated mounting correction (clockwise degrees).
  public let sensorRotation: Int
  /// Whether it simulates a front camera (`--mirror`), which sees the scene turned the other
  /// way (see `RotationPlan`).
  public let facesUser: Bool
  private var frameNumber = 0
  private var encoder: JPEGEncoder?
  private var closed = false

  /// Creates the source.
  ///
  /// - Throws: `CaptureError.usage` if the format cannot have the size (odd YUYV widths).
  public init(
    name: String = "pattern", width: Int, height: Int, format: PixelFormat,
    heldOrientation: Orientation, followsDevice: Bool = true, sensorRotation: Int,
    facesUser: Bool = false
  ) throws(CaptureError) {
    guard format.supports(width: width, height: height) else {
      throw CaptureError(
        .usage,
        "the test pattern cannot deliver \(format.fourCC) at \(width)x\(height) "
          + "(YUYV needs an even width, NV12 even width and height)")
    }
    self.name = name
    self.size = (width, height)
    self.format = format
    self.heldOrientation = heldOrientation
    self.followsDevice = followsDevice
    self.sensorRotation = sensorRotation
    self.facesUser = facesUser
  }

  /// The picture without its frame number, as the sensor sees it for one orientation: drawn
  /// once per orientation, so a frame costs a copy and the new number.
  private struct Background {
    var orientation: Orientation
    var turn: ImageTransform
    var scene: (width: Int, height: Int)
    /// For JPEG formats: the picture to draw into and encode.
    var sensor: RGBImage?
    /// For raw formats: the packed frame to draw into.
    var packed: RawFrame?
  }
  private var background: Background?

  /// Renders the next frame (the frame number counts up from 1).
  public func nextFrame() throws(CaptureError) -> Frame {
    guard !closed else { throw CaptureError(.software, "\(name): frame requested after close") }
    frameNumber += 1
    let base = try currentBackground()
    // The number's cells, turned from the scene into the sensor frame like everything else.
    let cells = TestPattern.numberCells(
      frameNumber, width: base.scene.width, height: base.scene.height
    ).map { cell in
      let a = base.turn.inverse.map(
        x: cell.x0, y: cell.y0, width: base.scene.width, height: base.scene.height)
      let b = base.turn.inverse.map(
        x: cell.x1 - 1, y: cell.y1 - 1, width: base.scene.width, height: base.scene.height)
      return (min(a.x, b.x), min(a.y, b.y), max(a.x, b.x) + 1, max(a.y, b.y) + 1)
    }
    let content: Frame.Content
    if var packed = base.packed {
      for c in cells {
        packed.fill(x0: c.0, y0: c.1, x1: c.2, y1: c.3, with: TestPattern.Palette.black)
      }
      content = .raw(packed)
    } else if var sensor = base.sensor {
      for c in cells {
        sensor.fill(x0: c.0, y0: c.1, x1: c.2, y1: c.3, with: TestPattern.Palette.black)
      }
      do {
        let encoder = try self.encoder ?? JPEGEncoder()
        self.encoder = encoder
        content = .jpeg(try encoder.encode(sensor, quality: 90))
      } catch {
        throw CaptureError(.software, "\(name): cannot encode the pattern: \(error)")
      }
    } else {
      throw CaptureError(.software, "\(name): no background for \(format.fourCC)")
    }
    return Frame(
      content: content, width: size.width, height: size.height,
      monotonicNanoseconds: Clock.monotonicNanoseconds(),
      realtimeNanoseconds: Clock.realtimeNanoseconds(), label: "\(name) frame \(frameNumber)",
      formatName: format.fourCC.description)
  }

  private func currentBackground() throws(CaptureError) -> Background {
    if let background, background.orientation == heldOrientation { return background }
    // The turn that makes the sensor frame upright again, as RotationPlan works it out.
    let device = RotationPlan(orientation: heldOrientation, mirror: facesUser).deviceRotation
    let turn = ImageTransform(quarterTurns: (device + sensorRotation) / 90)
    // The scene has the size the upright photo will have; the sensor sees it turned back.
    let scene = turn.outputSize(width: size.width, height: size.height)
    let sensor = TestPattern.renderWithoutNumber(width: scene.width, height: scene.height)
      .transformed(turn.inverse)
    var packed: RawFrame?
    if !format.isCompressed {
      do { packed = try RawFrame(packing: sensor, as: format) } catch {
        throw CaptureError(.usage, "\(name): \(error)")
      }
    }
    let made = Background(
      orientation: heldOrientation, turn: turn, scene: scene,
      sensor: packed == nil ? sensor : nil, packed: packed)
    background = made
    return made
  }

  /// The sensor frame size.
  public var frameSize: (width: Int, height: Int)? { size }

  /// A fresh frame (the preview shows the pattern as a streaming camera would).
  public func previewFrame() throws(CaptureError) -> Frame? { try nextFrame() }

  /// Follows the device, unless the held orientation is fixed.
  public func deviceHeld(_ orientation: Orientation) {
    if followsDevice { heldOrientation = orientation }
  }

  /// Marks the source closed.
  public func close() { closed = true }
}
