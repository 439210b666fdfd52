import Capture
import EvdevKit
import V4L2Kit

/// `orientcam session` options: every capture option (source, orientation, rotation, output)
/// plus the session's own.
public struct SessionOptions: Equatable, Sendable {
  /// The shared capture options; `--count` means "end after this many photos" here.
  public var capture = CaptureOptions()
  /// `--burst N`: photos per trigger (default 1).
  public var burst = 1
  /// `--shutter-keys a,b`: key names as given (`volumeup`).
  public var shutterKeys: [String] = []
  /// The key codes for `shutterKeys`.
  public var shutterKeyCodes: [UInt32] = []
  /// `--shutter-device PATH` (repeatable): use these devices instead of scanning.
  public var shutterDevices: [String]?
  /// `--headless`: no preview window.
  public var headless = false
  /// `--overlay FILE` (default: the built-in overlay).
  public var overlayPath: String?
  /// `--preview-size WxH` (default: the frame size, scaled down to fit 960x960).
  public var previewSize: FrameSize?
  /// `--fullscreen`.
  public var fullscreen = false
  /// `--fps N`: preview refresh and input polling rate (default 15).
  public var fps = 15

  /// Defaults.
  public init() {}

  /// Parses the arguments after `session`.
  ///
  /// - Throws: `CaptureError.usage` for unknown options, bad values and conflicts.
  public init(arguments: [String]) throws(CaptureError) {
    var scanner = ArgumentScanner(arguments)
    while let token = scanner.next() {
      guard case .option(let name, let inline) = token else {
        throw ArgumentScanner.reject(token, command: "session")
      }
      func value() throws(CaptureError) -> String { try scanner.value(for: name, inline: inline) }
      func flag() throws(CaptureError) {
        if inline != nil { throw CaptureError(.usage, "\(name) takes no value") }
      }
      switch name {
      case "--burst": burst = try SessionOptions.integer(name, try value(), in: 1...100)
      case "--shutter-keys":
        let text = try value()
        shutterKeys = text.split(separator: ",").map(String.init)
        guard !shutterKeys.isEmpty else {
          throw CaptureError(.usage, "--shutter-keys needs key names such as volumeup,volumedown")
        }
        shutterKeyCodes = []
        for key in shutterKeys {
          guard let code = KeyCode.named(key) else {
            throw CaptureError(
              .usage,
              "--shutter-keys: unknown key \"\(key)\"; use names like volumeup, volumedown, "
                + "camera (the KEY_ names of linux/input-event-codes.h)")
          }
          shutterKeyCodes.append(code)
        }
      case "--shutter-device":
        let path = try value()
        shutterDevices = (shutterDevices ?? []) + [path]
      case "--headless":
        try flag()
        headless = true
      case "--overlay": overlayPath = try value()
      case "--preview-size":
        let text = try value()
        guard let size = FrameSize(parsing: text), size.width >= 64, size.height >= 64,
          size.width <= 8192, size.height <= 8192
        else {
          throw CaptureError(
            .usage, "--preview-size takes WIDTHxHEIGHT from 64x64 to 8192x8192, not \"\(text)\"")
        }
        previewSize = size
      case "--fullscreen":
        try flag()
        fullscreen = true
      case "--fps": fps = try SessionOptions.integer(name, try value(), in: 1...120)
      default:
        guard try capture.apply(name, inline: inline, scanner: &scanner) else {
          throw ArgumentScanner.reject(token, command: "session")
        }
      }
    }
    try capture.validate()
    if headless && fullscreen {
      throw CaptureError(.usage, "--fullscreen needs the preview window; drop --headless")
    }
    if shutterDevices != nil && shutterKeys.isEmpty {
      throw CaptureError(.usage, "--shutter-device needs --shutter-keys (which keys to take)")
    }
  }

  static func integer(_ name: String, _ text: String, in range: ClosedRange<Int>)
    throws(CaptureError) -> Int
  {
    guard let n = Int(text), range.contains(n) else {
      throw CaptureError(
        .usage,
        "\(name) takes a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(text)\""
      )
    }
    return n
  }
}
