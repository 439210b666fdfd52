// claims-bench: many clients claim and release orientd's sensor at once, then vanish without
// releasing; prints what the daemon did with its memory, descriptors and sensor meanwhile, and
// the CPU time it and the bus daemon spent answering the claims and the releases.
//
//   claims-bench --address unix:path=... [--clients 1000] [--json]
//
// Every client is its own bus connection (half through org.orientd.Orientation1, half through
// net.hadess.SensorProxy), all on one event loop, all calls in flight at once:
//   1. connect N clients;          2. each claims (claims/s: all answered);
//   3. each releases: sampling must stop;
//   4. each claims again, then all connections close without releasing (they vanish);
//   5. wait until the daemon holds no sensor file and as many descriptors as before, then
//      count its read(2)-family system calls (/proc/PID/io syscr) over one idle second.
// The daemon is found with GetConnectionUnixProcessID, so the bench must run as root or as the
// daemon's user to read its /proc files. Numbers, not assertions: the exit status is 1 only if
// something went wrong (an unanswered or failed call, a bus error). scripts/bench/claims.sh
// sets up the bus and an emulated sensor; BusFaultTests runs it with 200 clients.
import DBusKit
import Glibc
import JSON
import OrientWire
import SystemKit

/// Writes a message to stderr.
func complain(_ message: String) {
  StandardStream.error.writeLine("claims-bench: \(message)")
}

struct Options {
  var address = ""
  var clients = 1000
  var json = false

  init(_ arguments: [String]) {
    var rest = arguments[...]
    while let argument = rest.popFirst() {
      switch argument {
      case "--address": address = rest.popFirst() ?? ""
      case "--clients": clients = rest.popFirst().flatMap { Int($0) } ?? -1
      case "--json": json = true
      case "--help":
        print("usage: claims-bench --address ADDRESS [--clients N] [--json]")
        exit(ExitStatus.success)
      case "--version":
        print("claims-bench 0.1.0")
        exit(ExitStatus.success)
      default:
        complain("unknown option \(argument) (see --help)")
        exit(ExitStatus.usage)
      }
    }
    guard !address.isEmpty, clients > 0 else {
      complain("--address ADDRESS is required and --clients must be positive (see --help)")
      exit(ExitStatus.usage)
    }
  }
}

/// What /proc says about the daemon.
struct ProcessProbe {
  let pid: UInt32

  func status(_ field: String) -> Int {
    for line in read("status").split(separator: "\n") where line.hasPrefix("\(field):") {
      return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
    return 0
  }

  /// read(2)-family system calls so far (`syscr` of /proc/PID/io).
  var readCalls: Int {
    for line in read("io").split(separator: "\n") where line.hasPrefix("syscr:") {
      return Int(line.dropFirst(6).trimmingPrefix(while: { $0 == " " })) ?? 0
    }
    return 0
  }

  /// The targets of its open descriptors.
  var descriptors: [String] {
    let directory = "/proc/\(pid)/fd"
    guard let dir = opendir(directory) else { return [] }
    defer { closedir(dir) }
    var targets: [String] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name == "." || name == ".." { continue }
      var buffer = [CChar](repeating: 0, count: 4096)
      let n = readlink("\(directory)/\(name)", &buffer, buffer.count - 1)
      targets.append(
        n > 0 ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "")
    }
    return targets
  }

  /// Seconds spent on a CPU so far (the first field of /proc/PID/schedstat, in nanoseconds):
  /// what a phase cost the process, which holds on a loaded machine where wall time does not.
  var cpuSeconds: Double {
    Double(read("schedstat").split(separator: " ").first.flatMap { Int($0) } ?? 0) / 1e9
  }

  /// Open sensor files: IIO attributes (`in_accel_*`) or the character device.
  var sensorFiles: Int {
    descriptors.filter { $0.contains("in_accel_") || $0.contains("iio:device") }.count
  }

  private func read(_ file: String) -> String {
    guard let f = fopen("/proc/\(pid)/\(file)", "r") else { return "" }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let n = fread(&buffer, 1, buffer.count, f)
      if n <= 0 { break }
      bytes += buffer[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}

func now() -> Double { Double(Clock.monotonicNanoseconds()) / 1e9 }

/// Lets the bench hold one descriptor per client.
func raiseDescriptorLimit() {
  var limit = rlimit()
  getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
  limit.rlim_cur = limit.rlim_max
  setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

func run(_ options: Options) throws -> ExitStatus {
  raiseDescriptorLimit()
  let loop = try EventLoop()
  let control = try DBusConnection(bus: .address(options.address), loop: loop)
  guard
    let pid = try control.callBlocking(
      destination: "org.freedesktop.DBus", path: DBusObjectPath("/org/freedesktop/DBus"),
      interface: "org.freedesktop.DBus", member: "GetConnectionUnixProcessID",
      arguments: [.string(Wire.orientdName)]
    ).first?.uint32Value
  else {
    complain("no process id for \(Wire.orientdName)")
    return .failure
  }
  let daemon = ProcessProbe(pid: pid)
  // The bus daemon relays every call, reply and signal: on two cores it is half the work.
  let bus = try? control.callBlocking(
    destination: "org.freedesktop.DBus", path: DBusObjectPath("/org/freedesktop/DBus"),
    interface: "org.freedesktop.DBus", member: "GetConnectionUnixProcessID",
    arguments: [.string("org.freedesktop.DBus")]
  ).first?.uint32Value.map { ProcessProbe(pid: $0) }
  // One claim and release first, so that what the daemon creates once on its first claim (the
  // claim reply timer, the sampler's timer) is in the baseline.
  for member in ["Claim", "Release"] {
    _ = try control.callBlocking(
      destination: Wire.orientdName, path: DBusObjectPath(Wire.orientationPath.rawValue),
      interface: Wire.orientdName, member: member)
  }
  let rssBefore = daemon.status("VmRSS")
  let anonBefore = daemon.status("RssAnon")
  let descriptorsBefore = daemon.descriptors
  let fdsBefore = descriptorsBefore.count
  var failures: [String] = []
  var rssPeak = rssBefore

  func pump(until condition: () -> Bool, timeout: Double = 60) throws {
    let deadline = now() + timeout
    var lastSample = 0.0
    while !condition() && now() < deadline {
      try loop.runOnce(timeoutMilliseconds: 5)
      if now() - lastSample > 0.02 {
        rssPeak = max(rssPeak, daemon.status("VmRSS"))
        lastSample = now()
      }
    }
  }

  var start = now()
  var clients: [DBusConnection] = []
  clients.reserveCapacity(options.clients)
  for _ in 0..<options.clients {
    clients.append(try DBusConnection(bus: .address(options.address), loop: loop))
  }
  let connectSeconds = now() - start

  /// Every client calls `member` of its API at once; returns the seconds until all answered.
  func everyone(claim: Bool) throws -> Double {
    var answered = 0
    let begin = now()
    for (index, client) in clients.enumerated() {
      let own = index.isMultiple(of: 2)
      let name = own ? Wire.orientdName : Wire.sensorProxyName
      let member =
        own
        ? (claim ? "Claim" : "Release") : (claim ? "ClaimAccelerometer" : "ReleaseAccelerometer")
      client.call(
        destination: name,
        path: try DBusObjectPath(
          own ? Wire.orientationPath.rawValue : Wire.sensorProxyPath.rawValue),
        interface: name, member: member
      ) { result in
        answered += 1
        if case .failure(let error) = result { failures.append("\(member): \(error)") }
      }
    }
    try pump(until: { answered == clients.count })
    if answered < clients.count { failures.append("\(clients.count - answered) unanswered") }
    return now() - begin
  }

  var cpuBefore = (daemon: daemon.cpuSeconds, bus: bus?.cpuSeconds ?? 0)
  let claimSeconds = try everyone(claim: true)
  let claimCPU = (
    daemon: daemon.cpuSeconds - cpuBefore.daemon, bus: (bus?.cpuSeconds ?? 0) - cpuBefore.bus
  )
  let sampledWhileClaimed = daemon.sensorFiles > 0
  cpuBefore = (daemon: daemon.cpuSeconds, bus: bus?.cpuSeconds ?? 0)
  let releaseSeconds = try everyone(claim: false)
  let releaseCPU = (
    daemon: daemon.cpuSeconds - cpuBefore.daemon, bus: (bus?.cpuSeconds ?? 0) - cpuBefore.bus
  )
  try pump(until: { daemon.sensorFiles == 0 }, timeout: 10)
  let sensorFilesAfterRelease = daemon.sensorFiles
  _ = try everyone(claim: true)

  start = now()
  for client in clients { client.close() }
  clients.removeAll()
  try pump(
    until: { daemon.sensorFiles == 0 && daemon.descriptors.count <= fdsBefore }, timeout: 30)
  let vanishSeconds = now() - start
  // Let the bus' last NameOwnerChanged signals reach the daemon, then watch one idle second.
  try pump(until: { false }, timeout: 0.3)
  let readsBefore = daemon.readCalls
  try pump(until: { false }, timeout: 1)
  let idleReads = daemon.readCalls - readsBefore

  let claimRate = Double(options.clients) / claimSeconds
  let report: [(String, JSONValue)] = [
    ("clients", .number(Double(options.clients))),
    ("connect_seconds", .number(connectSeconds)),
    ("claim_seconds", .number(claimSeconds)),
    ("claims_per_second", .number(claimRate.rounded())),
    ("release_seconds", .number(releaseSeconds)),
    // CPU seconds of the daemon and of the bus daemon while all claims (releases) were answered.
    ("claim_cpu_seconds", .number(claimCPU.daemon)),
    ("claim_bus_cpu_seconds", .number(claimCPU.bus)),
    ("release_cpu_seconds", .number(releaseCPU.daemon)),
    ("release_bus_cpu_seconds", .number(releaseCPU.bus)),
    ("vanish_seconds", .number(vanishSeconds)),
    ("sampled_while_claimed", .bool(sampledWhileClaimed)),
    ("sensor_files_after_release", .number(Double(sensorFilesAfterRelease))),
    ("sensor_files_after_vanish", .number(Double(daemon.sensorFiles))),
    ("rss_kb_before", .number(Double(rssBefore))),
    ("rss_kb_peak", .number(Double(rssPeak))),
    ("rss_kb_after", .number(Double(daemon.status("VmRSS")))),
    // VmRSS counts code pages run for the first time too; the heap is in RssAnon.
    ("rss_anon_kb_before", .number(Double(anonBefore))),
    ("rss_anon_kb_after", .number(Double(daemon.status("RssAnon")))),
    ("fds_before", .number(Double(fdsBefore))),
    ("fds_after", .number(Double(daemon.descriptors.count))),
    (
      "fds_new",
      .array(daemon.descriptors.filter { !descriptorsBefore.contains($0) }.map { .string($0) })
    ),
    ("idle_read_calls_per_second", .number(Double(idleReads))),
    ("failures", .array(failures.prefix(10).map { .string($0) })),
  ]
  if options.json {
    print(JSONValue.object(report).encoded())
  } else {
    for (key, value) in report { print("\(key): \(value.encoded())") }
  }
  return failures.isEmpty ? .success : .failure
}

do {
  exit(try run(Options(Array(CommandLine.arguments.dropFirst()))))
} catch {
  complain("\(error)")
  exit(ExitStatus.failure)
}
