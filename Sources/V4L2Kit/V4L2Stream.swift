import CLinuxShims
import Glibc
import SystemKit

/// One frame copied out of a driver buffer.
public struct CapturedFrame: Sendable {
  /// The frame bytes (`bytesused` of them; for compressed formats, one JPEG image).
  public var bytes: [UInt8]
  /// The driver's frame counter (`v4l2_buffer.sequence`).
  public var sequence: UInt32
  /// The driver's timestamp in nanoseconds (`CLOCK_MONOTONIC` for nearly all drivers,
  /// `V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC`).
  public var timestampNanoseconds: Int64
}

/// Memory-mapped streaming from a negotiated device: `VIDIOC_REQBUFS`, `VIDIOC_QUERYBUF` +
/// `mmap(2)`, `VIDIOC_QBUF`, `VIDIOC_STREAMON`, then `poll(2)` + `VIDIOC_DQBUF` per frame.
///
/// `stop()` (or `deinit`) turns streaming off, unmaps and frees the buffers, so the camera is
/// released as soon as the caller is done. A session keeps one stream open for many frames.
public final class V4L2Stream {
  /// The device streamed from.
  public let device: V4L2Device
  /// The active format.
  public let format: ActiveFormat
  private var buffers: [(address: UnsafeMutableRawPointer, length: Int)] = []
  private var streaming = false

  /// Allocates and maps `bufferCount` buffers, queues them and starts streaming.
  ///
  /// - Throws: `V4L2Error`; anything set up before the failure is undone.
  public init(device: V4L2Device, format: ActiveFormat, bufferCount: Int = 4) throws(V4L2Error) {
    self.device = device
    self.format = format
    do {
      try start(bufferCount: bufferCount)
    } catch {
      stop()
      throw error
    }
  }

  deinit { stop() }

  private func start(bufferCount: Int) throws(V4L2Error) {
    let path = device.path
    var request = v4l2_requestbuffers()
    request.count = UInt32(bufferCount)
    request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    request.memory = V4L2_MEMORY_MMAP.rawValue
    do { try device.ioctl(orient_VIDIOC_REQBUFS, "VIDIOC_REQBUFS", &request) } catch {
      if error.code == .invalidArgument {
        throw V4L2Error(
          .notACamera, path: path, "does not support memory-mapped streaming", errno: EINVAL)
      }
      throw V4L2Device.translate(error, path: path, doing: "VIDIOC_REQBUFS")
    }
    guard request.count > 0 else {
      throw V4L2Error(.io, path: path, "the driver granted no buffers")
    }
    for index in 0..<request.count {
      var buffer = v4l2_buffer()
      buffer.index = index
      buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
      buffer.memory = V4L2_MEMORY_MMAP.rawValue
      do { try device.ioctl(orient_VIDIOC_QUERYBUF, "VIDIOC_QUERYBUF", &buffer) } catch {
        throw V4L2Device.translate(error, path: path, doing: "VIDIOC_QUERYBUF")
      }
      let address = mmap(
        nil, Int(buffer.length), PROT_READ | PROT_WRITE, MAP_SHARED, device.descriptor.rawValue,
        off_t(buffer.m.offset))
      guard let address, orient_is_map_failed(address) == 0 else {
        let code = errno
        throw V4L2Device.translate(
          SystemError(errno: code, operation: "mmap", path: path), path: path, doing: "mmap")
      }
      buffers.append((address, Int(buffer.length)))
      try queue(index)
    }
    var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
    do { try device.ioctl(orient_VIDIOC_STREAMON, "VIDIOC_STREAMON", &type) } catch {
      throw V4L2Device.translate(error, path: path, doing: "VIDIOC_STREAMON")
    }
    streaming = true
  }

  private func queue(_ index: UInt32) throws(V4L2Error) {
    var buffer = v4l2_buffer()
    buffer.index = index
    buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    buffer.memory = V4L2_MEMORY_MMAP.rawValue
    do { try device.ioctl(orient_VIDIOC_QBUF, "VIDIOC_QBUF", &buffer) } catch {
      throw V4L2Device.translate(error, path: device.path, doing: "VIDIOC_QBUF")
    }
  }

  /// The descriptor to poll for readability in an event loop (then call `dequeueIfReady`).
  public var pollDescriptor: Int32 { device.descriptor.rawValue }

  /// Takes a finished frame if one is ready (`VIDIOC_DQBUF` on the non-blocking descriptor),
  /// copies it out and gives the buffer back to the driver. Frames the driver marks as
  /// damaged (`V4L2_BUF_FLAG_ERROR`) or empty are skipped.
  ///
  /// - Returns: the frame, or `nil` if none is ready.
  public func dequeueIfReady() throws(V4L2Error) -> CapturedFrame? {
    guard streaming else { throw V4L2Error(.io, path: device.path, "not streaming") }
    var buffer = v4l2_buffer()
    buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    buffer.memory = V4L2_MEMORY_MMAP.rawValue
    do { try device.ioctl(orient_VIDIOC_DQBUF, "VIDIOC_DQBUF", &buffer) } catch {
      if error.code == .resourceTemporarilyUnavailable { return nil }
      throw V4L2Device.translate(error, path: device.path, doing: "VIDIOC_DQBUF")
    }
    let index = Int(buffer.index)
    defer { try? queue(buffer.index) }
    let damaged = buffer.flags & 0x0040 != 0  // V4L2_BUF_FLAG_ERROR
    guard index < buffers.count, !damaged, buffer.bytesused > 0 else { return nil }
    let used = min(Int(buffer.bytesused), buffers[index].length)
    let bytes = [UInt8](
      UnsafeRawBufferPointer(start: buffers[index].address, count: used))
    let stamp =
      Int64(buffer.timestamp.tv_sec) * 1_000_000_000 + Int64(buffer.timestamp.tv_usec) * 1000
    return CapturedFrame(bytes: bytes, sequence: buffer.sequence, timestampNanoseconds: stamp)
  }

  /// Waits up to `timeoutMilliseconds` for the next good frame (`poll(2)`).
  ///
  /// - Throws: `V4L2Error` `.timeout` if none arrives, or the error of the ioctl.
  public func nextFrame(timeoutMilliseconds: Int32 = 5000) throws(V4L2Error) -> CapturedFrame {
    let deadline = Clock.monotonicNanoseconds() + Int64(timeoutMilliseconds) * 1_000_000
    while true {
      if let frame = try dequeueIfReady() { return frame }
      let left = (deadline - Clock.monotonicNanoseconds()) / 1_000_000
      guard left > 0 else {
        throw V4L2Error(
          .timeout, path: device.path,
          "no frame within \(timeoutMilliseconds) ms; is the camera covered by a privacy "
            + "shutter or used by another program?")
      }
      var pfd = pollfd(fd: pollDescriptor, events: Int16(POLLIN), revents: 0)
      let n = poll(&pfd, 1, Int32(left))
      if n < 0 && errno != EINTR {
        throw V4L2Device.translate(
          SystemError(errno: errno, operation: "poll", path: device.path), path: device.path,
          doing: "poll")
      }
      if n > 0 && pfd.revents & Int16(POLLERR | POLLHUP) != 0 && pfd.revents & Int16(POLLIN) == 0 {
        throw V4L2Error(.notFound, path: device.path, "the camera went away while streaming")
      }
    }
  }

  /// Stops streaming and frees the buffers (`VIDIOC_STREAMOFF`, `munmap`, `VIDIOC_REQBUFS` 0);
  /// idempotent.
  public func stop() {
    if streaming {
      var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
      try? device.ioctl(orient_VIDIOC_STREAMOFF, "VIDIOC_STREAMOFF", &type)
      streaming = false
    }
    for buffer in buffers { munmap(buffer.address, buffer.length) }
    if !buffers.isEmpty {
      var request = v4l2_requestbuffers()
      request.count = 0
      request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
      request.memory = V4L2_MEMORY_MMAP.rawValue
      try? device.ioctl(orient_VIDIOC_REQBUFS, "VIDIOC_REQBUFS", &request)
    }
    buffers.removeAll()
  }
}
