import CLibcameraAPI
import Glibc
import SystemKit

/// The stream configuration libcamera accepted.
public struct LibcameraConfiguration: Equatable, Sendable {
  /// The DRM four-character code.
  public var fourCC: UInt32
  /// The DRM modifier.
  public var modifier: UInt64
  /// The frame size.
  public var size: LibcameraSize
  /// Bytes from one row of the first plane to the next.
  public var stride: Int
  /// The bytes of one frame.
  public var frameSize: Int
  /// How many buffers (and requests) stream.
  public var bufferCount: Int
  /// Whether `validate()` adjusted what was asked for.
  public var adjusted: Bool
  /// What the pipeline does to the frames, in the terms of this libcamera generation.
  public var applied: PipelineApplied
}

/// A completed request's frame, copied out of its buffer.
public struct LibcameraFrame: Sendable {
  /// `FrameMetadata::Status`.
  public enum Status: Int32, Sendable {
    /// `FrameSuccess`.
    case success = 0
    /// `FrameError`: the frame is damaged.
    case error = 1
    /// `FrameCancelled`: the camera stopped before it was filled.
    case cancelled = 2
  }

  /// How the frame ended.
  public var status: Status
  /// `FrameMetadata::sequence`.
  public var sequence: UInt32
  /// `FrameMetadata::timestamp` in nanoseconds (`CLOCK_MONOTONIC` from the driver).
  public var timestampNanoseconds: Int64
  /// Each plane's bytes (`bytesused` of them).
  public var planes: [[UInt8]]
}

/// One camera, acquired: configure it, start it, take frames as requests complete. Closing (or
/// releasing the object) stops it and gives it back, whatever state it is in.
///
/// Requests complete on libcamera's thread; the bridge queues them and makes
/// `eventDescriptor` readable, so the caller's event loop knows when `takeFrame()` has one.
public final class LibcameraCamera {
  /// What the camera said about itself.
  public let info: LibcameraCameraInfo
  private let api: orient_lc_api
  private var handle: OpaquePointer?
  /// The manager it came from, kept while the camera is open.
  private var manager: LibcameraManager?
  /// The accepted configuration, once configured.
  public private(set) var configuration: LibcameraConfiguration?

  init(
    api: orient_lc_api, handle: OpaquePointer, info: LibcameraCameraInfo, manager: LibcameraManager
  ) {
    self.api = api
    self.handle = handle
    self.info = info
    self.manager = manager
  }

  deinit { close() }

  private func open() throws(LibcameraError) -> OpaquePointer {
    guard let handle else { throw LibcameraError(.invalidArgument, "\(info.id): camera closed") }
    return handle
  }

  /// Configures the still-capture stream: the first of `fourCCs` the camera offers, at `size`
  /// (`nil`: the largest that format offers).
  ///
  /// - Throws: `LibcameraError` (`EINVAL`: none of the formats, or an invalid configuration).
  public func configure(fourCCs: [UInt32], size: LibcameraSize?) throws(LibcameraError)
    -> LibcameraConfiguration
  {
    let camera = try open()
    var error = orient_lc_error()
    var out = orient_lc_configuration()
    let result = fourCCs.withUnsafeBufferPointer { codes in
      api.camera_configure(
        camera, codes.baseAddress, codes.count, UInt32(size?.width ?? 0),
        UInt32(size?.height ?? 0), &out, &error)
    }
    guard result == 0 else { throw LibcameraError(error, result: result) }
    let applied: PipelineApplied
    if out.transform >= 0, let transform = LibcameraTransform(rawValue: Int(out.transform)) {
      applied = .transform(transform, combinedWithRotation: out.honours_transform == 1)
    } else {
      applied = .orientation(exif: Int(out.orientation))
    }
    let made = LibcameraConfiguration(
      fourCC: out.fourcc, modifier: out.modifier,
      size: LibcameraSize(width: Int(out.width), height: Int(out.height)),
      stride: Int(out.stride), frameSize: Int(out.frame_size), bufferCount: Int(out.buffer_count),
      adjusted: out.adjusted != 0, applied: applied)
    configuration = made
    return made
  }

  /// Allocates and maps the buffers, starts the camera and queues a request per buffer.
  ///
  /// - Throws: `LibcameraError`; close the camera then (it undoes the partial start).
  public func start() throws(LibcameraError) {
    let camera = try open()
    var error = orient_lc_error()
    let result = api.camera_start(camera, &error)
    guard result == 0 else { throw LibcameraError(error, result: result) }
  }

  /// The eventfd that is readable while a frame waits (or the camera went away); `nil` before
  /// `start()` or after `close()`.
  public var eventDescriptor: Int32? {
    guard let handle else { return nil }
    let fd = api.camera_event_fd(handle)
    return fd >= 0 ? fd : nil
  }

  /// Takes the oldest completed frame without waiting, copies it out and queues its request
  /// again.
  ///
  /// - Returns: the frame, or `nil` when none is ready.
  /// - Throws: `LibcameraError` (`ENODEV`: the camera was disconnected).
  public func takeFrame() throws(LibcameraError) -> LibcameraFrame? {
    let camera = try open()
    var error = orient_lc_error()
    var taken = orient_lc_frame()
    let result = api.camera_take(camera, &taken, &error)
    if result == 0 { return nil }
    guard result > 0 else { throw LibcameraError(error, result: result) }
    let count = min(Int(taken.plane_count), 4)
    let data = withUnsafeBytes(of: taken.plane_data) { raw in
      (0..<count).map { raw.load(fromByteOffset: $0 * MemoryLayout<UInt>.stride, as: UInt.self) }
    }
    let lengths = withUnsafeBytes(of: taken.plane_bytes) { raw in
      (0..<count).map { raw.load(fromByteOffset: $0 * MemoryLayout<Int>.stride, as: Int.self) }
    }
    var planes: [[UInt8]] = []
    for i in 0..<count {
      guard let base = UnsafeRawPointer(bitPattern: data[i]) else {
        planes.append([])
        continue
      }
      planes.append([UInt8](UnsafeRawBufferPointer(start: base, count: lengths[i])))
    }
    let given = api.camera_give_back(camera, taken.slot, &error)
    guard given == 0 else { throw LibcameraError(error, result: given) }
    return LibcameraFrame(
      status: LibcameraFrame.Status(rawValue: taken.status) ?? .error, sequence: taken.sequence,
      timestampNanoseconds: Int64(bitPattern: taken.timestamp_ns), planes: planes)
  }

  /// Waits up to `timeoutMilliseconds` for the eventfd (`poll(2)`), then takes a frame.
  ///
  /// - Returns: the frame, or `nil` if none came in time.
  public func waitForFrame(timeoutMilliseconds: Int) throws(LibcameraError) -> LibcameraFrame? {
    let deadline = Clock.monotonicNanoseconds() + Int64(timeoutMilliseconds) * 1_000_000
    while true {
      if let frame = try takeFrame() { return frame }
      guard let fd = eventDescriptor else {
        throw LibcameraError(.invalidArgument, "\(info.id): not streaming")
      }
      let left = (deadline - Clock.monotonicNanoseconds()) / 1_000_000
      guard left > 0 else { return nil }
      var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      if poll(&pfd, 1, Int32(min(left, Int64(Int32.max)))) < 0 && errno != EINTR {
        throw LibcameraError(Errno.current, "\(info.id): poll: \(Errno.current)")
      }
    }
  }

  /// Stops the camera, frees its buffers and releases it; idempotent.
  public func close() {
    guard let handle else { return }
    api.camera_close(handle)
    self.handle = nil
    manager = nil
  }
}
