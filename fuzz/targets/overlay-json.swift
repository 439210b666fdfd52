// Overlay files: `Overlay.OverlayFile.parse(_:path:)`, `OverlayFile.text`, `OverlayLayout` and
// `OverlayRenderer`, as `orientcam session --overlay FILE` and `orientcam layout` read them.
//
// Input: byte 0 picks the preview size (low nibble the width, high nibble the height, 16 to
// 2416 pixels) and whether the layouts are also rendered (only for previews up to 256x256, to
// keep runs fast); the rest is the file.
//
// Invariants: an error names the path given and, when it has a place, a line and column inside
// the file; an accepted overlay has unique, non-empty ids, sizes greater than 0, and a status
// label when an action shows text; written back with `OverlayFile.text` it parses equal, and that text is a fixed
// point; the layout for each orientation places every control once, with the size the file
// asks for (turned for the device frame), reports only its own controls in conflicts, and is
// the same when done twice; `check` agrees with the layouts; the rendered overlay has the
// preview's size.
import OrientCore
import Overlay

/// libFuzzer's entry point: checks one input against the invariants above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOverlayJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = inputBytes(data, size)
  guard let first = bytes.first else { return 0 }
  let text = String(decoding: bytes.dropFirst(), as: UTF8.self)
  let width = 16 + Int(first & 0x0F) * 160
  let height = 16 + Int(first >> 4) * 160
  let path = "fuzz/overlay.json"
  let overlay: Overlay
  do {
    overlay = try OverlayFile.parse(text, path: path)
  } catch {
    require(error.path == path, "the error names \(error.path)")
    require(!error.reason.isEmpty, "an error without a reason")
    if let line = error.line {
      let lines = text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false)
      require(line >= 1 && line <= lines.count, "error at line \(line) of \(lines.count)")
      if let column = error.column {
        let length = lines[line - 1].count
        require(
          column >= 1 && column <= length + 1, "error at column \(column) of a \(length)-byte line")
      }
    }
    return 0
  }
  let ids = overlay.controls.map(\.id)
  require(Set(ids).count == ids.count, "duplicate ids accepted: \(ids)")
  require(!ids.contains(""), "an empty id accepted")
  let showsText = overlay.controls.contains {
    if case .message = $0.action { return true }
    if case .status = $0.action { return true }
    return false
  }
  require(!showsText || overlay.statusLabel != nil, "a text action without a status label")
  for control in overlay.controls {
    require(positive(control.width) && positive(control.height), "\(control.id): size <= 0")
  }

  // Round trip through the writer.
  let written = OverlayFile.text(overlay)
  let again: Overlay
  do {
    again = try OverlayFile.parse(written, path: path)
  } catch {
    require(false, "the written overlay does not parse: \(error)\n\(written.prefix(400))")
    return 0
  }
  require(again == overlay, "the written overlay reads back different:\n\(written.prefix(400))")
  require(OverlayFile.text(again) == written, "writing is not a fixed point")

  // Layouts for each orientation.
  let shorter = min(width, height)
  var conflicted: [Orientation] = []
  for orientation in Orientation.defined {
    let layout = OverlayLayout.layout(
      overlay, orientation: orientation, width: width, height: height)
    require(
      layout
        == OverlayLayout.layout(
          overlay, orientation: orientation, width: width, height: height),
      "layout is not deterministic")
    require(layout.placements.map(\.control.id) == ids, "placements differ from the controls")
    let turned = (orientation.clockwiseRotation ?? 0) % 180 != 0
    for placement in layout.placements {
      let w = placement.control.width.resolve(shorterSide: shorter)
      let h = placement.control.height.resolve(shorterSide: shorter)
      let native = turned ? (h, w) : (w, h)
      require(
        placement.rect.width == native.0 && placement.rect.height == native.1,
        "\(placement.control.id): placed \(placement.rect) for \(w)x\(h) in \(orientation)")
      require(
        placement.viewRect.width == w && placement.viewRect.height == h,
        "\(placement.control.id): view rect \(placement.viewRect) for \(w)x\(h)")
    }
    for conflict in layout.conflicts {
      require(
        conflictIDs(conflict).allSatisfy(ids.contains), "a conflict names another control")
    }
    if !layout.conflicts.isEmpty { conflicted.append(orientation) }
    if first & 0x80 == 0 && width <= 256 && height <= 256 {
      let image = OverlayRenderer.render(layout, state: OverlayState(status: "fuzz"))
      require(image.width == width && image.height == height, "rendered at another size")
    }
  }
  let checked = OverlayLayout.check(overlay, width: width, height: height).map(\.0)
  require(checked == conflicted, "check says \(checked), the layouts \(conflicted)")
  return 0
}

private func positive(_ length: Length) -> Bool {
  switch length {
  case .pixels(let p), .percent(let p): return p > 0
  }
}

private func conflictIDs(_ conflict: LayoutConflict) -> [String] {
  switch conflict {
  case .empty(let id), .outside(let id, _): return [id]
  case .overlap(let a, let b, _, _): return [a, b]
  }
}
