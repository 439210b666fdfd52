import OrientLog
import SystemKit

/// What a buffered reader has read from an IIO node (`/dev/iio:deviceN`) and not used yet, and
/// how reading it goes: shared by the ambient channel reader and the motion reader, so that
/// both drain the node the same way and stop on a fault that is not transient (a readable
/// descriptor that only fails would otherwise wake the loop without end).
struct NodeDrain {
  /// After this many failed reads in a row the fault is not transient: the reader stops.
  static let failedReadsBeforeStopping = 50

  /// Bytes read and not yet used (a partial scan stays here until the rest comes).
  var pending: [UInt8] = []
  /// Reads that failed in a row with an error other than the device going away.
  private(set) var failedReads = 0

  /// How a read went.
  enum Outcome {
    /// `pending` holds what the node had (possibly nothing new).
    case read
    /// The node ended (end of file, or a hang-up with no whole scan left): stop reading.
    case ended(String)
    /// The device went away.
    case gone(SystemError)
    /// A read failed, `failedReads` times in a row: transient below
    /// `failedReadsBeforeStopping`, then stop reading.
    case failed(SystemError)
  }

  /// Reads what `file` holds now (up to 16 chunks of 16 scans) into `pending`.
  mutating func read(_ file: FileDescriptor, recordSize: Int, events: EventLoop.Events)
    -> Outcome
  {
    var chunk = [UInt8](repeating: 0, count: max(recordSize * 16, 256))
    for _ in 0..<16 {
      let count: Int?
      do {
        count = try chunk.withUnsafeMutableBytes { raw in
          Result { () throws(SystemError) in try file.read(into: raw) }
        }.get()
      } catch {
        if error.isDeviceGone { return .gone(error) }
        failedReads += 1
        return .failed(error)
      }
      failedReads = 0
      guard let count else { break }  // EAGAIN: drained
      if count == 0 { return .ended("ended") }
      pending.append(contentsOf: chunk[0..<count])
      if count < chunk.count { break }
    }
    if events.contains(.hangup) && pending.count < recordSize { return .ended("hung up") }
    return .read
  }

  /// What a reader does after `scans(...)`.
  enum Step {
    /// `pending` holds this many whole scans (at least one).
    case scans(Int)
    /// Nothing to do yet (no whole scan, or a transient fault, logged once).
    case wait
    /// Stop reading (the node ended, or failed `failedReadsBeforeStopping` times; logged).
    case stop
    /// The device went away (the reason, for the `.gone` event).
    case gone(String)
  }

  /// Reads what `file` holds (`read`) and says what the reader of `device` does next, logging
  /// the faults the same way for every buffered reader.
  mutating func scans(
    _ file: FileDescriptor, recordSize: Int, events: EventLoop.Events, device: String,
    logger: Logger, problems: inout LogOnce
  ) -> Step {
    switch read(file, recordSize: recordSize, events: events) {
    case .read:
      let records = pending.count / recordSize
      return records > 0 ? .scans(records) : .wait
    case .ended(let how):
      logger.warning("\(device): \(file.path) \(how); stopped reading")
      return .stop
    case .gone(let error):
      return .gone("\(file.path): \(error.reason)")
    case .failed(let error):
      if failedReads >= NodeDrain.failedReadsBeforeStopping {
        logger.warning(
          "\(device): reading \(file.path): \(error), \(failedReads) times in a row; stopped "
            + "reading")
        return .stop
      }
      // A transient fault (EIO from the bus): the next data tries again.
      problems.report(
        "read", logger: logger,
        "\(device): reading \(file.path): \(error); trying again with the next data (logged "
          + "once)")
      return .wait
    }
  }

  /// Forgets what was read (the reader stopped).
  mutating func reset() {
    pending = []
    failedReads = 0
  }
}
