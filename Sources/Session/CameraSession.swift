import Capture
import EvdevKit
import Glibc
import Imaging
import JPEGKit
import JSON
import OrientCore
import OrientLog
import Overlay
import PreviewKit
import SystemKit
import V4L2Kit

/// What `orientcam session` needs from its surroundings.
public struct SessionEnvironment {
  /// Messages on stderr.
  public var logger: Logger
  /// EXIF Software, e.g. `orientcam 0.1.0`.
  public var software: String
  /// Makes the orientation feed for `--orientation auto`: **the hook for orientd over D-Bus.**
  ///
  /// The default reports that orientd cannot be reached (so `--orientation-fallback` or an
  /// error applies). The D-Bus client plugs in by returning a feed that, in `start(on:changed:)`,
  /// connects to the system bus on the given loop (DBusKit's loop integration), claims the
  /// accelerometer (`org.orientd.Orientation1`, else `net.hadess.SensorProxy`
  /// `ClaimAccelerometer`), reads `AccelerometerOrientation` into `current` and calls
  /// `changed`, then calls `changed` again from its `PropertiesChanged` handler; `stop()`
  /// releases the claim. A capture-style `OrientationProvider` also works unchanged by wrapping
  /// it in `PollingOrientationFeed`.
  public var autoOrientation: (Logger) throws(CaptureError) -> any OrientationFeed
  /// Receives each line of output (stdout): photo paths, or with `--json` one JSON event per
  /// line.
  public var emit: (String) -> Void
  /// The uinput node for passing on the other keys of a grabbed device (`/dev/uinput`;
  /// orientcam takes `ORIENTCAM_UINPUT` from its environment, which tests use to run the same
  /// way on hosts with and without uinput).
  public var uinputPath = UInputClone.defaultPath

  /// Creates an environment.
  public init(
    logger: Logger, software: String,
    autoOrientation: @escaping (Logger) throws(CaptureError) -> any OrientationFeed = { _ in
      PollingOrientationFeed(
        provider: UnreachableOrientationProvider(), label: "orientd",
        intervalNanoseconds: 1_000_000_000)
    },
    emit: @escaping (String) -> Void
  ) {
    self.logger = logger
    self.software = software
    self.autoOrientation = autoOrientation
    self.emit = emit
  }
}

/// How a session ended.
public struct SessionSummary: Equatable, Sendable {
  /// Why it ended: `q`, `SIGUSR2`, `SIGTERM`, `SIGINT`, `SIGHUP`, `window closed`, `--count`.
  public var reason: String
  /// Photos written.
  public var photos: Int
  /// Triggers that were still waiting for a frame when it ended.
  public var droppedShots: Int
}

/// `orientcam session`: keeps the source open and takes a photo per trigger, on one event loop
/// (SystemKit's epoll loop) that owns everything: frames (the camera's descriptor, or a timer
/// for the pattern and files when there is a preview), stdin, signals (signalfd), the grabbed
/// key devices, the orientation feed and the SDL preview (pumped from the frame timer).
public final class CameraSession {
  private let options: SessionOptions
  private let environment: SessionEnvironment
  private var logger: Logger { environment.logger }
  private let loop: EventLoop
  private var signalWatch: EventLoop.Watch?
  private var feed: (any OrientationFeed)?
  private var stdinFeed: WatchLinesFeed?
  private var stdinInput: LineInput?
  private var source: (any FrameSource)?
  private var cameraWatch: EventLoop.Watch?
  private var pipeline: PhotoPipeline?
  private var keys: ShutterKeys?
  private var preview: PreviewWindow?
  private var frameTimer: EventLoop.Timer?
  private var statusTimer: EventLoop.Timer?
  private let decoder: JPEGDecoder

  private var reading = OrientationReading(.normal, source: "default")
  private var overlay = OverlayFile.builtIn
  private var overlayLabel = "built-in"
  private var previewSize = (width: 0, height: 0)
  private var layout: Layout?
  private var state = OverlayState()
  private var statusToken = 0
  private var sensorRotation = 0
  private var latestFrame: Frame?
  private var latestFrameShown = true
  private var overlayDirty = true

  private struct Shot {
    var trigger: String
    var time: Int64
    var burstIndex: Int
    /// The orientation when the trigger came: what the user held the device in.
    var reading: OrientationReading
  }
  private var waitingShots: [Shot] = []
  /// Takes the waiting shots of on-demand sources one per loop turn, so that signals (SIGTERM
  /// in the middle of a long burst) are served between photos.
  private var shotTimer: EventLoop.Timer?
  private var photos = 0
  private var endReason: String?
  private var endAfterShots: String?
  private var failure: CaptureError?

  private init(options: SessionOptions, environment: SessionEnvironment) throws(CaptureError) {
    self.options = options
    self.environment = environment
    do { loop = try EventLoop() } catch {
      throw CaptureError(.software, "cannot create the event loop: \(error)")
    }
    do { decoder = try JPEGDecoder() } catch {
      throw CaptureError(.software, "cannot start TurboJPEG: \(error)")
    }
  }

  /// Runs a session until it is told to end (stdin `q`, SIGUSR2, SIGTERM, SIGINT, the window
  /// closed, `--count` photos) or fails.
  ///
  /// Grabbed keys, the camera, the orientation claim and the window are released on every way
  /// out, including errors. Photos are written whole or not at all, so a session stopped at any
  /// moment leaves no partial file.
  ///
  /// - Returns: why it ended and what it did.
  /// - Throws: `CaptureError` for what stopped it from starting or running.
  public static func run(_ options: SessionOptions, environment: SessionEnvironment)
    throws(CaptureError) -> SessionSummary
  {
    let session = try CameraSession(options: options, environment: environment)
    defer { session.shutDown() }
    return try session.run()
  }

  private func run() throws(CaptureError) -> SessionSummary {
    // Signals first, so that a trigger sent the moment the process exists is not fatal.
    signal(SIGPIPE, SIG_IGN)
    do {
      signalWatch = try loop.handleSignals([SIGUSR1, SIGUSR2, SIGTERM, SIGINT, SIGHUP]) {
        [weak self] signo in self?.handleSignal(signo)
      }
    } catch {
      throw CaptureError(.software, "cannot take signals: \(error)")
    }
    try loadOverlay()
    try startOrientation()
    if let endReason { return SessionSummary(reason: endReason, photos: 0, droppedShots: 0) }
    try openSource()
    if !waitingShots.isEmpty, !(source is CameraSource) { scheduleShot() }
    try checkOverlayFits()
    try grabKeys()
    try startStdin()
    try openPreview()
    emitReady()
    while endReason == nil {
      do { try loop.runOnce(timeoutMilliseconds: -1) } catch {
        throw CaptureError(.software, "event loop failed: \(error)")
      }
      if let failure {
        // Said on stdout too, so a program following the events learns why they stop and
        // how many photos it has (they stay: each was complete before it got its name).
        emitEvent([
          ("event", .string("error")), ("trigger", .null), ("message", .string(failure.message)),
        ])
        emitEvent([
          ("event", .string("end")), ("reason", .string("error")),
          ("photos", .number(Double(photos))),
          ("droppedShots", .number(Double(waitingShots.count))),
          ("status", .number(Double(failure.exitCode))),
        ])
        throw failure
      }
    }
    let summary = SessionSummary(
      reason: endReason ?? "end", photos: photos, droppedShots: waitingShots.count)
    emitEvent([
      ("event", .string("end")), ("reason", .string(summary.reason)),
      ("photos", .number(Double(summary.photos))),
      ("droppedShots", .number(Double(summary.droppedShots))),
    ])
    return summary
  }

  /// Releases everything; idempotent, runs on every exit path.
  private func shutDown() {
    keys?.release()
    keys = nil
    frameTimer?.cancel()
    frameTimer = nil
    shotTimer?.cancel()
    shotTimer = nil
    statusTimer?.cancel()
    statusTimer = nil
    cameraWatch?.cancel()
    cameraWatch = nil
    source?.close()
    source = nil
    feed?.stop()
    feed = nil
    stdinInput?.stop()
    stdinInput = nil
    preview = nil
  }

  /// Ends the session; `drain` first takes the photos already asked for (q, SIGUSR2),
  /// otherwise they are dropped (SIGTERM, SIGINT, SIGHUP, window closed).
  private func end(_ reason: String, drain: Bool = false) {
    if drain && !waitingShots.isEmpty {
      if endAfterShots == nil { endAfterShots = reason }
      return
    }
    if endReason == nil { endReason = reason }
    loop.stop()
  }

  private func endIfDrained() {
    if let reason = endAfterShots, waitingShots.isEmpty { end(reason) }
  }

  private func fail(_ error: CaptureError) {
    if failure == nil { failure = error }
    loop.stop()
  }

  /// The source stopped delivering mid-session (the camera unplugged or its driver gone, a
  /// replayed file removed): the session ends with the source's own status (69 for a camera
  /// that went away), keeping the photos already written.
  private func sourceFailed(_ error: CaptureError) {
    let kept = photos == 1 ? "the 1 photo taken is kept" : "the \(photos) photos taken are kept"
    fail(
      CaptureError(
        error.kind, "the source failed during the session: \(error.message); \(kept)"))
  }

  // MARK: - Start-up

  private func loadOverlay() throws(CaptureError) {
    guard let path = options.overlayPath else { return }
    let text: String
    do {
      let fd = try FileDescriptor(path: path)
      text = String(decoding: try fd.readToEnd(limit: 1 << 20), as: UTF8.self)
    } catch {
      throw CaptureError(.noInput, "--overlay \(path): cannot read (\(error.reason))")
    }
    do { overlay = try OverlayFile.parse(text, path: path) } catch {
      throw CaptureError(.badData, "--overlay \(error)")
    }
    overlayLabel = path
  }

  private func startOrientation() throws(CaptureError) {
    let made: any OrientationFeed
    switch options.capture.orientation {
    case .fixed(let o): made = FixedOrientationFeed(o)
    case .watchLines("-"):
      let stdin = WatchLinesFeed(path: nil, logger: logger)
      stdinFeed = stdin
      made = stdin
    case .watchLines(let path): made = WatchLinesFeed(path: path, logger: logger)
    case .auto: made = try environment.autoOrientation(logger)
    }
    feed = made
    var started = false
    try made.start(on: loop) { [weak self] reading in
      guard let self else { return }
      if started { self.orientationChanged(reading) } else { self.reading = reading }
    }
    // Stdin is also where Enter and q come from, so it is read from the start.
    if stdinFeed != nil { try startStdin() }
    // Wait (up to 5 s, serving signals) for a first reading from a pipe or the bus. A file
    // read at once by work posted to the loop answers in the first turn.
    do { try loop.runOnce(timeoutMilliseconds: 0) } catch {
      throw CaptureError(.software, "event loop failed: \(error)")
    }
    if made.current == nil && !made.hasEnded && endReason == nil {
      do {
        try loop.run(
          until: { made.current != nil || made.hasEnded || self.endReason != nil },
          timeoutNanoseconds: 5_000_000_000)
      } catch {
        throw CaptureError(.software, "event loop failed: \(error)")
      }
    }
    started = true
    if endReason != nil { return }
    if let current = made.current {
      reading = current
    } else if let fallback = options.capture.fallback {
      let why = made.problem?.message ?? "\(made.label): no orientation yet"
      logger.warning(
        "\(why); using --orientation-fallback \(fallback.rawValue) until there is one")
      reading = OrientationReading(fallback, source: "fallback")
    } else {
      let why =
        made.problem?.message
        ?? "\(made.label) gave no orientation"
        + (made.hasEnded ? " before it ended" : " within 5 s")
      throw CaptureError(
        .unavailable,
        "\(why). Start orientd (or iio-sensor-proxy), give --orientation NAME, or allow "
          + "--orientation-fallback normal")
    }
  }

  private func openSource() throws(CaptureError) {
    let opened = try CaptureCommand.openSource(
      options.capture, orientation: reading.orientation, logger: logger)
    source = opened
    sensorRotation = options.capture.sensorRotation ?? 0
    if options.capture.sensorRotation == nil, let camera = opened as? CameraSource,
      let reported = camera.reportedSensorRotation
    {
      sensorRotation = reported
    }
    let processor = try PhotoProcessor(
      quality: options.capture.quality, lossless: options.capture.lossless,
      software: environment.software)
    pipeline = PhotoPipeline(
      settings: PhotoSettings(
        rotate: options.capture.rotate, sensorRotation: sensorRotation,
        mirror: options.capture.mirror, template: options.capture.output,
        overwrite: options.capture.force),
      processor: processor)
    if let camera = opened as? CameraSource, let fd = camera.pollDescriptor {
      do {
        cameraWatch = try loop.watch(fd, for: .readable) { [weak self] events in
          self?.cameraReadable(events)
        }
      } catch {
        throw CaptureError(.software, "cannot watch \(camera.name): \(error)")
      }
    }
    // The preview shows the frame turned by the camera's mounting only: the display turns
    // with the device, so the scene looks right on it without the device rotation.
    if let size = options.previewSize {
      previewSize = (size.width, size.height)
    } else {
      let frame = frameSize(of: opened)
      let turned = ImageTransform(quarterTurns: sensorRotation / 90).outputSize(
        width: frame.width, height: frame.height)
      let scale = min(1, 960 / Double(max(turned.width, turned.height)))
      previewSize = (
        max(64, Int((Double(turned.width) * scale).rounded())),
        max(64, Int((Double(turned.height) * scale).rounded()))
      )
    }
  }

  private func frameSize(of source: any FrameSource) -> (width: Int, height: Int) {
    if let pattern = source as? PatternSource { return pattern.size }
    if let camera = source as? CameraSource {
      return (camera.active.width, camera.active.height)
    }
    return (1280, 720)
  }

  private func checkOverlayFits() throws(CaptureError) {
    let problems = OverlayLayout.check(
      overlay, width: previewSize.width, height: previewSize.height)
    guard !problems.isEmpty else {
      layout = OverlayLayout.layout(
        overlay, orientation: reading.orientation, width: previewSize.width,
        height: previewSize.height)
      return
    }
    let text = problems.map { o, conflicts in
      "\(o.rawValue): " + conflicts.map(\.description).joined(separator: "; ")
    }.joined(separator: "; ")
    throw CaptureError(
      .badData,
      "--overlay \(overlayLabel) does not fit a \(previewSize.width)x\(previewSize.height) "
        + "preview: \(text) (check it with orientcam layout)")
  }

  private func grabKeys() throws(CaptureError) {
    guard !options.shutterKeyCodes.isEmpty else { return }
    do {
      let grabbed = try ShutterKeys(
        codes: Set(options.shutterKeyCodes), paths: options.shutterDevices,
        uinputPath: environment.uinputPath, logger: logger)
      keys = grabbed
      try grabbed.watch(
        on: loop,
        pressed: { [weak self] press in
          self?.trigger("key:\(press.key)", at: press.monotonicNanoseconds)
        },
        failed: { [weak self] error in
          self?.logger.warning("\(error); that device no longer triggers photos")
        })
    } catch let error as EvdevError {
      let kind: CaptureError.Kind = error.kind == .io ? .ioError : .unavailable
      throw CaptureError(kind, "--shutter-keys: \(error)")
    } catch {
      throw CaptureError(.software, "--shutter-keys: \(error)")
    }
  }

  private func startStdin() throws(CaptureError) {
    guard stdinInput == nil else { return }
    let input = LineInput(
      descriptor: FileDescriptor(owning: dup(0), path: "stdin"), label: "stdin")
    stdinInput = input
    do {
      try input.start(
        on: loop,
        line: { [weak self] line in self?.stdinLine(line) },
        end: { [weak self] in
          self?.stdinFeed?.finish()
          self?.stdinInput = nil
        })
    } catch {
      throw CaptureError(.software, "cannot read stdin: \(error)")
    }
  }

  private func openPreview() throws(CaptureError) {
    guard !options.headless else { return }
    do {
      preview = try PreviewWindow(
        title: "orientcam", width: previewSize.width, height: previewSize.height,
        fullscreen: options.fullscreen)
    } catch {
      throw CaptureError(.unavailable, "\(error)")
    }
    do {
      let timer = try loop.makeTimer { [weak self] in self?.frameTick() }
      frameTimer = timer
      let period = Int64(1_000_000_000 / options.fps)
      try timer.schedule(afterNanoseconds: 1_000_000, intervalNanoseconds: period)
    } catch {
      throw CaptureError(.software, "cannot start the frame timer: \(error)")
    }
    refreshOverlay()
    frameTick()
  }

  private func emitReady() {
    var devices: [JSONValue] = []
    for device in keys?.devices ?? [] {
      devices.append(
        .object([
          ("path", .string(device.path)), ("name", .string(device.name)),
          ("passOn", device.passOn.map { .string($0) } ?? .null),
        ]))
    }
    emitEvent([
      ("event", .string("ready")), ("pid", .number(Double(getpid()))),
      ("source", .string(source?.name ?? "?")),
      ("orientation", .string(reading.orientation.rawValue)),
      ("orientationSource", .string(reading.source)),
      ("overlay", .string(overlayLabel)),
      (
        "preview",
        preview == nil
          ? .null
          : .object([
            ("width", .number(Double(previewSize.width))),
            ("height", .number(Double(previewSize.height))),
            ("renderer", .string(preview?.rendererName ?? "?")),
          ])
      ),
      ("burst", .number(Double(options.burst))),
      ("shutterKeys", .array(options.shutterKeys.map { .string($0) })),
      ("shutterDevices", .array(devices)),
    ])
    if !options.capture.json {
      logger.notice(
        "session ready: \(source?.name ?? "?"), \(reading.orientation.rawValue); Enter or "
          + "SIGUSR1 takes a photo, q or SIGUSR2 ends"
          + (options.shutterKeys.isEmpty ? "" : ", \(options.shutterKeys.joined(separator: "/"))"))
    }
  }

  // MARK: - Inputs

  private func handleSignal(_ signo: Int32) {
    switch signo {
    case SIGUSR1: trigger("SIGUSR1", at: Clock.monotonicNanoseconds())
    case SIGUSR2: end("SIGUSR2", drain: true)
    case SIGTERM: end("SIGTERM")
    case SIGINT: end("SIGINT")
    default: end("SIGHUP")
    }
  }

  private func stdinLine(_ line: String) {
    let text = line.trimmingCharacters()
    // Keep the watch-line numbers (stdin:N in reports) counting every stdin line.
    if !text.hasPrefix("{") { stdinFeed?.take(line: "") }
    switch text {
    case "": trigger("stdin", at: Clock.monotonicNanoseconds())
    case "q", "quit": end("q", drain: true)
    default:
      if text.hasPrefix("{"), let stdinFeed {
        stdinFeed.take(line: text)
      } else {
        logger.warning(
          "stdin: \"\(text)\" is not a command: an empty line (Enter) takes a photo, q ends"
            + (stdinFeed == nil
              ? "" : ", JSON lines from orientd --watch --json set the orientation"))
      }
    }
  }

  private func orientationChanged(_ new: OrientationReading) {
    let old = reading
    reading = new
    guard old.orientation != new.orientation else { return }
    let started = Clock.monotonicNanoseconds()
    if let pattern = source as? PatternSource, case .pattern(nil) = options.capture.source {
      pattern.heldOrientation = new.orientation
    }
    layout = OverlayLayout.layout(
      overlay, orientation: new.orientation, width: previewSize.width, height: previewSize.height)
    if preview != nil {
      refreshOverlay()
      preview?.present()  // the new layout is on screen before the next frame
    }
    let took = Double(Clock.monotonicNanoseconds() - started) / 1e6
    emitEvent([
      ("event", .string("orientation")), ("orientation", .string(new.orientation.rawValue)),
      ("source", .string(new.source)), ("relayoutMs", .number((took * 1000).rounded() / 1000)),
      ("controls", controlsJSON()),
    ])
  }

  private func controlsJSON() -> JSONValue {
    .array(
      (layout?.placements ?? []).map { p in
        .object([
          ("id", .string(p.control.id)),
          (
            "rect",
            .array([p.rect.x, p.rect.y, p.rect.width, p.rect.height].map { .number(Double($0)) })
          ),
          ("rotation", .number(Double(p.rotation))),
        ])
      })
  }

  private func press(x: Int, y: Int) {
    guard let placement = layout?.button(atX: x, y: y) else {
      emitEvent([
        ("event", .string("press")), ("x", .number(Double(x))), ("y", .number(Double(y))),
        ("control", .null),
      ])
      return
    }
    let control = placement.control
    emitEvent([
      ("event", .string("press")), ("x", .number(Double(x))), ("y", .number(Double(y))),
      ("control", .string(control.id)), ("action", .string(control.action.name)),
    ])
    switch control.action {
    case .capture: trigger("press:\(control.id)", at: Clock.monotonicNanoseconds())
    case .message(let text): showStatus(text, seconds: nil, from: control.id)
    case .status(let text, let seconds): showStatus(text, seconds: seconds, from: control.id)
    case .block, .none: break
    }
  }

  private func showStatus(_ text: String?, seconds: Double?, from control: String?) {
    statusToken += 1
    let token = statusToken
    state.status = text
    statusTimer?.cancel()
    statusTimer = nil
    if let seconds, text != nil {
      do {
        let timer = try loop.makeTimer { [weak self] in
          guard let self, self.statusToken == token else { return }
          self.showStatus(nil, seconds: nil, from: nil)
        }
        try timer.schedule(afterNanoseconds: Int64(seconds * 1e9))
        statusTimer = timer
      } catch {
        logger.warning("cannot time the status: \(error)")
      }
    }
    if preview != nil {
      refreshOverlay()
      preview?.present()
    }
    emitEvent([
      ("event", .string("status")), ("text", text.map { .string($0) } ?? .null),
      ("control", control.map { .string($0) } ?? .null),
      ("seconds", seconds.map { .number($0) } ?? .null),
    ])
  }

  // MARK: - Frames and photos

  private func trigger(_ name: String, at time: Int64) {
    guard endReason == nil, endAfterShots == nil, failure == nil else { return }
    for index in 1...options.burst {
      waitingShots.append(Shot(trigger: name, time: time, burstIndex: index, reading: reading))
    }
    // A camera's shots are taken from the next frames it delivers; the pattern and files
    // deliver a frame when asked (once open: stdin may already ask while the session starts).
    if let source, !(source is CameraSource) { scheduleShot() }
  }

  private func scheduleShot() {
    do {
      if shotTimer == nil {
        shotTimer = try loop.makeTimer { [weak self] in self?.takeWaitingShot() }
      }
      try shotTimer?.schedule(afterNanoseconds: 1)
    } catch {
      fail(CaptureError(.software, "cannot schedule the photo: \(error)"))
    }
  }

  private func takeWaitingShot() {
    guard endReason == nil, failure == nil, let source, !waitingShots.isEmpty else { return }
    let shot = waitingShots.removeFirst()
    if let pattern = source as? PatternSource, case .pattern(nil) = options.capture.source {
      pattern.heldOrientation = shot.reading.orientation
    }
    let frame: Frame
    do { frame = try source.nextFrame() } catch {
      sourceFailed(error)
      return
    }
    takePhoto(frame, shot: shot)
    if !waitingShots.isEmpty { scheduleShot() }
    endIfDrained()
  }

  private func cameraReadable(_ events: EventLoop.Events) {
    guard let camera = source as? CameraSource else { return }
    do {
      while let frame = try camera.frameIfReady() {
        latestFrame = frame
        latestFrameShown = false
        // A frame exposed before the trigger is not the photo the user asked for.
        if let shot = waitingShots.first, frame.monotonicNanoseconds >= shot.time {
          waitingShots.removeFirst()
          takePhoto(frame, shot: shot)
          endIfDrained()
        }
      }
    } catch {
      sourceFailed(error)
    }
    if events.contains(.hangup) || events.contains(.error), source != nil, failure == nil {
      sourceFailed(
        CaptureError(.unavailable, "\(camera.name): the camera went away (poll reports an error)"))
    }
  }

  private func takePhoto(_ frame: Frame, shot: Shot) {
    guard let pipeline, let source else { return }
    let report: PhotoReport
    do {
      report = try pipeline.takePhoto(
        frame, orientation: shot.reading, source: source, triggerNanoseconds: shot.time)
    } catch {
      // A photo that cannot be written (full disk, name taken) is reported; the session goes
      // on, since the next one may work (space freed, {n} moves on).
      logger.error(error.message)
      emitEvent([
        ("event", .string("error")), ("trigger", .string(shot.trigger)),
        ("message", .string(error.message)),
      ])
      return
    }
    photos += 1
    for note in report.notes { logger.notice(note) }
    if options.capture.json {
      var members: [(String, JSONValue)] = [
        ("event", .string("photo")), ("shot", .number(Double(photos))),
        ("trigger", .string(shot.trigger)), ("burstIndex", .number(Double(shot.burstIndex))),
      ]
      for (key, value) in report.json.objectValue ?? [] where key != "timings" {
        members.append((key, value))
      }
      func ms(_ v: Double) -> JSONValue { .number((v * 1000).rounded() / 1000) }
      members.append(
        (
          "timings",
          .object([
            ("triggerToFrameMs", ms(report.triggerToFrameMilliseconds)),
            ("frameToFileMs", ms(report.frameToFileMilliseconds)),
            (
              "triggerToFileMs",
              ms(report.triggerToFrameMilliseconds + report.frameToFileMilliseconds)
            ),
          ])
        ))
      environment.emit(JSONValue.object(members).encoded())
    } else {
      environment.emit(report.path)
    }
    if let count = options.capture.count, photos >= count { end("--count") }
  }

  private func frameTick() {
    guard let preview else { return }
    for input in preview.poll() {
      switch input {
      case .press(let x, let y): press(x: x, y: y)
      case .key("return"), .key("space"): trigger("window:key", at: Clock.monotonicNanoseconds())
      case .key(_): end("q")
      case .close: end("window closed")
      }
      if endReason != nil { return }
    }
    if let source, !(source is CameraSource) {
      // Pattern and files: a fresh frame per tick, as a streaming camera would deliver.
      if let pattern = source as? PatternSource {
        do { latestFrame = try pattern.nextFrame() } catch {
          fail(error)
          return
        }
        latestFrameShown = false
      } else if latestFrame == nil, let file = source as? FileSource, let next = file.paths.first {
        // Show the first file without using it up.
        latestFrame = try? FileSource(pattern: next).nextFrame()
        latestFrameShown = false
      }
    }
    if !latestFrameShown, let frame = latestFrame, let image = previewImage(frame) {
      preview.setFrame(image)
      latestFrameShown = true
    }
    if overlayDirty { refreshOverlay() }
    preview.present()
  }

  private func previewImage(_ frame: Frame) -> RGBImage? {
    var image: RGBImage
    switch frame.content {
    case .raw(let raw): image = raw.rgb()
    case .jpeg(let bytes):
      guard let decoded = try? decoder.decode(bytes) else { return nil }
      image = decoded.transformed(frame.storedTransform)
    }
    let turn = ImageTransform(quarterTurns: sensorRotation / 90)
      .then(options.capture.mirror ? .mirror : .identity)
    return image.transformed(turn)
  }

  private func refreshOverlay() {
    guard let preview, let layout else { return }
    preview.setOverlay(OverlayRenderer.render(layout, state: state))
    overlayDirty = false
  }

  // MARK: - Output

  private func emitEvent(_ members: [(String, JSONValue)]) {
    if options.capture.json {
      environment.emit(JSONValue.object(members).encoded())
    } else if let kind = members.first?.1.stringValue, kind == "status" || kind == "error" {
      logger.info(
        JSONValue.object(members).encoded())
    }
  }
}

extension String {
  /// Without leading and trailing spaces, tabs and carriage returns.
  fileprivate func trimmingCharacters() -> String {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
    guard let start = firstIndex(where: { !isSpace($0) }),
      let end = lastIndex(where: { !isSpace($0) })
    else { return "" }
    return String(self[start...end])
  }
}
