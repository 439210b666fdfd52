import FaceClient
import OrientCore
import OrientLog
import SystemKit

/// What face-aware rotation's policy depends on besides `[face] enabled`: the session's lock
/// and power saving, as the daemon's followers on the system bus report them
/// (Bus/SystemStateFollower.swift).
public struct FaceConditions: Equatable, Sendable {
  /// logind's `LockedHint` of `seat0`'s active session; `nil` when unknown (no logind, no
  /// active session, not read yet), which counts as locked.
  public var sessionLocked: Bool?
  /// power-profiles-daemon's `ActiveProfile` is `power-saver` (absent: not saving).
  public var powerSaving: Bool

  /// Creates conditions; the defaults are what is assumed before anything was read.
  public init(sessionLocked: Bool? = nil, powerSaving: Bool = false) {
    self.sessionLocked = sessionLocked
    self.powerSaving = powerSaving
  }
}

/// Face-aware rotation in the daemon: the detector's changes go through a `FaceResolution`
/// (orientd-face asked, with a hard timeout) when `[face] enabled` is set and orientd-face is
/// found; otherwise they are published as they are. `DaemonCore` owns it and publishes what
/// it decides.
final class FaceService {
  private let scheduler: any Scheduler
  private let asker: (any FaceAsking)?
  private let locate: (String?) -> String?
  private let logger: Logger
  /// The settings in use.
  private(set) var settings = FaceSettings()
  /// The resolver, while face-aware rotation is on and usable.
  private(set) var resolution: FaceResolution?
  /// The session's lock and power saving.
  var conditions = FaceConditions()
  /// A decision that arrives while `propose` runs is returned by it, not sent here.
  var onDecision: (FaceDecision) -> Void = { _ in }
  /// orientd-face started or stopped running.
  var onCameraInUse: (Bool) -> Void = { _ in }
  private var proposing = false
  private var decidedNow: FaceDecision?

  /// Questions are started with `asker` (`nil`: face-aware rotation cannot run), the program
  /// is found with `locate` (`FaceProgram.locate`).
  init(
    scheduler: any Scheduler, asker: (any FaceAsking)?,
    locate: @escaping (String?) -> String?, logger: Logger
  ) {
    self.scheduler = scheduler
    self.asker = asker
    self.locate = locate
    self.logger = logger
  }

  /// What `FaceCameraPolicy` says now.
  var policy: FaceCameraPolicy.Decision {
    FaceCameraPolicy.decide(
      enabled: settings.enabled, sessionLocked: conditions.sessionLocked,
      powerSaving: conditions.powerSaving)
  }

  /// Applies `[face]` (at start and on reload). New settings drop a question in flight (its
  /// proposal is asked again by the caller) and build a new resolver.
  func configure(_ new: FaceSettings, published: Orientation) {
    guard new != settings || (new.enabled && resolution == nil) else { return }
    settings = new
    resolution?.close()
    resolution = nil
    guard new.enabled else { return }
    guard let asker else {
      logger.warning("face-aware rotation is enabled but cannot run here (no event loop)")
      return
    }
    guard let program = locate(new.program) else {
      logger.warning(
        "[face] enabled, but orientd-face is not found"
          + (new.program.map { " at \($0) (not an executable)" }
            ?? " beside orientd or in PREFIX/libexec/orientd")
          + ": publishing the accelerometer's orientation without asking the camera")
      return
    }
    let made = FaceResolution(
      settings: new, program: program, scheduler: scheduler, asker: asker,
      logger: logger, published: published
    ) { [weak self] in self?.policy ?? .refused("shutting down") }
    made.onDecision = { [weak self] decision in self?.decided(decision) }
    made.onCameraInUse = { [weak self] inUse in self?.onCameraInUse(inUse) }
    resolution = made
    logger.notice(
      "face-aware rotation on: camera \(new.camera), orientd-face \(program), timeout "
        + "\(new.timeoutMilliseconds) ms")
  }

  /// The detector committed `detected` while `published` is shown.
  ///
  /// - Returns: the orientation to publish now, and the decision taken at once if any (the
  ///   camera was not asked: not allowed, nothing to keep); `nil` orientation when face-aware
  ///   rotation is off (publish `detected`).
  func propose(_ detected: Orientation, published: Orientation) -> (
    orientation: Orientation, decision: FaceDecision?
  ) {
    guard let resolution else { return (detected, nil) }
    follow(published)
    proposing = true
    decidedNow = nil
    resolution.propose(detected)
    proposing = false
    let decision = decidedNow
    decidedNow = nil
    return (resolution.published, decision)
  }

  /// Something else set what is published (a posture rule, the sensor going away): a question
  /// in flight is dropped and later proposals are judged against `published`.
  func follow(_ published: Orientation) {
    guard let resolution, resolution.published != published else { return }
    resolution.reset(published: published, reason: "the orientation was set to \(published)")
  }

  /// Drops a question in flight (the daemon stops).
  func close() {
    resolution?.close()
    resolution = nil
  }

  private func decided(_ decision: FaceDecision) {
    if proposing {
      decidedNow = decision
    } else {
      onDecision(decision)
    }
  }
}
