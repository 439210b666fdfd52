/// What the camera says about a proposed rotation.
public enum FaceAnswer: String, CaseIterable, Sendable, CustomStringConvertible {
  /// A face is upright in the current orientation: keep it.
  case veto
  /// The camera worked and gives no reason to keep the current orientation (no face, or a face
  /// upright in the proposed orientation or another one).
  case accept
  /// The camera could not be asked or could not answer (busy, missing, failed, not allowed).
  case unknown

  /// The JSON name.
  public var description: String { rawValue }

  /// The answer for a face found upright in `face` (`nil`: no face) when the device is in
  /// `current` and the accelerometer proposes `proposed`, with the reason for the log.
  public static func judge(face: Orientation?, current: Orientation, proposed: Orientation)
    -> (answer: FaceAnswer, reason: String)
  {
    guard let face, face != .undefined else { return (.accept, "no face") }
    if face == current {
      return (.veto, "a face is upright in \(current), the current orientation")
    }
    if face == proposed { return (.accept, "a face is upright in \(proposed), as proposed") }
    return (
      .accept,
      "a face is upright in \(face), neither the current (\(current)) nor the proposed "
        + "(\(proposed)) orientation"
    )
  }
}

/// The face-aware rotation resolver, as a pure state machine: the accelerometer's proposals
/// and the camera's answers go in, what to publish comes out. No clock, no I/O: the caller
/// passes the time (seconds on any monotonic clock), runs the camera for `.ask`, stops it for
/// `.cancel`, and calls `timedOut` when a request's deadline passes.
///
/// As Android 12's rotation resolver: a proposal is committed on `accept`, `unknown` or a
/// timeout, and the current orientation kept on a `veto`; a proposal is never held longer
/// than the timeout. A proposal that goes back to the published orientation while the camera
/// is asked cancels the question; a newer proposal replaces it.
public struct FaceResolver: Sendable {
  /// One question to the camera.
  public struct Request: Equatable, Sendable {
    /// Identifies the request (answers to older ones are ignored).
    public var id: Int
    /// The orientation published now (kept on a veto).
    public var current: Orientation
    /// The accelerometer's proposal.
    public var proposed: Orientation
    /// When it was asked.
    public var asked: Double
    /// When it times out (committing `proposed`).
    public var deadline: Double

    /// Creates a request.
    public init(
      id: Int, current: Orientation, proposed: Orientation, asked: Double, deadline: Double
    ) {
      self.id = id
      self.current = current
      self.proposed = proposed
      self.asked = asked
      self.deadline = deadline
    }
  }

  /// What the caller must do.
  public enum Action: Equatable, Sendable {
    /// Publish this orientation now; the reason is for the log.
    case commit(Orientation, reason: String)
    /// Ask the camera; call `answer` or, at `deadline`, `timedOut`.
    case ask(Request)
    /// Stop asking (kill the helper); its answer, if any, is ignored.
    case cancel(id: Int, reason: String)
    /// The camera vetoed `proposed`: keep publishing `current`.
    case keep(Orientation, proposed: Orientation, reason: String)
  }

  /// How long the camera may take, in seconds (Android's `rotation_resolver_timeout_millis`
  /// is 700 ms).
  public var timeout: Double
  /// The orientation published (`undefined` before the first).
  public private(set) var published: Orientation
  /// The question in flight, if any.
  public private(set) var pending: Request?
  private var nextID = 1

  /// Creates a resolver that has published `published`.
  public init(timeout: Double = 0.7, published: Orientation = .undefined) {
    self.timeout = timeout
    self.published = published
  }

  /// The accelerometer proposes `orientation` (its detector committed a change) at `now`;
  /// `camera` says whether the camera may be used now (`FaceCameraPolicy.decide`), with the
  /// reason when it may not (the proposal is then committed at once).
  public mutating func propose(
    _ orientation: Orientation, at now: Double, camera: FaceCameraPolicy.Decision = .allowed
  ) -> [Action] {
    var actions: [Action] = []
    if let pending {
      if orientation == pending.proposed { return [] }
      self.pending = nil
      let why =
        orientation == published
        ? "the device turned back to \(published)" : "a newer proposal, \(orientation)"
      actions.append(.cancel(id: pending.id, reason: why))
      if orientation == published { return actions }
    }
    if orientation == published { return actions }
    if orientation == .undefined || published == .undefined {
      return actions + [commit(orientation, "nothing to keep")]
    }
    if case .refused(let reason) = camera {
      return actions + [commit(orientation, "camera not used: \(reason)")]
    }
    let request = Request(
      id: nextID, current: published, proposed: orientation, asked: now, deadline: now + timeout)
    nextID += 1
    pending = request
    return actions + [.ask(request)]
  }

  /// The camera's answer to request `id`, arriving at `now`.
  public mutating func answer(_ answer: FaceAnswer, reason: String, for id: Int, at now: Double)
    -> [Action]
  {
    guard let pending, pending.id == id else { return [] }
    self.pending = nil
    if now > pending.deadline {
      return [commit(pending.proposed, "the camera answered after the timeout")]
    }
    switch answer {
    case .veto:
      return [.keep(published, proposed: pending.proposed, reason: reason)]
    case .accept, .unknown:
      return [commit(pending.proposed, "camera: \(answer) (\(reason))")]
    }
  }

  /// Request `id`'s deadline passed with no answer.
  public mutating func timedOut(_ id: Int, at now: Double) -> [Action] {
    guard let pending, pending.id == id else { return [] }
    self.pending = nil
    let waited = Int(((now - pending.asked) * 1000).rounded())
    return [
      .cancel(id: id, reason: "no answer within \(Int((timeout * 1000).rounded())) ms"),
      commit(pending.proposed, "the camera timed out after \(waited) ms"),
    ]
  }

  private mutating func commit(_ orientation: Orientation, _ reason: String) -> Action {
    published = orientation
    return .commit(orientation, reason: reason)
  }
}
