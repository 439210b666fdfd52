// dlib's frontal face detector behind the C API of include/orient_face.h. Every C++ exception
// stops here and becomes an error message.
#include "orient_face.h"

#include <dlib/image_io.h>
#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/revision.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <vector>

struct orient_face_detector {
  dlib::frontal_face_detector detector;
  dlib::array2d<unsigned char> image;
};

static void write_error(char *error, size_t size, const char *message) {
  if (error != nullptr && size > 0) std::snprintf(error, size, "%s", message);
}

// The first line of a cache file: which format and which dlib wrote it.
static std::string cache_header() {
  return "orient-face-detector 1 dlib " + std::to_string(DLIB_MAJOR_VERSION) + "." +
         std::to_string(DLIB_MINOR_VERSION) + "\n";
}

static bool read_cache(const char *path, dlib::frontal_face_detector &detector) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string header;
  if (!std::getline(in, header) || header + "\n" != cache_header()) return false;
  try {
    dlib::deserialize(detector, in);
  } catch (...) {
    return false;
  }
  return detector.num_detectors() > 0;
}

// Writes beside the target and renames over it, so a reader never sees half a file.
static bool write_cache(
    const char *path, const dlib::frontal_face_detector &detector, std::string &why) {
  const std::string temporary = std::string(path) + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      why = "cannot create " + temporary + ": " + std::strerror(errno);
      return false;
    }
    out << cache_header();
    dlib::serialize(detector, out);
    out.flush();
    if (!out) {
      why = "cannot write " + temporary;
      std::remove(temporary.c_str());
      return false;
    }
  }
  if (std::rename(temporary.c_str(), path) != 0) {
    why = "cannot rename " + temporary + " to " + path + ": " + std::strerror(errno);
    std::remove(temporary.c_str());
    return false;
  }
  return true;
}

extern "C" orient_face_detector *orient_face_detector_new(
    const char *cache_path, orient_face_cache_state *state, char *error, size_t error_size) {
  try {
    std::unique_ptr<orient_face_detector> made(new orient_face_detector());
    if (cache_path != nullptr && read_cache(cache_path, made->detector)) {
      if (state != nullptr) *state = ORIENT_FACE_CACHE_LOADED;
      return made.release();
    }
    made->detector = dlib::get_frontal_face_detector();
    orient_face_cache_state result = ORIENT_FACE_CACHE_NONE;
    if (cache_path != nullptr) {
      std::string why;
      result = write_cache(cache_path, made->detector, why) ? ORIENT_FACE_CACHE_WRITTEN
                                                             : ORIENT_FACE_CACHE_UNWRITABLE;
      if (result == ORIENT_FACE_CACHE_UNWRITABLE) write_error(error, error_size, why.c_str());
    }
    if (state != nullptr) *state = result;
    return made.release();
  } catch (const std::exception &e) {
    write_error(error, error_size, e.what());
  } catch (...) {
    write_error(error, error_size, "unknown C++ exception");
  }
  return nullptr;
}

extern "C" void orient_face_detector_free(orient_face_detector *detector) { delete detector; }

extern "C" int32_t orient_face_detect(
    orient_face_detector *detector, const uint8_t *pixels, int32_t width, int32_t height,
    int32_t stride, double adjust_threshold, orient_face *faces, int32_t capacity, char *error,
    size_t error_size) {
  if (detector == nullptr || pixels == nullptr || width <= 0 || height <= 0 || stride < width) {
    write_error(error, error_size, "invalid image");
    return -1;
  }
  try {
    // The detector's own image, reused between calls (no allocation once it has the size).
    auto &image = detector->image;
    if (image.nr() != height || image.nc() != width) image.set_size(height, width);
    for (int32_t y = 0; y < height; y++) {
      std::memcpy(&image[y][0], pixels + size_t(y) * size_t(stride), size_t(width));
    }
    std::vector<dlib::rect_detection> found;
    detector->detector(image, found, adjust_threshold);
    std::sort(found.begin(), found.end(), [](const auto &a, const auto &b) {
      return a.detection_confidence > b.detection_confidence;
    });
    int32_t count = int32_t(found.size());
    for (int32_t i = 0; i < count && i < capacity && faces != nullptr; i++) {
      const auto &d = found[size_t(i)];
      faces[i].left = int32_t(d.rect.left());
      faces[i].top = int32_t(d.rect.top());
      faces[i].width = int32_t(d.rect.width());
      faces[i].height = int32_t(d.rect.height());
      faces[i].confidence = d.detection_confidence;
      faces[i].filter = int32_t(d.weight_index);
    }
    return count;
  } catch (const std::exception &e) {
    write_error(error, error_size, e.what());
  } catch (...) {
    write_error(error, error_size, "unknown C++ exception");
  }
  return -1;
}

extern "C" int32_t orient_face_load_gray(
    const char *path, uint8_t **pixels, int32_t *width, int32_t *height, char *error,
    size_t error_size) {
  try {
    dlib::array2d<unsigned char> image;
    dlib::load_image(image, path);
    const size_t w = size_t(image.nc()), h = size_t(image.nr());
    auto *out = static_cast<uint8_t *>(std::malloc(std::max<size_t>(w * h, 1)));
    if (out == nullptr) throw std::bad_alloc();
    for (size_t y = 0; y < h; y++) std::memcpy(out + y * w, &image[long(y)][0], w);
    *pixels = out;
    *width = int32_t(w);
    *height = int32_t(h);
    return 0;
  } catch (const std::exception &e) {
    write_error(error, error_size, e.what());
  } catch (...) {
    write_error(error, error_size, "unknown C++ exception");
  }
  return -1;
}

extern "C" void orient_face_free_pixels(uint8_t *pixels) { std::free(pixels); }
