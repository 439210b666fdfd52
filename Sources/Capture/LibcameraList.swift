import Glibc
import Imaging
import JSON
import LibcameraKit
import SystemKit
import V4L2Kit

/// What `orientcam list` shows of libcamera: its cameras, and the V4L2 nodes behind them so
/// that no camera is listed twice (once through libcamera, once through its nodes).
///
/// libcamera 0.0.3 does not say which nodes a camera uses, but its pipeline handlers keep the
/// video nodes of the cameras they created open for as long as the camera manager runs: the
/// `/dev/videoN` this process holds, grouped by the device they hang off in sysfs (a media
/// device's nodes share it), are the nodes libcamera drives.
public struct LibcameraListing: Sendable {
  /// `CameraManager::version()`, when libcamera started.
  public var version: String?
  /// The cameras.
  public var cameras: [LibcameraCameraInfo]
  /// The V4L2 nodes of each camera (by `LibcameraCameraInfo.index`).
  public var nodes: [Int: [String]]
  /// Nodes libcamera drives that could not be told apart per camera.
  public var sharedNodes: [String]
  /// Why libcamera could not be asked.
  public var failure: String?

  /// Creates a listing.
  public init(
    version: String? = nil, cameras: [LibcameraCameraInfo] = [], nodes: [Int: [String]] = [:],
    sharedNodes: [String] = [], failure: String? = nil
  ) {
    self.version = version
    self.cameras = cameras
    self.nodes = nodes
    self.sharedNodes = sharedNodes
    self.failure = failure
  }

  /// Every node libcamera drives: the V4L2 list leaves them out.
  public var drivenNodes: Set<String> { Set(nodes.values.joined()).union(sharedNodes) }

  /// Starts libcamera, reads its cameras and finds their nodes; a libcamera that cannot start
  /// gives an empty listing with `failure` set.
  public static func gather(
    devDirectory: String = "/dev", sysfsRoot: String = "/sys", verbose: Bool = false
  ) -> LibcameraListing {
    LibcameraManager.routeLog(verbose: verbose)
    let manager: LibcameraManager
    do { manager = try LibcameraManager() } catch {
      return LibcameraListing(failure: error.message)
    }
    let held = heldNodes(fdDirectory: "/proc/self/fd")
    let groups = group(
      CameraDiscovery.devicePaths(devDirectory: devDirectory), held: held,
      device: { sysfsDevice(ofNode: $0, sysfsRoot: sysfsRoot) })
    let (nodes, shared) = attribute(
      cameraIDs: manager.cameras.map(\.id), groups: groups, sysfsRoot: sysfsRoot)
    return LibcameraListing(
      version: manager.version, cameras: manager.cameras, nodes: nodes, sharedNodes: shared)
  }

  /// The `/dev/videoN` nodes this process has open (`/proc/self/fd`).
  static func heldNodes(fdDirectory: String) -> Set<String> {
    var held: Set<String> = []
    for entry in Sysfs.list(fdDirectory) {
      var buffer = [CChar](repeating: 0, count: 256)
      let n = readlink("\(fdDirectory)/\(entry)", &buffer, buffer.count - 1)
      guard n > 0 else { continue }
      let target = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
      if let name = target.split(separator: "/").last, name.hasPrefix("video"),
        Int(name.dropFirst(5)) != nil
      {
        held.insert(target)
      }
    }
    return held
  }

  /// The sysfs device a video node hangs off (`/sys/class/video4linux/videoN/device`,
  /// resolved), which its media device shares.
  static func sysfsDevice(ofNode path: String, sysfsRoot: String) -> String? {
    guard let name = path.split(separator: "/").last,
      let resolved = realpath("\(sysfsRoot)/class/video4linux/\(name)/device", nil)
    else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
  }

  /// The nodes grouped by their sysfs device, only the groups with a node libcamera holds.
  static func group(_ nodes: [String], held: Set<String>, device: (String) -> String?)
    -> [String: [String]]
  {
    var groups: [String: [String]] = [:]
    for node in nodes {
      if let key = device(node) { groups[key, default: []].append(node) }
    }
    return groups.filter { !held.isDisjoint(with: $0.value) }
  }

  /// Which camera each group of nodes belongs to, by its id: libcamera builds the ids of
  /// virtual sensors from their sysfs device (`platform/vimc.0 Sensor B`) and of UVC cameras
  /// from the USB port without the bus (`...-2.4:1.0-046d:0825` for `3-2.4:1.0`). A group no id
  /// names goes to the only camera, or is shared when there are several (sensors described in
  /// firmware behind one ISP).
  ///
  /// - Returns: the nodes per camera index, and those not told apart.
  public static func attribute(
    cameraIDs: [String], groups: [String: [String]], sysfsRoot: String = "/sys"
  ) -> (perCamera: [Int: [String]], shared: [String]) {
    var perCamera: [Int: [String]] = [:]
    var shared: [String] = []
    for (device, nodes) in groups.sorted(by: { $0.key < $1.key }) {
      var keys: [String] = []
      let prefix = "\(sysfsRoot)/devices/"
      if device.hasPrefix(prefix) { keys.append(String(device.dropFirst(prefix.count)) + " ") }
      if let base = device.split(separator: "/").last, let dash = base.firstIndex(of: "-") {
        keys.append("-" + base[base.index(after: dash)...] + "-")
      }
      let named = cameraIDs.indices.filter { index in
        keys.contains { cameraIDs[index].contains($0) }
      }
      let owners = named.isEmpty && cameraIDs.count == 1 ? [0] : named
      if owners.isEmpty {
        shared += nodes
      } else {
        for owner in owners { perCamera[owner, default: []] += nodes }
      }
    }
    return (perCamera, shared)
  }
}

extension ListCommand {
  /// The libcamera cameras as text, one block each, and the nodes libcamera drives.
  public static func text(_ listing: LibcameraListing) -> String {
    var out = ""
    for camera in listing.cameras {
      let version = listing.version.map { " \($0)" } ?? ""
      out += "libcamera:\(camera.id): \(camera.model ?? "camera") (libcamera\(version))"
      out += camera.location.map { ", \($0.name) camera" } ?? ""
      out += "\n  largest: \(camera.largestSize.map(\.description) ?? "unknown")"
      if let rotation = camera.rotation {
        out += ", sensor rotation \(rotation) degrees counter-clockwise"
      }
      out += "\n"
      for format in camera.formats {
        let layout = format.pixelFormat.map { " (\($0.rawValue))" } ?? " (not usable by orientcam)"
        out += "  \(format.name)\(layout): \(format.sizeSummary)\n"
      }
      if let nodes = listing.nodes[camera.index], !nodes.isEmpty {
        out += "  V4L2 nodes: \(nodes.joined(separator: ", ")) (driven by libcamera)\n"
      }
    }
    if !listing.sharedNodes.isEmpty {
      out += "libcamera drives \(listing.sharedNodes.joined(separator: ", ")) for its cameras\n"
    }
    return out
  }

  /// The libcamera cameras as JSON objects, the same keys as a V4L2 camera's where they mean
  /// the same (`position`, `sensor_rotation`: `properties::Rotation`, counter-clockwise).
  public static func json(_ listing: LibcameraListing) -> [JSONValue] {
    listing.cameras.map { camera in
      .object([
        ("source", .string("libcamera:\(camera.id)")),
        ("id", .string(camera.id)),
        ("model", camera.model.map { .string($0) } ?? .null),
        ("libcamera", listing.version.map { .string($0) } ?? .null),
        ("position", camera.location.map { .string($0.name) } ?? .null),
        ("position_source", camera.location.map { _ in .string("properties::Location") } ?? .null),
        ("sensor_rotation", camera.rotation.map { .number(Double($0)) } ?? .null),
        ("largest", camera.largestSize.map { .string($0.description) } ?? .null),
        (
          "formats",
          .array(
            camera.formats.map { format in
              // A range as V4L2's stepwise sizes are given; libcamera's list of common sizes
              // within it would say nothing more.
              var sizes = format.sizes.map { JSONValue.string($0.description) }
              if let range = format.range, format.isRange {
                sizes = [.string("\(range.min)-\(range.max)")]
              } else if sizes.isEmpty, let range = format.range {
                sizes = [.string(range.max.description)]
              }
              return .object([
                ("fourcc", .string(FourCC(rawValue: format.fourCC).description)),
                ("description", .string(format.name)),
                ("usable", .bool(format.pixelFormat != nil)),
                ("format", format.pixelFormat.map { .string($0.rawValue) } ?? .null),
                ("largest", format.largest.map { .string($0.description) } ?? .null),
                ("sizes", .array(sizes)),
              ])
            })
        ),
        ("v4l2_devices", .array((listing.nodes[camera.index] ?? []).map { .string($0) })),
      ])
    }
  }
}
