import OrientClient
import OrientCore
import SystemKit
import TextFormats

/// orientd's command line, parsed without side effects so tests can check it.
///
/// Each mode is a case of `Command`: the daemon (no mode option), `--watch`, `--get`,
/// `--list-sensors`, and the `replay` and `record` commands. A new mode adds a case, a branch
/// in `init(arguments:)` and a paragraph in `usage`. Unknown options, and options that do not
/// apply to the mode, are rejected, never ignored.
struct Options: Equatable {
  /// What to do.
  enum Command: Equatable {
    /// Print `usage` and exit 0.
    case help
    /// Print the version and exit 0.
    case version
    /// `--config-keys`: print every configuration section and key with its default, what it
    /// accepts and what it does (from the declaration table), and exit 0.
    case configKeys
    /// Run the daemon (no mode option).
    case daemon(DaemonCommandOptions)
    /// `--watch`: claim and print every change.
    case watch(ClientCommandOptions)
    /// `--get`: print the state once.
    case get(ClientCommandOptions)
    /// `--list-sensors`.
    case listSensors(SensorCommandOptions)
    /// `record`.
    case record(SensorCommandOptions)
    /// Run the detector over a recorded trace (`orientd replay`).
    case replay(ReplayOptions)
    /// `calibrate`: find the sensor's mount matrix from poses.
    case calibrate(CalibrateOptions)
    /// `orientd rotate ARGS`: exec the orientd-rotate program with ARGS (it parses them), so
    /// the daemon's binary links no display library.
    case rotate([String])
  }

  /// The mode selected by the arguments.
  var command: Command

  /// The usage text printed by `--help`.
  static let usage = """
    usage: orientd [-v] [--config FILE] [--session] [--no-compat]
           orientd --watch [--light] [--proximity] [--compass] [--json] [--session] [-v]
           orientd --watch --motion [--json] [--session] [-v]
           orientd --get [--json] [--session] [-v]
           orientd --list-sensors [--json] [--config FILE] [-v]
           orientd record [--duration S] [--raw] [--base] [--motion] [--config FILE] [-v]
           orientd replay [FILE|-] [--json] [--tilt] [--motion] [--config FILE] [--set KEY=VALUE ...]
                          [--face-camera SPEC] [--face-timeout MS] [--face-program PATH]
           orientd calibrate [--json] [--exact] [--write [hwdb|config]] [--revert]
                             [--sensor NAME] [--config FILE] [--hold S] [--timeout S]
                             [--hwdb-file PATH] [-v]
           orientd rotate [OPTION ...]     (see orientd rotate --help)
           orientd --config-keys
           orientd --help | --version

    orientd (no mode) runs the daemon: it serves org.orientd.Orientation1 and, unless
    --no-compat is given or the name is taken (iio-sensor-proxy running), net.hadess.SensorProxy
    on the system bus (DBUS_SYSTEM_BUS_ADDRESS, or --session for development), and reads the
    display accelerometer only while a client holds a claim. SIGHUP re-reads the configuration;
    SIGTERM/SIGINT stop it cleanly.
      -v, --verbose     debug messages on stderr
      --config FILE     configuration ([detector], [sampling], [device "NAME"], [posture], [face]);
                        default /etc/orientd.conf if it exists
      --session         use the session bus instead of the system bus
      --no-compat       do not serve net.hadess.SensorProxy

    orientd --watch claims the accelerometer (waiting for orientd or iio-sensor-proxy to appear
    if needed), prints the current orientation and every change with its time, and releases
    the claim on SIGINT, SIGTERM or a closed output. With --json, one object per line:
      {"time":1718000000.123,"orientation":"left-up","rotation":90,"tilt":"vertical",
       "has_accelerometer":true}
    (time in Unix seconds; rotation null while undefined), which orientcam reads with
    --orientation-from -. On a convertible (a display and a base accelerometer) it also claims
    the posture and adds "posture" (closed, laptop, flat, tent, stand, tablet, undefined),
    "hinge_angle" (degrees, null while unreliable), "hinge_reliable", "tablet_mode" and
    "tablet_mode_source" (switch, hinge, none); the text form adds ", posture laptop (hinge
    112 degrees)".
      --light           also claim the ambient light sensor and print its level:
                        "has_ambient_light", "light_level" (null without a sensor) and
                        "light_level_unit" (lux, or vendor: a percentage); text ", light 55 lux"
      --proximity       also claim the proximity sensor: "has_proximity", "proximity_near"
                        (null without a sensor); text ", proximity near" or "far"
      --compass         also claim the compass: "has_compass", "compass_heading" (degrees
                        from north, null while unknown)
    These are read through net.hadess.SensorProxy (orientd's compatibility API or
    iio-sensor-proxy), so they need orientd without --no-compat.
      --motion          instead of the orientation, claim org.orientd.Motion1 (polkit
                        action org.orientd.motion.read: the active session) and print the
                        gyroscope's angular velocity and the device's rotation whenever they
                        change (at most PropertyRate times a second, 5 by default):
                        {"time":..,"angular_velocity":[x,y,z],"rotation":[w,x,y,z],
                         "rotation_source":"fusion-6","has_gyroscope":true}
                        (rad/s in the display frame; the rotation from the display to the
                        earth frame, docs/motion.md)

    orientd --get prints the state once (after a claim, so it is fresh) and releases it.

    orientd --config-keys prints every section and key of orientd.conf with its default, what
    it accepts and what it does (the table the daemon parses the file with).

    orientd --list-sensors shows every accelerometer (IIO and input), what orientd makes of it
    and which one it uses, then every light, proximity (IIO, applesmc, input switch) and
    compass sensor, then every gyroscope and rotation sensor (JSON "motion", kind "gyroscope"
    or "rotation"); orientd record prints CSV "t,x,y,z" from the sensor in use until interrupted
    or --duration S, the input of orientd replay; with --raw in the sensor's own axes (no
    mount matrix applied), for working out a hwdb ACCEL_MOUNT_MATRIX. With --base it also
    reads a convertible's base accelerometer and prints "t,sensor,x,y,z" (sensor display or
    base), which replay reads too: it then also prints the posture commits, "t,posture,NAME,
    ANGLE", and the hinge angle's reliability, "t,hinge,reliable,ANGLE" or
    "t,hinge,unreliable,REASON" (JSON: {"time":..,"posture":..,"hinge_angle":..},
    {"time":..,"hinge_reliable":..,"reason":..}); --set takes the [posture] hinge keys too.
    With --motion it also reads the gyroscope, rotation sensor and magnetometer and writes a
    motion trace ("# orientd motion trace", then "t,sensor,values": accel x,y,z m/s^2, gyro
    x,y,z rad/s, magn x,y,z gauss, rotation w,x,y,z; docs/motion.md), which replay reads.

    orientd replay runs the orientation detector over a recorded accelerometer trace and prints
    one line per committed change, "t,orientation" (t is the time of the sample at which the
    change was committed), or with --json one object per line:
      {"time":1.52,"orientation":"left-up","rotation":90,"tilt":"vertical"}

    The trace is CSV, "t,x,y,z" per line: t in seconds (non-decreasing), x,y,z in m/s^2 in the
    display frame (upright reads 0,-9.8,0; lying face up 0,0,-9.8). An optional header line
    "t,x,y,z", '#' comments and blank lines are allowed. FILE '-' or no FILE reads stdin.

    options for replay:
      --json            one JSON object per change instead of CSV
      --tilt            also report tilt changes (vertical, tilted-up/down, face-up/down);
                        CSV lines become "t,orientation,tilt"
      --motion          on a motion trace (orientd record --motion), also print the fusion
                        of its gyroscope, accelerometer and magnetometer lines (or its rotation
                        sensor's) at most 10 times a second of trace time:
                        "t,motion,WX,WY,WZ,QW,QX,QY,QZ" or {"time":..,"angular_velocity":
                        [x,y,z],"rotation":[w,x,y,z],"rotation_source":..}; the settings from
                        the [motion] section of --config
      --config FILE     read detector parameters from the [detector] section of FILE
                        (the same format as /etc/orientd.conf)
      --set KEY=VALUE   override one detector parameter (repeatable; applied after --config)
      --face-camera SPEC  face-aware rotation: ask orientd-face, with this camera (v4l2,
                        v4l2:/dev/videoN, file:DIR of JPEG frames, auto), about each change
                        (as [face] enabled = yes in --config does); the trace stands still
                        while it answers. A veto keeps the orientation (JSON: a line with
                        "kept":true and "proposed"); each line it decided has a "face" object
                        (answer, reason, waited_ms); accept, unknown or no answer within the
                        timeout commit the change. Camera uses are logged on stderr.
      --face-timeout MS the longest wait for an answer (default 700, as [face] timeout)
      --face-program PATH  the orientd-face program (default: beside orientd, then
                        PREFIX/libexec/orientd)

    orientd calibrate finds the mount matrix of a sideways sensor: hold the device upright,
    then left edge up, then face up, confirming each pose with Enter or by holding still for
    --hold S (default 2) seconds; it prints the ACCEL_MOUNT_MATRIX value, an hwdb entry
    matching this sensor on this machine, and an orientd.conf [device] block.
      --exact           the nearest rotation (a sensor mounted at an odd angle) instead of
                        a signed axis permutation
      --write [hwdb|config]  install it: a local hwdb file (--hwdb-file, default
                        /etc/udev/hwdb.d/61-sensor-orientd.hwdb) then systemd-hwdb update and
                        udevadm trigger; or a [device] block in the configuration file; then
                        check what orientd reports with the device upright (root needed)
      --revert          remove what --write installed
      --sensor NAME     the sensor expected (iio:deviceN or its name); it must be the one
                        orientd uses
      --timeout S       give up on a pose after S seconds (default 120)
      --json            one JSON object per line ("event": sensor, pose, reading, rejected,
                        accepted, result, written, applied, confirmed, note, error)
    exit status for calibrate: 65 no matrix fits the poses, or a mirror image with --write;
    69 no accelerometer, no reading, no systemd-hwdb/udevadm; 73 the file cannot be written
    (nothing is changed); 75 no still reading before --timeout.

    detector parameters (KEY, default, unit):
    \(Options.parameterTable)

    hinge parameters of a convertible (KEY, default and range; replay --set and the
    [posture] section; degrees, seconds, fractions of g; docs/convertibles.md):
    \(Options.hingeTable)

    orientd rotate follows the orientation and turns the screen and its touch input (sway,
    wlroots compositors, X11, hooks). It is a separate program, orientd-rotate (installed in
    /usr/libexec/orientd, Debian package orientd-rotate), which orientd rotate runs with the
    same arguments: orientd rotate --help lists its options.

    exit status: 0 success; 64 usage error (unknown option, bad --set); 65 malformed trace or
    config file (the message names FILE:LINE); 66 a file cannot be opened or read; 69 no bus,
    bus name taken or refused, no orientation service (--watch/--get), no net.hadess.SensorProxy
    (--watch --light/--proximity/--compass), no accelerometer (--get), no gyroscope or
    rotation sensor (--watch --motion), no sensor of any kind (--list-sensors); 70 internal error (the event loop failed); 71 the system refused a
    resource orientd needs (signalfd, timerfd, epoll: see the message); 77 a light, proximity
    or compass claim refused (--watch).
    """

  /// The parameter lines of `usage`.
  static var parameterTable: String {
    let defaults = DetectorParameters()
    return DetectorParameters.Key.allCases.map { key in
      let name = key.rawValue.padding(to: 21)
      let value = "\(shortDecimal(defaults[key])) \(key.unit)".padding(to: 20)
      return "  \(name) \(value) \(key.summary)"
    }.joined(separator: "\n")
  }

  /// The hinge parameter lines of `usage`.
  static var hingeTable: String {
    let defaults = HingeParameters()
    return HingeParameters.keys.map { key in
      "  \(key.padding(to: 27)) \(defaults.describe(key) ?? "")"
    }.joined(separator: "\n")
  }

  /// Parses the arguments (without the program name).
  ///
  /// - Throws: `UsageError` for an unknown option, an option that does not apply to the mode,
  ///   a missing value or a stray argument.
  init(arguments: [String]) throws(UsageError) {
    var cursor = ArgumentCursor(arguments)
    if let first = arguments.first, !first.hasPrefix("-") {
      _ = cursor.next()
      switch first {
      case "replay":
        command = try Options.parseReplay(&cursor)
      case "record":
        command = try Options.parseRecord(&cursor)
      case "calibrate":
        command = try Options.parseCalibrate(&cursor)
      case "rotate":
        // Parsed by orientd-rotate itself, so its options live in one place.
        command = .rotate(Array(arguments.dropFirst()))
      default:
        throw UsageError("unknown command '\(first)'")
      }
      return
    }
    command = try Options.parseModes(&cursor)
  }

  /// The option-selected modes: daemon, `--watch`, `--get`, `--list-sensors`.
  private static func parseModes(_ cursor: inout ArgumentCursor) throws(UsageError) -> Command {
    enum Mode: String {
      case watch = "--watch"
      case get = "--get"
      case listSensors = "--list-sensors"
      case configKeys = "--config-keys"
    }
    var mode: Mode?
    var given: [String] = []
    var json = false
    var session = false
    var compat = true
    var configPath: String?
    var ambient: Set<AmbientFollower.Kind> = []
    var motion = false
    let common = try cursor.scan(stopAtHelp: false) { scanned, cursor throws(UsageError) in
      let (name, inline, argument) = (scanned.name, scanned.inline, scanned.text)
      switch name {
      case "--watch", "--get", "--list-sensors", "--config-keys":
        try ArgumentCursor.noValue(name, inline)
        let new = Mode(rawValue: name)
        if let mode, mode != new {
          throw UsageError("\(mode.rawValue) and \(name) cannot be combined")
        }
        mode = new
      case "--json":
        try ArgumentCursor.noValue(name, inline)
        json = true
        given.append(name)
      case "--session":
        try ArgumentCursor.noValue(name, inline)
        session = true
        given.append(name)
      case "--no-compat":
        try ArgumentCursor.noValue(name, inline)
        compat = false
        given.append(name)
      case "--config":
        configPath = try cursor.value(for: name, inline: inline)
        given.append(name)
      case "--motion":
        try ArgumentCursor.noValue(name, inline)
        motion = true
        given.append(name)
      case "--light", "--proximity", "--compass":
        try ArgumentCursor.noValue(name, inline)
        if let kind = AmbientFollower.Kind(rawValue: String(name.dropFirst(2))) {
          ambient.insert(kind)
        }
        given.append(name)
      default:
        throw UsageError(
          argument.hasPrefix("-")
            ? "unknown option '\(argument)'" : "unexpected argument '\(argument)'")
      }
    }
    if let answer = Command(answering: common) { return answer }
    let verbose = common.verbose
    let allowed: Set<String>
    switch mode {
    case nil: allowed = ["--config", "--session", "--no-compat"]
    case .watch where motion: allowed = ["--json", "--session", "--motion"]
    case .watch: allowed = ["--json", "--session", "--light", "--proximity", "--compass"]
    case .get: allowed = ["--json", "--session"]
    case .listSensors: allowed = ["--json", "--config"]
    case .configKeys: allowed = []
    }
    if let wrong = given.first(where: { !allowed.contains($0) }) {
      let what = mode.map { "with \($0.rawValue)" } ?? "for the daemon"
      throw UsageError("\(wrong) does not apply \(what)")
    }
    switch mode {
    case nil:
      return .daemon(
        DaemonCommandOptions(
          verbose: verbose, configPath: configPath, session: session, compatibility: compat))
    case .watch:
      return .watch(
        ClientCommandOptions(
          json: json, session: session, verbose: verbose, ambient: ambient, motion: motion))
    case .get:
      return .get(ClientCommandOptions(json: json, session: session, verbose: verbose))
    case .listSensors:
      var options = SensorCommandOptions()
      options.json = json
      options.configPath = configPath
      options.verbose = verbose
      return .listSensors(options)
    case .configKeys:
      return .configKeys
    }
  }

  private static func parseRecord(_ cursor: inout ArgumentCursor) throws(UsageError) -> Command {
    var options = SensorCommandOptions()
    let common = try cursor.scan { scanned, cursor throws(UsageError) in
      let (name, inline, argument) = (scanned.name, scanned.inline, scanned.text)
      switch name {
      case "--config":
        options.configPath = try cursor.value(for: name, inline: inline)
      case "--duration":
        let text = try cursor.value(for: name, inline: inline)
        guard let seconds = try? DecimalText.parseDouble(text), seconds > 0, seconds < 1e7 else {
          throw UsageError("--duration '\(text)' is not a positive number of seconds")
        }
        options.duration = .seconds(seconds)
      case "--raw":
        try ArgumentCursor.noValue(name, inline)
        options.raw = true
      case "--base":
        try ArgumentCursor.noValue(name, inline)
        options.base = true
      case "--motion":
        try ArgumentCursor.noValue(name, inline)
        options.motion = true
      default:
        throw UsageError(
          argument.hasPrefix("-")
            ? "unknown option '\(argument)' for record"
            : "unexpected argument '\(argument)'")
      }
    }
    if let answer = Command(answering: common) { return answer }
    options.verbose = common.verbose
    return .record(options)
  }

  private static func parseCalibrate(_ cursor: inout ArgumentCursor) throws(UsageError)
    -> Command
  {
    var options = CalibrateOptions()
    func seconds(_ name: String, _ text: String) throws(UsageError) -> Double {
      guard let value = try? DecimalText.parseDouble(text), value > 0, value < 1e6 else {
        throw UsageError("\(name) '\(text)' is not a positive number of seconds")
      }
      return value
    }
    let common = try cursor.scan { scanned, cursor throws(UsageError) in
      let (name, inline, argument) = (scanned.name, scanned.inline, scanned.text)
      switch name {
      case "--json":
        try ArgumentCursor.noValue(name, inline)
        options.json = true
      case "--exact":
        try ArgumentCursor.noValue(name, inline)
        options.exact = true
      case "--revert":
        try ArgumentCursor.noValue(name, inline)
        options.revert = true
      case "--write":
        var value = inline
        if value == nil, let next = cursor.peek(), !next.hasPrefix("-") {
          value = cursor.next()
        }
        guard let target = CalibrateOptions.Target(rawValue: value ?? "hwdb") else {
          throw UsageError("--write '\(value ?? "")' must be 'hwdb' or 'config'")
        }
        options.write = target
      case "--sensor":
        options.sensor = try cursor.value(for: name, inline: inline)
      case "--config":
        options.configPath = try cursor.value(for: name, inline: inline)
      case "--hwdb-file":
        options.hwdbFile = try cursor.value(for: name, inline: inline)
      case "--hold":
        options.hold = try seconds(name, try cursor.value(for: name, inline: inline))
      case "--timeout":
        options.timeout = try seconds(name, try cursor.value(for: name, inline: inline))
      default:
        throw UsageError(
          argument.hasPrefix("-")
            ? "unknown option '\(argument)' for calibrate"
            : "unexpected argument '\(argument)'")
      }
    }
    if let answer = Command(answering: common) { return answer }
    options.verbose = common.verbose
    if options.revert && options.write != nil {
      throw UsageError("--revert and --write cannot be combined")
    }
    if options.revert && options.exact {
      throw UsageError("--exact does not apply with --revert")
    }
    return .calibrate(options)
  }

  private static func parseReplay(_ cursor: inout ArgumentCursor) throws(UsageError) -> Command {
    var replay = ReplayOptions()
    var sawInput = false
    // replay logs nothing, so it has no -v.
    let common = try cursor.scan(takesVerbose: false) { scanned, cursor throws(UsageError) in
      let (name, inline, argument) = (scanned.name, scanned.inline, scanned.text)
      switch name {
      case "--json":
        try ArgumentCursor.noValue(name, inline)
        replay.json = true
      case "--tilt":
        try ArgumentCursor.noValue(name, inline)
        replay.tilt = true
      case "--motion":
        try ArgumentCursor.noValue(name, inline)
        replay.motion = true
      case "--config":
        replay.configPath = try cursor.value(for: name, inline: inline)
      case "--face-camera":
        let spec = try cursor.value(for: name, inline: inline)
        guard FaceSettings.isCameraSpec(spec) else {
          throw UsageError(
            "--face-camera '\(spec)': auto, v4l2, v4l2:/dev/videoN, file:DIR or libcamera[:ID]")
        }
        replay.faceCamera = spec
      case "--face-timeout":
        let text = try cursor.value(for: name, inline: inline)
        guard let ms = Int(text), (100...60_000).contains(ms) else {
          throw UsageError("--face-timeout '\(text)': milliseconds, 100 to 60000")
        }
        replay.faceTimeoutMilliseconds = ms
      case "--face-program":
        replay.faceProgram = try cursor.value(for: name, inline: inline)
      case "--set":
        let assignment = try cursor.value(for: name, inline: inline)
        guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex
        else {
          throw UsageError("--set expects KEY=VALUE, got '\(assignment)'")
        }
        replay.overrides.append(
          ReplayOptions.Override(
            key: String(assignment[..<equals]),
            value: String(assignment[assignment.index(after: equals)...])))
      default:
        if argument.hasPrefix("-"), argument != "-" {
          throw UsageError("unknown option '\(argument)' for replay")
        } else if sawInput {
          throw UsageError("replay takes one trace file, got '\(replay.input)' and '\(argument)'")
        }
        replay.input = argument
        sawInput = true
      }
    }
    if let answer = Command(answering: common) { return answer }
    return .replay(replay)
  }
}

extension Options.Command {
  /// `.help` or `.version` when the common options ask for one (help first), else `nil`.
  init?(answering common: CommonOptions) {
    if common.help {
      self = .help
    } else if common.version {
      self = .version
    } else {
      return nil
    }
  }
}

/// The daemon's options.
struct DaemonCommandOptions: Equatable {
  /// `-v`: debug messages.
  var verbose = false
  /// `--config FILE`.
  var configPath: String?
  /// `--session`: the session bus.
  var session = false
  /// Not `--no-compat`: also serve net.hadess.SensorProxy.
  var compatibility = true
}

/// The options of `--watch` and `--get`.
struct ClientCommandOptions: Equatable {
  /// One JSON object per line.
  var json = false
  /// `--session`: the session bus.
  var session = false
  /// `-v`: debug messages.
  var verbose = false
  /// `--light`, `--proximity`, `--compass` (`--watch` only): also follow these.
  var ambient: Set<AmbientFollower.Kind> = []
  /// `--motion` (`--watch` only): follow org.orientd.Motion1 instead of the orientation.
  var motion = false
}

/// The options of `orientd replay`.
struct ReplayOptions: Equatable {
  /// One `--set KEY=VALUE`.
  struct Override: Equatable {
    /// The parameter key.
    var key: String
    /// The value as written.
    var value: String
  }

  /// The trace path, or `-` for stdin.
  var input = "-"
  /// Print JSON objects instead of CSV.
  var json = false
  /// Report tilt changes too.
  var tilt = false
  /// `--motion`: on a motion trace, also print the fusion's angular velocity and rotation.
  var motion = false
  /// A configuration file with a `[detector]` section.
  var configPath: String?
  /// Parameter overrides, in order.
  var overrides: [Override] = []
  /// `--face-camera SPEC`: run the face resolver with this camera.
  var faceCamera: String?
  /// `--face-timeout MS`.
  var faceTimeoutMilliseconds: Int?
  /// `--face-program PATH`.
  var faceProgram: String?
}

extension String {
  /// The string padded with spaces to at least `width` characters.
  func padding(to width: Int) -> String {
    count >= width ? self : self + String(repeating: " ", count: width - count)
  }
}
