import CX11
import CXInput
import CXRandR
import Glibc
import ScreenRotation

/// The error code of the last X protocol error (0: none), set by `recordError`: Xlib's default
/// handler would end the process.
nonisolated(unsafe) private var lastXError: UInt8 = 0

/// X11: the output's rotation through RandR 1.2 (`XRRSetCrtcConfig`, the screen resized to
/// fit, as xrandr does) and every touchscreen, pen and eraser's XInput2 "Coordinate
/// Transformation Matrix".
///
/// Touch devices are the XI2 slave pointers whose "Device Node" is one of the udev-found
/// touch/tablet nodes (a tablet's pen and eraser devices share the node), or that are named
/// with `--touch` (`XInputSelection`). Their matrices are set first and put back if turning the
/// output fails. xf86-input-libinput makes a tablet tool's device only when the tool first
/// comes into proximity: the backend listens for XInput hierarchy changes (`TouchHotplugging`)
/// so that `orientd rotate` gives such a device the current matrix.
public final class X11Backend: TouchHotplugging {
  /// `x11`.
  public let name = "x11"
  private let display: OpaquePointer
  private let root: Window
  private let displayName: String
  /// XInput's major opcode: its events are `GenericEvent`s carrying it.
  private var xiOpcode: Int32 = 0

  /// Opens `displayName` (`$DISPLAY`) and checks for RandR 1.2 and XInput 2.
  ///
  /// - Throws: `RotateError` (69) when the display or an extension is missing.
  public init(displayName: String?) throws(RotateError) {
    let name = displayName ?? ""
    self.displayName = name
    guard let display = XOpenDisplay(displayName) else {
      throw RotateError(
        .unavailable, "cannot open the X display '\(name)' ($DISPLAY); is an X server running?")
    }
    self.display = display
    _ = XSetErrorHandler { _, event in
      lastXError = event?.pointee.error_code ?? 1
      return 0
    }
    root = XDefaultRootWindow(display)
    var major: Int32 = 0
    var minor: Int32 = 0
    guard XRRQueryVersion(display, &major, &minor) != 0, major > 1 || (major == 1 && minor >= 2)
    else {
      XCloseDisplay(display)
      throw RotateError(.unavailable, "X display '\(name)' has no RandR 1.2 (protocol missing)")
    }
    var xiMajor: Int32 = 2
    var xiMinor: Int32 = 0
    guard XIQueryVersion(display, &xiMajor, &xiMinor) == Success else {
      XCloseDisplay(display)
      throw RotateError(.unavailable, "X display '\(name)' has no XInput 2 (protocol missing)")
    }
    var event: Int32 = 0
    var error: Int32 = 0
    _ = XQueryExtension(display, "XInputExtension", &xiOpcode, &event, &error)
    // Hierarchy changes: a tablet tool's device made after a turn gets the matrix then.
    var mask = [UInt8](repeating: 0, count: 4)
    mask[Int(XI_HierarchyChanged) >> 3] |= UInt8(1 << (Int(XI_HierarchyChanged) & 7))
    mask.withUnsafeMutableBufferPointer { bytes in
      var eventMask = XIEventMask(
        deviceid: XIAllDevices, mask_len: Int32(bytes.count), mask: bytes.baseAddress)
      _ = XISelectEvents(display, root, &eventMask, 1)
    }
    XFlush(display)
  }

  deinit { XCloseDisplay(display) }

  // MARK: Outputs

  private struct Output {
    var state: OutputState
    var id: RROutput
    var crtc: RRCrtc
  }

  private func withResources<T>(_ body: (UnsafeMutablePointer<XRRScreenResources>) -> T)
    throws(RotateError) -> T
  {
    guard let resources = XRRGetScreenResourcesCurrent(display, root) else {
      throw RotateError(.ioError, "X display '\(displayName)': cannot read the RandR resources")
    }
    defer { XRRFreeScreenResources(resources) }
    return body(resources)
  }

  private func allOutputs() throws(RotateError) -> [Output] {
    try withResources { resources in
      var outputs: [Output] = []
      for i in 0..<Int(resources.pointee.noutput) {
        let id = resources.pointee.outputs[i]
        guard let info = XRRGetOutputInfo(display, resources, id) else { continue }
        defer { XRRFreeOutputInfo(info) }
        let name = String(cString: info.pointee.name)
        let crtc = info.pointee.crtc
        var turn: Turn?
        if crtc != 0, let crtcInfo = XRRGetCrtcInfo(display, resources, crtc) {
          turn = X11Backend.turn(fromRandR: crtcInfo.pointee.rotation)
          XRRFreeCrtcInfo(crtcInfo)
        }
        outputs.append(
          Output(
            state: OutputState(name: name, turn: turn, active: crtc != 0), id: id, crtc: crtc))
      }
      return outputs
    }
  }

  /// RandR's `RR_Rotate_*` bit for a turn.
  static func randr(_ turn: Turn) -> Rotation {
    switch turn {
    case .normal: return Rotation(RR_Rotate_0)
    case .quarter: return Rotation(RR_Rotate_90)
    case .half: return Rotation(RR_Rotate_180)
    case .threeQuarters: return Rotation(RR_Rotate_270)
    }
  }

  /// The turn of a RandR rotation (reflections give `nil`).
  static func turn(fromRandR rotation: Rotation) -> Turn? {
    switch Int32(rotation) {
    case RR_Rotate_0: return .normal
    case RR_Rotate_90: return .quarter
    case RR_Rotate_180: return .half
    case RR_Rotate_270: return .threeQuarters
    default: return nil
    }
  }

  /// Every RandR output.
  public func outputs() throws(RotateError) -> [OutputState] {
    try allOutputs().map(\.state)
  }

  // MARK: Touch

  private func atom(_ name: String) -> Atom { XInternAtom(display, name, 0) }

  /// The XI2 slave pointers to turn: those on a node of `wanted`, or named in it
  /// (`XInputSelection`).
  private func touchDevices(_ wanted: [TouchDevice]) -> [(id: Int32, name: String)] {
    var count: Int32 = 0
    guard let infos = XIQueryDevice(display, XIAllDevices, &count) else { return [] }
    defer { XIFreeDeviceInfo(infos) }
    var found: [(Int32, String)] = []
    for i in 0..<Int(count) {
      let info = infos[i]
      let slave = info.use == XISlavePointer || info.use == XIFloatingSlave
      let name = String(cString: info.name)
      let node = slave ? stringProperty(device: info.deviceid, "Device Node") : nil
      if XInputSelection.selects(
        pointerSlave: slave, enabled: info.enabled != 0, node: node, name: name, wanted: wanted)
      {
        found.append((info.deviceid, name))
      }
    }
    return found
  }

  private func stringProperty(device: Int32, _ name: String) -> String? {
    var type: Atom = 0
    var format: Int32 = 0
    var items: UInt = 0
    var after: UInt = 0
    var data: UnsafeMutablePointer<UInt8>?
    let rc = XIGetProperty(
      display, device, atom(name), 0, 1024, 0, Atom(XA_STRING), &type, &format, &items, &after,
      &data)
    defer { if let data { XFree(data) } }
    guard rc == Success, format == 8, let data, items > 0 else { return nil }
    return String(decoding: UnsafeBufferPointer(start: data, count: Int(items)), as: UTF8.self)
      .trimmingNul()
  }

  /// The device's matrix, or `nil` if it has none.
  private func matrix(device: Int32) -> [Float]? {
    var type: Atom = 0
    var format: Int32 = 0
    var items: UInt = 0
    var after: UInt = 0
    var data: UnsafeMutablePointer<UInt8>?
    let rc = XIGetProperty(
      display, device, atom("Coordinate Transformation Matrix"), 0, 9, 0, atom("FLOAT"), &type,
      &format, &items, &after, &data)
    defer { if let data { XFree(data) } }
    guard rc == Success, format == 32, items == 9, let data else { return nil }
    return UnsafeRawPointer(data).withMemoryRebound(to: Float.self, capacity: 9) {
      Array(UnsafeBufferPointer(start: $0, count: 9))
    }
  }

  private func setMatrix(_ values: [Float], device: Int32) -> Bool {
    lastXError = 0
    var data = values
    data.withUnsafeMutableBytes { raw in
      XIChangeProperty(
        display, device, atom("Coordinate Transformation Matrix"), atom("FLOAT"), 32,
        PropModeReplace, raw.baseAddress?.assumingMemoryBound(to: UInt8.self), 9)
    }
    XSync(display, 0)
    return lastXError == 0
  }

  /// The matrix for a device on an output at `area` (x, y, width, height in pixels, after the
  /// turn) of a `screen`-sized root window: the turn, then scaled and moved onto the output.
  static func matrix(
    _ turn: Turn, area: (Double, Double, Double, Double), screen: (Double, Double)
  ) -> [Float] {
    let r = turn.touchMatrix.map(Double.init)
    let s = [
      area.2 / screen.0, 0, area.0 / screen.0, 0, area.3 / screen.1, area.1 / screen.1, 0, 0, 1,
    ]
    var out = [Double](repeating: 0, count: 9)
    for row in 0..<3 {
      for col in 0..<3 {
        out[row * 3 + col] = (0..<3).reduce(0) { $0 + s[row * 3 + $1] * r[$1 * 3 + col] }
      }
    }
    return out.map { Float($0) }
  }

  // MARK: Applying

  /// Sets the touch matrices, then turns the output (resizing the screen to fit); puts the
  /// matrices back if the output cannot be turned.
  public func apply(_ turn: Turn, output: String, touch: [TouchDevice]) throws(RotateError)
    -> Applied
  {
    guard let target = try allOutputs().first(where: { $0.state.name == output }) else {
      throw RotateError(.unavailable, "x11: output \(output) is gone")
    }
    guard target.crtc != 0 else {
      throw RotateError(.unavailable, "x11: output \(output) is off (no CRTC)")
    }
    let plan = try withResources { resources -> CrtcPlan? in
      CrtcPlan(display: display, resources: resources, crtc: target.crtc, turn: turn)
    }
    guard let plan else {
      throw RotateError(.ioError, "x11: cannot read the CRTC of \(output)")
    }
    var minWidth: Int32 = 0
    var minHeight: Int32 = 0
    var maxWidth: Int32 = 0
    var maxHeight: Int32 = 0
    if XRRGetScreenSizeRange(display, root, &minWidth, &minHeight, &maxWidth, &maxHeight) != 0,
      plan.screenPixels.0 > Double(maxWidth) || plan.screenPixels.1 > Double(maxHeight)
    {
      throw RotateError(
        .configuration,
        "x11: turned, \(output) needs a \(Int(plan.screenPixels.0))x\(Int(plan.screenPixels.1)) "
          + "screen but this X server allows at most \(maxWidth)x\(maxHeight); nothing changed")
    }
    let devices = touchDevices(touch)
    var previous: [(Int32, [Float])] = []
    var mapped: [String] = []
    var skipped: [String] = []
    let values = X11Backend.matrix(turn, area: plan.area, screen: plan.screenPixels)
    for device in devices {
      guard let old = matrix(device: device.id) else {
        skipped.append("\(device.name): no Coordinate Transformation Matrix")
        continue
      }
      guard setMatrix(values, device: device.id) else {
        let xError = lastXError
        restore(previous)
        throw RotateError(
          .software,
          "x11: cannot set the matrix of \(device.name) (X error \(xError)); "
            + "the output was not turned and the other devices were put back")
      }
      previous.append((device.id, old))
      mapped.append(device.name)
    }
    let status = try withResources { resources -> Int32 in
      plan.apply(display: display, root: root, resources: resources)
    }
    let xError = lastXError
    guard status == RRSetConfigSuccess, xError == 0 else {
      restore(previous)
      throw RotateError(
        .software,
        "x11: RandR refused to turn \(output) to \(turn.randrName) (status \(status), X error "
          + "\(xError)); the touch matrices were put back")
    }
    guard let now = try allOutputs().first(where: { $0.state.name == output })?.state,
      now.turn == turn
    else {
      restore(previous)
      throw RotateError(.software, "x11: \(output) did not take rotation \(turn.randrName)")
    }
    return Applied(output: now, touch: mapped, touchSkipped: skipped)
  }

  // MARK: Devices made after a turn

  /// The X connection.
  public var eventDescriptor: Int32 { XConnectionNumber(display) }

  /// Reads the queued X events; true when one was an XInput hierarchy change.
  public func devicesChanged() -> Bool {
    var changed = false
    while XPending(display) > 0 {
      var event = XEvent()
      XNextEvent(display, &event)
      if event.type == GenericEvent, event.xcookie.extension == xiOpcode,
        event.xcookie.evtype == XI_HierarchyChanged
      {
        changed = true
      }
    }
    return changed
  }

  /// Sets the matrix of `turn` on every device of `touch` whose matrix differs (a device made
  /// since the last turn), the output as it is.
  public func mapTouch(_ turn: Turn, output: String, touch: [TouchDevice]) throws(RotateError)
    -> [String]
  {
    guard let target = try allOutputs().first(where: { $0.state.name == output }),
      target.crtc != 0
    else { return [] }
    guard
      let area = try withResources({ resources -> (Double, Double, Double, Double)? in
        guard let info = XRRGetCrtcInfo(display, resources, target.crtc) else { return nil }
        defer { XRRFreeCrtcInfo(info) }
        return (
          Double(info.pointee.x), Double(info.pointee.y), Double(info.pointee.width),
          Double(info.pointee.height)
        )
      })
    else { return [] }
    // The root window's size now: Xlib's DisplayWidth/Height keep the size at connection time.
    var rootReturn: Window = 0
    var x: Int32 = 0
    var y: Int32 = 0
    var width: UInt32 = 0
    var height: UInt32 = 0
    var border: UInt32 = 0
    var depth: UInt32 = 0
    guard
      XGetGeometry(display, root, &rootReturn, &x, &y, &width, &height, &border, &depth) != 0,
      width > 0, height > 0
    else { return [] }
    let values = X11Backend.matrix(turn, area: area, screen: (Double(width), Double(height)))
    var changed: [String] = []
    for device in touchDevices(touch) {
      guard let old = matrix(device: device.id), old != values else { continue }
      guard setMatrix(values, device: device.id) else {
        throw RotateError(
          .software, "x11: cannot set the matrix of \(device.name) (X error \(lastXError))")
      }
      changed.append(device.name)
    }
    return changed
  }

  private func restore(_ previous: [(Int32, [Float])]) {
    for (id, old) in previous { _ = setMatrix(old, device: id) }
  }
}

/// How one CRTC is turned: its mode and position, its size after the turn and the screen size
/// that holds every CRTC afterwards.
private struct CrtcPlan {
  let crtc: RRCrtc
  let mode: RRMode
  let x: Int32
  let y: Int32
  let outputs: [RROutput]
  let rotation: Rotation
  let width: Double
  let height: Double
  let screenPixels: (Double, Double)
  let screenMillimetres: (Int32, Int32)

  init?(
    display: OpaquePointer, resources: UnsafeMutablePointer<XRRScreenResources>, crtc: RRCrtc,
    turn: Turn
  ) {
    guard let info = XRRGetCrtcInfo(display, resources, crtc) else { return nil }
    defer { XRRFreeCrtcInfo(info) }
    self.crtc = crtc
    mode = info.pointee.mode
    x = info.pointee.x
    y = info.pointee.y
    outputs = (0..<Int(info.pointee.noutput)).map { info.pointee.outputs[$0] }
    rotation = X11Backend.randr(turn)
    // The mode's own size; a quarter turn swaps it.
    var modeWidth = Double(info.pointee.width)
    var modeHeight = Double(info.pointee.height)
    if let current = X11Backend.turn(fromRandR: info.pointee.rotation),
      current == .quarter || current == .threeQuarters
    {
      swap(&modeWidth, &modeHeight)
    }
    let sideways = turn == .quarter || turn == .threeQuarters
    width = sideways ? modeHeight : modeWidth
    height = sideways ? modeWidth : modeHeight
    // The screen holds this CRTC and every other active one.
    var maxX = Double(x) + width
    var maxY = Double(y) + height
    for i in 0..<Int(resources.pointee.ncrtc) where resources.pointee.crtcs[i] != crtc {
      guard let other = XRRGetCrtcInfo(display, resources, resources.pointee.crtcs[i]) else {
        continue
      }
      if other.pointee.mode != 0 {
        maxX = max(maxX, Double(other.pointee.x) + Double(other.pointee.width))
        maxY = max(maxY, Double(other.pointee.y) + Double(other.pointee.height))
      }
      XRRFreeCrtcInfo(other)
    }
    screenPixels = (maxX, maxY)
    let screen = XDefaultScreen(display)
    let pxW = Double(XDisplayWidth(display, screen))
    let pxH = Double(XDisplayHeight(display, screen))
    let mmW = Double(XDisplayWidthMM(display, screen))
    let mmH = Double(XDisplayHeightMM(display, screen))
    // Keep the DPI: millimetres per pixel as they were.
    screenMillimetres = (
      Int32(max(1, (maxX * (pxW > 0 ? mmW / pxW : 0.2646)).rounded())),
      Int32(max(1, (maxY * (pxH > 0 ? mmH / pxH : 0.2646)).rounded()))
    )
  }

  /// The CRTC's place after the turn: x, y, width, height.
  var area: (Double, Double, Double, Double) { (Double(x), Double(y), width, height) }

  /// Turns it under a server grab, as xrandr does: the CRTC off, the screen resized, the CRTC on
  /// with the new rotation.
  func apply(
    display: OpaquePointer, root: Window, resources: UnsafeMutablePointer<XRRScreenResources>
  ) -> Int32 {
    lastXError = 0
    XGrabServer(display)
    defer {
      XUngrabServer(display)
      XSync(display, 0)
    }
    var status = XRRSetCrtcConfig(
      display, resources, crtc, Time(CurrentTime), 0, 0, 0, Rotation(RR_Rotate_0), nil, 0)
    guard status == RRSetConfigSuccess else { return 100 + status }
    XRRSetScreenSize(
      display, root, Int32(screenPixels.0), Int32(screenPixels.1), screenMillimetres.0,
      screenMillimetres.1)
    var list = outputs
    status = list.withUnsafeMutableBufferPointer {
      XRRSetCrtcConfig(
        display, resources, crtc, Time(CurrentTime), x, y, mode, rotation, $0.baseAddress,
        Int32($0.count))
    }
    XSync(display, 0)
    return status
  }
}

extension String {
  /// Without a trailing NUL (X string properties include it).
  fileprivate func trimmingNul() -> String {
    var text = self
    while text.last == "\0" { text.removeLast() }
    return text
  }
}
