import CLinuxShims
import Glibc
import SystemKit

/// Finds cameras and describes them.
public enum CameraDiscovery {
  /// The `/dev/videoN` nodes in numeric order (`video2` before `video10`).
  public static func devicePaths(devDirectory: String = "/dev") -> [String] {
    Sysfs.list(devDirectory)
      .compactMap { name -> (Int, String)? in
        guard name.hasPrefix("video"), let n = Int(name.dropFirst(5)) else { return nil }
        return (n, "\(devDirectory)/\(name)")
      }
      .sorted { $0.0 < $1.0 }
      .map(\.1)
  }

  /// Queries a device through the seam: capabilities, formats with sizes, and the camera
  /// controls that say where it faces and how it is mounted.
  ///
  /// - Parameter sysfsPosition: a position found by the caller in sysfs; the V4L2 control
  ///   wins when both exist.
  public static func describe(
    _ device: some VideoDeviceControl,
    sysfsPosition: (position: CameraPosition, source: String)? = nil
  ) throws(V4L2Error) -> DeviceDescription {
    let capability = try device.queryCapability()
    guard capability.isCamera else {
      throw V4L2Error(
        .notACamera, path: device.path,
        "\(capability.card) (\(capability.driver)) is not a streaming video capture device "
          + "(a metadata or output node?); run `orientcam list` to see the cameras")
    }
    let formats = try device.enumerateFormats()
    var position = sysfsPosition?.position
    var source = sysfsPosition?.source
    if let value = device.controlValue(orient_V4L2_CID_CAMERA_ORIENTATION) {
      let fromControl: CameraPosition? =
        switch value {
        case 0: .front
        case 1: .back
        case 2: .external
        default: nil
        }
      if let fromControl {
        position = fromControl
        source = "V4L2_CID_CAMERA_ORIENTATION"
      }
    }
    let rotation = device.controlValue(orient_V4L2_CID_CAMERA_SENSOR_ROTATION).map { Int($0) }
    return DeviceDescription(
      path: device.path, capability: capability, formats: formats, position: position,
      positionSource: source, sensorRotation: rotation)
  }

  /// The panel a camera is on according to the firmware (ACPI _PLD, exported by the kernel as
  /// `physical_location/panel` on the device or one of its parents), if it says front or back.
  ///
  /// - Parameters:
  ///   - path: the device node, e.g. `/dev/video0`.
  ///   - sysfsRoot: `/sys`, or a test tree.
  public static func firmwarePosition(ofDevice path: String, sysfsRoot: String = "/sys")
    -> (position: CameraPosition, source: String)?
  {
    guard let name = path.split(separator: "/").last else { return nil }
    var directory = "\(sysfsRoot)/class/video4linux/\(name)/device"
    // A USB camera's _PLD sits on the USB port device, a few levels up from the interface.
    for _ in 0..<4 {
      let file = "\(directory)/physical_location/panel"
      if let panel = Sysfs.readIfPresent(file) {
        switch panel {
        case "front": return (.front, file)
        case "back": return (.back, file)
        default: return nil
        }
      }
      directory += "/.."
    }
    return nil
  }

  /// Opens, describes and closes one device node.
  public static func describe(path: String, sysfsRoot: String = "/sys") throws(V4L2Error)
    -> DeviceDescription
  {
    let device = try V4L2Device(path: path)
    defer { device.close() }
    return try describe(
      device, sysfsPosition: firmwarePosition(ofDevice: path, sysfsRoot: sysfsRoot))
  }

  /// Every capture device that can be opened and described, plus the nodes that could not
  /// (with the reason; metadata nodes and other non-cameras are left out silently).
  public static func cameras(devDirectory: String = "/dev") -> (
    cameras: [DeviceDescription], failures: [V4L2Error]
  ) {
    var cameras: [DeviceDescription] = []
    var failures: [V4L2Error] = []
    for path in devicePaths(devDirectory: devDirectory) {
      do {
        cameras.append(try describe(path: path))
      } catch {
        if error.kind != .notACamera { failures.append(error) }
      }
    }
    return (cameras, failures)
  }
}
