import JSON
import OrientCore
import TextFormats

/// The hinge side of `orientd replay` on a two-sensor trace (`t,sensor,x,y,z`): feeds both
/// sensors to a `HingeTracker` and prints each posture commit and each change of reliability.
///
/// CSV lines: `t,posture,NAME,ANGLE` and `t,hinge,reliable,ANGLE` or
/// `t,hinge,unreliable,REASON` (hinge-vertical, accelerating, stale); JSON objects:
/// `{"time":2.1,"posture":"tablet","hinge_angle":355.2}` and
/// `{"time":1.4,"hinge_reliable":false,"reason":"accelerating"}`.
struct HingeReplay {
  private var tracker: HingeTracker
  private let json: Bool
  /// The reason last printed while unreliable (a new reason is printed too).
  private var reasonPrinted: HingeUnreliability?

  init(parameters: HingeParameters, json: Bool) {
    tracker = HingeTracker(parameters: parameters)
    self.json = json
  }

  /// Feeds one reading; returns the lines (with newlines) it produced, if any.
  mutating func process(_ part: HingePart, _ sample: Sample) -> String? {
    let before = tracker.state
    tracker.process(part, time: sample.time, sample.acceleration)
    let after = tracker.state
    var text = ""
    let t = sample.time
    let newReason = !after.isReliable && tracker.unreliability != reasonPrinted
    if after.isReliable != before.isReliable || (newReason && before.posture != .undefined) {
      reasonPrinted = after.isReliable ? nil : tracker.unreliability
      let reason = tracker.unreliability?.rawValue ?? "accelerating"
      if json {
        var members: [(String, JSONValue)] = [
          ("time", .number(t)), ("hinge_reliable", .bool(after.isReliable)),
        ]
        members.append(
          after.isReliable ? ("hinge_angle", .number(after.angle)) : ("reason", .string(reason)))
        text += JSONValue.object(members).encoded() + "\n"
      } else {
        text +=
          "\(shortDecimal(t)),hinge,"
          + (after.isReliable ? "reliable,\(shortDecimal(after.angle))" : "unreliable,\(reason)")
          + "\n"
      }
    }
    if after.posture != before.posture {
      if json {
        text +=
          JSONValue.object([
            ("time", .number(t)), ("posture", .string(after.posture.rawValue)),
            ("hinge_angle", after.angle.isFinite ? .number(after.angle) : .null),
          ]).encoded() + "\n"
      } else {
        text +=
          "\(shortDecimal(t)),posture,\(after.posture.rawValue),"
          + "\(after.angle.isFinite ? shortDecimal(after.angle) : "nan")\n"
      }
    }
    return text.isEmpty ? nil : text
  }
}
