import DBusKit
import FaceClient
import Glibc
import OrientCore
import OrientDaemon
import OrientLog
import OrientWire
import Sensors
import SystemKit

// Scripted stand-ins for the daemon core's seams: the sensors, the bus, the client tracker,
// polkit and a call. The unit tests (CoreTests.swift) drive `DaemonCore` through them with a
// `ManualScheduler`; the end-to-end tests prove the real ones are wired the same way.

/// Sensors whose presence and readings the test decides; reads a kind while it is wanted and
/// present, as `SensorHub` does.
final class FakeSensors: SensorSource {
  var onEvent: ((SensorSourceEvent) -> Void)?
  private(set) var statuses: [SensorKind: SensorStatus] = [:]
  private(set) var wanted: Set<SensorKind> = []
  /// Every `setWanted` call, in order.
  private(set) var wantedLog: [(SensorKind, Bool)] = []
  private(set) var updates: [SensorsConfiguration] = []
  private(set) var stoppedAll = false

  func status(of kind: SensorKind) -> SensorStatus? { statuses[kind] }

  func setWanted(_ kind: SensorKind, _ wanted: Bool) {
    wantedLog.append((kind, wanted))
    if wanted {
      guard self.wanted.insert(kind).inserted else { return }
      if statuses[kind] != nil { start(kind) }
    } else {
      guard self.wanted.remove(kind) != nil else { return }
      statuses[kind]?.isSampling = false
    }
  }

  func isReading(_ kind: SensorKind) -> Bool { statuses[kind]?.isSampling ?? false }

  func update(configuration: SensorsConfiguration) { updates.append(configuration) }

  func stopAll() {
    stoppedAll = true
    for kind in wanted { setWanted(kind, false) }
  }

  /// What happened to the readers, in order: "suspend", "resume", "open KIND", "stop KIND",
  /// "restart KIND", "fall back KIND".
  private(set) var readerLog: [String] = []
  private(set) var isSuspended = false

  func suspend() {
    isSuspended = true
    readerLog.append("suspend")
    for kind in wanted.sorted() where statuses[kind]?.isSampling == true {
      statuses[kind]?.isSampling = false
      readerLog.append("stop \(kind)")
    }
  }

  func resume() {
    let wasSuspended = isSuspended
    isSuspended = false
    readerLog.append("resume")
    for kind in wanted.sorted() where statuses[kind] != nil {
      if !wasSuspended { readerLog.append("stop \(kind)") }
      start(kind)
    }
  }

  func restart(_ kind: SensorKind, fallBack: Bool) {
    readerLog.append(fallBack ? "fall back \(kind)" : "restart \(kind)")
    guard wanted.contains(kind), statuses[kind] != nil else { return }
    if fallBack { statuses[kind]?.mode = .polled }
    start(kind)
  }

  /// The last rate asked for each kind (`request(rate:for:)`).
  private(set) var requested: [SensorKind: Double] = [:]
  /// The rates the fake devices offer: a kind read is run at the smallest at or above the
  /// rate asked for (the fastest when none is), as a buffered motion reader does.
  var offered: [Double] = [12.5, 26, 52, 104, 208, 416]

  func request(rate: Double, for kind: SensorKind) {
    requested[kind] = rate
    guard statuses[kind]?.isSampling == true, let chosen = offeredRate(kind),
      chosen != statuses[kind]?.rate
    else { return }
    statuses[kind]?.rate = chosen
    onEvent?(.changed(kind, statuses[kind]))
  }

  private func offeredRate(_ kind: SensorKind) -> Double? {
    guard let rate = requested[kind], rate > 0 else { return nil }
    return offered.first { $0 >= rate } ?? offered.last
  }

  /// The sensor of `kind` is read through a buffer (or `mode`).
  func setMode(_ kind: SensorKind, _ mode: SamplingMode) { statuses[kind]?.mode = mode }

  /// A sensor of `kind` appears (read at once if wanted).
  func appear(_ kind: SensorKind, _ sensor: Sensor) {
    statuses[kind] = SensorStatus(sensor: sensor, mode: .polled, rate: 30, isSampling: false)
    onEvent?(.changed(kind, statuses[kind]))
    if wanted.contains(kind) { start(kind) }
  }

  /// The sensor of `kind` goes away.
  func disappear(_ kind: SensorKind) {
    statuses[kind] = nil
    onEvent?(.changed(kind, nil))
  }

  /// A reading of `kind` (only while it is read, as a real reader).
  func deliver(_ kind: SensorKind, _ value: SensorValue, at seconds: Double = 1000) {
    guard isReading(kind) else { return }
    onEvent?(
      .reading(
        kind, Reading(time: MonotonicTime(nanoseconds: Int64(seconds * 1e9)), value: value)))
  }

  private func start(_ kind: SensorKind) {
    guard !isSuspended else { return }
    readerLog.append("open \(kind)")
    statuses[kind]?.isSampling = true
    if let rate = offeredRate(kind) { statuses[kind]?.rate = rate }
    onEvent?(.changed(kind, statuses[kind]))
  }
}

/// Sensors to make appear.
enum FakeSensor {
  /// An upright display accelerometer (or one in the base).
  static func accelerometer(_ name: String = "iio:device0", base: Bool = false) -> Sensor {
    var facts = DeviceFacts(syspath: "/sys/devices/fake/\(name)", sysname: name)
    facts.hasRawAttributes = true
    facts.scale = [.init("in_accel_scale", "1")]
    facts.udevLocation = base ? "base" : "display"
    return Sensor(
      kinds: [.accelerometer, .baseAccelerometer], syspath: facts.syspath, sysname: name,
      drivers: [IIOPollAccelerometer.name],
      detail: .accelerometer(
        AccelerometerDescription(facts: facts, configuration: AccelerometerConfiguration())))
  }

  /// An ambient sensor of `kind`.
  static func ambient(_ kind: SensorKind, _ name: String = "iio:device1") -> Sensor {
    let info = AmbientDescription(
      kind: kind, syspath: "/sys/devices/fake/\(name)", sysname: name,
      driver: .iioPoll(attribute: "in_illuminance_raw"), classifiedBy: "test")
    return Sensor(
      kinds: [kind], syspath: info.syspath, sysname: name, drivers: [IIOPollLight.name],
      detail: .ambient(info))
  }

  /// Gravity for a display held upright in `orientation`, m/s^2.
  static func gravity(_ orientation: Orientation) -> SensorValue {
    let r = Double(orientation.clockwiseRotation ?? 0) * Double.pi / 180
    return .acceleration(Vector3(9.80665 * sin(r), -9.80665 * cos(r), 0))
  }
}

/// What the core published and sent, in order.
final class RecordingBus: BusPublisher {
  enum Sent: Equatable {
    case publish(PublishedObject, to: [String])
    case snapshot(ClaimTarget, to: String)
  }

  private(set) var sent: [Sent] = []
  private(set) var states: [PublishedObject: PublishedState] = [:]

  func publish(_ state: PublishedState, on object: PublishedObject, to recipients: [String]) {
    sent.append(.publish(object, to: recipients))
    states[object] = state
  }

  func sendSnapshot(_ state: PublishedState, of target: ClaimTarget, to sender: String) {
    sent.append(.snapshot(target, to: sender))
  }

  /// The snapshots sent, in order.
  var snapshots: [Sent] { sent.filter { if case .snapshot = $0 { true } else { false } } }
}

/// The names tracked.
final class FakeTracker: ClientTracking {
  private(set) var tracked: Set<String> = []
  func track(_ name: String) { tracked.insert(name) }
  func untrack(_ name: String) { tracked.remove(name) }
}

/// An authority whose answers the test gives, in any order.
final class FakeAuthority: Authority {
  private(set) var pending: [(sender: String, action: String, done: (AuthorityVerdict) -> Void)] =
    []

  func check(_ sender: String, action: String, _ done: @escaping (AuthorityVerdict) -> Void) {
    pending.append((sender, action, done))
  }

  /// Answers the first pending check of `sender`.
  func answer(_ sender: String, _ verdict: AuthorityVerdict) {
    guard let index = pending.firstIndex(where: { $0.sender == sender }) else { return }
    answerAt(index, verdict)
  }

  /// Answers the pending check at `index`.
  func answerAt(_ index: Int, _ verdict: AuthorityVerdict) {
    let check = pending.remove(at: index)
    check.done(verdict)
  }
}

/// A claim or release call and what it was answered.
final class FakeCall: ClaimCall {
  let sender: String
  let member: String
  private(set) var answered = false
  private(set) var error: DBusError.Name?

  init(_ sender: String, _ member: String = "Claim") {
    self.sender = sender
    self.member = member
  }

  func answer() { answered = true }
  func fail(_ name: DBusError.Name, _ text: String) { error = name }
}

/// Log lines, kept for the test to read.
final class LogRecorder: LogSink, @unchecked Sendable {
  private(set) var lines: [String] = []
  func write(level: LogLevel, label: String, message: String) { lines.append(message) }
  var text: String { lines.joined(separator: "\n") }
}

/// logind as the core sees it: the test sends `PrepareForSleep`; the lock is a flag.
final class FakeSleep: SleepSignals {
  var onPrepareForSleep: ((_ sleeping: Bool) -> Void)?
  /// Whether a delay inhibitor is held.
  private(set) var holdsLock = false
  /// Every lock taken or let go, in order ("take", "release").
  private(set) var lockLog: [String] = []
  private(set) var closed = false
  /// Asked at each change of the lock; its answers are kept in `witnessed`.
  var witness: (() -> String)?
  private(set) var witnessed: [String] = []

  func holdDelayLock(_ hold: Bool) {
    guard hold != holdsLock else { return }
    holdsLock = hold
    lockLog.append(hold ? "take" : "release")
    witnessed.append(witness?() ?? "")
  }

  func close() {
    holdDelayLock(false)
    closed = true
  }

  /// logind's `PrepareForSleep(sleeping)`.
  func prepareForSleep(_ sleeping: Bool) { onPrepareForSleep?(sleeping) }
}

/// A core on fakes, attached to its fake bus.
struct CoreRig {
  let scheduler = ManualScheduler()
  let sensors = FakeSensors()
  let bus = RecordingBus()
  let tracker = FakeTracker()
  let authority = FakeAuthority()
  let log = LogRecorder()
  let sleep = FakeSleep()
  let core: DaemonCore

  init(
    configuration: DaemonConfiguration = DaemonConfiguration(),
    faceAsker: (any FaceAsking)? = nil, faceProgram: String? = nil, loop: EventLoop? = nil
  ) {
    core = DaemonCore(
      configuration: configuration, sensors: sensors, scheduler: scheduler,
      claimReplyBound: .milliseconds(1500),
      logger: Logger(label: "test", level: .debug, sink: log), loop: loop, faceAsker: faceAsker,
      locateFaceProgram: { _ in faceProgram })
    core.begin()
    core.attach(bus: bus, tracker: tracker, authority: authority)
    core.attach(sleep: sleep)
  }

  /// Claims `target` as `sender`, polkit allowing it when asked.
  @discardableResult
  func claim(_ sender: String, _ target: ClaimTarget) -> FakeCall {
    let call = FakeCall(sender, target.claimMethod)
    core.claim(call, target)
    if target.polkitAction != nil { authority.answer(sender, .allowed) }
    return call
  }

  /// Releases `target` as `sender`, polkit allowing it when asked.
  @discardableResult
  func release(_ sender: String, _ target: ClaimTarget) -> FakeCall {
    let call = FakeCall(sender, target.releaseMethod)
    core.release(call, target)
    if target.polkitAction != nil { authority.answer(sender, .allowed) }
    return call
  }
}
