import DBusKit
import OrientCore
import OrientLog
import OrientWire
import Sensors
import SystemKit

/// What a stream client asked for (`OpenStream`'s options).
public struct MotionStreamOptions: Hashable, Sendable {
  /// Records a second asked for: the sensor is run at least this fast where it can be
  /// (`MotionRate`), and the stream gets every n-th of its samples, n the sensor's rate over
  /// this, rounded (`every(sensorRate:)`).
  public var rate: Double
  /// Records per batch, 1-255.
  public var batch: Int
  /// A batch is sent when its oldest record is this old, nanoseconds.
  public var latency: Int64

  /// The rate a stream that does not say gets: the sensors' default rate.
  public static let defaultRate = MotionDescription.streamRate

  /// Parses `OpenStream`'s options.
  ///
  /// - Throws: `InvalidArgs` for an unknown option, a rate of 0 or below, a batch outside
  ///   1-255, a latency of 0 or below or of the wrong type.
  public static func parse(_ given: [String: DBusValue]) throws(DBusError) -> MotionStreamOptions {
    func invalid(_ why: String) -> DBusError { DBusError(.invalidArgs, "OpenStream: \(why)") }
    var rate = defaultRate
    var batch = 1
    var latency: Double?
    for (key, value) in given {
      switch key {
      case "rate":
        guard let r = value.doubleValue, r.isFinite, r > 0 else {
          throw invalid("\"rate\" must be a double above 0")
        }
        rate = r
      case "batch":
        guard let b = value.uint32Value, (1...255).contains(b) else {
          throw invalid("\"batch\" must be a uint32 from 1 to 255")
        }
        batch = Int(b)
      case "latency":
        guard let l = value.doubleValue, l.isFinite, l > 0, l <= maximumLatency else {
          throw invalid("\"latency\" must be a double above 0 and at most 60 seconds")
        }
        latency = l
      default:
        throw invalid("unknown option \"\(key)\" (known: rate, batch, latency)")
      }
    }
    // One batch period by default, at most the longest latency a client may ask for: a rate
    // of 1e-10 Hz would otherwise make a period of more nanoseconds than an Int64 holds.
    let wait = latency ?? min(Double(batch) / rate, maximumLatency)
    return MotionStreamOptions(rate: rate, batch: batch, latency: Int64(wait * 1e9))
  }

  /// The longest `latency`, seconds: 60.
  public static let maximumLatency = 60.0

  /// The stream takes every n-th sample of a sensor delivering `sensorRate` samples a second
  /// (0: unknown, every one).
  public func every(sensorRate: Double) -> Int {
    guard sensorRate > 0 else { return 1 }
    // A tiny rate asked (any positive rate is accepted) must not overflow the conversion.
    return max(1, Int(min((sensorRate / rate).rounded(), Double(Int32.max))))
  }

  /// `OpenStream`'s second result: what the stream gets from a sensor delivering `sensorRate`
  /// samples a second (0: unknown).
  public func granted(sensorRate: Double) -> [String: DBusValue] {
    [
      "rate": .double(sensorRate > 0 ? sensorRate / Double(every(sensorRate: sensorRate)) : rate),
      "batch": .uint32(UInt32(batch)), "latency": .double(Double(latency) / 1e9),
      "version": .uint16(MotionStreamFormat.version),
      "record-size": .uint32(UInt32(MotionStreamFormat.recordSize)),
      "clock": .string("monotonic"),
    ]
  }
}

/// `org.orientd.Motion1.OpenStream`'s streams: every sample of the one hardware stream goes to
/// each client's `SOCK_SEQPACKET` socket in batches (docs/motion.md, "The stream").
///
/// Streams asking for the same thing (rate, batch, latency) share one encoder and one
/// `PacketFanout`: a batch is encoded once and sent to each of them. Each group takes every
/// n-th sample for its rate of the sensor's `sensorRate`, counted afresh when the sensor is
/// retuned (the rate follows the streams: `rates`, `onChange`). Each client's socket has
/// its own queue in the fan-out, so a slow client loses its oldest batches and one that
/// vanished is removed, never holding up the others; a client's streams go when it releases
/// its claim or leaves the bus (`remove(client:)`).
final class MotionStreams {
  typealias Options = MotionStreamOptions

  /// The streams a client may hold.
  static let perClient = 4

  private final class Group {
    let options: Options
    let fanout: PacketFanout
    var encoder: MotionBatchEncoder
    var counter = 0
    var every: Int
    var timer: (any LoopTimer)?

    init(options: Options, fanout: PacketFanout, sensorRate: Double) {
      self.options = options
      self.fanout = fanout
      every = options.every(sensorRate: sensorRate)
      encoder = MotionBatchEncoder(capacity: options.batch)
    }
  }

  /// Samples a second of the sensor the records come from (0: unknown).
  var sensorRate = 0.0 {
    didSet {
      guard sensorRate != oldValue else { return }
      for group in groups.values { group.every = group.options.every(sensorRate: sensorRate) }
    }
  }
  /// Called when a stream opened or closed (the sensor's rate follows the streams).
  var onChange: (() -> Void)?

  /// The rates the open streams asked for.
  var rates: [Double] { groups.keys.map(\.rate) }

  private let loop: EventLoop
  private let scheduler: any Scheduler
  private let logger: Logger
  private var groups: [Options: Group] = [:]
  /// Each stream's client (unique bus name), by group and fan-out client.
  private var owners: [Options: [PacketFanout.ClientID: String]] = [:]

  init(loop: EventLoop, scheduler: any Scheduler, logger: Logger) {
    self.loop = loop
    self.scheduler = scheduler
    self.logger = logger
  }

  /// The number of streams open.
  var count: Int { owners.values.reduce(0) { $0 + $1.count } }

  /// The streams `client` holds.
  func count(of client: String) -> Int {
    owners.values.reduce(0) { $0 + $1.values.filter { $0 == client }.count }
  }

  /// Opens a stream for `client`: a socket pair whose one end joins the fan-out of `options`;
  /// the other is returned for the reply.
  ///
  /// - Throws: `TooManyStreams` beyond `perClient`, `Failed` when no socket can be made.
  func open(client: String, options: Options) throws(DBusError) -> DBusFileDescriptor {
    guard count(of: client) < MotionStreams.perClient else {
      throw DBusError(
        Wire.tooManyStreamsError,
        "\(client) holds \(MotionStreams.perClient) streams already: close one first")
    }
    do {
      let (ours, theirs) = try PacketFanout.socketPair()
      defer { _ = theirs.close() }
      let group = try self.group(options)
      let id = try group.fanout.add(ours)
      owners[options, default: [:]][id] = client
      onChange?()
      return try DBusFileDescriptor(duplicating: theirs.rawValue)
    } catch {
      throw DBusError(.failed, "cannot open a stream: \(error)")
    }
  }

  /// Closes every stream of `client` (it released its claim or left the bus).
  func remove(client: String) {
    for (options, streams) in owners {
      for (id, owner) in streams where owner == client {
        groups[options]?.fanout.remove(id)
        owners[options]?[id] = nil
      }
      dropIfEmpty(options)
    }
  }

  /// Closes every stream.
  func removeAll() {
    for options in Array(groups.keys) {
      groups[options]?.fanout.removeAll()
      owners[options] = [:]
      dropIfEmpty(options)
    }
  }

  /// One sample: added to each group's batch (every n-th), a full batch sent.
  func send(_ record: MotionRecord) {
    for group in groups.values {
      group.counter += 1
      guard group.counter >= group.every else { continue }
      group.counter = 0
      if group.encoder.isEmpty { arm(group) }
      group.encoder.append(record)
      if group.encoder.isFull { flush(group) }
    }
  }

  private func group(_ options: Options) throws(SystemError) -> Group {
    if let group = groups[options] { return group }
    let group = Group(options: options, fanout: PacketFanout(loop: loop), sensorRate: sensorRate)
    group.fanout.onDeparture = { [weak self] id, why in self?.departed(options, id, why) }
    group.timer = try scheduler.timer { [weak self, weak group] in
      if let group { self?.flush(group) }
    }
    groups[options] = group
    return group
  }

  private func arm(_ group: Group) {
    guard group.options.batch > 1 else { return }
    do {
      try group.timer?.schedule(after: .nanoseconds(group.options.latency), interval: nil)
    } catch {
      logger.warning("cannot arm a stream's latency timer: \(error); batches wait until full")
    }
  }

  private func flush(_ group: Group) {
    group.timer?.disarm()
    guard let packet = group.encoder.finish() else { return }
    group.fanout.send(packet)
  }

  private func departed(
    _ options: Options, _ id: PacketFanout.ClientID, _ why: PacketFanout.Departure
  ) {
    let owner = owners[options]?[id] ?? "?"
    owners[options]?[id] = nil
    logger.info("stream of \(owner) closed: \(why)")
    dropIfEmpty(options)
  }

  private func dropIfEmpty(_ options: Options) {
    guard owners[options]?.isEmpty ?? true, let group = groups[options] else { return }
    group.timer?.cancel()
    group.fanout.removeAll()
    groups[options] = nil
    owners[options] = nil
    onChange?()
  }
}
