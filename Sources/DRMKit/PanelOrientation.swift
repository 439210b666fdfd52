import CDRM
import Glibc
import SystemKit

/// How a panel is mounted in the device, as the kernel's DRM connector property "panel
/// orientation" says (`DRM_MODE_PANEL_ORIENTATION_*`; set from firmware quirks, the device
/// tree, or `video=CONNECTOR:panel_orientation=...` on the kernel command line).
///
/// The raw values are the property's enum names. `leftSideUp` means the panel's top edge is
/// at the left side of the casing: the picture must be turned as for a device held left edge
/// up (mutter maps it to `META_MONITOR_TRANSFORM_90`, as it maps the sensor's `left-up`).
public enum PanelOrientation: String, Sendable, CaseIterable {
  /// `DRM_MODE_PANEL_ORIENTATION_NORMAL`.
  case normal = "Normal"
  /// `DRM_MODE_PANEL_ORIENTATION_BOTTOM_UP`.
  case upsideDown = "Upside Down"
  /// `DRM_MODE_PANEL_ORIENTATION_LEFT_UP`.
  case leftSideUp = "Left Side Up"
  /// `DRM_MODE_PANEL_ORIENTATION_RIGHT_UP`.
  case rightSideUp = "Right Side Up"
}

/// One KMS connector of a DRM card, as libdrm reports it.
public struct DRMConnector: Equatable, Sendable {
  /// The kernel's name: connector type and index, `eDP-1`, `DSI-1`, `Virtual-1`: the name
  /// wlroots compositors and Xorg's modesetting driver give the output.
  public var name: String
  /// The card node it belongs to (`/dev/dri/card0`).
  public var card: String
  /// Its "panel orientation" property, or `nil` when it has none (external outputs, and
  /// panels whose orientation the kernel does not know: it leaves the property off then).
  public var panelOrientation: PanelOrientation?

  /// Creates a connector description.
  public init(name: String, card: String, panelOrientation: PanelOrientation?) {
    self.name = name
    self.card = card
    self.panelOrientation = panelOrientation
  }
}

/// Reads connectors and their properties from the DRM cards (`/dev/dri/cardN`) with libdrm.
///
/// Only reading: no DRM master is taken, and `drmModeGetConnectorCurrent` does not make the
/// driver probe the outputs again.
public enum DRMConnectors {
  /// Every connector of every card in `directory`.
  ///
  /// - Throws: `SystemError` when a card exists but cannot be opened (no permission: the
  ///   desktop user normally gets access through logind's `uaccess` tag) or is not a KMS
  ///   device; cards that open are read even if another one fails first.
  public static func list(directory: String = "/dev/dri") throws(SystemError) -> [DRMConnector] {
    var found: [DRMConnector] = []
    var firstError: SystemError?
    for name in Sysfs.list(directory) where name.hasPrefix("card") {
      let path = "\(directory)/\(name)"
      do {
        found += try connectors(card: path)
      } catch {
        firstError = firstError ?? error
      }
    }
    if found.isEmpty, let firstError { throw firstError }
    return found
  }

  /// The connector named `output` (exactly, else ignoring dashes: Xorg's intel driver says
  /// `eDP1` for the kernel's `eDP-1`), or `nil`.
  public static func connector(named output: String, in connectors: [DRMConnector])
    -> DRMConnector?
  {
    if let exact = connectors.first(where: { $0.name == output }) { return exact }
    let bare = output.filter { $0 != "-" }
    return connectors.first { $0.name.filter { $0 != "-" } == bare }
  }

  /// The connectors of one card.
  static func connectors(card path: String) throws(SystemError) -> [DRMConnector] {
    let fd = try FileDescriptor(path: path, options: .readWrite)
    guard let resources = drmModeGetResources(fd.rawValue) else {
      // Not a KMS device (a render-only card), or the ioctl failed.
      throw SystemError(
        errno: errno == 0 ? EOPNOTSUPP : errno, operation: "drmModeGetResources", path: path)
    }
    defer { drmModeFreeResources(resources) }
    var result: [DRMConnector] = []
    for index in 0..<Int(resources.pointee.count_connectors) {
      let id = resources.pointee.connectors[index]
      guard let connector = drmModeGetConnectorCurrent(fd.rawValue, id) else { continue }
      let type = connector.pointee.connector_type
      let typeIndex = connector.pointee.connector_type_id
      drmModeFreeConnector(connector)
      let typeName = drmModeGetConnectorTypeName(type).map { String(cString: $0) } ?? "Unknown"
      result.append(
        DRMConnector(
          name: "\(typeName)-\(typeIndex)", card: path,
          panelOrientation: panelOrientation(fd: fd.rawValue, connector: id)))
    }
    return result
  }

  /// The enum name of the connector's "panel orientation" property, if it has one.
  static func panelOrientation(fd: Int32, connector: UInt32) -> PanelOrientation? {
    guard
      let properties = drmModeObjectGetProperties(fd, connector, UInt32(DRM_MODE_OBJECT_CONNECTOR))
    else { return nil }
    defer { drmModeFreeObjectProperties(properties) }
    for index in 0..<Int(properties.pointee.count_props) {
      guard let property = drmModeGetProperty(fd, properties.pointee.props[index]) else {
        continue
      }
      defer { drmModeFreeProperty(property) }
      guard cString(property.pointee.name) == "panel orientation" else { continue }
      let value = properties.pointee.prop_values[index]
      for e in 0..<Int(property.pointee.count_enums) {
        let entry = property.pointee.enums[e]
        if entry.value == value { return PanelOrientation(rawValue: cString(entry.name)) }
      }
      return nil
    }
    return nil
  }

  /// A fixed-size C `char[N]` field (imported as a tuple) as a string.
  private static func cString<T>(_ field: T) -> String {
    withUnsafeBytes(of: field) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
  }
}
