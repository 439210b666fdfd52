import CDBus
import SystemKit

// libdbus is driven by the program's single EventLoop, with no thread of its own:
// - its DBusWatch objects (one for reading, one for writing, on the same socket) become one
//   epoll registration per descriptor, whose events are the union of the enabled watches';
// - its DBusTimeout objects (one per pending call) share one timerfd armed for the earliest
//   deadline, so a thousand outstanding calls cost one descriptor;
// - when its dispatch status becomes DATA_REMAINS, a dispatch is posted to the loop.

/// The epoll side of libdbus's watches for one connection (`dbus_connection_set_watch_functions`).
final class WatchSet {
  private weak var loop: EventLoop?
  private struct Entry {
    var watches: [OpaquePointer] = []
    var registration: EventLoop.Watch?
    var events: EventLoop.Events = []
  }
  private var byDescriptor: [Int32: Entry] = [:]
  private var descriptorOf: [OpaquePointer: Int32] = [:]

  init(loop: EventLoop) { self.loop = loop }

  /// Live epoll registrations (for diagnostics and tests).
  var registrationCount: Int { byDescriptor.values.filter { $0.registration != nil }.count }

  /// `DBusAddWatchFunction`: false makes libdbus treat it as out of memory.
  func add(_ watch: OpaquePointer) -> Bool {
    let fd = dbus_watch_get_unix_fd(watch)
    guard fd >= 0 else { return false }
    descriptorOf[watch] = fd
    byDescriptor[fd, default: Entry()].watches.append(watch)
    return update(fd)
  }

  /// `DBusRemoveWatchFunction`.
  func remove(_ watch: OpaquePointer) {
    guard let fd = descriptorOf.removeValue(forKey: watch), var entry = byDescriptor[fd] else {
      return
    }
    entry.watches.removeAll { $0 == watch }
    if entry.watches.isEmpty {
      entry.registration?.cancel()
      byDescriptor[fd] = nil
    } else {
      byDescriptor[fd] = entry
      _ = update(fd)
    }
  }

  /// `DBusWatchToggledFunction`.
  func toggled(_ watch: OpaquePointer) {
    if let fd = descriptorOf[watch] { _ = update(fd) }
  }

  /// Drops every registration (the free function; libdbus removed the watches already).
  func invalidate() {
    for entry in byDescriptor.values { entry.registration?.cancel() }
    byDescriptor = [:]
    descriptorOf = [:]
  }

  private func update(_ fd: Int32) -> Bool {
    guard var entry = byDescriptor[fd] else { return true }
    var events: EventLoop.Events = []
    for watch in entry.watches where dbus_watch_get_enabled(watch) != 0 {
      let flags = dbus_watch_get_flags(watch)
      if flags & DBUS_WATCH_READABLE.rawValue != 0 { events.insert(.readable) }
      if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events.insert(.writable) }
    }
    defer { byDescriptor[fd] = entry }
    if events.isEmpty {
      // No registration at all: level-triggered HUP on an idle socket would spin otherwise.
      entry.registration?.cancel()
      entry.registration = nil
    } else if let registration = entry.registration {
      if events != entry.events {
        do { try registration.update(events) } catch { return false }
      }
    } else {
      guard let loop else { return false }
      do {
        entry.registration = try loop.watch(fd, for: events) { [weak self] occurred in
          self?.handle(fd, occurred)
        }
      } catch {
        return false
      }
    }
    entry.events = events
    return true
  }

  /// Passes readiness to each enabled watch on `fd` (`dbus_watch_handle`).
  private func handle(_ fd: Int32, _ occurred: EventLoop.Events) {
    guard let entry = byDescriptor[fd] else { return }
    for watch in entry.watches {
      // An earlier dbus_watch_handle in this loop may have removed or disabled it.
      guard descriptorOf[watch] == fd, dbus_watch_get_enabled(watch) != 0 else { continue }
      let flags = dbus_watch_get_flags(watch)
      var condition: UInt32 = 0
      if occurred.contains(.readable), flags & DBUS_WATCH_READABLE.rawValue != 0 {
        condition |= DBUS_WATCH_READABLE.rawValue
      }
      if occurred.contains(.writable), flags & DBUS_WATCH_WRITABLE.rawValue != 0 {
        condition |= DBUS_WATCH_WRITABLE.rawValue
      }
      if occurred.contains(.error) { condition |= DBUS_WATCH_ERROR.rawValue }
      if occurred.contains(.hangup) { condition |= DBUS_WATCH_HANGUP.rawValue }
      if condition != 0 { _ = dbus_watch_handle(watch, condition) }
    }
  }
}

/// libdbus's timeouts for one connection on one timerfd
/// (`dbus_connection_set_timeout_functions`).
///
/// The timer is armed at or before the earliest deadline, never after it: a new deadline is
/// compared with the armed one, and a removed timeout leaves the timer as it is (it fires
/// early at worst, finds nothing due and is armed again). Every pending call has a timeout, so
/// finding the earliest deadline anew on each add and remove cost a burst of 1000 claims (a
/// polkit check and a NameHasOwner call each) a scan of up to 1000 entries and a
/// timerfd_settime per call (docs/benchmark.md, "Claims"). With no timeout left the timer is
/// disarmed: an idle connection has no wakeups.
final class TimeoutSet {
  private weak var loop: EventLoop?
  private var timer: EventLoop.Timer?
  private struct Entry {
    var deadline: Int64
    var interval: Int64
  }
  private var entries: [OpaquePointer: Entry] = [:]
  private var armedDeadline: Int64?

  init(loop: EventLoop) { self.loop = loop }

  /// Enabled timeouts (for diagnostics and tests).
  var count: Int { entries.count }

  /// `DBusAddTimeoutFunction`.
  func add(_ timeout: OpaquePointer) -> Bool { schedule(timeout) }

  /// `DBusRemoveTimeoutFunction`.
  func remove(_ timeout: OpaquePointer) {
    entries[timeout] = nil
    if entries.isEmpty { disarm() }
  }

  /// `DBusTimeoutToggledFunction`: the interval may have changed too.
  func toggled(_ timeout: OpaquePointer) { _ = schedule(timeout) }

  /// Stops the timer (the free function).
  func invalidate() {
    entries = [:]
    timer?.cancel()
    timer = nil
    armedDeadline = nil
  }

  /// Records `timeout`'s next deadline (or drops a disabled one); arms the timer if that
  /// deadline comes before the armed one.
  private func schedule(_ timeout: OpaquePointer) -> Bool {
    guard dbus_timeout_get_enabled(timeout) != 0 else {
      remove(timeout)
      return true
    }
    let interval = Int64(max(dbus_timeout_get_interval(timeout), 0)) * 1_000_000
    let deadline = Clock.monotonicNanoseconds() + interval
    entries[timeout] = Entry(deadline: deadline, interval: interval)
    if let armedDeadline, armedDeadline <= deadline { return true }
    return arm(at: deadline)
  }

  /// Arms the timer at the earliest deadline, or disarms it when there is none.
  private func rearm() -> Bool {
    guard let next = entries.values.lazy.map(\.deadline).min() else {
      disarm()
      return true
    }
    return arm(at: next)
  }

  private func disarm() {
    timer?.disarm()
    armedDeadline = nil
  }

  private func arm(at deadline: Int64) -> Bool {
    if deadline == armedDeadline { return true }
    if timer == nil {
      guard let loop else { return false }
      do {
        timer = try loop.makeTimer { [weak self] in self?.fire() }
      } catch {
        return false
      }
    }
    guard let timer else { return false }
    do {
      try timer.schedule(after: .nanoseconds(deadline - Clock.monotonicNanoseconds()))
    } catch {
      return false
    }
    armedDeadline = deadline
    return true
  }

  /// Handles every due timeout (`dbus_timeout_handle`); each repeats until libdbus removes it.
  private func fire() {
    armedDeadline = nil
    let now = Clock.monotonicNanoseconds()
    let due = entries.filter { $0.value.deadline <= now }.map(\.key)
    for timeout in due {
      // Handling one may remove others (a completed pending call drops its timeout).
      guard var entry = entries[timeout], entry.deadline <= now else { continue }
      entry.deadline = now + max(entry.interval, 1_000_000)
      entries[timeout] = entry
      _ = dbus_timeout_handle(timeout)
    }
    _ = rearm()
  }
}
