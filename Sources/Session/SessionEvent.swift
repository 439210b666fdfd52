import Capture
import JSON
import Overlay
import SystemKit

/// One line of `orientcam session --json` output: everything a program following a session
/// learns, each encoded in one place (`json`).
enum SessionEvent {
  /// A grabbed shutter key device, as the ready event lists it.
  struct KeyDevice {
    /// `/dev/input/eventN`.
    var path: String
    /// The device's name.
    var name: String
    /// The uinput device its other keys are passed on to, if any.
    var passOn: String?
  }

  /// The preview window, as the ready event describes it.
  struct PreviewInfo {
    /// The preview's width in pixels.
    var width: Int
    /// The preview's height in pixels.
    var height: Int
    /// The SDL renderer (`software`, `opengl`).
    var renderer: String
  }

  /// The session runs: sources, inputs and the preview are open.
  case ready(
    pid: Int32, source: String, orientation: OrientationReading, overlay: String,
    preview: PreviewInfo?, burst: Int, shutterKeys: [String], shutterDevices: [KeyDevice])
  /// The device turned; `controls` is the new layout, done in `relayoutMilliseconds`.
  case orientation(OrientationReading, relayoutMilliseconds: Double, controls: [Placement])
  /// A click or touch on the preview, on `control` or on none.
  case press(x: Int, y: Int, control: Control?)
  /// The status label changed (`nil` text: cleared), by `control`, for `seconds`.
  case status(text: String?, control: String?, seconds: Double?)
  /// A photo was written (`shot` counts the session's photos from 1).
  case photo(shot: Int, trigger: String, burstIndex: Int, report: PhotoReport)
  /// Something failed; `trigger` names the photo it cost, `nil` for the session itself.
  case error(trigger: String?, message: String)
  /// The session ended; `status` is the exit status when it ended with an error.
  case end(reason: String, photos: Int, droppedShots: Int, status: ExitStatus?)

  /// The `event` member.
  var name: String {
    switch self {
    case .ready: "ready"
    case .orientation: "orientation"
    case .press: "press"
    case .status: "status"
    case .photo: "photo"
    case .error: "error"
    case .end: "end"
    }
  }

  /// The event as one JSON object, `event` first.
  var json: JSONValue {
    var members: [(String, JSONValue)] = [("event", .string(name))]
    switch self {
    case .ready(
      let pid, let source, let orientation, let overlay, let preview, let burst, let keys,
      let devices):
      members += [
        ("pid", .number(Double(pid))), ("source", .string(source)),
        ("orientation", .string(orientation.orientation.rawValue)),
        ("orientation_source", .string(orientation.source)), ("overlay", .string(overlay)),
        (
          "preview",
          preview.map { p in
            .object([
              ("width", .number(Double(p.width))), ("height", .number(Double(p.height))),
              ("renderer", .string(p.renderer)),
            ])
          } ?? .null
        ),
        ("burst", .number(Double(burst))),
        ("shutter_keys", .array(keys.map { .string($0) })),
        (
          "shutter_devices",
          .array(
            devices.map { d in
              .object([
                ("path", .string(d.path)), ("name", .string(d.name)),
                ("pass_on", d.passOn.map { .string($0) } ?? .null),
              ])
            })
        ),
      ]
    case .orientation(let reading, let milliseconds, let controls):
      members += [
        ("orientation", .string(reading.orientation.rawValue)),
        ("source", .string(reading.source)), ("relayout_ms", SessionEvent.ms(milliseconds)),
        (
          "controls",
          .array(
            controls.map { p in
              .object([
                ("id", .string(p.control.id)),
                (
                  "rect",
                  .array(
                    [p.rect.x, p.rect.y, p.rect.width, p.rect.height].map { .number(Double($0)) })
                ),
                ("rotation", .number(Double(p.rotation))),
              ])
            })
        ),
      ]
    case .press(let x, let y, let control):
      members += [("x", .number(Double(x))), ("y", .number(Double(y)))]
      if let control {
        members += [("control", .string(control.id)), ("action", .string(control.action.name))]
      } else {
        members.append(("control", .null))
      }
    case .status(let text, let control, let seconds):
      members += [
        ("text", text.map { .string($0) } ?? .null),
        ("control", control.map { .string($0) } ?? .null),
        ("seconds", seconds.map { .number($0) } ?? .null),
      ]
    case .photo(let shot, let trigger, let burstIndex, let report):
      members += [
        ("shot", .number(Double(shot))), ("trigger", .string(trigger)),
        ("burst_index", .number(Double(burstIndex))),
      ]
      for (key, value) in report.json.objectValue ?? [] where key != "timings" {
        members.append((key, value))
      }
      members.append(
        (
          "timings",
          .object([
            ("trigger_to_frame_ms", SessionEvent.ms(report.triggerToFrameMilliseconds)),
            ("frame_to_file_ms", SessionEvent.ms(report.frameToFileMilliseconds)),
            (
              "trigger_to_file_ms",
              SessionEvent.ms(report.triggerToFrameMilliseconds + report.frameToFileMilliseconds)
            ),
          ])
        ))
    case .error(let trigger, let message):
      members += [("trigger", trigger.map { .string($0) } ?? .null), ("message", .string(message))]
    case .end(let reason, let photos, let dropped, let status):
      members += [
        ("reason", .string(reason)), ("photos", .number(Double(photos))),
        ("dropped_shots", .number(Double(dropped))),
      ]
      if let status { members.append(("status", .number(Double(status.rawValue)))) }
    }
    return .object(members)
  }

  /// Milliseconds to the microsecond.
  private static func ms(_ value: Double) -> JSONValue { .number((value * 1000).rounded() / 1000) }
}
