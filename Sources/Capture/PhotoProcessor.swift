import Imaging
import JPEGKit

/// How the pixels of a photo were turned.
public enum RotationMethod: String, Sendable {
  /// No pixel change was needed (upright already, or `--rotate exif|none`).
  case unchanged
  /// TurboJPEG's exact lossless transform.
  case lossless
  /// Lossless, after dropping partial edge blocks (`--lossless trim`).
  case trimmed
  /// Decoded, turned and encoded again (`--lossless reencode`, the default for odd sizes).
  case reencoded
  /// A raw frame turned in pixel space before its only encoding.
  case pixels
}

/// A finished JPEG, ready to be written.
public struct ProcessedPhoto: Sendable {
  /// The file bytes.
  public var bytes: [UInt8]
  /// Width of the stored pixels.
  public var width: Int
  /// Height of the stored pixels.
  public var height: Int
  /// How the pixels were turned.
  public var method: RotationMethod
  /// The turn applied to the stored pixels.
  public var pixelTransform: ImageTransform
  /// The Orientation tag written (`nil`: none).
  public var exifOrientation: Int?
  /// Things the user should know (a re-encode or a trim and why).
  public var notes: [String]
}

/// Turns, tags and encodes frames: one instance serves many photos (a session reuses its
/// TurboJPEG handles).
public final class PhotoProcessor {
  /// JPEG quality for encoding raw frames and re-encoding.
  public var quality: Int
  /// What to do when a JPEG cannot be turned exactly.
  public var lossless: LosslessPolicy
  /// EXIF Software.
  public var software: String
  private let encoder: JPEGEncoder
  private let decoder: JPEGDecoder

  /// Creates a processor.
  ///
  /// - Throws: `CaptureError.software` if TurboJPEG cannot start.
  public init(quality: Int = 90, lossless: LosslessPolicy = .reencode, software: String)
    throws(CaptureError)
  {
    self.quality = quality
    self.lossless = lossless
    self.software = software
    do {
      encoder = try JPEGEncoder()
      decoder = try JPEGDecoder()
    } catch {
      throw CaptureError(.software, "cannot start TurboJPEG: \(error)")
    }
  }

  /// Makes the photo for `frame` under `plan`.
  ///
  /// - Throws: `CaptureError.badData` for a damaged JPEG frame, or when `--lossless strict`
  ///   forbids the only way to turn it.
  public func process(_ frame: Frame, plan: RotationPlan, identity: CameraIdentity)
    throws(CaptureError) -> ProcessedPhoto
  {
    let transform = plan.pixelTransform(stored: frame.storedTransform)
    var notes: [String] = []
    var method: RotationMethod
    var jpeg: [UInt8]
    do {
      switch frame.content {
      case .raw(let raw):
        if let planes = raw.yuvPlanes() {
          // YUYV and NV12 go to the encoder as YCbCr planes, turned as planes: no RGB round
          // trip, and the camera's chroma resolution is kept.
          jpeg = try encoder.encode(planes.transformed(transform), quality: quality)
        } else {
          jpeg = try encoder.encode(raw.rgb().transformed(transform), quality: quality)
        }
        method = transform == .identity ? .unchanged : .pixels
      case .jpeg(let source):
        (jpeg, method) = try turnJPEG(source, transform, label: frame.label, notes: &notes)
      }
    } catch let error as CaptureError {
      throw error
    } catch let error as JPEGError {
      throw CaptureError(error, about: frame.label)
    } catch {
      throw CaptureError(.software, "\(frame.label): \(error)")
    }
    let info: JPEGInfo
    do { info = try decoder.header(jpeg) } catch { throw CaptureError(error, about: frame.label) }
    var metadata = EXIFMetadata(
      orientation: plan.exifOrientation(stored: frame.storedTransform), pixelWidth: info.width,
      pixelHeight: info.height, make: identity.make, model: identity.model, software: software)
    metadata.setCaptureTime(realtimeNanoseconds: frame.realtimeNanoseconds)
    do {
      jpeg = try JPEGSegments.replacingEXIF(in: jpeg, with: try EXIF.segment(metadata))
    } catch {
      throw CaptureError(error, about: frame.label)
    }
    return ProcessedPhoto(
      bytes: jpeg, width: info.width, height: info.height, method: method,
      pixelTransform: transform, exifOrientation: metadata.orientation, notes: notes)
  }

  private func turnJPEG(
    _ source: [UInt8], _ transform: ImageTransform, label: String, notes: inout [String]
  ) throws -> ([UInt8], RotationMethod) {
    let info = try decoder.header(source)
    guard transform != .identity else {
      // The pixels stay as they are, but the data still goes through an identity transform:
      // it reads every block (so a damaged file is refused, not passed on) and writes complete
      // Huffman tables (MJPEG cameras often leave them out, and most viewers then fail). It
      // costs an entropy decode and encode, no DCT.
      return (try LosslessJPEG.transform(source, .identity, edges: .exact), .unchanged)
    }
    guard let subsampling = info.subsampling else {
      notes.append("\(label): unusual chroma sampling; re-encoded to turn it")
      return (try reencode(source, transform), .reencoded)
    }
    if LosslessJPEG.isExact(
      transform, width: info.width, height: info.height, subsampling: subsampling)
    {
      return (try LosslessJPEG.transform(source, transform, edges: .exact), .lossless)
    }
    let block = "\(subsampling.mcuWidth)x\(subsampling.mcuHeight)"
    let why =
      "\(info.width)x\(info.height) is not a multiple of the \(block) blocks of this "
      + "\(subsampling) JPEG, so \(transform) cannot move every pixel losslessly"
    switch lossless {
    case .strict:
      throw CaptureError(
        .badData,
        "\(label): \(why); refused by --lossless strict (use --lossless trim to drop the "
          + "partial edge blocks, or --lossless reencode to keep every pixel)")
    case .trim:
      let size = LosslessJPEG.trimmedSize(
        transform, width: info.width, height: info.height, subsampling: subsampling)
      notes.append("\(label): \(why): trimmed to \(size.width)x\(size.height) (--lossless trim)")
      return (try LosslessJPEG.transform(source, transform, edges: .trim), .trimmed)
    case .reencode:
      notes.append("\(label): \(why): re-encoded at quality \(quality) (--lossless reencode)")
      return (try reencode(source, transform), .reencoded)
    }
  }

  private func reencode(_ source: [UInt8], _ transform: ImageTransform) throws -> [UInt8] {
    let info = try decoder.header(source)
    let rgb = try decoder.decode(source).transformed(transform)
    return try encoder.encode(rgb, quality: quality, subsampling: info.subsampling ?? .s420)
  }
}
