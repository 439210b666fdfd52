// iio-read-bench: reads the same accelerometer's in_accel_{x,y,z}_raw three ways and prints
// readings per second and CPU time per reading side by side:
//   libiio   iio_channel_attr_read_longlong() (libiio 0.24 local backend: fopen/fread/fclose
//            per attribute read)
//   reopen   open/read/close per attribute (SystemKit.Sysfs.read, what most tools do)
//   pread    three descriptors kept open, pread() at offset 0, strict parse
//   attr     the same through SystemKit.SysfsAttribute: orientd's path, which also checks
//            with fstat() at most every 250 ms per attribute that the open file was not
//            replaced (umockdev's set_attribute renames a new file over it)
//   attr0    SysfsAttribute checking on every read (the cost of the check itself)
//
// usage: iio-read-bench [--device iio:device0] [--readings N]
//                       [--only libiio|reopen|pread|attr|attr0]
//
// Run it under umockdev-run with an emulated device, or on a machine with a real one;
// scripts/bench/iio-read.sh does both and adds syscalls per reading (strace).
import Accelerometer
import CIIO
import Glibc
import SystemKit

/// Writes a line to stderr, prefixed with the program's name.
func complain(_ message: String) {
  StandardStream.error.writeLine("iio-read-bench: \(message)")
}

struct Options {
  var device = "iio:device0"
  var readings = 20_000
  var only: String?

  init(_ arguments: [String]) {
    var rest = arguments[...]
    while let argument = rest.popFirst() {
      switch argument {
      case "--device": device = rest.popFirst() ?? device
      case "--readings": readings = rest.popFirst().flatMap { Int($0) } ?? readings
      case "--only": only = rest.popFirst()
      case "--help":
        print(
          "usage: iio-read-bench [--device iio:deviceN] [--readings N] "
            + "[--only libiio|reopen|pread|attr|attr0]")
        exit(ExitStatus.success)
      case "--version":
        print("iio-read-bench 0.1.0")
        exit(ExitStatus.success)
      default:
        complain("unknown option \(argument)")
        exit(ExitStatus.usage)
      }
    }
  }
}

/// CPU time (user + system) of this process in microseconds (getrusage).
func cpuMicroseconds() -> Double {
  var usage = rusage()
  getrusage(RUSAGE_SELF.rawValue, &usage)
  let user = Double(usage.ru_utime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec)
  let system = Double(usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_stime.tv_usec)
  return user + system
}

struct Result {
  var method: String
  var readings: Int
  var seconds: Double
  var cpu: Double
  var checksum: Int64
}

func measure(_ method: String, readings: Int, _ body: () -> Int64) -> Result {
  let cpu0 = cpuMicroseconds()
  let t0 = Clock.monotonicNanoseconds()
  var checksum: Int64 = 0
  for _ in 0..<readings { checksum &+= body() }
  let seconds = Double(Clock.monotonicNanoseconds() - t0) / 1e9
  return Result(
    method: method, readings: readings, seconds: seconds, cpu: cpuMicroseconds() - cpu0,
    checksum: checksum)
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let syspath = "/sys/bus/iio/devices/\(options.device)"
let axes = ["x", "y", "z"]
var results: [Result] = []

if options.only == nil || options.only == "libiio" {
  guard let context = iio_create_local_context() else {
    complain("libiio found no local context: \(String(cString: strerror(errno)))")
    exit(ExitStatus.unavailable)
  }
  defer { iio_context_destroy(context) }
  guard let device = iio_context_find_device(context, options.device) else {
    complain("libiio has no device \(options.device)")
    exit(ExitStatus.unavailable)
  }
  let channels = axes.compactMap { iio_device_find_channel(device, "accel_\($0)", false) }
  guard channels.count == 3 else {
    complain("\(options.device) has no accel_x/y/z channels for libiio")
    exit(ExitStatus.unavailable)
  }
  results.append(
    measure("libiio", readings: options.readings) {
      var sum: Int64 = 0
      for channel in channels {
        var value: Int64 = 0
        if iio_channel_attr_read_longlong(channel, "raw", &value) == 0 { sum &+= value }
      }
      return sum
    })
}

if options.only == nil || options.only == "reopen" {
  results.append(
    measure("reopen", readings: options.readings) {
      var sum: Int64 = 0
      for axis in axes {
        if let text = try? Sysfs.read("\(syspath)/in_accel_\(axis)_raw"),
          case .success(let value) = SysfsValue.parseRaw(text.utf8)
        {
          sum &+= value
        }
      }
      return sum
    })
}

if options.only == nil || options.only == "pread" {
  let files: [FileDescriptor]
  do {
    files = try axes.map { try FileDescriptor(path: "\(syspath)/in_accel_\($0)_raw") }
  } catch {
    complain("\(error)")
    exit(ExitStatus.unavailable)
  }
  let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)
  defer { buffer.deallocate() }
  results.append(
    measure("pread", readings: options.readings) {
      var sum: Int64 = 0
      for file in files {
        guard let n = try? file.pread(into: buffer, offset: 0),
          case .success(let value) = SysfsValue.parseRaw(
            UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        else { continue }
        sum &+= value
      }
      return sum
    })
}

for (method, interval) in [
  ("attr", SysfsAttribute.defaultCheckInterval), ("attr0", Duration.zero),
] where options.only == nil || options.only == method {
  let files: [SysfsAttribute]
  do {
    files = try axes.map {
      try SysfsAttribute(path: "\(syspath)/in_accel_\($0)_raw", checkInterval: interval)
    }
  } catch {
    complain("\(error)")
    exit(ExitStatus.unavailable)
  }
  let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)
  defer { buffer.deallocate() }
  results.append(
    measure(method, readings: options.readings) {
      var sum: Int64 = 0
      for file in files {
        guard let n = try? file.read(into: buffer),
          case .success(let value) = SysfsValue.parseRaw(
            UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        else { continue }
        sum &+= value
      }
      return sum
    })
}

func pad(_ s: String, _ width: Int) -> String {
  s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
}
print("device \(options.device), \(options.readings) readings of x, y, z per method")
print("method      readings/s    CPU us/reading   checksum")
for r in results {
  let rate = Double(r.readings) / max(r.seconds, 1e-9)
  print(
    pad(r.method, 6) + pad(FixedPoint.format(rate, decimals: 0), 16)
      + pad(FixedPoint.format(r.cpu / Double(r.readings), decimals: 2), 17)
      + pad(String(r.checksum), 11))
}
