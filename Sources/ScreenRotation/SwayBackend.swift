import JSON

/// sway, through its IPC: `output NAME transform T`, and `input ID map_to_output NAME` for
/// every touch and tablet device (sway then turns their coordinates with the output).
public final class SwayBackend: RotationBackend {
  /// `sway`.
  public let name = "sway"
  private let ipc: SwayIPC
  private var mapped: Set<String> = []

  /// Connects to the socket at `socketPath` (`$SWAYSOCK`).
  public init(socketPath: String) throws(RotateError) {
    ipc = try SwayIPC(path: socketPath)
  }

  /// Every output from `GET_OUTPUTS`.
  public func outputs() throws(RotateError) -> [OutputState] {
    let reply = try ipc.request(.getOutputs)
    return (reply.arrayValue ?? []).compactMap { output in
      guard let name = output["name"]?.stringValue else { return nil }
      return OutputState(
        name: name, turn: output["transform"]?.stringValue.flatMap(Turn.init(swayName:)),
        active: output["active"]?.boolValue ?? true)
    }
  }

  /// sway's input identifiers (`vendor:product:name`) of the touch and tablet devices it has.
  func inputs() throws(RotateError) -> [(identifier: String, type: String, name: String)] {
    let reply = try ipc.request(.getInputs)
    return (reply.arrayValue ?? []).compactMap { input in
      guard let identifier = input["identifier"]?.stringValue else { return nil }
      return (identifier, input["type"]?.stringValue ?? "", input["name"]?.stringValue ?? "")
    }
  }

  /// The identifier sway gives `device`: the one `GET_INPUTS` lists for it, else sway's own
  /// rule (`vendor:product:name`, decimal ids, blanks as `_`), which sway also accepts for a
  /// device it has not seen yet.
  static func identifier(
    of device: TouchDevice, among inputs: [(identifier: String, type: String, name: String)]
  ) -> String {
    if let known = inputs.first(where: { $0.identifier == device.name || $0.name == device.name }) {
      return known.identifier
    }
    if let vendor = device.vendor, let product = device.product {
      let name = String(device.name.map { $0 == " " || $0 == "\t" ? "_" : $0 })
      return "\(vendor):\(product):\(name)"
    }
    return device.name
  }

  /// Maps touch first, then turns the output and reads the transform back.
  public func apply(_ turn: Turn, output: String, touch: [TouchDevice]) throws(RotateError)
    -> Applied
  {
    let inputs = touch.isEmpty ? [] : try self.inputs()
    var names: [String] = []
    for device in touch {
      let id = SwayBackend.identifier(of: device, among: inputs)
      let key = "\(id)\u{0}\(output)"
      if !mapped.contains(key) {
        do {
          try ipc.run("input \(quoted(id)) map_to_output \(quoted(output))")
        } catch {
          throw RotateError(
            error.status,
            "\(error.message); the output was not turned (touch would not follow it)")
        }
        mapped.insert(key)
      }
      names.append(id)
    }
    // Touch coordinates follow the output's transform in sway once mapped, so the mapping above
    // is right for every turn and needs no undo if the turn below fails.
    try ipc.run("output \(quoted(output)) transform \(turn.swayName)")
    guard let now = try outputs().first(where: { $0.name == output }) else {
      throw RotateError(.unavailable, "sway: output \(output) disappeared while turning it")
    }
    guard now.turn == turn else {
      throw RotateError(
        .software,
        "sway accepted 'transform \(turn.swayName)' for \(output) but reports "
          + "\(now.turn?.swayName ?? "a flipped transform")")
    }
    return Applied(output: now, touch: names, touchSkipped: [])
  }

  private func quoted(_ text: String) -> String {
    "\"" + text.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"") + "\""
  }
}

extension String {
  /// Every occurrence of `target` replaced by `replacement`.
  func replacingAll(_ target: Character, with replacement: String) -> String {
    var out = ""
    for c in self { if c == target { out += replacement } else { out.append(c) } }
    return out
  }
}
