import Glibc

/// umockdev's answers for an emulated evdev switch device: the ioctls libevdev 1.13 asks when it
/// opens a node (with the sizes it asks them with, as in Tests/SessionTests/Fixtures), for a
/// device that has only EV_SYN and EV_SW, all switches off at first.
public enum EmulatedSwitchDevice {
  /// The ioctl script (`umockdev-run -i NODE=FILE`).
  /// - Parameters:
  ///   - name: the device's name (EVIOCGNAME).
  ///   - id: EVIOCGID's 8 bytes in hex (bus, vendor, product, version, little-endian).
  ///   - switchBits: EVIOCGBIT(EV_SW)'s bytes in hex, e.g. `02` for SW_TABLET_MODE (bit 1).
  public static func ioctls(name: String, id: String, switchBits: String) -> String {
    func zeros(_ n: Int) -> String { String(repeating: "00", count: n) }
    let bytes = Array(name.utf8) + [0]
    let nameHex = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }
      .joined()
    return [
      "EVIOCGVERSION 0 01000100",
      "EVIOCGID 0 \(id)",
      "EVIOCGNAME(0) \(bytes.count) \(nameHex)\(zeros(255 - bytes.count))",
      "EVIOCGPROP(0) 8 \(zeros(8))",
      "EVIOCGBIT(0) 8 21\(zeros(7))",  // EV_SYN, EV_SW
      "EVIOCGBIT(1) 96 \(zeros(96))",
      "EVIOCGBIT(2) 8 \(zeros(8))",
      "EVIOCGBIT(3) 8 \(zeros(8))",
      "EVIOCGBIT(17) 8 \(zeros(8))",
      "EVIOCGBIT(5) 8 \(switchBits)\(zeros(8 - switchBits.count / 2))",
      "EVIOCGBIT(4) 8 \(zeros(8))",
      "EVIOCGBIT(21) 16 \(zeros(16))",
      "EVIOCGBIT(18) 8 \(zeros(8))",
      "EVIOCGKEY(0) 96 \(zeros(96))",
      "EVIOCGLED(0) 8 \(zeros(8))",
      "EVIOCGSW(0) 8 \(zeros(8))",
    ].joined(separator: "\n") + "\n"
  }
}

/// The program umockdev-run started: its child, forked from one of its threads (each thread
/// lists its own children in /proc).
public func umockdevChild(of wrapper: ChildProcess) -> pid_t? {
  for task in directoryEntries("/proc/\(wrapper.pid)/task") {
    let children = readFile("/proc/\(wrapper.pid)/task/\(task)/children")
    if let first = children.split(separator: " ").first, let pid = pid_t(first) { return pid }
  }
  return nil
}

/// Whether the process holds an emulated evdev node (umockdev answers it with a pty).
public func holdsEmulatedInputNode(_ pid: pid_t) -> Bool {
  openFileTargets(pid).contains(" -> /dev/pts/")
}

/// What the process has open, one `fd -> target` a line (`ls -l /proc/PID/fd` as text), for
/// checks and messages.
public func openFileTargets(_ pid: pid_t) -> String {
  directoryEntries("/proc/\(pid)/fd").map { fd in
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/\(pid)/fd/\(fd)", &buffer, buffer.count - 1)
    let target = String(
      decoding: buffer.prefix(max(0, n)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return "\(fd) -> \(n > 0 ? target : "?")"
  }.joined(separator: "\n")
}

/// The names in a directory, without `.` and `..`; none when it cannot be read.
public func directoryEntries(_ path: String) -> [String] {
  guard let dir = opendir(path) else { return [] }
  defer { closedir(dir) }
  var names: [String] = []
  while let entry = readdir(dir) {
    let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
    if name != "." && name != ".." { names.append(name) }
  }
  return names
}
