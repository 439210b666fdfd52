import Glibc
import JSON
import TestSupport

/// Public-domain photographs from Debian packages, read where the packages install them
/// (scripts/deps.sh installs python3-skimage and python-matplotlib-data).
enum Photos {
  static let skimage = "/usr/lib/python3/dist-packages/skimage/data"
  /// Eileen Collins, NASA (scikit-image's astronaut.png).
  static let astronaut = "\(skimage)/astronaut.png"
  /// Grace Hopper, U.S. Navy (matplotlib's sample data).
  static let hopper = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"
  /// No face: a coffee cup, a rocket, a cat, and a man behind a camera seen from the side (a
  /// profile no frontal detector should call upright).
  static let noFace = [
    "\(skimage)/coffee.png", "\(skimage)/rocket.jpg", "\(skimage)/chelsea.png",
    "\(skimage)/camera.png",
  ]
  static var available: Bool {
    ([astronaut, hopper] + noFace).allSatisfy { access($0, R_OK) == 0 }
      && access("/usr/bin/python3", X_OK) == 0
  }

  /// A file camera (`file:DIR`) whose one frame is `photo`, upright, in `directory`.
  static func camera(_ photo: String, in directory: TemporaryDirectory) throws -> String {
    let folder = directory.file("camera")
    mkdir(folder, 0o755)
    try turned(photo, degrees: 0, to: folder + "/0001.jpg", logs: directory)
    return "file:\(folder)"
  }

  /// Writes `source` turned clockwise by `degrees` (and mirrored left-right first when asked)
  /// to `target`, with Pillow (python3-pil): a tool of its own, not orientd's code.
  static func turned(
    _ source: String, degrees: Int, mirrored: Bool = false, to target: String,
    logs: TemporaryDirectory
  ) throws {
    // Pillow's ROTATE_90 is counter-clockwise.
    let transpose =
      [
        0: "", 90: ".transpose(Image.ROTATE_270)", 180: ".transpose(Image.ROTATE_180)",
        270: ".transpose(Image.ROTATE_90)",
      ][degrees] ?? ""
    let mirror = mirrored ? ".transpose(Image.FLIP_LEFT_RIGHT)" : ""
    let script =
      "import sys; from PIL import Image; "
      + "Image.open(sys.argv[1]).convert('RGB')\(mirror)\(transpose).save(sys.argv[2], quality=92)"
    // Pillow's own output goes elsewhere: a camera directory must hold only frames.
    let result = try ChildProcess.run(
      ["/usr/bin/python3", "-c", script, source, target], outputDirectory: logs.path)
    guard result.status == 0 else { throw TestFailure("Pillow failed: \(result.stderr)") }
  }
}

/// Runs the built orientd-face.
func orientdFace(_ arguments: [String], in directory: TemporaryDirectory, timeout: Double = 120)
  throws -> (status: Int32, stdout: String, stderr: String)
{
  try ChildProcess.run(
    [try Built.executable("orientd-face")] + arguments, outputDirectory: directory.path,
    timeout: timeout)
}

/// The JSON objects of a command's output, one per line.
func jsonLines(_ text: String) throws -> [JSONValue] {
  try text.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
}
