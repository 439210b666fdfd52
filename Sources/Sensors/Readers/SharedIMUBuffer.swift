import OrientLog
import SystemKit

/// A second sensor read from an accelerometer's scans (`BufferSampler`): its description
/// (the channels to enable beside the accelerometer's) and where its readings go.
struct ScanCompanion {
  /// The gyroscope on the accelerometer's IIO device.
  let info: MotionDescription
  /// The readings a second its consumer asks for (0: `MotionDescription.streamRate`).
  let requestedRate: Double
  /// Receives each of its readings.
  let deliver: (SensorEvent) -> Void
}

/// The IIO devices whose one buffer feeds two kinds (`IIOBufferIMU`), by syspath. The
/// `SensorHub` owns one and hands it to the drivers in `OpenContext`, so that the
/// accelerometer's and the gyroscope's slots find the same reader of a device.
public final class SharedBuffers {
  private var buffers: [String: SharedIMUBuffer] = [:]
  /// Opens the one reader of a device for the roles leased (`SharedIMUBuffer.openReader`; a
  /// test's fake).
  let opener: SharedIMUBuffer.Opener

  /// An empty registry.
  public convenience init() { self.init(opener: SharedIMUBuffer.openReader) }

  init(opener: @escaping SharedIMUBuffer.Opener) { self.opener = opener }

  /// The reader of the device at `syspath`, made when the first kind asks for it.
  func buffer(for syspath: String) -> SharedIMUBuffer {
    if let known = buffers[syspath] { return known }
    let made = SharedIMUBuffer(syspath: syspath, registry: self, opener: opener)
    buffers[syspath] = made
    return made
  }

  /// Forgets a reader that stopped.
  func remove(_ buffer: SharedIMUBuffer) {
    if buffers[buffer.syspath] === buffer { buffers.removeValue(forKey: buffer.syspath) }
  }

  /// Stops the reader of the device at `syspath` (removed), telling no one.
  public func close(_ syspath: String) {
    buffers.removeValue(forKey: syspath)?.close()
  }

  /// Stops every reader at once (a suspend, or every kind stopping): each kind's lease then
  /// stops without opening the device again for the kinds left.
  public func closeAll() {
    let all = buffers.values
    buffers.removeAll()
    for buffer in all { buffer.close() }
  }
}

/// One IMU's buffer (a BMI160, BMI260: `in_accel_*` and `in_anglvel_*` scan elements on one
/// IIO device, one `/dev/iio:deviceN`) read once for every kind wanted from it: each kind's
/// slot holds an `IMULease`; the one reader of the device enables the channels of the kinds
/// leased and no others.
///
/// - accelerometer (with or without the gyroscope): `BufferSampler`, the gyroscope as its
///   `ScanCompanion` (still strategies off while the gyroscope is read);
/// - gyroscope alone: the motion reader (`openMotionBuffered`).
///
/// When a kind comes or goes the reader is stopped (buffer off, every sysfs setting put
/// back, node closed) and opened afresh with the new set of channels: the consumers see a
/// short gap, never a reading made with the other layout. A stall or the device vanishing
/// ends every lease (each kind's slot then does what it does for any reader).
final class SharedIMUBuffer {
  /// The role a lease plays: the accelerometer or the gyroscope of the device.
  enum Role: CaseIterable {
    case accelerometer, gyroscope
  }

  private struct Entry {
    let token: Int
    let sensor: Sensor
    let deliver: (SensorEvent) -> Void
  }

  /// Opens the one reader for the leased sensors (accelerometer, gyroscope: at least one),
  /// delivering each role's events through `sink(role)`.
  typealias Opener = (
    _ accelerometer: Sensor?, _ gyroscope: Sensor?, _ context: OpenContext,
    _ sink: @escaping (Role) -> (SensorEvent) -> Void
  ) throws(SensorError) -> any SensorReader

  let syspath: String
  private let opener: Opener
  private weak var registry: SharedBuffers?
  private var entries: [Role: Entry] = [:]
  /// The rate each role's consumer asks for (`SensorReader.request(rate:for:)`, 0: none).
  private var requested: [Role: Double] = [:]
  private var engine: (any SensorReader)?
  /// Which engine events are current (an old engine's late events are dropped).
  private var generation = 0
  private var nextToken = 0
  private var context: OpenContext?

  init(syspath: String, registry: SharedBuffers, opener: @escaping Opener) {
    self.syspath = syspath
    self.registry = registry
    self.opener = opener
  }

  /// Adds `role` (replacing a lease of the same role) and reopens the device with its
  /// channels; if that fails the device is reopened for the roles it had.
  ///
  /// - Returns: the lease's token.
  /// - Throws: `SensorError` from opening the device.
  func attach(
    _ role: Role, _ sensor: Sensor, _ context: OpenContext,
    deliver: @escaping (SensorEvent) -> Void
  ) throws(SensorError) -> Int {
    nextToken += 1
    let previous = entries
    let asked = requested
    entries[role] = Entry(token: nextToken, sensor: sensor, deliver: deliver)
    requested[role] = context.requestedRate
    self.context = context
    let before = rates()
    do {
      try reopen()
      announce(before, except: role, "reopened with the \(role)")
    } catch {
      entries = previous
      requested = asked
      reopenOrFail("\(error.message)")
      throw error
    }
    return nextToken
  }

  /// Removes the lease `token` of `role`; the device goes on with the other role, if any.
  func detach(_ role: Role, token: Int) {
    guard entries[role]?.token == token else { return }
    entries.removeValue(forKey: role)
    let before = rates()
    reopenOrFail("cannot read it again without the \(role)")
    announce(before, except: role, "reopened without the \(role)")
  }

  /// The running reader's rate for each role leased.
  private func rates() -> [Role: Double] {
    Dictionary(uniqueKeysWithValues: entries.keys.map { ($0, rate(for: $0)) })
  }

  /// Tells the roles (but `except`) whose rate is no longer what it was `before`.
  private func announce(_ before: [Role: Double], except: Role, _ why: String) {
    for (role, entry) in entries where role != except && before[role] != rate(for: role) {
      entry.deliver(.retuned(why))
    }
  }

  /// Stops reading without telling anyone (every lease is being stopped).
  func close() {
    entries.removeAll()
    stopEngine()
    registry?.remove(self)
  }

  /// The running reader's rate for `role`.
  func rate(for role: Role) -> Double {
    if role == .gyroscope, let sampler = engine as? BufferSampler { return sampler.companionRate }
    return engine?.rate ?? 0
  }

  /// The trigger the running reader attached.
  var trigger: String? { engine?.trigger }

  /// Readings the running reader skipped.
  var skipped: Int { engine?.skipped ?? 0 }

  /// Whether the running reader is opened afresh when a base accelerometer comes or goes.
  var dependsOnPairing: Bool { engine?.dependsOnPairing ?? false }

  /// Writes the running reader's settings again (after a resume).
  func rearm() { engine?.rearm() }

  /// Asks for `rate` readings a second of `role`: the gyroscope's frequency is retuned in
  /// place (the accelerometer's too where one attribute serves both); the accelerometer runs
  /// at its configured rate, as a sampler of its own does.
  func request(rate: Double, for role: Role) {
    guard role == .gyroscope, entries[role] != nil, requested[role] != rate else { return }
    requested[role] = rate
    if let sampler = engine as? BufferSampler {
      let before = rates()
      sampler.retuneCompanion(to: rate)
      announce(before, except: .gyroscope, "the gyroscope retuned")
    } else {
      engine?.request(rate: rate, for: .gyroscope)
    }
  }

  // MARK: The one reader

  private func stopEngine() {
    generation += 1
    let old = engine
    engine = nil
    old?.stop()
  }

  private func reopenOrFail(_ what: String) {
    do {
      try reopen()
    } catch {
      end(.stalled("\(what): \(error.message)"))
    }
  }

  /// Stops the running reader and opens the one the leased roles need.
  private func reopen() throws(SensorError) {
    stopEngine()
    guard !entries.isEmpty, let context else {
      registry?.remove(self)
      return
    }
    let current = generation
    let sink = { [weak self] (role: Role) -> (SensorEvent) -> Void in
      { (event: SensorEvent) -> Void in
        self?.engineEvent(event, role: role, generation: current)
      }
    }
    // The rate asked for is the gyroscope's (the accelerometer has its configured one).
    var asked = context
    asked.requestedRate = requested[.gyroscope] ?? 0
    engine = try opener(
      entries[.accelerometer]?.sensor, entries[.gyroscope]?.sensor, asked, sink)
  }

  /// The real reader: the accelerometer's sampler, with the gyroscope as its companion when
  /// both are leased; the motion reader for the gyroscope alone.
  static func openReader(
    accelerometer: Sensor?, gyroscope: Sensor?, context: OpenContext,
    sink: @escaping (Role) -> (SensorEvent) -> Void
  ) throws(SensorError) -> any SensorReader {
    if let d = accelerometer?.accelerometer {
      let companion = gyroscope?.motion.map {
        ScanCompanion(
          info: $0, requestedRate: context.requestedRate, deliver: sink(.gyroscope))
      }
      let sampling = context.configuration.sampling
      return try BufferSampler(
        description: d, sampling: sampling,
        mayGoSilent: !context.paired && sampling.silentWhileStill, triggers: context.triggers,
        deviceParent: context.parent, loop: context.loop, logger: context.logger,
        companion: companion, deliver: sink(.accelerometer))
    }
    guard let gyroscope else {
      throw SensorError(.unavailable, "no accelerometer or gyroscope to read")
    }
    return try openMotionBuffered(gyroscope, context, deliver: sink(.gyroscope))
  }

  private func engineEvent(_ event: SensorEvent, role: Role, generation: Int) {
    guard generation == self.generation else { return }
    switch event {
    case .reading, .retuned: entries[role]?.deliver(event)
    case .gone, .stalled: end(event)
    }
  }

  /// Ends every lease with `event` (the device went away, or its buffer stalled).
  private func end(_ event: SensorEvent) {
    let ended = entries.values
    entries.removeAll()
    stopEngine()
    registry?.remove(self)
    for entry in ended { entry.deliver(event) }
  }
}

/// One kind's share of a `SharedIMUBuffer`: the reader its slot holds.
final class IMULease: SensorReader {
  let mode = SamplingMode.buffered
  private let buffer: SharedIMUBuffer
  private let role: SharedIMUBuffer.Role
  private var token: Int?

  /// Leases `role` of the device `sensor` is on (see `SharedIMUBuffer.attach`).
  init(
    _ role: SharedIMUBuffer.Role, _ sensor: Sensor, _ context: OpenContext,
    deliver: @escaping (SensorEvent) -> Void
  ) throws(SensorError) {
    let registry = context.sharedBuffers ?? SharedBuffers()
    buffer = registry.buffer(for: sensor.syspath)
    self.role = role
    token = try buffer.attach(role, sensor, context, deliver: deliver)
  }

  deinit { stop() }

  var rate: Double { buffer.rate(for: role) }
  var trigger: String? { buffer.trigger }
  var skipped: Int { role == .accelerometer ? buffer.skipped : 0 }
  var dependsOnPairing: Bool { role == .accelerometer && buffer.dependsOnPairing }

  func stop() {
    guard let token else { return }
    self.token = nil
    buffer.detach(role, token: token)
  }

  func rearm() {
    if token != nil { buffer.rearm() }
  }

  func request(rate: Double, for kind: SensorKind) {
    if token != nil { buffer.request(rate: rate, for: role) }
  }
}
