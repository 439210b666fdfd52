// The C API of orientcam's libcamera plugin (liborientcam-libcamera.so, built from
// Sources/LibcameraBridge), for LibcameraKit.
//
// Swift 6.3's C++ interop imports libcamera's value types but not CameraManager, Camera, Request
// or FrameBufferAllocator, and Camera::requestCompleted needs a C++ slot. This header is plain C:
// handles, plain structs, negative errno results with a message.
//
// The plugin is loaded with dlopen(3) when a libcamera camera is first asked for, and exports one
// symbol, orient_lc_api_v1, returning a table of the functions below. So orientcam (and every
// other program using LibcameraKit) starts without loading libcamera and what it links (gnutls,
// lttng-ust, whose start-up reads every loaded library's ELF notes): V4L2 captures, sessions and
// the test pattern do not pay for it.
//
// Threads: libcamera completes requests on its own thread. The bridge queues them and writes an
// eventfd (camera_event_fd) that the caller's event loop watches; everything else runs
// on the caller's thread. One orient_lc_manager may be started at a time per process (libcamera
// allows one CameraManager); a camera keeps the CameraManager alive until it is closed.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
// Swift imports a _Nonnull function pointer as a plain function, not an optional; other
// compilers ignore it. Only the table's function pointers are marked: the other pointers keep
// C's meaning (Swift: implicitly unwrapped or optional as they are used).
#ifdef __clang__
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wnullability-completeness"
#else
#define _Nonnull
#endif
/// A failure: `code` is a negative errno, `message` says what and where (NUL-terminated).
typedef struct orient_lc_error {
  int code;
  char message[400];
} orient_lc_error;

/// The formats orientcam can take from libcamera.
enum orient_lc_known_format {
  ORIENT_LC_FORMAT_MJPEG = 0,
  ORIENT_LC_FORMAT_YUYV = 1,
  ORIENT_LC_FORMAT_NV12 = 2,
  ORIENT_LC_FORMAT_RGB888 = 3,
  ORIENT_LC_FORMAT_BGR888 = 4,
};

typedef struct orient_lc_manager orient_lc_manager;

/// What a camera says about itself. The strings belong to the manager.
typedef struct orient_lc_camera_info {
  /// Camera::id(): stable across reboots, e.g. "platform/vimc.0 Sensor B".
  const char *id;
  /// properties::Model, or NULL.
  const char *model;
  /// properties::Location (0 front, 1 back, 2 external), -1 when not reported.
  int location;
  /// properties::Rotation in degrees (the counter-clockwise correction), -1 when not reported.
  int rotation;
  /// How many pixel formats the still-capture stream offers.
  size_t format_count;
} orient_lc_camera_info;

/// One pixel format of a camera's still-capture stream (StreamFormats).
typedef struct orient_lc_format_info {
  uint32_t fourcc;
  uint64_t modifier;
  /// PixelFormat::toString(), e.g. "BGR888". Belongs to the manager.
  const char *name;
  /// StreamFormats::range(): any size between the two on the step grid (0 when none).
  unsigned min_width, min_height, max_width, max_height, h_step, v_step;
  /// StreamFormats::sizes(): how many discrete sizes (read with camera_format_size).
  size_t size_count;
} orient_lc_format_info;

typedef struct orient_lc_camera orient_lc_camera;

/// The stream configuration libcamera accepted.
typedef struct orient_lc_configuration {
  uint32_t fourcc;
  uint64_t modifier;
  unsigned width, height, stride, frame_size, buffer_count;
  /// 1 when validate() adjusted what was asked for.
  int adjusted;
  /// libcamera 0.0.x/0.1 (headers_have_transform): CameraConfiguration::transform
  /// after validate(), 0...7; -1 with newer headers.
  int transform;
  /// 0.0.x/0.1: 1 when the pipeline keeps a transform it was asked for (ipu3, raspberrypi
  /// combine it with the sensor's rotation and flip the sensor), 0 when it forces Identity
  /// (uvcvideo, vimc, simple, rkisp1, imx8-isi): found by validating a scratch configuration
  /// asking for a 180 degree turn. -1 with newer headers.
  int honours_transform;
  /// 0.2 and later: CameraConfiguration::orientation after validate(), the EXIF Orientation
  /// value (1...8) of the images delivered; 0 with older headers.
  int orientation;
} orient_lc_configuration;

/// A completed request's frame, mapped for reading until it is given back.
typedef struct orient_lc_frame {
  /// Which request: pass it to camera_give_back.
  unsigned slot;
  /// FrameMetadata::Status: 0 success, 1 error, 2 cancelled.
  int status;
  /// FrameMetadata::sequence.
  unsigned sequence;
  /// FrameMetadata::timestamp in nanoseconds (CLOCK_MONOTONIC from the V4L2 driver).
  uint64_t timestamp_ns;
  unsigned plane_count;
  /// Each plane's bytes (offset applied) and FrameMetadata's bytesused.
  const uint8_t *plane_data[4];
  size_t plane_bytes[4];
} orient_lc_frame;

/// The version of the table below; a plugin with another is refused.
#define ORIENT_LC_API_VERSION 1

/// Everything the plugin does, as function pointers.
struct orient_lc_api {
  /// ORIENT_LC_API_VERSION.
  int version;

  // Pure parts: libcamera's own arithmetic and names, no camera needed.
  /// The libcamera headers this was built against (LIBCAMERA_VERSION_*).
  void (*_Nonnull headers_version)(int *major, int *minor, int *patch);
  /// Whether CameraConfiguration has `transform` (libcamera 0.0.x and 0.1: 1) or `orientation`
  /// (0.2 and later: 0).
  int (*_Nonnull headers_have_transform)(void);
  /// libcamera::Transform arithmetic on numeric values 0...7 (bit 0 horizontal flip, bit 1
  /// vertical flip, bit 2 transpose; flips first): `second * first` (operator*: first, then
  /// second). -1 for a value outside 0...7.
  int (*_Nonnull transform_compose)(int second, int first);
  /// libcamera::Transform's inverse (operator-); -1 outside 0...7.
  int (*_Nonnull transform_inverse)(int transform);
  /// libcamera::transformFromRotation: the Transform libcamera's pipelines use for a
  /// properties::Rotation value (it reads the angle clockwise); -1 if not a multiple of 90.
  int (*_Nonnull transform_from_rotation)(int degrees);
  /// The DRM four-character code of libcamera::formats::MJPEG, YUYV, NV12, RGB888, BGR888
  /// (0 for another value).
  uint32_t (*_Nonnull known_format_fourcc)(enum orient_lc_known_format format);
  /// libcamera::PixelFormat::toString() of a four-character code and modifier, into `buffer`.
  void (*_Nonnull format_name)(uint32_t fourcc, uint64_t modifier, char *buffer, size_t size);
  /// The severity of one line libcamera's logger writes to a stream
  /// ("[0:00:01.123456789] [4242]  INFO Camera camera_manager.cpp:293 libcamera v0.0.3"):
  /// 0 DEBUG, 1 INFO, 2 WARN, 3 ERROR, 4 FATAL; -1 when the line is not in that form.
  int (*_Nonnull log_severity)(const char *line, size_t length);

  // Logging.
  /// Passes libcamera's log lines of `minimum` severity or more (see log_severity) to
  /// stderr and drops the others. Does nothing when LIBCAMERA_LOG_FILE or LIBCAMERA_LOG_LEVELS is
  /// set: the user chose libcamera's own logging then.
  void (*_Nonnull log_setup)(int minimum);

  // The camera manager.
  /// Starts libcamera's CameraManager (enumerating the cameras) and records what each camera
  /// says about itself. Free with manager_free.
  int (*_Nonnull manager_start)(orient_lc_manager **out, orient_lc_error *error);
  /// Stops the manager once no camera acquired through it is open any more; frees the handle.
  void (*_Nonnull manager_free)(orient_lc_manager *manager);
  /// CameraManager::version(), e.g. "v0.0.3".
  const char *(*_Nonnull manager_version)(const orient_lc_manager *manager);
  /// How many cameras libcamera found.
  size_t (*_Nonnull camera_count)(const orient_lc_manager *manager);
  /// Fills `out` for camera `index`; -EINVAL for an index out of range.
  int (*_Nonnull camera_info_get)(
    const orient_lc_manager *manager, size_t index, orient_lc_camera_info *out);
  /// Fills `out` for format `format` of camera `camera`; -EINVAL when out of range.
  int (*_Nonnull camera_format_get)(
    const orient_lc_manager *manager, size_t camera, size_t format, orient_lc_format_info *out);
  /// The discrete size `index` of a format; -EINVAL when out of range.
  int (*_Nonnull camera_format_size)(
    const orient_lc_manager *manager, size_t camera, size_t format, size_t index, unsigned *width,
    unsigned *height);

  // One camera, streaming.
  /// Acquires camera `index` for exclusive use (Camera::acquire: -EBUSY when another process has
  /// it). Close with camera_close.
  int (*_Nonnull camera_acquire)(
    orient_lc_manager *manager, size_t index, orient_lc_camera **out, orient_lc_error *error);
  /// Configures the still-capture stream: the first of `fourccs` the camera offers, at
  /// `width`x`height` (0x0: the largest that format offers). Fails with -EINVAL when none of the
  /// formats is offered or libcamera finds the configuration invalid.
  int (*_Nonnull camera_configure)(
    orient_lc_camera *camera, const uint32_t *fourccs, size_t count, unsigned width,
    unsigned height, orient_lc_configuration *out, orient_lc_error *error);
  /// Allocates and maps the buffers, makes one request per buffer, starts the camera and queues
  /// them all.
  int (*_Nonnull camera_start)(orient_lc_camera *camera, orient_lc_error *error);
  /// The eventfd (non-blocking) that is readable while a completed request waits to be taken, or
  /// after the camera was disconnected; -1 before start.
  int (*_Nonnull camera_event_fd)(const orient_lc_camera *camera);
  /// Takes the oldest completed request without waiting: 1 and `out` filled, 0 when none is
  /// ready, -ENODEV when the camera was disconnected (unplugged, driver gone).
  int (*_Nonnull camera_take)(
    orient_lc_camera *camera, orient_lc_frame *out, orient_lc_error *error);
  /// Gives a taken frame's request back to libcamera (reused with the same buffer, queued).
  int (*_Nonnull camera_give_back)(
    orient_lc_camera *camera, unsigned slot, orient_lc_error *error);
  /// Stops the camera if started, frees requests and buffers, releases the camera and frees the
  /// handle. Safe on every path (not started, half started, disconnected).
  void (*_Nonnull camera_close)(orient_lc_camera *camera);
};

/// The one symbol the plugin exports: its table (static, never freed).
const struct orient_lc_api *orient_lc_api_v1(void);

#ifdef __clang__
#pragma clang diagnostic pop
#endif

#ifdef __cplusplus
}
#endif
