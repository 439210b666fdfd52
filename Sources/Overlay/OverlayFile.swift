import JSON

/// Why an overlay file was refused: the file, the place in it, and what is wrong.
public struct OverlayError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The file (or `built-in`).
  public var path: String
  /// 1-based line of the offending text, if known.
  public var line: Int?
  /// 1-based column (bytes) of the offending text, if known.
  public var column: Int?
  /// What is wrong and what would be accepted.
  public var reason: String

  /// Creates an error.
  public init(path: String, line: Int?, column: Int?, reason: String) {
    self.path = path
    self.line = line
    self.column = column
    self.reason = reason
  }

  /// `overlay.json:12:15: reason`, as compilers print it.
  public var description: String {
    var place = path
    if let line { place += ":\(line)" }
    if let column { place += ":\(column)" }
    return "\(place): \(reason)"
  }
}

/// Reads and writes overlay files (JSON) and holds the built-in overlay.
///
/// ```json
/// {"controls": [
///   {"id": "shutter", "kind": "button", "shape": "circle", "action": "capture",
///    "size": ["18%", "18%"], "anchor": "right", "margin": ["4%", 0], "fill": "#f4f4f4"},
///   {"id": "status", "kind": "label", "status": true, "size": ["64%", "9%"],
///    "anchor": "top", "margin": [0, "3%"]}
/// ]}
/// ```
///
/// Members of a control: `id` (unique), `kind` (`button`, `label`, `shape`), `shape` (`rect`,
/// `circle`, `brace`), `text`, `status` (labels), `action` (buttons: `"capture"`, `"block"`,
/// `{"message": TEXT}`, `{"status": TEXT, "seconds": N}`), `size` (`[W, H]` in the user's
/// view), `anchor` (`top-left`, `top`, `top-right`, `left`, `center`, `right`, `bottom-left`,
/// `bottom`, `bottom-right`), `frame` (`view`, the default, or `device`), `margin` (one length
/// or `[X, Y]`), `offset` (`[X, Y]`), `fill`, `border`, `text_color` (`#rrggbb[aa]`; `textColor`, its spelling before 0.2, is still
/// read). A length
/// is a number of pixels or a string `"N%"` (percent of the preview's shorter side).
public enum OverlayFile {
  /// The members a control may have.
  public static let controlMembers = [
    "id", "kind", "shape", "text", "status", "action", "size", "anchor", "frame", "margin",
    "offset", "fill", "border", "text_color",
  ]

  /// Members read under their old spelling for a release (written by orientcam 0.1), and the
  /// member each stands for.
  public static let legacyControlMembers = ["textColor": "text_color"]

  /// Parses an overlay file's text.
  ///
  /// - Parameter path: names the file in errors.
  /// - Throws: `OverlayError` with the line and column of the first problem: JSON syntax,
  ///   unknown or missing members, wrong types, unknown names, duplicate ids, a brace not on a
  ///   corner, a message action with no status label to show it in.
  public static func parse(_ text: String, path: String) throws(OverlayError) -> Overlay {
    let value: JSONValue
    let locations: JSONLocations
    do {
      (value, locations) = try JSONValue.parseWithLocations(text, limits: .init(maxBytes: 1 << 20))
    } catch {
      throw OverlayError(
        path: path, line: error.line, column: error.column,
        reason: "not valid JSON: \(error.reason)")
    }
    var reader = Reader(path: path, locations: locations)
    return try reader.overlay(value)
  }

  /// The overlay used when no `--overlay` is given: the seed ideas. A round shutter button at
  /// the user's right, a blocker over the device's bottom-left corner (where a switch-camera
  /// button would be) that explains why the front camera is off, four corner braces marking
  /// the frame, a scan button at the bottom, and a status label at the top.
  public static let builtIn = Overlay(controls: [
    brace("brace-top-left", .topLeft), brace("brace-top-right", .topRight),
    brace("brace-bottom-left", .bottomLeft), brace("brace-bottom-right", .bottomRight),
    Control(
      id: "status", kind: .label, isStatus: true, width: .percent(64), height: .percent(9),
      anchor: .top, marginY: .percent(3), fill: Colour(0, 0, 0, 170),
      textColour: Colour(255, 255, 255)),
    Control(
      id: "shutter", kind: .button, shape: .circle, action: .capture, width: .percent(18),
      height: .percent(18), anchor: .right, marginX: .percent(4), fill: Colour(244, 244, 244),
      border: Colour(48, 48, 48)),
    Control(
      id: "scan", kind: .button, text: "Scan", action: .status("Scanning...", seconds: 2),
      width: .percent(22), height: .percent(10), anchor: .bottom, marginY: .percent(4),
      fill: Colour(30, 111, 217), border: Colour(12, 50, 110), textColour: Colour(255, 255, 255)),
    Control(
      id: "switch-camera-blocker", kind: .button, text: "No front camera",
      action: .message("Front camera disabled: resolution too low"), width: .percent(14),
      height: .percent(14), anchor: .bottomLeft, frame: .device, marginX: .percent(2),
      marginY: .percent(2), fill: Colour(180, 20, 30), border: Colour(90, 8, 14),
      textColour: Colour(255, 255, 255)),
  ])

  private static func brace(_ id: String, _ anchor: Control.Anchor) -> Control {
    Control(
      id: id, kind: .shape, shape: .brace, width: .percent(10), height: .percent(10),
      anchor: anchor, marginX: .percent(17), marginY: .percent(17), fill: Colour(255, 214, 0))
  }

  /// The overlay as an overlay file (what `parse` reads back to the same overlay).
  public static func json(_ overlay: Overlay) -> JSONValue {
    func length(_ l: Length) -> JSONValue {
      switch l {
      case .pixels(let p): return .number(p)
      case .percent: return .string(l.description)
      }
    }
    return .object([
      (
        "controls",
        .array(
          overlay.controls.map { c in
            var members: [(String, JSONValue)] = [
              ("id", .string(c.id)), ("kind", .string(c.kind.rawValue)),
              ("shape", .string(c.shape.rawValue)),
            ]
            if let text = c.text { members.append(("text", .string(text))) }
            if c.kind == .label { members.append(("status", .bool(c.isStatus))) }
            switch c.action {
            case .none: break
            case .capture, .block: members.append(("action", .string(c.action.name)))
            case .message(let text):
              members.append(("action", .object([("message", .string(text))])))
            case .status(let text, let seconds):
              members.append(
                ("action", .object([("status", .string(text)), ("seconds", .number(seconds))])))
            }
            members += [
              ("size", .array([length(c.width), length(c.height)])),
              ("anchor", .string(c.anchor.rawValue)), ("frame", .string(c.frame.rawValue)),
              ("margin", .array([length(c.marginX), length(c.marginY)])),
              ("offset", .array([length(c.offsetX), length(c.offsetY)])),
              ("fill", .string(c.fill.description)),
            ]
            if let border = c.border { members.append(("border", .string(border.description))) }
            members.append(("text_color", .string(c.textColour.description)))
            return .object(members)
          })
      )
    ])
  }

  /// The overlay file text, one control per line.
  public static func text(_ overlay: Overlay) -> String {
    guard case .object(let root) = json(overlay), case .array(let controls)? = root.first?.1
    else { return "{}\n" }
    let lines = controls.map { "    " + $0.encoded() }
    return "{\n  \"controls\": [\n" + lines.joined(separator: ",\n") + "\n  ]\n}\n"
  }
}

/// Walks a parsed overlay document, keeping the path for error locations.
private struct Reader {
  let path: String
  let locations: JSONLocations
  var steps: [JSONLocations.Step] = []

  init(path: String, locations: JSONLocations) {
    self.path = path
    self.locations = locations
  }

  func fail(_ reason: String, key: Bool = false, at place: [JSONLocations.Step]? = nil)
    -> OverlayError
  {
    let at = place ?? steps
    let position = (key ? locations.key(at: at) : nil) ?? locations.value(at: at)
    let name = JSONLocations.describe(at)
    return OverlayError(
      path: path, line: position?.line, column: position?.column, reason: "\(name): \(reason)")
  }

  mutating func overlay(_ root: JSONValue) throws(OverlayError) -> Overlay {
    guard case .object(let members) = root else {
      throw fail("expected an object like {\"controls\": [...]}, found \(root.kindName)")
    }
    var controlsValue: JSONValue?
    for (key, value) in members {
      switch key {
      case "controls": controlsValue = value
      case "version":
        guard value.numberValue == 1 else {
          throw fail("only version 1 is known", at: [.key("version")])
        }
      default:
        throw fail(
          "unknown member; an overlay has \"controls\" (and optionally \"version\": 1)",
          key: true, at: [.key(key)])
      }
    }
    guard let controlsValue else { throw fail("missing \"controls\" (an array of controls)") }
    steps = [.key("controls")]
    guard case .array(let items) = controlsValue else {
      throw fail("expected an array of controls, found \(controlsValue.kindName)")
    }
    var controls: [Control] = []
    var idPaths: [String: [JSONLocations.Step]] = [:]
    for (index, item) in items.enumerated() {
      steps = [.key("controls"), .index(index)]
      let control = try self.control(item)
      if idPaths[control.id] != nil {
        throw fail(
          "duplicate id \"\(control.id)\" (ids must be unique)",
          at: [.key("controls"), .index(index), .key("id")])
      }
      idPaths[control.id] = steps
      controls.append(control)
    }
    let overlay = Overlay(controls: controls)
    if overlay.statusLabel == nil,
      let index = controls.firstIndex(where: {
        if case .message = $0.action { return true }
        if case .status = $0.action { return true }
        return false
      })
    {
      throw fail(
        "this action shows text, but no label has \"status\": true to show it in",
        at: [.key("controls"), .index(index), .key("action")])
    }
    return overlay
  }

  mutating func control(_ value: JSONValue) throws(OverlayError) -> Control {
    guard case .object(let members) = value else {
      throw fail("expected a control object, found \(value.kindName)")
    }
    let base = steps
    var found: [String: JSONValue] = [:]
    for (written, member) in members {
      let key = OverlayFile.legacyControlMembers[written] ?? written
      guard OverlayFile.controlMembers.contains(key) else {
        throw fail(
          "unknown member \"\(key)\"; a control has "
            + OverlayFile.controlMembers.joined(separator: ", "), key: true, at: base + [.key(key)])
      }
      found[key] = member
    }
    func at(_ key: String) -> [JSONLocations.Step] { base + [.key(key)] }
    func required(_ key: String, _ what: String) throws(OverlayError) -> JSONValue {
      guard let v = found[key] else { throw fail("missing \"\(key)\" (\(what))", at: base) }
      return v
    }
    func string(_ key: String, _ v: JSONValue) throws(OverlayError) -> String {
      guard let s = v.stringValue else {
        throw fail("expected a string, found \(v.kindName)", at: at(key))
      }
      return s
    }
    func name<T: RawRepresentable & CaseIterable>(_ key: String, _ v: JSONValue, _: T.Type)
      throws(OverlayError) -> T where T.RawValue == String
    {
      let s = try string(key, v)
      guard let t = T(rawValue: s) else {
        let known = T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        throw fail("unknown \(key) \"\(s)\"; one of \(known)", at: at(key))
      }
      return t
    }

    let id = try string("id", try required("id", "a unique name such as \"shutter\""))
    guard !id.isEmpty else { throw fail("the id must not be empty", at: at("id")) }
    let kind = try name("kind", try required("kind", "button, label or shape"), Control.Kind.self)
    let shape = try found["shape"].map { v throws(OverlayError) in
      try name("shape", v, Control.Shape.self)
    }
    let anchor = try name(
      "anchor", try required("anchor", "where it sits, such as \"top-left\" or \"right\""),
      Control.Anchor.self)
    let frame = try found["frame"].map { v throws(OverlayError) in
      try name("frame", v, Control.Frame.self)
    }
    if shape == .brace && !anchor.isCorner {
      throw fail(
        "a brace marks a corner; give it a corner anchor (top-left, top-right, bottom-left, "
          + "bottom-right), not \"\(anchor.rawValue)\"", at: at("anchor"))
    }
    if kind != .shape && shape == .brace {
      throw fail("\"brace\" is a shape: use \"kind\": \"shape\"", at: at("shape"))
    }

    let sizeValue = try required("size", "[width, height] in pixels or \"N%\"")
    let size = try pair("size", sizeValue, at: at("size"))
    for (i, l) in [size.0, size.1].enumerated() where l.isZeroOrNegative {
      throw fail("a size must be greater than 0", at: at("size") + [.index(i)])
    }
    var margin = (Length.pixels(0), Length.pixels(0))
    if let m = found["margin"] {
      var elements: [[JSONLocations.Step]]
      if case .array = m {
        margin = try pair("margin", m, at: at("margin"))
        elements = [at("margin") + [.index(0)], at("margin") + [.index(1)]]
      } else {
        let l = try length(m, at: at("margin"))
        margin = (l, l)
        elements = [at("margin"), at("margin")]
      }
      for (i, l) in [margin.0, margin.1].enumerated() where l.isNegative {
        throw fail(
          "a margin must not be negative (use offset to move outwards)", at: elements[i])
      }
    }
    let offset = try found["offset"].map { v throws(OverlayError) in
      try pair("offset", v, at: at("offset"))
    }

    var text: String?
    if let t = found["text"] { text = try string("text", t) }
    var isStatus = false
    if let s = found["status"] {
      guard kind == .label else {
        throw fail(
          "only labels show the status; this is a \(kind.rawValue)", key: true, at: at("status"))
      }
      guard let b = s.boolValue else {
        throw fail("expected true or false, found \(s.kindName)", at: at("status"))
      }
      isStatus = b
    }
    var action = Control.Action.none
    if let a = found["action"] {
      guard kind == .button else {
        throw fail(
          "only buttons have actions; this is a \(kind.rawValue)", key: true, at: at("action"))
      }
      action = try self.action(a, at: at("action"))
    } else if kind == .button {
      throw fail(
        "missing \"action\" (\"capture\", \"block\", {\"message\": TEXT} or "
          + "{\"status\": TEXT, \"seconds\": N})", at: base)
    }

    var control = Control(
      id: id, kind: kind, shape: shape ?? .rect, text: text, isStatus: isStatus, action: action,
      width: size.0, height: size.1, anchor: anchor, frame: frame ?? .view, marginX: margin.0,
      marginY: margin.1, offsetX: offset?.0 ?? .pixels(0), offsetY: offset?.1 ?? .pixels(0))
    switch kind {
    case .shape: control.fill = Colour(255, 214, 0)
    case .label: control.fill = Colour(0, 0, 0, 170)
    case .button: control.fill = Colour(40, 40, 40, 220)
    }
    if let v = found["fill"] { control.fill = try colour("fill", v) }
    if let v = found["border"] { control.border = try colour("border", v) }
    if let v = found["text_color"] { control.textColour = try colour("text_color", v) }
    return control

    func colour(_ key: String, _ v: JSONValue) throws(OverlayError) -> Colour {
      let s = try string(key, v)
      guard let c = Colour(hex: s) else {
        throw fail("\"\(s)\" is not a colour; write #rrggbb or #rrggbbaa", at: at(key))
      }
      return c
    }
  }

  func action(_ v: JSONValue, at here: [JSONLocations.Step]) throws(OverlayError)
    -> Control.Action
  {
    let usage =
      "an action is \"capture\", \"block\", {\"message\": TEXT} or "
      + "{\"status\": TEXT, \"seconds\": N}"
    switch v {
    case .string("capture"): return .capture
    case .string("block"): return .block
    case .string(let s): throw fail("unknown action \"\(s)\"; \(usage)", at: here)
    case .object(let members):
      var message: String?
      var status: String?
      var seconds: Double?
      for (key, value) in members {
        switch key {
        case "message", "status":
          guard let s = value.stringValue else {
            throw fail("expected a string, found \(value.kindName)", at: here + [.key(key)])
          }
          if key == "message" { message = s } else { status = s }
        case "seconds":
          guard let n = value.numberValue, n > 0, n <= 3600 else {
            throw fail("expected a number of seconds from 0 to 3600", at: here + [.key(key)])
          }
          seconds = n
        default:
          throw fail("unknown member \"\(key)\"; \(usage)", key: true, at: here + [.key(key)])
        }
      }
      switch (message, status, seconds) {
      case (let m?, nil, nil): return .message(m)
      case (nil, let s?, let n?): return .status(s, seconds: n)
      case (nil, _?, nil): throw fail("a status needs \"seconds\": how long to show it", at: here)
      case (_?, _, _):
        throw fail("give either \"message\" or \"status\" with \"seconds\"", at: here)
      default: throw fail(usage, at: here)
      }
    default:
      throw fail("\(usage); found \(v.kindName)", at: here)
    }
  }

  func pair(_ key: String, _ v: JSONValue, at here: [JSONLocations.Step]) throws(OverlayError)
    -> (Length, Length)
  {
    guard case .array(let items) = v, items.count == 2 else {
      throw fail("expected [x, y] (two numbers of pixels or \"N%\" strings)", at: here)
    }
    return (
      try length(items[0], at: here + [.index(0)]), try length(items[1], at: here + [.index(1)])
    )
  }

  func length(_ v: JSONValue, at here: [JSONLocations.Step]) throws(OverlayError) -> Length {
    switch v {
    case .number(let n) where abs(n) <= 100_000: return .pixels(n)
    case .string(let s) where s.hasSuffix("%"):
      if let n = Double(s.dropLast()), n.isFinite, abs(n) <= 1000 { return .percent(n) }
      throw fail("\"\(s)\" is not a percentage like \"12%\"", at: here)
    default:
      throw fail(
        "expected a length: pixels (a number) or percent of the shorter side (\"12%\"), found "
          + (v.stringValue.map { "\"\($0)\"" } ?? v.kindName), at: here)
    }
  }
}

extension Length {
  fileprivate var isZeroOrNegative: Bool {
    switch self {
    case .pixels(let p), .percent(let p): return p <= 0
    }
  }

  fileprivate var isNegative: Bool {
    switch self {
    case .pixels(let p), .percent(let p): return p < 0
    }
  }
}
