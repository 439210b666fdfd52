import OrientCore
import OrientLog
import SystemKit

/// What happened to one proposal, for the caller's output and log.
public struct FaceDecision: Equatable, Sendable {
  /// The orientation published after it.
  public var orientation: Orientation
  /// The accelerometer's proposal.
  public var proposed: Orientation
  /// Whether `orientation` changed (false: a veto kept it).
  public var changed: Bool
  /// The camera's answer: veto, accept, unknown, `timeout`, or `nil` when it was not asked.
  public var answer: String?
  /// Why, for the log.
  public var reason: String
  /// From the proposal to the decision, in milliseconds (0 when the camera was not asked).
  public var waitedMilliseconds: Double
}

/// One question being asked: a running orientd-face (`FaceQuery`) or a unit test's stand-in.
public protocol FaceQuestion: AnyObject {
  /// Stops it (kills the child); its completion is not called.
  func cancel()
  /// Whether its process has not been reaped yet.
  var isRunning: Bool { get }
}

extension FaceQuery: FaceQuestion {}

/// Starts questions: the seam between `FaceResolution` and the orientd-face child, so the
/// resolution's logic runs in unit tests on a `ManualScheduler` with a scripted camera.
public protocol FaceAsking: AnyObject {
  /// Starts `arguments` (the program first); `completion` runs once on the loop unless the
  /// question is cancelled.
  ///
  /// - Throws: `SystemError` when it cannot be started.
  func ask(
    _ arguments: [String], timeout: Duration, completion: @escaping (FaceQuery.Outcome) -> Void
  ) throws(SystemError) -> any FaceQuestion
}

/// Runs orientd-face as a child on `loop` (`FaceQuery`).
public final class ChildFaceAsking: FaceAsking {
  private let loop: EventLoop

  /// Children run on `loop`.
  public init(loop: EventLoop) { self.loop = loop }

  /// Starts a `FaceQuery`.
  public func ask(
    _ arguments: [String], timeout: Duration, completion: @escaping (FaceQuery.Outcome) -> Void
  ) throws(SystemError) -> any FaceQuestion {
    try FaceQuery(arguments, timeout: timeout, loop: loop, completion: completion)
  }
}

/// The face resolver on an event loop: `FaceResolver`'s decisions carried out with
/// `FaceAsking` (orientd-face children). One proposal at a time is asked; a newer one cancels
/// it; the resolution's own timer (on `scheduler`) ends a question at its deadline whatever
/// the camera does.
///
/// Used by `orientd replay --face-camera` and by the daemon (`DaemonCore`), which calls
/// `propose` where it would publish a detector change, publishes in `onDecision`, and follows
/// `onCameraInUse` for its `CameraInUse` property (docs/face.md).
public final class FaceResolution {
  /// The settings (`[face]`).
  public let settings: FaceSettings
  /// The orientd-face program.
  public let program: String
  private let scheduler: any Scheduler
  private let asker: any FaceAsking
  private let logger: Logger
  private var resolver: FaceResolver
  private var query: (any FaceQuestion)?
  private var deadline: (any LoopTimer)?
  /// Questions stopped or answered whose child has not been reaped yet (a timed-out one was
  /// killed; its exit is reaped on the loop).
  private var reaping: [any FaceQuestion] = []

  /// Whether a child of an earlier question has still to be reaped: a short-lived program
  /// runs its loop until it is not before it exits.
  public var childrenRunning: Bool {
    reaping.removeAll { !$0.isRunning }
    return !reaping.isEmpty
  }
  private var policy: () -> FaceCameraPolicy.Decision
  /// Called with every decision: publish `orientation` when `changed`.
  public var onDecision: (FaceDecision) -> Void = { _ in }
  /// Called when orientd-face starts or stops running for a proposal (an indicator).
  public var onCameraInUse: (Bool) -> Void = { _ in }

  /// Creates the resolver on seams: time and timers from `scheduler`, questions from
  /// `asker`; `policy` is asked at each proposal whether the camera may be used.
  public init(
    settings: FaceSettings, program: String, scheduler: any Scheduler, asker: any FaceAsking,
    logger: Logger, published: Orientation = .undefined,
    policy: @escaping () -> FaceCameraPolicy.Decision = { .allowed }
  ) {
    self.settings = settings
    self.program = program
    self.scheduler = scheduler
    self.asker = asker
    self.logger = logger
    self.policy = policy
    resolver = FaceResolver(
      timeout: Double(settings.timeoutMilliseconds) / 1000, published: published)
  }

  /// Creates the resolver running orientd-face children on `loop`.
  public convenience init(
    settings: FaceSettings, program: String, loop: EventLoop, logger: Logger,
    published: Orientation = .undefined,
    policy: @escaping () -> FaceCameraPolicy.Decision = { .allowed }
  ) {
    self.init(
      settings: settings, program: program, scheduler: loop, asker: ChildFaceAsking(loop: loop),
      logger: logger, published: published, policy: policy)
  }

  /// The orientation published.
  public var published: Orientation { resolver.published }
  /// Whether the camera is being asked.
  public var isAsking: Bool { resolver.pending != nil }

  /// The question in flight: the orientation kept and the one proposed.
  public var pending: (current: Orientation, proposed: Orientation)? {
    resolver.pending.map { ($0.current, $0.proposed) }
  }

  /// Something other than the resolver changed what is published (the sensor went away, a
  /// posture rule holds the orientation): a question in flight is dropped, nothing is
  /// decided, and later proposals are judged against `orientation`.
  public func reset(published orientation: Orientation, reason: String) {
    if let pending = resolver.pending {
      logger.info("face: question \(pending.id) dropped: \(reason)")
      stopQuery()
    }
    resolver = FaceResolver(timeout: resolver.timeout, published: orientation)
  }

  /// Drops a question in flight without deciding it (the daemon stops).
  public func close() { reset(published: resolver.published, reason: "shutting down") }

  /// The accelerometer's detector committed `orientation`.
  public func propose(_ orientation: Orientation) {
    let camera =
      orientation == resolver.published || resolver.published == .undefined
      ? .allowed : policy()
    perform(resolver.propose(orientation, at: now(), camera: camera))
  }

  /// The arguments of `orientd-face resolve` for `request`.
  public static func arguments(
    program: String, settings: FaceSettings, request: FaceResolver.Request
  ) -> [String] {
    var arguments = [
      program, "resolve", "--camera", settings.camera, "--current", request.current.rawValue,
      "--proposed", request.proposed.rawValue, "--timeout", "\(settings.timeoutMilliseconds)",
      "--frames", "\(settings.frames)",
    ]
    if let rotation = settings.sensorRotation {
      arguments += ["--sensor-rotation", "\(rotation)"]
    }
    if !settings.mirror { arguments.append("--no-mirror") }
    return arguments
  }

  private func now() -> Double { scheduler.now.seconds }

  private func perform(_ actions: [FaceResolver.Action]) {
    for action in actions {
      switch action {
      case .ask(let request):
        ask(request)
      case .cancel(let id, let reason):
        logger.info("face: question \(id) dropped: \(reason)")
        stopQuery()
      case .commit(let orientation, let reason):
        let (proposed, answer, waited) = pendingFacts
        decided(
          FaceDecision(
            orientation: orientation, proposed: proposed ?? orientation, changed: true,
            answer: answer, reason: reason, waitedMilliseconds: waited))
      case .keep(let orientation, let proposed, let reason):
        decided(
          FaceDecision(
            orientation: orientation, proposed: proposed, changed: false, answer: "veto",
            reason: reason, waitedMilliseconds: pendingFacts.waited))
      }
    }
  }

  /// The request being decided and how it was answered (set while its actions run).
  private var pendingFacts: (proposed: Orientation?, answer: String?, waited: Double) = (
    nil, nil, 0
  )

  private func decided(_ decision: FaceDecision) {
    pendingFacts = (nil, nil, 0)
    logger.notice(
      decision.changed
        ? "face: \(decision.orientation) committed (\(decision.reason))"
        : "face: kept \(decision.orientation), not \(decision.proposed) (\(decision.reason))")
    onDecision(decision)
  }

  private func ask(_ request: FaceResolver.Request) {
    let arguments = FaceResolution.arguments(
      program: program, settings: settings, request: request)
    logger.info(
      "face: asking the camera (\(settings.camera)) about \(request.current) -> "
        + "\(request.proposed)")
    do {
      query = try asker.ask(arguments, timeout: .milliseconds(settings.timeoutMilliseconds)) {
        [weak self] outcome in self?.finished(request, outcome)
      }
      onCameraInUse(true)
    } catch {
      query = nil
      pendingFacts = (request.proposed, "unknown", 0)
      perform(
        resolver.answer(
          .unknown, reason: "cannot run \(program): \(error.reason)", for: request.id, at: now()))
      return
    }
    // The resolution's own deadline: whatever the child or its stand-in does, the proposal
    // is decided at the timeout.
    do {
      let timer = try scheduler.timer { [weak self] in self?.deadlinePassed(request) }
      try timer.schedule(after: .milliseconds(settings.timeoutMilliseconds), interval: nil)
      deadline = timer
    } catch {
      logger.warning("face: no deadline timer (\(error)); orientd-face's own timeout applies")
    }
  }

  private func deadlinePassed(_ request: FaceResolver.Request) {
    guard resolver.pending?.id == request.id else { return }
    stopQuery()
    let at = now()
    pendingFacts = (request.proposed, "timeout", ((at - request.asked) * 10000).rounded() / 10)
    perform(resolver.timedOut(request.id, at: at))
  }

  private func finished(_ request: FaceResolver.Request, _ outcome: FaceQuery.Outcome) {
    if let done = query, done.isRunning { reaping.append(done) }
    query = nil
    deadline?.cancel()
    deadline = nil
    onCameraInUse(false)
    let at = now()
    let waited = ((at - request.asked) * 10000).rounded() / 10
    switch outcome {
    case .answered(let reply):
      pendingFacts = (request.proposed, reply.answer.rawValue, waited)
      perform(resolver.answer(reply.answer, reason: reply.reason, for: request.id, at: at))
    case .failed(let message):
      pendingFacts = (request.proposed, "unknown", waited)
      perform(resolver.answer(.unknown, reason: message, for: request.id, at: at))
    case .timedOut:
      pendingFacts = (request.proposed, "timeout", waited)
      perform(resolver.timedOut(request.id, at: at))
    }
  }

  private func stopQuery() {
    deadline?.cancel()
    deadline = nil
    guard let running = query else { return }
    running.cancel()
    if running.isRunning { reaping.append(running) }
    query = nil
    onCameraInUse(false)
  }
}
