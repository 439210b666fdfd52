import JSON

/// orientcam's JSON output lines (capture, list, inspect, layout, session events).
public enum OrientcamJSON {
  /// The keys orientcam 0.1 wrote in camelCase (`burstIndex`, `timings.triggerToFileMs`,
  /// `viewRect`, ...). Each is written under both spellings until 0.3 (`DeprecatedKeys`).
  public static let deprecatedKeys = DeprecatedKeys([
    // session: ready, orientation, photo, end
    "orientation_source", "shutter_keys", "shutter_devices", "pass_on", "relayout_ms",
    "burst_index", "trigger_to_frame_ms", "frame_to_file_ms", "trigger_to_file_ms",
    "dropped_shots",
    // capture, list, inspect
    "exif_orientation", "position_source", "sensor_rotation", "pixel_width", "pixel_height",
    "date_time_original", "offset_time_original", "sub_sec_time_original", "marker_edge",
    // layout
    "view_width", "view_height", "device_rotation", "view_rect",
  ])

  /// `value` as one line of output, with the 0.1 spelling of each renamed key after it.
  public static func line(_ value: JSONValue) -> String {
    deprecatedKeys.addingAliases(to: value).encoded()
  }
}
