import Glibc
import JSON
import OrientCore
import Sensors
import SystemKit

/// What `orientd calibrate` prints: text for a person (with a live readout line on a
/// terminal), or with `--json` one object per line with an `event` key.
struct CalibrateOutput {
  /// JSON events instead of text.
  let json: Bool
  /// Whether stdout is a terminal (the live line is redrawn in place there).
  let terminal: Bool

  init(json: Bool) {
    self.json = json
    self.terminal = !json && isatty(1) == 1
  }

  private func emit(_ event: String, _ members: [(String, JSONValue)]) {
    StandardStream.output.writeLine(
      JSONValue.object([("event", .string(event))] + members).encoded())
  }

  private func say(_ text: String) {
    endLiveLine()
    StandardStream.output.writeLine(text)
  }

  /// Clears the live readout line (terminal only).
  func endLiveLine() {
    if terminal { writeRaw("\r\u{1B}[K") }
  }

  private func writeRaw(_ text: String) {
    var copy = text
    copy.withUTF8 { bytes in _ = Glibc.write(1, bytes.baseAddress, bytes.count) }
  }

  static func vector(_ v: Vector3) -> JSONValue {
    .array([v.x, v.y, v.z].map { .number(($0 * 1000).rounded() / 1000) })
  }

  static func text(_ v: Vector3) -> String {
    "(" + [v.x, v.y, v.z].map { FixedPoint.format($0, decimals: 2) }.joined(separator: ", ") + ")"
  }

  /// Where a matrix came from, for text.
  static func source(_ source: MountMatrixSource) -> String {
    source == .identity ? "none set anywhere: identity" : "from \(source)"
  }

  /// The sensor used and the matrix in force.
  func sensor(_ d: AccelerometerDescription) {
    if json {
      emit(
        "sensor",
        [
          ("sensor", .string(d.sysname)), ("name", d.facts.name.map { .string($0) } ?? .null),
          ("syspath", .string(d.facts.syspath)),
          ("modalias", d.facts.modalias.map { .string($0) } ?? .null),
          ("hwdb_key", d.facts.hwdbKey.map { .string($0) } ?? .null),
          ("matrix", .string(d.mountMatrix.description)),
          ("matrix_source", .string("\(d.mountMatrixSource)")),
        ])
      return
    }
    say(
      """
      Calibrating \(d.sysname) (\(d.facts.name ?? "no name"), \(d.facts.syspath))
        hwdb key:     \(d.facts.hwdbKey ?? "- (no parent with a modalias)")
        matrix now:   \(d.mountMatrix) (\(CalibrateOutput.source(d.mountMatrixSource)))
      Readings are shown in the sensor's own axes (without that matrix). Confirm each pose with
      Enter, or just hold the device still until it is taken.
      """)
  }

  /// Asks for a pose.
  func ask(step: Int, of total: Int, pose: String, instruction: String, hold: Double) {
    if json {
      emit(
        "pose",
        [
          ("step", .number(Double(step))), ("of", .number(Double(total))), ("pose", .string(pose)),
          ("instruction", .string(instruction)), ("hold_seconds", .number(hold)),
        ])
      return
    }
    let holding = FixedPoint.format(hold, decimals: hold == hold.rounded() ? 0 : 1)
    say(
      "\nStep \(step) of \(total) (\(pose)): \(instruction).\n"
        + "  Then press Enter, or hold it still for \(holding) s.")
  }

  /// The live readout.
  func live(reading: Vector3, still: Double, frame: String, hint: String?) {
    if json {
      emit(
        "reading",
        [
          ("frame", .string(frame)), ("value", CalibrateOutput.vector(reading)),
          ("still_seconds", .number((still * 10).rounded() / 10)),
        ])
      return
    }
    guard terminal else { return }
    let text =
      "  \(frame) \(CalibrateOutput.text(reading))  |g| \(FixedPoint.format(reading.magnitude, decimals: 2))"
      + "  still \(FixedPoint.format(still, decimals: 1)) s" + (hint.map { "  \($0)" } ?? "")
    writeRaw("\r\u{1B}[K" + text)
  }

  /// A pose was not taken.
  func rejected(pose: String, reason: String) {
    if json {
      emit("rejected", [("pose", .string(pose)), ("reason", .string(reason))])
      return
    }
    say("  not taken: \(reason)")
  }

  /// A pose was taken.
  func accepted(pose: String, reading: Vector3, by: String) {
    if json {
      emit(
        "accepted",
        [("pose", .string(pose)), ("raw", CalibrateOutput.vector(reading)), ("by", .string(by))])
      return
    }
    say("  taken (\(by == "enter" ? "Enter" : "held still")): raw \(CalibrateOutput.text(reading))")
  }

  /// The derived matrix in every form, and what each orientation reads with it.
  func result(
    _ result: CalibrationResult, forms: CalibrationForms, current: AccelerometerDescription
  ) {
    let rows = predictions(result.matrix, current: current.mountMatrix)
    if json {
      emit(
        "result",
        [
          ("matrix", .string(result.matrix.description)),
          ("exact", .bool(result.exact)), ("proper_rotation", .bool(result.isProperRotation)),
          ("determinant", .number((result.determinant * 1e4).rounded() / 1e4)),
          (
            "residual_degrees",
            .object(
              result.residuals.map { ($0.pose.rawValue, .number(($0.degrees * 10).rounded() / 10)) }
            )
          ),
          ("previous_matrix", .string(current.mountMatrix.description)),
          ("previous_source", .string("\(current.mountMatrixSource)")),
          ("property", .string(forms.property)),
          ("hwdb_match", forms.match.map { .string($0) } ?? .null),
          ("hwdb", forms.hwdbEntry.map { .string($0) } ?? .null),
          ("config", .string(forms.configBlock)),
          (
            "orientations",
            .array(
              rows.map { row in
                .object([
                  ("pose", .string(row.name)), ("raw", CalibrateOutput.vector(row.raw)),
                  ("reads", CalibrateOutput.vector(row.reads)),
                  ("reported", .string(row.reported)), ("reported_before", .string(row.before)),
                ])
              })
          ),
        ])
      return
    }
    var lines: [String] = [""]
    let kind = result.exact ? "nearest rotation (--exact)" : "signed axis permutation"
    lines.append("Mount matrix: \(result.matrix)   (\(kind))")
    if result.isProperRotation {
      lines.append("  a proper rotation (determinant +1)")
    } else {
      lines.append(
        "  MIRROR IMAGE (determinant -1): no rotation of the sensor gives these readings. Either")
      lines.append(
        "  the second pose was turned the wrong way (right edge up instead of left), or the")
      lines.append("  sensor is mounted mirrored (rare): redo the poses to be sure.")
    }
    let residuals = result.residuals.map {
      "\($0.pose) \(FixedPoint.format($0.degrees, decimals: 1))"
    }
    lines.append("  fit: degrees off per pose: \(residuals.joined(separator: ", "))")
    lines.append(
      "  replaces: \(current.mountMatrix) (\(CalibrateOutput.source(current.mountMatrixSource)))")
    lines.append("")
    lines.append("What each orientation reads with it (sensor raw -> display frame: orientd says):")
    for row in rows {
      lines.append(
        "  \(row.name.padding(to: 10)) raw \(CalibrateOutput.text(row.raw).padding(to: 22)) -> "
          + "\(CalibrateOutput.text(row.reads).padding(to: 22)): "
          + (row.before != row.reported
            ? "\(row.reported.padding(to: 10)) (today: \(row.before))" : row.reported))
    }
    lines.append("")
    lines.append("udev property:")
    lines.append("  \(forms.property)")
    if let entry = forms.hwdbEntry {
      lines.append("")
      lines.append(
        "hwdb entry (orientd calibrate --write puts it in a local hwdb file; to fix this model for")
      lines.append("everyone, send it to systemd's hwdb.d/60-sensor.hwdb, see docs/calibrate.md):")
      lines.append(contentsOf: entry.split(separator: "\n").dropFirst().map { "  \($0)" })
    }
    lines.append("")
    lines.append("orientd.conf (--write config):")
    lines.append(
      contentsOf: forms.configBlock.split(separator: "\n").dropFirst().dropLast().map { "  \($0)" })
    say(lines.joined(separator: "\n"))
  }

  private struct Prediction {
    var name: String
    var raw: Vector3
    var reads: Vector3
    var reported: String
    var before: String
  }

  private func predictions(_ matrix: MountMatrix, current: MountMatrix) -> [Prediction] {
    let g = standardGravity
    let poses: [(String, Vector3)] = [
      ("normal", Vector3(0, -g, 0)), ("left-up", Vector3(g, 0, 0)),
      ("bottom-up", Vector3(0, g, 0)), ("right-up", Vector3(-g, 0, 0)),
      ("face-up", Vector3(0, 0, -g)), ("face-down", Vector3(0, 0, g)),
    ]
    let inverse = matrix.inverse ?? .identity
    return poses.map { name, display in
      let raw = inverse.apply(display)
      let reads = matrix.apply(raw)
      return Prediction(
        name: name, raw: raw, reads: reads, reported: CalibrateOutput.reported(reads),
        before: CalibrateOutput.reported(current.apply(raw)))
    }
  }

  /// What orientd's detector settles on for a steady reading: the orientation, or the tilt
  /// when flat.
  static func reported(_ reading: Vector3) -> String {
    var detector = OrientationDetector()
    var time = 0.0
    for _ in 0..<100 {
      _ = detector.process(Sample(time: time, acceleration: reading))
      time += 0.02
    }
    if detector.tilt.isFlat {
      return "\(detector.tilt) (orientation held)"
    }
    return detector.orientation.rawValue
  }

  /// A file was written or removed.
  func wrote(path: String, what: String) {
    if json {
      emit(
        what == "removed" ? "removed" : "written",
        [("path", .string(path)), ("kind", .string(what))])
      return
    }
    say(what == "removed" ? "Removed \(path)" : "Wrote \(path)")
  }

  /// The sensor now has the new matrix.
  func applied(matrix: String, source: String) {
    if json {
      emit("applied", [("matrix", .string(matrix)), ("matrix_source", .string(source))])
      return
    }
    say("The sensor now has mount matrix \(matrix) (\(source)).")
  }

  /// The check after writing.
  func confirmed(orientation: String, tilt: String, reading: Vector3) {
    if json {
      emit(
        "confirmed",
        [
          ("orientation", .string(orientation)), ("tilt", .string(tilt)),
          ("reading", CalibrateOutput.vector(reading)),
        ])
      return
    }
    say("  reads \(CalibrateOutput.text(reading)): orientd reports \(orientation) (\(tilt))")
  }

  /// A remark.
  func note(_ message: String) {
    if json {
      emit("note", [("message", .string(message))])
      return
    }
    say(message)
  }

  /// An error: on stderr (and as an `error` event with `--json`).
  func fail(_ message: String) {
    if json { emit("error", [("message", .string(message))]) }
    endLiveLine()
    StandardStream.error.writeLine("orientd: \(message)")
  }
}
