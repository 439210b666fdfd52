// LibcameraBridge, built as the plugin liborientcam-libcamera.so: the C API of
// CLibcameraAPI/orient_libcamera.h over libcamera's C++ API, exported as one table
// (orient_lc_api_v1) for LibcameraKit to load with dlopen(3).
//
// Ownership: every handle is a C++ object owned by the caller until its free/close function.
// A camera holds a shared_ptr to the CameraManager, so the manager handle may be freed first.
// Every failure path undoes what was done: orient_lc_camera_close works on a camera in any
// state (acquired only, configured, half started, streaming, disconnected).
// The API header is its own module (CLibcameraAPI), which LibcameraKit imports without linking
// this plugin.
#include "orientcam_libcamera_plugin.h"

#include <libcamera/camera.h>
#include <libcamera/camera_manager.h>
#include <libcamera/formats.h>
#include <libcamera/framebuffer.h>
#include <libcamera/framebuffer_allocator.h>
#include <libcamera/logging.h>
#include <libcamera/pixel_format.h>
#include <libcamera/property_ids.h>
#include <libcamera/request.h>
#include <libcamera/stream.h>
#include <libcamera/transform.h>
#include <libcamera/version.h>

#if LIBCAMERA_VERSION_MAJOR == 0 && LIBCAMERA_VERSION_MINOR < 2
#define ORIENT_LC_HAVE_TRANSFORM 1
#else
// 0.2 replaced CameraConfiguration::transform by CameraConfiguration::orientation.
#define ORIENT_LC_HAVE_TRANSFORM 0
#include <libcamera/orientation.h>
#endif

#include <errno.h>
#include <linux/dma-buf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>
#include <utility>
#include <vector>

using namespace libcamera;

static int log_severity(const char *line, size_t length);

namespace {

/// Fills `error` (when given) and returns `code`.
int fail(orient_lc_error *error, int code, const char *format, ...)
  __attribute__((format(printf, 3, 4)));

int fail(orient_lc_error *error, int code, const char *format, ...)
{
  if (error) {
    error->code = code;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(error->message, sizeof error->message, format, arguments);
    va_end(arguments);
  }
  return code;
}

/// The reason for a negative errno, for messages.
const char *reason(int code) { return strerror(code < 0 ? -code : code); }

bool validTransform(int value) { return value >= 0 && value <= 7; }

/// libcamera allows one CameraManager per process: the running one, shared by every handle.
std::mutex managerLock;
std::weak_ptr<CameraManager> runningManager;

struct FormatRecord {
  uint32_t fourcc;
  uint64_t modifier;
  std::string name;
  SizeRange range;
  std::vector<Size> sizes;
};

struct CameraRecord {
  std::shared_ptr<Camera> camera;
  std::string id;
  std::optional<std::string> model;
  int location = -1;
  int rotation = -1;
  std::vector<FormatRecord> formats;
};

/// Writes all of `text` to `fd`, retrying short writes and EINTR.
void writeAll(int fd, const std::string &text)
{
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    done += static_cast<size_t>(n);
  }
}

/// libcamera's logger writes one whole message per call to its stream: keep those at or above a
/// severity, pass them to stderr in one write(2) each.
class SeverityFilter : public std::streambuf
{
public:
  void setMinimum(int minimum)
  {
    std::lock_guard<std::mutex> hold(lock_);
    minimum_ = minimum;
  }

protected:
  std::streamsize xsputn(const char *text, std::streamsize count) override
  {
    std::lock_guard<std::mutex> hold(lock_);
    pending_.append(text, static_cast<size_t>(count));
    size_t end;
    while ((end = pending_.find('\n')) != std::string::npos) {
      std::string line = pending_.substr(0, end + 1);
      pending_.erase(0, end + 1);
      int severity = log_severity(line.data(), line.size());
      // A line that is no message of its own continues the previous one (a backtrace).
      if (severity >= 0)
        passing_ = severity >= minimum_;
      if (passing_)
        writeAll(2, line);
    }
    return count;
  }

  int overflow(int c) override
  {
    if (c != traits_type::eof()) {
      char ch = static_cast<char>(c);
      xsputn(&ch, 1);
    }
    return c;
  }

private:
  std::mutex lock_;
  std::string pending_;
  int minimum_ = 2;
  bool passing_ = false;
};

} // namespace

// ---- Pure parts ---------------------------------------------------------------------------------

static void headers_version(int *major, int *minor, int *patch)
{
  *major = LIBCAMERA_VERSION_MAJOR;
  *minor = LIBCAMERA_VERSION_MINOR;
  *patch = LIBCAMERA_VERSION_PATCH;
}

static int headers_have_transform(void) { return ORIENT_LC_HAVE_TRANSFORM; }

static int transform_compose(int second, int first)
{
  if (!validTransform(second) || !validTransform(first))
    return -1;
  return static_cast<int>(static_cast<Transform>(second) * static_cast<Transform>(first));
}

static int transform_inverse(int transform)
{
  if (!validTransform(transform))
    return -1;
  return static_cast<int>(-static_cast<Transform>(transform));
}

static int transform_from_rotation(int degrees)
{
  bool success = false;
  Transform transform = transformFromRotation(degrees, &success);
  return success ? static_cast<int>(transform) : -1;
}

static uint32_t known_format_fourcc(enum orient_lc_known_format format)
{
  switch (format) {
  case ORIENT_LC_FORMAT_MJPEG:
    return formats::MJPEG.fourcc();
  case ORIENT_LC_FORMAT_YUYV:
    return formats::YUYV.fourcc();
  case ORIENT_LC_FORMAT_NV12:
    return formats::NV12.fourcc();
  case ORIENT_LC_FORMAT_RGB888:
    return formats::RGB888.fourcc();
  case ORIENT_LC_FORMAT_BGR888:
    return formats::BGR888.fourcc();
  }
  return 0;
}

static void format_name(uint32_t fourcc, uint64_t modifier, char *buffer, size_t size)
{
  if (size == 0)
    return;
  snprintf(buffer, size, "%s", PixelFormat(fourcc, modifier).toString().c_str());
}

static int log_severity(const char *line, size_t length)
{
  // "[0:00:01.123456789] [4242]  INFO Camera camera_manager.cpp:293 libcamera v0.0.3"
  std::string text(line, length);
  if (text.empty() || text[0] != '[')
    return -1;
  size_t first = text.find("] [");
  if (first == std::string::npos)
    return -1;
  size_t second = text.find("] ", first + 3);
  if (second == std::string::npos)
    return -1;
  size_t word = text.find_first_not_of(' ', second + 2);
  if (word == std::string::npos)
    return -1;
  static const char *const names[] = { "DEBUG", "INFO", "WARN", "ERROR", "FATAL" };
  for (int severity = 0; severity < 5; severity++) {
    size_t n = strlen(names[severity]);
    if (text.compare(word, n, names[severity]) == 0 &&
        (word + n == text.size() || text[word + n] == ' '))
      return severity;
  }
  return -1;
}

static void log_setup(int minimum)
{
  if (getenv("LIBCAMERA_LOG_FILE") || getenv("LIBCAMERA_LOG_LEVELS"))
    return;
  // Never destroyed: libcamera may log while the process exits.
  static SeverityFilter *filter = new SeverityFilter();
  static std::ostream *stream = new std::ostream(filter);
  filter->setMinimum(minimum);
  logSetStream(stream, false);
}

// ---- The camera manager -----------------------------------------------------------------------

struct orient_lc_manager {
  std::shared_ptr<CameraManager> manager;
  std::string version;
  std::vector<CameraRecord> cameras;
};

static int manager_start(orient_lc_manager **out, orient_lc_error *error)
{
  *out = nullptr;
  std::shared_ptr<CameraManager> manager;
  {
    std::lock_guard<std::mutex> hold(managerLock);
    manager = runningManager.lock();
    if (!manager) {
      auto created = std::make_shared<CameraManager>();
      int ret = created->start();
      if (ret < 0)
        return fail(error, ret, "libcamera's camera manager did not start: %s", reason(ret));
      manager = created;
      runningManager = manager;
    }
  }
  auto handle = std::make_unique<orient_lc_manager>();
  handle->manager = manager;
  handle->version = manager->version();
  for (const std::shared_ptr<Camera> &camera : manager->cameras()) {
    CameraRecord record;
    record.camera = camera;
    record.id = camera->id();
    const ControlList &properties = camera->properties();
    if (auto location = properties.get(properties::Location))
      record.location = *location;
    if (auto rotation = properties.get(properties::Rotation))
      record.rotation = *rotation;
    if (auto model = properties.get(properties::Model))
      record.model = *model;
    std::unique_ptr<CameraConfiguration> config =
      camera->generateConfiguration({ StreamRole::StillCapture });
    if (config && !config->empty()) {
      const StreamFormats &formats = config->at(0).formats();
      for (const PixelFormat &format : formats.pixelformats()) {
        FormatRecord entry{ format.fourcc(), format.modifier(), format.toString(),
                            formats.range(format), formats.sizes(format) };
        record.formats.push_back(std::move(entry));
      }
    }
    handle->cameras.push_back(std::move(record));
  }
  *out = handle.release();
  return 0;
}

static void manager_free(orient_lc_manager *manager)
{
  if (!manager)
    return;
  // Drop the cameras before the manager: the last reference to it stops it.
  manager->cameras.clear();
  std::lock_guard<std::mutex> hold(managerLock);
  manager->manager.reset();
  delete manager;
}

static const char *manager_version(const orient_lc_manager *manager)
{
  return manager->version.c_str();
}

static size_t camera_count(const orient_lc_manager *manager)
{
  return manager->cameras.size();
}

static int camera_info_get(
  const orient_lc_manager *manager, size_t index, orient_lc_camera_info *out)
{
  if (index >= manager->cameras.size())
    return -EINVAL;
  const CameraRecord &record = manager->cameras[index];
  out->id = record.id.c_str();
  out->model = record.model ? record.model->c_str() : nullptr;
  out->location = record.location;
  out->rotation = record.rotation;
  out->format_count = record.formats.size();
  return 0;
}

static int camera_format_get(
  const orient_lc_manager *manager, size_t camera, size_t format, orient_lc_format_info *out)
{
  if (camera >= manager->cameras.size() || format >= manager->cameras[camera].formats.size())
    return -EINVAL;
  const FormatRecord &record = manager->cameras[camera].formats[format];
  out->fourcc = record.fourcc;
  out->modifier = record.modifier;
  out->name = record.name.c_str();
  out->min_width = record.range.min.width;
  out->min_height = record.range.min.height;
  out->max_width = record.range.max.width;
  out->max_height = record.range.max.height;
  out->h_step = record.range.hStep;
  out->v_step = record.range.vStep;
  out->size_count = record.sizes.size();
  return 0;
}

static int camera_format_size(
  const orient_lc_manager *manager, size_t camera, size_t format, size_t index, unsigned *width,
  unsigned *height)
{
  if (camera >= manager->cameras.size() || format >= manager->cameras[camera].formats.size() ||
      index >= manager->cameras[camera].formats[format].sizes.size())
    return -EINVAL;
  const Size &size = manager->cameras[camera].formats[format].sizes[index];
  *width = size.width;
  *height = size.height;
  return 0;
}

// ---- One camera, streaming --------------------------------------------------------------------

struct orient_lc_camera {
  struct Mapping {
    int fd;
    void *address;
    size_t length;
  };

  /// One request and its buffer, with each plane's mapped bytes.
  struct Slot {
    std::unique_ptr<Request> request;
    FrameBuffer *buffer = nullptr;
    std::vector<std::pair<const uint8_t *, size_t>> planes;
    std::vector<int> fds;
  };

  std::shared_ptr<CameraManager> manager;
  std::shared_ptr<Camera> camera;
  std::string id;
  bool acquired = false;
  bool connected = false;
  bool started = false;
  std::unique_ptr<CameraConfiguration> config;
  Stream *stream = nullptr;
  std::unique_ptr<FrameBufferAllocator> allocator;
  std::vector<Mapping> mappings;
  std::vector<Slot> slots;
  int eventFd = -1;

  // Shared with libcamera's thread.
  std::mutex lock;
  std::deque<unsigned> completed;
  bool disconnected = false;

  /// Camera::requestCompleted, on libcamera's thread.
  void requestComplete(Request *request)
  {
    std::lock_guard<std::mutex> hold(lock);
    completed.push_back(static_cast<unsigned>(request->cookie()));
    notify();
  }

  /// Camera::disconnected, on libcamera's thread.
  void cameraDisconnected()
  {
    std::lock_guard<std::mutex> hold(lock);
    disconnected = true;
    notify();
  }

  /// Makes the eventfd readable (called with `lock` held).
  void notify()
  {
    uint64_t one = 1;
    while (write(eventFd, &one, sizeof one) < 0 && errno == EINTR) {
    }
  }

  /// Makes the eventfd unreadable (called with `lock` held).
  void drain()
  {
    uint64_t value;
    while (read(eventFd, &value, sizeof value) < 0 && errno == EINTR) {
    }
  }
};

namespace {

/// DMA_BUF_IOCTL_SYNC around CPU reads (a no-op for exporters that need none).
void syncBuffer(int fd, uint64_t flags)
{
  struct dma_buf_sync sync = {};
  sync.flags = flags | DMA_BUF_SYNC_READ;
  while (ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync) < 0 && errno == EINTR) {
  }
}

} // namespace

static int camera_acquire(
  orient_lc_manager *manager, size_t index, orient_lc_camera **out, orient_lc_error *error)
{
  *out = nullptr;
  if (index >= manager->cameras.size())
    return fail(error, -EINVAL, "no libcamera camera number %zu", index + 1);
  auto camera = std::make_unique<orient_lc_camera>();
  camera->manager = manager->manager;
  camera->camera = manager->cameras[index].camera;
  camera->id = manager->cameras[index].id;
  int ret = camera->camera->acquire();
  if (ret < 0) {
    const char *advice = ret == -EBUSY ? " (another program is using it)" : "";
    return fail(error, ret, "libcamera camera %s: cannot acquire it: %s%s", camera->id.c_str(),
                reason(ret), advice);
  }
  camera->acquired = true;
  *out = camera.release();
  return 0;
}

static int camera_configure(
  orient_lc_camera *camera, const uint32_t *fourccs, size_t count, unsigned width,
  unsigned height, orient_lc_configuration *out, orient_lc_error *error)
{
  const char *id = camera->id.c_str();
  if (camera->started)
    return fail(error, -EBUSY, "libcamera camera %s: configured while streaming", id);
  std::unique_ptr<CameraConfiguration> config =
    camera->camera->generateConfiguration({ StreamRole::StillCapture });
  if (!config || config->empty())
    return fail(error, -EINVAL, "libcamera camera %s offers no still-capture stream", id);
  StreamConfiguration &stream = config->at(0);
  const StreamFormats &formats = stream.formats();
  const std::vector<PixelFormat> offered = formats.pixelformats();
  std::optional<PixelFormat> chosen;
  for (size_t i = 0; i < count && !chosen; i++) {
    for (const PixelFormat &format : offered) {
      if (format.fourcc() == fourccs[i] && format.modifier() == 0) {
        chosen = format;
        break;
      }
    }
  }
  if (!chosen) {
    std::string names;
    for (const PixelFormat &format : offered)
      names += (names.empty() ? "" : ", ") + format.toString();
    return fail(error, -EINVAL,
                "libcamera camera %s offers none of the formats asked for (it offers %s)", id,
                names.empty() ? "none" : names.c_str());
  }
  stream.pixelFormat = *chosen;
  if (width > 0 && height > 0) {
    stream.size = Size(width, height);
  } else {
    // The largest this format offers, as the V4L2 source chooses.
    Size largest = formats.range(*chosen).max;
    for (const Size &size : formats.sizes(*chosen)) {
      if (size.width * size.height > largest.width * largest.height)
        largest = size;
    }
    if (!largest.isNull())
      stream.size = largest;
  }
  const Size asked = stream.size;

#if ORIENT_LC_HAVE_TRANSFORM
  int honours = -1;
  {
    // Does this pipeline keep a transform (ipu3 and raspberrypi combine it with the sensor's
    // rotation) or force Identity (every other pipeline of 0.0.x)? Ask a scratch configuration.
    std::unique_ptr<CameraConfiguration> probe =
      camera->camera->generateConfiguration({ StreamRole::StillCapture });
    if (probe && !probe->empty()) {
      probe->at(0).pixelFormat = *chosen;
      probe->at(0).size = asked;
      probe->transform = Transform::Rot180;
      probe->validate();
      honours = probe->transform != Transform::Identity ? 1 : 0;
    }
  }
  config->transform = Transform::Identity;
#else
  config->orientation = Orientation::Rotate0;
#endif

  CameraConfiguration::Status status = config->validate();
  if (status == CameraConfiguration::Invalid)
    return fail(error, -EINVAL, "libcamera camera %s: %s at %ux%u is not a valid configuration",
                id, chosen->toString().c_str(), asked.width, asked.height);
  if (stream.pixelFormat != *chosen)
    return fail(error, -EINVAL, "libcamera camera %s: asked for %s, libcamera chose %s", id,
                chosen->toString().c_str(), stream.pixelFormat.toString().c_str());
  int ret = camera->camera->configure(config.get());
  if (ret < 0)
    return fail(error, ret, "libcamera camera %s: configuring %s at %s failed: %s", id,
                stream.pixelFormat.toString().c_str(), stream.size.toString().c_str(),
                reason(ret));
  camera->stream = stream.stream();
  out->fourcc = stream.pixelFormat.fourcc();
  out->modifier = stream.pixelFormat.modifier();
  out->width = stream.size.width;
  out->height = stream.size.height;
  out->stride = stream.stride;
  out->frame_size = stream.frameSize;
  out->buffer_count = stream.bufferCount;
  out->adjusted = status == CameraConfiguration::Adjusted ? 1 : 0;
#if ORIENT_LC_HAVE_TRANSFORM
  out->transform = static_cast<int>(config->transform);
  out->honours_transform = honours;
  out->orientation = 0;
#else
  out->transform = -1;
  out->honours_transform = -1;
  out->orientation = static_cast<int>(config->orientation);
#endif
  camera->config = std::move(config);
  return 0;
}

static int camera_start(orient_lc_camera *camera, orient_lc_error *error)
{
  const char *id = camera->id.c_str();
  if (!camera->stream)
    return fail(error, -EINVAL, "libcamera camera %s: started before it was configured", id);
  if (camera->started || camera->allocator)
    return fail(error, -EBUSY, "libcamera camera %s: started twice", id);
  camera->eventFd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (camera->eventFd < 0)
    return fail(error, -errno, "libcamera camera %s: eventfd: %s", id, strerror(errno));
  camera->allocator = std::make_unique<FrameBufferAllocator>(camera->camera);
  int ret = camera->allocator->allocate(camera->stream);
  if (ret < 0)
    return fail(error, ret, "libcamera camera %s: allocating buffers failed: %s", id, reason(ret));
  const std::vector<std::unique_ptr<FrameBuffer>> &buffers =
    camera->allocator->buffers(camera->stream);
  for (size_t index = 0; index < buffers.size(); index++) {
    FrameBuffer *buffer = buffers[index].get();
    orient_lc_camera::Slot slot;
    slot.request = camera->camera->createRequest(index);
    if (!slot.request)
      return fail(error, -ENOMEM, "libcamera camera %s: cannot create a request", id);
    ret = slot.request->addBuffer(camera->stream, buffer);
    if (ret < 0)
      return fail(error, ret, "libcamera camera %s: adding a buffer to a request failed: %s", id,
                  reason(ret));
    slot.buffer = buffer;
    const std::vector<FrameBuffer::Plane> &planes = buffer->planes();
    if (planes.empty() || planes.size() > 4)
      return fail(error, -EINVAL, "libcamera camera %s: a buffer of %zu planes", id,
                  planes.size());
    for (const FrameBuffer::Plane &plane : planes) {
      int fd = plane.fd.get();
      const orient_lc_camera::Mapping *mapping = nullptr;
      for (const orient_lc_camera::Mapping &existing : camera->mappings) {
        if (existing.fd == fd)
          mapping = &existing;
      }
      if (!mapping) {
        // One mapping per dmabuf, long enough for every plane it holds.
        size_t length = 0;
        for (const FrameBuffer::Plane &other : planes) {
          if (other.fd.get() == fd)
            length = std::max(length, static_cast<size_t>(other.offset) + other.length);
        }
        void *address = mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
        if (address == MAP_FAILED)
          return fail(error, -errno, "libcamera camera %s: mapping a frame buffer failed: %s",
                      id, strerror(errno));
        camera->mappings.push_back({ fd, address, length });
        mapping = &camera->mappings.back();
        slot.fds.push_back(fd);
      }
      const uint8_t *base = static_cast<const uint8_t *>(mapping->address);
      slot.planes.emplace_back(base + plane.offset, plane.length);
    }
    camera->slots.push_back(std::move(slot));
  }
  camera->camera->requestCompleted.connect(camera, &orient_lc_camera::requestComplete);
  camera->camera->disconnected.connect(camera, &orient_lc_camera::cameraDisconnected);
  camera->connected = true;
  ret = camera->camera->start();
  if (ret < 0)
    return fail(error, ret, "libcamera camera %s: starting failed: %s", id, reason(ret));
  camera->started = true;
  for (orient_lc_camera::Slot &slot : camera->slots) {
    ret = camera->camera->queueRequest(slot.request.get());
    if (ret < 0)
      return fail(error, ret, "libcamera camera %s: queueing a request failed: %s", id,
                  reason(ret));
  }
  return 0;
}

static int camera_event_fd(const orient_lc_camera *camera)
{
  return camera->eventFd;
}

static int camera_take(
  orient_lc_camera *camera, orient_lc_frame *out, orient_lc_error *error)
{
  if (!camera->started)
    return fail(error, -EINVAL, "libcamera camera %s: not streaming", camera->id.c_str());
  unsigned slotIndex;
  {
    std::lock_guard<std::mutex> hold(camera->lock);
    if (camera->completed.empty()) {
      if (camera->disconnected)
        return fail(error, -ENODEV, "libcamera camera %s was disconnected while streaming "
                    "(unplugged, or its driver gone)", camera->id.c_str());
      camera->drain();
      return 0;
    }
    slotIndex = camera->completed.front();
    camera->completed.pop_front();
    if (camera->completed.empty() && !camera->disconnected)
      camera->drain();
  }
  if (slotIndex >= camera->slots.size())
    return fail(error, -EINVAL, "libcamera camera %s: a request that is not ours completed",
                camera->id.c_str());
  orient_lc_camera::Slot &slot = camera->slots[slotIndex];
  const FrameMetadata &metadata = slot.buffer->metadata();
  for (int fd : slot.fds)
    syncBuffer(fd, DMA_BUF_SYNC_START);
  out->slot = slotIndex;
  out->status = static_cast<int>(metadata.status);
  out->sequence = metadata.sequence;
  out->timestamp_ns = metadata.timestamp;
  out->plane_count = static_cast<unsigned>(slot.planes.size());
  Span<const FrameMetadata::Plane> used = metadata.planes();
  for (size_t i = 0; i < slot.planes.size(); i++) {
    size_t length = slot.planes[i].second;
    size_t bytes = i < used.size() && used[i].bytesused > 0
                     ? std::min<size_t>(used[i].bytesused, length)
                     : length;
    out->plane_data[i] = slot.planes[i].first;
    out->plane_bytes[i] = bytes;
  }
  return 1;
}

static int camera_give_back(
  orient_lc_camera *camera, unsigned slotIndex, orient_lc_error *error)
{
  if (slotIndex >= camera->slots.size())
    return fail(error, -EINVAL, "libcamera camera %s: no request %u", camera->id.c_str(),
                slotIndex);
  orient_lc_camera::Slot &slot = camera->slots[slotIndex];
  for (int fd : slot.fds)
    syncBuffer(fd, DMA_BUF_SYNC_END);
  slot.request->reuse(Request::ReuseBuffers);
  int ret = camera->camera->queueRequest(slot.request.get());
  if (ret < 0) {
    const char *gone = ret == -ENODEV ? " (the camera was disconnected)" : "";
    return fail(error, ret, "libcamera camera %s: queueing a request again failed: %s%s",
                camera->id.c_str(), reason(ret), gone);
  }
  return 0;
}

static void camera_close(orient_lc_camera *camera)
{
  if (!camera)
    return;
  if (camera->started) {
    camera->camera->stop();
    camera->started = false;
  }
  if (camera->connected) {
    camera->camera->requestCompleted.disconnect(camera);
    camera->camera->disconnected.disconnect(camera);
    camera->connected = false;
  }
  camera->slots.clear();
  for (const orient_lc_camera::Mapping &mapping : camera->mappings)
    munmap(mapping.address, mapping.length);
  camera->mappings.clear();
  if (camera->allocator && camera->stream)
    camera->allocator->free(camera->stream);
  camera->allocator.reset();
  camera->config.reset();
  if (camera->acquired)
    camera->camera->release();
  camera->camera.reset();
  if (camera->eventFd >= 0)
    close(camera->eventFd);
  {
    std::lock_guard<std::mutex> hold(managerLock);
    camera->manager.reset();
  }
  delete camera;
}

// ---- The table ----------------------------------------------------------------------------------

extern "C" __attribute__((visibility("default"))) const struct orient_lc_api *orient_lc_api_v1(void)
{
  static const struct orient_lc_api table = {
    ORIENT_LC_API_VERSION,
    headers_version,
    headers_have_transform,
    transform_compose,
    transform_inverse,
    transform_from_rotation,
    known_format_fourcc,
    format_name,
    log_severity,
    log_setup,
    manager_start,
    manager_free,
    manager_version,
    camera_count,
    camera_info_get,
    camera_format_get,
    camera_format_size,
    camera_acquire,
    camera_configure,
    camera_start,
    camera_event_fd,
    camera_take,
    camera_give_back,
    camera_close,
  };
  return &table;
}
