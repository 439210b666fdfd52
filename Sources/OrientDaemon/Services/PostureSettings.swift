import OrientCore
import TextFormats

/// The `[posture]` section of `/etc/orientd.conf`: the hinge tracker's parameters, the
/// tablet-mode switch and orientation in laptop posture.
public struct PostureSettings: Equatable, Sendable {
  /// Whether orientd provides an `SW_TABLET_MODE` input device of its own.
  public enum SwitchMode: String, Equatable, Sendable, CaseIterable {
    /// When the machine has two accelerometers and no input device reports `SW_TABLET_MODE`.
    case auto
    /// Whenever it has two accelerometers (even next to a real switch).
    case on
    /// Never.
    case off
  }

  /// `tablet-mode-switch`.
  public var tabletModeSwitch = SwitchMode.auto
  /// `laptop-orientation = normal`: `Orientation` stays `normal` while the posture is laptop
  /// (no rotation while typing); `follow` (the default) publishes what the display reads.
  public var keepNormalInLaptop = false
  /// The hinge tracker's parameters (`hinge-axis`, `posture-settle-time`, ...).
  public var hinge = HingeParameters()
  /// Whether `hinge-axis` was given: it then overrides the base sensor's udev
  /// `ORIENTD_HINGE_AXIS`.
  public var hingeAxisConfigured = false

  /// The defaults.
  public init() {}

  /// The `[posture]` section, one row per key: the switch, laptop orientation and the hinge
  /// tracker's keys (`HingeParameters.table`).
  public static let table = ConfigTable<PostureSettings>(
    section: "posture",
    keys: [
      .choice(
        "tablet-mode-switch", "provide an SW_TABLET_MODE input device of orientd's own",
        \.tabletModeSwitch),
      ConfigKey(
        "laptop-orientation", accepts: "follow | normal",
        summary: "normal: no rotation while the posture is laptop",
        show: { $0.keepNormalInLaptop ? "normal" : "follow" },
        store: {
          (settings: inout PostureSettings, text: String, _: String) throws(ConfigValueError) in
          let word = try ConfigValue.choice("laptop-orientation", text, ["follow", "normal"])
          settings.keepNormalInLaptop = word == "normal"
        }),
    ]
      + HingeParameters.table.keys.map { (key: ConfigKey<HingeParameters>) in
        let lifted = key.lifted(\PostureSettings.hinge)
        guard key.name == "hinge-axis" else { return lifted }
        // A configured axis overrides the base sensor's udev ORIENTD_HINGE_AXIS.
        return ConfigKey(
          key.name, accepts: key.accepts, summary: key.summary,
          show: { lifted.value(in: $0) },
          store: {
            (settings: inout PostureSettings, text: String, origin: String) throws(ConfigValueError)
            in
            try lifted.set(text, in: &settings, origin: origin)
            settings.hingeAxisConfigured = true
          })
      })

  /// The keys of the section.
  public static var keys: [String] { table.names }

  /// Reads every `[posture]` section of `file` on top of the defaults.
  ///
  /// - Throws: `ConfigError` at the entry's line for an unknown key or a bad value.
  public init(_ file: ConfigFile) throws(ConfigError) {
    try PostureSettings.table.read(file, into: &self)
  }
}
