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
import TextFormats
import V4L2Kit

/// What `orientcam session` needs from its surroundings.
public struct SessionEnvironment {
  /// Messages on stderr.
  public var logger: Logger
  /// EXIF Software, e.g. `orientcam 0.1.0`.
  public var software: String
  /// Makes the orientation source for `--orientation auto`: **the hook for orientd over
  /// D-Bus** (see `OrientationSource`; `CaptureEnvironment.autoOrientation` is the same hook for
  /// capture). The default reports that orientd cannot be reached (so `--orientation-fallback`
  /// or an error applies).
  public var autoOrientation: (Logger) throws(CaptureError) -> any OrientationSource
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
    autoOrientation: @escaping (Logger) throws(CaptureError) -> any OrientationSource = { _ in
      UnreachableOrientationSource()
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
/// key devices, the orientation source and the SDL preview (pumped from the frame timer).
///
/// The parts are their own types: `ShotQueue` (photos asked for), `PreviewController` (overlay
/// layout, status label, window), `SessionEvent` (the `--json` lines); the source says how it
/// delivers frames (`FrameDelivery`).
public final class CameraSession {
  private let options: SessionOptions
  private let environment: SessionEnvironment
  private var logger: Logger { environment.logger }
  private let loop: EventLoop
  private var signalWatch: EventLoop.Watch?
  private var orientation: OrientationResolver?
  /// The orientation source when it is stdin (`--orientation-from -`): fed from `stdinLine`.
  private var stdinFeed: WatchLinesSource?
  private var stdinInput: LineInput?
  private var source: (any FrameSource)?
  private var cameraWatch: EventLoop.Watch?
  private var pipeline: PhotoPipeline?
  private var keys: ShutterKeys?
  private var preview: PreviewController?
  private var reading = OrientationReading(.normal, source: "default")
  private var shots = ShotQueue()
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
    let (overlay, overlayLabel) = try PreviewController.loadOverlay(options.overlayPath)
    try startOrientation()
    if let endReason { return SessionSummary(reason: endReason, photos: 0, droppedShots: 0) }
    let source = try openSource()
    let sensor = source.sensorCorrection(override: options.capture.sensorRotation)
    let mirror = options.capture.mirror || source.facesUser
    try makePipeline(sensor: sensor, mirror: mirror)
    if !shots.isEmpty, source.delivery == .onDemand { scheduleShot() }
    let sensorTurn = ImageTransform(quarterTurns: sensor.rotation / 90, mirrored: sensor.mirrored)
    let preview = PreviewController(
      overlay: overlay, label: overlayLabel,
      size: PreviewController.size(
        requested: options.previewSize.map { ($0.width, $0.height) }, frame: source.frameSize,
        sensorTurn: sensorTurn),
      sensorTurn: sensorTurn, mirror: mirror, loop: loop, logger: logger)
    self.preview = preview
    try preview.layOut(for: reading.orientation)
    try grabKeys()
    try startStdin()
    if !options.headless {
      try preview.open(fullscreen: options.fullscreen, fps: options.fps) { [weak self] in
        self?.frameTick()
      }
      frameTick()
    }
    emitReady()
    while endReason == nil {
      do { try loop.runOnce(timeoutMilliseconds: -1) } catch {
        throw CaptureError(.software, "event loop failed: \(error)")
      }
      if let failure {
        // Said on stdout too, so a program following the events learns why they stop and
        // how many photos it has (they stay: each was complete before it got its name).
        emit(.error(trigger: nil, message: failure.message))
        emit(
          .end(
            reason: "error", photos: photos, droppedShots: shots.count, status: failure.status))
        throw failure
      }
    }
    let summary = SessionSummary(
      reason: endReason ?? "end", photos: photos, droppedShots: shots.count)
    emit(
      .end(
        reason: summary.reason, photos: summary.photos, droppedShots: summary.droppedShots,
        status: nil))
    return summary
  }

  /// Releases everything; idempotent, runs on every exit path.
  private func shutDown() {
    keys?.release()
    keys = nil
    shotTimer?.cancel()
    shotTimer = nil
    preview?.close()
    cameraWatch?.cancel()
    cameraWatch = nil
    source?.close()
    source = nil
    orientation?.source.stop()
    orientation = nil
    stdinInput?.stop()
    stdinInput = nil
    preview = nil
  }

  /// Ends the session; `drain` first takes the photos already asked for (q, SIGUSR2),
  /// otherwise they are dropped (SIGTERM, SIGINT, SIGHUP, window closed).
  private func end(_ reason: String, drain: Bool = false) {
    if drain && !shots.isEmpty {
      if endAfterShots == nil { endAfterShots = reason }
      return
    }
    if endReason == nil { endReason = reason }
    loop.stop()
  }

  private func endIfDrained() {
    if let reason = endAfterShots, shots.isEmpty { end(reason) }
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

  private func startOrientation() throws(CaptureError) {
    let made: any OrientationSource
    switch options.capture.orientation {
    case .fixed(let o): made = FixedOrientationSource(o)
    case .watchLines("-"):
      let stdin = WatchLinesSource(.handedIn, logger: logger)
      stdinFeed = stdin
      made = stdin
    case .watchLines(let path): made = WatchLinesSource(.path(path), logger: logger)
    case .auto: made = try environment.autoOrientation(logger)
    }
    let resolver = OrientationResolver(
      source: made, fallback: options.capture.fallback, logger: logger)
    orientation = resolver
    // Stdin is also where Enter and q come from, so it is read from the start.
    if stdinFeed != nil { try startStdin() }
    // Wait (up to 5 s, serving signals) for a first reading from a pipe or the bus.
    var started = false
    try resolver.start(
      on: loop, stopWaiting: { [weak self] in self?.endReason != nil },
      changed: { [weak self] reading in
        guard let self else { return }
        if started { self.orientationChanged(reading) } else { self.reading = reading }
      })
    started = true
    if endReason != nil { return }
    reading = try resolver.resolve(whileWaiting: true)
  }

  private func openSource() throws(CaptureError) -> any FrameSource {
    let opened = try CaptureCommand.openSource(
      options.capture, orientation: reading.orientation, logger: logger)
    source = opened
    if case .streaming(let fd) = opened.delivery {
      do {
        cameraWatch = try loop.watch(fd, for: .readable) { [weak self] events in
          self?.frameReadable(events)
        }
      } catch {
        throw CaptureError(.software, "cannot watch \(opened.name): \(error)")
      }
    }
    return opened
  }

  private func makePipeline(sensor: SensorCorrection, mirror: Bool) throws(CaptureError) {
    let processor = try PhotoProcessor(
      quality: options.capture.quality, lossless: options.capture.lossless,
      software: environment.software)
    pipeline = PhotoPipeline(
      settings: PhotoSettings(
        rotate: options.capture.rotate, sensorRotation: sensor.rotation,
        sensorMirrored: sensor.mirrored, mirror: mirror, template: options.capture.output,
        overwrite: options.capture.force),
      processor: processor)
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

  private func emitReady() {
    let devices = (keys?.devices ?? []).map {
      SessionEvent.KeyDevice(path: $0.path, name: $0.name, passOn: $0.passOn)
    }
    let window = preview.flatMap { p in
      p.rendererName.map {
        SessionEvent.PreviewInfo(width: p.size.width, height: p.size.height, renderer: $0)
      }
    }
    emit(
      .ready(
        pid: getpid(), source: source?.name ?? "?", orientation: reading,
        overlay: preview?.overlayLabel ?? "built-in", preview: window, burst: options.burst,
        shutterKeys: options.shutterKeys, shutterDevices: devices))
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
    let text = String(line.trimming(Padding.spacesAndTabs))
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
    source?.deviceHeld(new.orientation)
    preview?.relayout(for: new.orientation)
    let took = Double(Clock.monotonicNanoseconds() - started) / 1e6
    emit(
      .orientation(new, relayoutMilliseconds: took, controls: preview?.placements ?? []))
  }

  private func press(x: Int, y: Int) {
    guard let placement = preview?.button(atX: x, y: y) else {
      emit(.press(x: x, y: y, control: nil))
      return
    }
    let control = placement.control
    emit(.press(x: x, y: y, control: control))
    switch control.action {
    case .capture: trigger("press:\(control.id)", at: Clock.monotonicNanoseconds())
    case .message(let text): showStatus(text, seconds: nil, from: control.id)
    case .status(let text, let seconds): showStatus(text, seconds: seconds, from: control.id)
    case .block, .none: break
    }
  }

  private func showStatus(_ text: String?, seconds: Double?, from control: String?) {
    preview?.setStatus(text, seconds: seconds) { [weak self] in
      self?.showStatus(nil, seconds: nil, from: nil)
    }
    emit(.status(text: text, control: control, seconds: seconds))
  }

  // MARK: - Frames and photos

  private func trigger(_ name: String, at time: Int64) {
    guard endReason == nil, endAfterShots == nil, failure == nil else { return }
    shots.add(trigger: name, at: time, burst: options.burst, reading: reading)
    // A camera's shots are taken from the next frames it delivers; the pattern and files
    // deliver a frame when asked (once open: stdin may already ask while the session starts).
    if let source, source.delivery == .onDemand { scheduleShot() }
  }

  private func scheduleShot() {
    do {
      if shotTimer == nil {
        shotTimer = try loop.makeTimer { [weak self] in self?.takeWaitingShot() }
      }
      try shotTimer?.schedule(after: .nanoseconds(1))
    } catch {
      fail(CaptureError(.software, "cannot schedule the photo: \(error)"))
    }
  }

  private func takeWaitingShot() {
    guard endReason == nil, failure == nil, let source, let shot = shots.takeNext() else {
      return
    }
    source.deviceHeld(shot.reading.orientation)
    let frame: Frame
    do { frame = try source.nextFrame() } catch {
      sourceFailed(error)
      return
    }
    takePhoto(frame, shot: shot)
    if !shots.isEmpty { scheduleShot() }
    endIfDrained()
  }

  /// A streaming source's descriptor is readable: take the frames that are ready, each shown
  /// in the preview and answering the oldest waiting shot it was exposed after.
  private func frameReadable(_ events: EventLoop.Events) {
    guard let source else { return }
    do {
      while let frame = try source.frameIfReady() {
        preview?.show(frame)
        // A frame exposed before the trigger is not the photo the user asked for.
        if let shot = shots.take(forFrameAt: frame.monotonicNanoseconds) {
          takePhoto(frame, shot: shot)
          endIfDrained()
        }
      }
    } catch {
      sourceFailed(error)
    }
    if events.contains(.hangup) || events.contains(.error), self.source != nil, failure == nil {
      sourceFailed(
        CaptureError(.unavailable, "\(source.name): the camera went away (poll reports an error)"))
    }
  }

  private func takePhoto(_ frame: Frame, shot: ShotQueue.Shot) {
    guard let pipeline, let source else { return }
    let report: PhotoReport
    do {
      report = try pipeline.takePhoto(
        frame, orientation: shot.reading, source: source, triggerNanoseconds: shot.time)
    } catch {
      // A photo that cannot be written (full disk, name taken) is reported; the session goes
      // on, since the next one may work (space freed, {n} moves on).
      logger.error(error.message)
      emit(.error(trigger: shot.trigger, message: error.message))
      return
    }
    photos += 1
    for note in report.notes { logger.notice(note) }
    if options.capture.json {
      emit(.photo(shot: photos, trigger: shot.trigger, burstIndex: shot.burstIndex, report: report))
    } else {
      environment.emit(report.path)
    }
    if let count = options.capture.count, photos >= count { end("--count") }
  }

  private func frameTick() {
    guard let preview, preview.isOpen else { return }
    for input in preview.inputs() {
      switch input {
      case .press(let x, let y): press(x: x, y: y)
      case .key("return"), .key("space"): trigger("window:key", at: Clock.monotonicNanoseconds())
      case .key("q"), .key("escape"): end("q")
      case .key: break  // any other key does nothing (it must not end the session)
      case .close: end("window closed")
      }
      if endReason != nil { return }
    }
    // Pattern and files: a frame per tick, as a streaming camera would deliver (files: the
    // first, once); a camera's frames come through `frameReadable`.
    if let source, source.delivery == .onDemand {
      do {
        if let frame = try source.previewFrame() { preview.show(frame) }
      } catch {
        fail(error)
        return
      }
    }
    preview.present()
  }

  // MARK: - Output

  /// Writes an event: with `--json` every event as a line on stdout; without, status and
  /// error events go to the log (photos print their path in `takePhoto`).
  private func emit(_ event: SessionEvent) {
    if options.capture.json {
      environment.emit(OrientcamJSON.line(event.json))
    } else if event.name == "status" || event.name == "error" {
      logger.info(event.json.encoded())
    }
  }
}
