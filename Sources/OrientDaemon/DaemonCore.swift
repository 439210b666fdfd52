import DBusKit
import FaceClient
import OrientCore
import OrientLog
import OrientWire
import Sensors
import SystemKit

/// The daemon's logic, on seams: sensors (`SensorSource`), the bus (`BusPublisher`), the
/// claimers' tracker (`ClientTracking`), polkit (`Authority`) and time (`Scheduler`). The
/// daemon gives it the real ones (`OrientDaemon`); unit tests give it scripted ones and a
/// `ManualScheduler`, so that claims, the first-reading hold, polkit gating and hotplug run in
/// milliseconds without a bus or devices.
///
/// - A kind is read only while a claim (or orientd's own tablet-mode switch) wants it; the
///   first claim starts it afresh: the detector forgets its state, so the first reading is
///   committed at once, and the claim's reply waits for it (`ClaimDesk`).
/// - `PropertiesChanged` carries only the changed properties and goes to the claimers of what
///   changed only (unicast), like iio-sensor-proxy 3.1+; a sensor appearing or going away is
///   broadcast.
/// - While nothing is claimed the properties keep the last values published (iio-sensor-proxy
///   does the same); a claim's snapshot brings its client up to date.
public final class DaemonCore {
  /// What clients are told.
  public private(set) var published = PublishedState()
  /// The configuration in use.
  public private(set) var configuration: DaemonConfiguration
  /// Called when no kind is wanted any more (the daemon gives memory back).
  public var onIdle: (() -> Void)?

  let sensors: any SensorSource
  let desk: ClaimDesk
  let orientation: OrientationService
  let posture: PostureController
  let sleep: SleepGuard
  let face: FaceService
  let motion: MotionService
  /// `OpenStream`'s streams (only with a loop: they are sockets on it).
  let streams: MotionStreams?
  private var bus: (any BusPublisher)?
  private var logger: Logger
  private var wanted: Set<SensorKind> = []
  private var isShutDown = false

  /// A core on `sensors` and `scheduler`; firmware tablet-mode switches are followed on `loop`
  /// and `watcher` when given. Face-aware rotation asks with `faceAsker` (default: orientd-face
  /// children on `loop`) and finds the program with `locateFaceProgram`.
  public init(
    configuration: DaemonConfiguration, sensors: any SensorSource, scheduler: any Scheduler,
    claimReplyBound: Duration, logger: Logger, loop: EventLoop? = nil,
    watcher: DeviceWatcher? = nil, faceAsker: (any FaceAsking)? = nil,
    locateFaceProgram: @escaping (String?) -> String? = FaceProgram.locate
  ) {
    self.configuration = configuration
    self.sensors = sensors
    self.logger = logger
    desk = ClaimDesk(scheduler: scheduler, bound: claimReplyBound, logger: logger)
    orientation = OrientationService(parameters: configuration.detector, logger: logger)
    sleep = SleepGuard(sensors: sensors, scheduler: scheduler, logger: logger.child("sleep"))
    motion = MotionService(settings: configuration.motion, logger: logger.child("motion"))
    streams = loop.map {
      MotionStreams(loop: $0, scheduler: scheduler, logger: logger.child("motion"))
    }
    posture = PostureController(
      sensors: sensors, loop: loop, watcher: watcher, settings: configuration.posture,
      logger: logger.child("posture"))
    face = FaceService(
      scheduler: scheduler, asker: faceAsker ?? loop.map { ChildFaceAsking(loop: $0) },
      locate: locateFaceProgram, logger: logger.child("face"))
    sensors.onEvent = { [weak self] event in self?.sensorEvent(event) }
    streams?.onChange = { [weak self] in self?.retuneMotion() }
    desk.onClaimsChanged = { [weak self] in self?.claimsChanged() }
    desk.answer = { [weak self] call, target in
      if let self { self.answer(call, target) } else { call.answer() }
    }
    posture.onChange = { [weak self] in self?.postureChanged() }
    posture.onWantsSensorsChanged = { [weak self] in self?.applyWanted() }
    face.onDecision = { [weak self] decision in self?.faceDecided(decision) }
    face.onCameraInUse = { [weak self] inUse in self?.cameraInUse(inUse) }
    face.configure(configuration.face, published: published.orientation)
  }

  /// Once the sensors are enumerated: the posture looks for firmware switches (and may want
  /// the sensors already, for orientd's own switch).
  public func begin() {
    posture.begin(hasDisplay: sensors.status(of: .accelerometer) != nil)
    published.posture = posture.state
    published.motion = motion.state
    applyWanted()
  }

  /// Goes on the bus: publishes through `bus`, tracks claimers with `tracker`, and asks
  /// `authority` about the targets that have a polkit action.
  public func attach(
    bus: any BusPublisher, tracker: any ClientTracking, authority: any Authority
  ) {
    self.bus = bus
    desk.tracker = tracker
    desk.gate = ClaimGate(authority: authority, logger: logger.child("polkit"))
  }

  /// Follows system suspend and resume through `signals` (logind on the real bus): the
  /// sensors read are switched off before the suspend and read afresh after it (`SleepGuard`).
  public func attach(sleep signals: any SleepSignals) { sleep.attach(signals) }

  /// Whether the system is between `PrepareForSleep(true)` and `PrepareForSleep(false)`.
  public var isAsleep: Bool { sleep.isAsleep }

  /// Who holds claims.
  public var claims: ClaimSet { desk.claims }

  /// Whether the display accelerometer is being read.
  public var isSampling: Bool { sensors.isReading(.accelerometer) }

  /// Readings fed to the detector since start.
  public var samplesProcessed: Int { orientation.samplesProcessed }

  /// The posture's state.
  public var postureState: PostureState { posture.state }

  /// Whether proposals go through the face resolver (`[face] enabled` and orientd-face
  /// found).
  public var isFaceResolving: Bool { face.resolution != nil }

  /// The session's lock and power saving, from the bus followers.
  public var faceConditions: FaceConditions {
    get { face.conditions }
    set { face.conditions = newValue }
  }

  // MARK: Calls

  /// A `Claim*` call of `target`. Motion with neither a gyroscope nor a rotation sensor is
  /// refused (`NoSensor`, as dbus/org.orientd.Motion1.xml says); `HasGyroscope` and
  /// `HasRotation` tell a client when to try again.
  public func claim(_ call: any ClaimCall, _ target: ClaimTarget) {
    if target == .motion, sensors.status(of: .gyroscope) == nil,
      sensors.status(of: .rotation) == nil
    {
      return call.fail(
        Wire.noMotionSensorError, "no gyroscope or rotation sensor (HasRotation is false)")
    }
    desk.claim(call, target)
  }

  /// A `Release*` call of `target`.
  public func release(_ call: any ClaimCall, _ target: ClaimTarget) {
    desk.release(call, target)
  }

  /// A tracked claimer left the bus.
  public func vanished(_ name: String) { desk.vanished(name) }

  /// `GetReading`.
  public func reading() throws(DBusError) -> [DBusValue] {
    try orientation.reading(hasAccelerometer: published.hasAccelerometer)
  }

  /// Applies a new configuration: new detector parameters start a fresh detector, a changed
  /// accelerometer part re-describes the sensors and reads them afresh, new ambient intervals
  /// apply from the next claim, new `[motion]` settings start a fresh fusion.
  public func reload(_ new: DaemonConfiguration) {
    orientation.reload(new.detector)
    let motionChanged = new.motion != configuration.motion
    configuration = new
    sensors.update(configuration: new.sensors)
    posture.reload(new.posture)
    if motionChanged {
      motion.reload(new.motion)
      publishMotion(motion.state.keepingValues(of: published.motion))
      retuneMotion()
    }
    let wasResolving = face.resolution
    face.configure(new.face, published: published.orientation)
    if face.resolution !== wasResolving {
      // A question the old settings were asking is asked again with the new ones.
      proposeCurrentDetection()
    }
  }

  /// Stops reading (restoring the sensors' settings), answers held claims, fails calls waiting
  /// for polkit; nothing is claimed afterwards. Idempotent.
  public func shutdown() {
    guard !isShutDown else { return }
    isShutDown = true
    sensors.stopAll()
    streams?.removeAll()
    wanted = []
    sleep.close()
    posture.shutdown()
    face.close()
    desk.close()
  }

  // MARK: Claims and what is read

  private func claimsChanged() {
    posture.setClaimed(desk.claims.isClaimed(.posture))
    // A client that released motion or left the bus loses its streams.
    for client in streamOwners where !desk.claims.holds(client, .motion) {
      streams?.remove(client: client)
      streamOwners.remove(client)
    }
    applyWanted()
  }

  /// Reads the kinds the claims and the posture want, and only those.
  private func applyWanted() {
    let now = isShutDown ? [] : desk.claims.wantedKinds.union(posture.wantedKinds)
    // Most claims and releases change nothing here (the 2nd to the 1000th client).
    guard now != wanted else { return }
    let before = wanted
    wanted = now
    sleep.wanted = now
    // Before a motion sensor opens: it opens at the rate its clients need.
    retuneMotion()
    for kind in SensorKind.allCases where now.contains(kind) != before.contains(kind) {
      if now.contains(kind) {
        if kind == .accelerometer { orientation.restart() }
        if kind == .gyroscope || kind == .rotation || kind == .magnetometer { motion.restart() }
        sensors.setWanted(kind, true)
      } else {
        sensors.setWanted(kind, false)
        desk.kindStopped(kind)
      }
    }
    if now.isEmpty && !before.isEmpty { onIdle?() }
  }

  private func answer(_ call: any ClaimCall, _ target: ClaimTarget) {
    if !isShutDown { bus?.sendSnapshot(published, of: target, to: call.sender) }
    call.answer()
  }

  // MARK: Sensors

  private func sensorEvent(_ event: SensorSourceEvent) {
    switch event {
    case .changed(let kind, let status):
      sensorChanged(kind, status)
      if let status {
        if status.isSampling && wanted.contains(kind) { desk.kindStarted(kind) }
      } else {
        desk.kindStopped(kind)
      }
    case .reading(let kind, let reading):
      sleep.reading(kind)
      switch kind {
      case .accelerometer:
        if wanted.contains(.gyroscope) { motionReading(reading) }
        process(reading)
      case .gyroscope, .rotation, .magnetometer:
        motionReading(reading)
        desk.firstReading(kind)
      case .baseAccelerometer: posture.base(reading)
      case .hinge: posture.measured(reading)
      case .light, .proximity, .compass:
        let next = AmbientService.received(reading.value, in: published.ambient)
        if next != published.ambient { publishAmbient(kind, next) }
        desk.firstReading(kind)
      }
    }
  }

  private func sensorChanged(_ kind: SensorKind, _ status: SensorStatus?) {
    switch kind {
    case .accelerometer:
      posture.displayChanged(present: status != nil)
      var next = orientation.sensorChanged(status, in: published)
      next.posture = posture.state
      publishAccelerometer(next)
    case .baseAccelerometer:
      posture.baseChanged(status?.accelerometer)
    case .hinge:
      posture.hingeSensorChanged(status?.sensor.hingeAngle)
    case .gyroscope, .rotation, .magnetometer:
      motion.sensorChanged(kind, status)
      // Whether the rotation is fused, and the rate the streams' samples come at.
      retuneMotion()
      // Presence and the sensors' descriptions (broadcast); the values stay as published
      // until the next reading, so that a broadcast never carries them.
      publishMotion(motion.state.keepingValues(of: published.motion))
    case .light, .proximity, .compass:
      publishAmbient(
        kind, AmbientService.sensorChanged(kind, status?.sensor.ambient, in: published.ambient))
    }
  }

  private func process(_ reading: Reading) {
    let update = orientation.process(
      reading, sensor: sensors.status(of: .accelerometer)?.accelerometer)
    posture.lid(reading)
    let proxyTilt = orientation.sensorProxyTilt ?? published.sensorProxyTilt
    guard update != nil || proxyTilt != published.sensorProxyTilt else { return }
    var next = published
    next.sensorProxyTilt = proxyTilt
    guard let update else { return publishAccelerometer(next) }
    // Undefined only while flat since the start: then the last orientation stays published.
    let detected = effectiveOrientation(update.orientation)
    next.tilt = update.tilt
    next = proposed(detected, in: next)
    if next.orientation != published.orientation {
      logger.info("orientation \(next.orientation.rawValue) (tilt \(next.tilt.rawValue))")
    }
    publishAccelerometer(next)
    desk.firstReading(.accelerometer)
  }

  /// `next` with the orientation to publish for `detected`: `detected` itself, or with
  /// face-aware rotation what the resolver decides (the current orientation while the camera
  /// is asked or after a veto).
  private func proposed(_ detected: Orientation, in state: PublishedState) -> PublishedState {
    var next = state
    guard face.resolution != nil, !posture.holdsOrientationNormal else {
      next.orientation = detected
      next.suggestedOrientation = nil
      return next
    }
    if detected != next.suggestedOrientation { next.suggestedOrientation = nil }
    let (orientation, decision) = face.propose(detected, published: published.orientation)
    next.orientation = orientation
    // Asking started orientd-face and published CameraInUse meanwhile.
    next.cameraInUse = published.cameraInUse
    if let decision { next.suggestedOrientation = decision.changed ? nil : decision.proposed }
    return next
  }

  /// After a reload that made a new resolver: the detector's orientation, if it differs from
  /// what is published, is proposed to it.
  private func proposeCurrentDetection() {
    guard orientation.detector.hasReading else { return }
    let next = proposed(effectiveOrientation(orientation.detector.orientation), in: published)
    if next != published { publishAccelerometer(next) }
  }

  /// The camera's answer (or the timeout) decided a proposal.
  private func faceDecided(_ decision: FaceDecision) {
    var next = published
    next.orientation = decision.orientation
    next.suggestedOrientation = decision.changed ? nil : decision.proposed
    if next.orientation != published.orientation {
      logger.info("orientation \(next.orientation.rawValue) (tilt \(next.tilt.rawValue))")
    }
    publishAccelerometer(next)
  }

  /// orientd-face started or stopped: `CameraInUse`, broadcast.
  private func cameraInUse(_ inUse: Bool) {
    guard published.cameraInUse != inUse else { return }
    var next = published
    next.cameraInUse = inUse
    publishAccelerometer(next)
  }

  /// The posture's published state changed; with `laptop-orientation = normal` the
  /// orientation follows it.
  private func postureChanged() {
    var next = published
    next.posture = posture.state
    next.orientation = effectiveOrientation(orientation.detector.orientation)
    publishAccelerometer(next)
  }

  /// `detected`, or `normal` while the posture is laptop and that is configured; an undefined
  /// detection keeps what is published.
  private func effectiveOrientation(_ detected: Orientation) -> Orientation {
    if posture.holdsOrientationNormal { return .normal }
    return detected == .undefined ? published.orientation : detected
  }

  // MARK: Publishing

  /// The accelerometer's and the posture's objects, each to its claimers (a sensor appearing
  /// or going away to everyone: iio-sensor-proxy exits without a sensor and is started again
  /// with the new one, so clients re-read its properties when the name gets a new owner;
  /// orientd keeps its name, and a client that only claims once `HasAccelerometer` is true
  /// would otherwise never hear that a sensor arrived).
  private func publishAccelerometer(_ next: PublishedState) {
    published = next
    // An orientation set without the resolver drops its question (which may publish
    // CameraInUse first): what goes out is `published` after that.
    face.follow(next.orientation)
    guard let bus else { return }
    bus.publish(published, on: .orientation, to: desk.claims.claimers(.orientd))
    bus.publish(published, on: .sensorProxy, to: desk.claims.claimers(.sensorProxy))
    bus.publish(published, on: .posture, to: desk.claims.claimers(.posture))
  }

  /// One ambient kind's change, to that kind's claimers only (a sensor appearing or going away
  /// to everyone), so light readings never reach accelerometer-only clients.
  private func publishAmbient(_ kind: SensorKind, _ state: AmbientState) {
    published.ambient = state
    guard let bus else { return }
    switch kind {
    case .compass:
      bus.publish(published, on: .compass, to: desk.claims.claimers(.compass))
    case .light:
      bus.publish(published, on: .sensorProxy, to: desk.claims.claimers(.light))
    case .proximity:
      bus.publish(published, on: .sensorProxy, to: desk.claims.claimers(.proximity))
    case .accelerometer, .baseAccelerometer, .hinge, .gyroscope, .rotation, .magnetometer:
      break
    }
  }

  // MARK: Motion

  /// Clients holding streams (to close them when their motion claim goes).
  private var streamOwners: Set<String> = []

  /// A motion-related reading: the state updated, the sample streamed, the properties
  /// published at most `PropertyRate` times a second.
  private func motionReading(_ reading: Reading) {
    guard let record = motion.received(reading) else { return }
    streams?.send(record)
    if motion.isDue(now: reading.time.nanoseconds) { publishMotion(motion.state) }
  }

  private func publishMotion(_ state: MotionState) {
    published.motion = state
    bus?.publish(published, on: .motion, to: desk.claims.claimers(.motion))
  }

  /// A `Motion1` property for `sender`: the values for claimers, zero and identity otherwise.
  public func motionValue(_ name: MotionProperty, for sender: String) -> DBusValue {
    var state = published
    if !desk.claims.holds(sender, .motion) { state.motion = state.motion.withheld }
    return name.value(in: state)
  }

  /// `OpenStream(options)` of `call`'s sender: checked with polkit
  /// (`org.orientd.motion.read`, in order with the sender's other calls) as `Claim` is, then
  /// opened; `reply` gets the socket and what was granted, or `call` fails.
  public func openStream(
    _ call: any ClaimCall, options: [String: DBusValue],
    reply: @escaping ([DBusValue]) -> Void
  ) {
    let proceed = { [weak self] in
      guard let self else { return call.fail(.failed, "orientd is shutting down") }
      do throws(DBusError) {
        reply(try self.openStream(options, for: call.sender))
      } catch {
        call.fail(error.name, error.message)
      }
    }
    guard let gate = desk.gate else { return proceed() }
    gate.authorize(call, action: Wire.motionReadAction, then: proceed)
  }

  /// `OpenStream(options)` of `sender`, who must hold a motion claim (polkit already asked).
  ///
  /// - Returns: the stream's socket and what was granted.
  public func openStream(_ options: [String: DBusValue], for sender: String) throws(DBusError)
    -> [DBusValue]
  {
    guard desk.claims.holds(sender, .motion) else {
      throw DBusError(Wire.notClaimedError, "call Claim on \(Wire.motionInterface) first")
    }
    guard let streams else { throw DBusError(.notSupported, "no event loop for streams") }
    let asked = try MotionStreamOptions.parse(options)
    // Opening retunes the sensor (`onChange`): the grant is at the rate it runs at then.
    let fd = try streams.open(client: sender, options: asked)
    streamOwners.insert(sender)
    return [.unixFD(fd), .stringVariantDictionary(asked.granted(sensorRate: streams.sensorRate))]
  }

  /// Asks the motion sensors for the rate their clients need now (`MotionRate`) and tells the
  /// streams the rate the samples come at.
  private func retuneMotion() {
    let fused = motion.state.hasGyroscope && !motion.state.hasRotationSensor
    let rate = MotionRate.needed(
      claimed: !isShutDown && desk.claims.isClaimed(.motion),
      streams: streams?.rates ?? [], propertyRate: motion.state.propertyRate, fused: fused)
    // Unclaimed, the sensors are about to stop: retuning them first would only write a
    // frequency that stopping puts back at once. The next claim asks again before they open.
    if rate > 0 {
      sensors.request(rate: rate, for: .gyroscope)
      sensors.request(rate: rate, for: .rotation)
      sensors.request(rate: MotionRate.magnetometer(gyroscope: rate), for: .magnetometer)
    }
    let source = sensors.status(of: .gyroscope) ?? sensors.status(of: .rotation)
    streams?.sensorRate = source?.rate ?? 0
  }
}
