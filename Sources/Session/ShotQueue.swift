import Capture

/// The photos a session was asked for and has not taken yet, oldest first.
///
/// A trigger asks for `--burst` shots at once. A streaming camera answers them from the next
/// frames it delivers (never from one exposed before the trigger); an on-demand source (the
/// pattern, files) one per loop turn, so that signals are served between photos.
struct ShotQueue {
  /// One photo asked for.
  struct Shot {
    /// What asked: `stdin`, `SIGUSR1`, `key:volumeup`, `press:shutter`, `window:key`.
    var trigger: String
    /// `CLOCK_MONOTONIC` nanoseconds of the trigger.
    var time: Int64
    /// 1...burst within its trigger.
    var burstIndex: Int
    /// The orientation when the trigger came: what the user held the device in.
    var reading: OrientationReading
  }

  private var shots: [Shot] = []

  /// Shots waiting.
  var count: Int { shots.count }
  /// Whether none is waiting.
  var isEmpty: Bool { shots.isEmpty }

  /// Adds `burst` shots for one trigger.
  mutating func add(trigger: String, at time: Int64, burst: Int, reading: OrientationReading) {
    for index in 1...max(1, burst) {
      shots.append(Shot(trigger: trigger, time: time, burstIndex: index, reading: reading))
    }
  }

  /// The oldest shot, taken off the queue (on-demand sources).
  mutating func takeNext() -> Shot? {
    shots.isEmpty ? nil : shots.removeFirst()
  }

  /// The oldest shot if a frame exposed at `frameTime` answers it (not before its trigger),
  /// taken off the queue (streaming sources).
  mutating func take(forFrameAt frameTime: Int64) -> Shot? {
    guard let first = shots.first, frameTime >= first.time else { return nil }
    return shots.removeFirst()
  }
}
