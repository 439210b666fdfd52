import Imaging

/// Chooses a capture format and size, and checks cameras against a minimum resolution.
///
/// Pure decisions over `DeviceDescription`, plus `negotiate`, which talks to a device only
/// through the `VideoDeviceControl` seam.
public enum Negotiation {
  /// A format and size to ask the driver for.
  public struct Choice: Equatable, Sendable {
    /// The format.
    public var format: PixelFormat
    /// The size.
    public var size: FrameSize

    /// Creates a choice.
    public init(format: PixelFormat, size: FrameSize) {
      self.format = format
      self.size = size
    }
  }

  /// Picks the format and size to capture with.
  ///
  /// Without `resolution`, the largest size any usable format offers wins (photos want
  /// pixels); among the formats offering it, the earliest in `preferences` (MJPEG, then YUYV,
  /// NV12, RGB by default). With `resolution`, the most preferred format offering exactly that
  /// size.
  ///
  /// - Throws: `V4L2Error` `.unsupported` naming what the camera offers.
  public static func choose(
    _ device: DeviceDescription, preferences: [PixelFormat] = PixelFormat.preference,
    resolution: FrameSize? = nil
  ) throws(V4L2Error) -> Choice {
    let candidates = preferences.compactMap { format in
      device.formats.first { $0.fourCC == format.fourCC }.map { (format, $0) }
    }
    guard !candidates.isEmpty else {
      let offered = device.formats.map { "\($0.fourCC) (\($0.name))" }.joined(separator: ", ")
      let wanted = preferences.map { $0.fourCC.description }.joined(separator: ", ")
      throw V4L2Error(
        .unsupported, path: device.path,
        "\(device.capability.card) offers \(offered.isEmpty ? "no formats" : offered); "
          + "orientcam needs one of \(wanted)")
    }
    if let resolution {
      for (format, description) in candidates
      where description.sizes.contains(resolution)
        && format.supports(width: resolution.width, height: resolution.height)
      {
        return Choice(format: format, size: resolution)
      }
      let offered = candidates.map { "\($0.0.fourCC): \($0.1.sizes.summary)" }
        .joined(separator: "; ")
      throw V4L2Error(
        .unsupported, path: device.path,
        "\(device.capability.card) does not offer \(resolution) (offers \(offered)); "
          + "choose one of these with --resolution, or leave it out for the largest")
    }
    var best: Choice?
    for (format, description) in candidates {
      guard let size = description.sizes.largest,
        format.supports(width: size.width, height: size.height)
      else { continue }
      // Earlier candidates are preferred, so only a strictly larger size replaces them.
      if best.map({ size > $0.size }) ?? true { best = Choice(format: format, size: size) }
    }
    guard let best else {
      throw V4L2Error(
        .unsupported, path: device.path, "\(device.capability.card) reports no frame sizes")
    }
    return best
  }

  /// Chooses and sets the format (`VIDIOC_S_FMT`), and checks what the driver made of it.
  ///
  /// A driver may adjust the size; that is accepted (the result says what it is) unless the
  /// user asked for an exact `resolution`. A driver that switches to a format orientcam cannot
  /// read is an error.
  ///
  /// - Returns: the active format and the orientcam pixel format it stands for.
  public static func negotiate(
    _ device: some VideoDeviceControl, description: DeviceDescription,
    preferences: [PixelFormat] = PixelFormat.preference, resolution: FrameSize? = nil
  ) throws(V4L2Error) -> (format: PixelFormat, active: ActiveFormat) {
    let choice = try choose(description, preferences: preferences, resolution: resolution)
    let active = try device.setFormat(
      choice.format.fourCC, width: choice.size.width, height: choice.size.height)
    guard let format = PixelFormat(fourCC: active.fourCC) else {
      throw V4L2Error(
        .unsupported, path: device.path,
        "asked for \(choice.format.fourCC) but the driver chose \(active.fourCC), "
          + "which orientcam cannot read")
    }
    if let resolution, active.size != resolution {
      throw V4L2Error(
        .unsupported, path: device.path,
        "asked for \(resolution) but the driver chose \(active.size)")
    }
    guard format.supports(width: active.width, height: active.height),
      format.isCompressed || active.bytesPerLine >= format.minimumBytesPerLine(width: active.width)
    else {
      throw V4L2Error(
        .unsupported, path: device.path,
        "the driver set an unusable \(active.fourCC) format \(active.size) with "
          + "bytesperline \(active.bytesPerLine)")
    }
    return (format, active)
  }

  /// Whether a camera can take photos of at least `minimum` (in either orientation).
  public static func meets(_ device: DeviceDescription, minimum: FrameSize) -> Bool {
    device.usableFormats.contains { $0.sizes.largest.map { $0.covers(minimum) } ?? false }
  }

  /// The front-camera guard: refuses a camera whose largest usable size is below `minimum`,
  /// naming it, its best size, and the cameras among `others` that qualify.
  ///
  /// - Throws: `V4L2Error` `.unsupported` when the camera is too small.
  public static func requireMinimum(
    _ device: DeviceDescription, minimum: FrameSize, others: [DeviceDescription]
  ) throws(V4L2Error) {
    guard !meets(device, minimum: minimum) else { return }
    let best = device.largestSize.map(\.description) ?? "no usable size"
    let position = device.position.map { " \($0.rawValue)" } ?? ""
    let qualifying = others.filter { $0.path != device.path && meets($0, minimum: minimum) }
    let advice: String
    if qualifying.isEmpty {
      advice = "no other camera reaches it"
    } else {
      let names = qualifying.map { d in
        "--source v4l2:\(d.path) (\(d.capability.card), \(d.largestSize.map(\.description) ?? "?"))"
      }
      advice = "cameras that qualify: " + names.joined(separator: ", ")
    }
    throw V4L2Error(
      .unsupported, path: device.path,
      "refusing the\(position) camera \(device.capability.card): its best resolution is \(best), "
        + "below --min-resolution \(minimum); \(advice)")
  }
}
