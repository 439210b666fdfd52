// orient_face: a C API over dlib's frontal face detector (dlib::get_frontal_face_detector, a
// HOG detector whose weights ship in dlib's headers), for orientd-face. C++ stays behind this
// header: Swift sees only these C declarations.
#ifndef ORIENT_FACE_H
#define ORIENT_FACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A loaded detector (`dlib::frontal_face_detector`); not safe to share between threads.
typedef struct orient_face_detector orient_face_detector;

/// One upright face: its box in the analysed image, dlib's detection confidence (the SVM
/// score minus the threshold: above 0 is a detection) and which of the detector's five HOG
/// filters fired (0 frontal, 1 looking left, 2 looking right, 3 and 4 frontal turned a little
/// left or right).
typedef struct orient_face {
  int32_t left;
  int32_t top;
  int32_t width;
  int32_t height;
  double confidence;
  int32_t filter;
} orient_face;

/// How `orient_face_detector_new` got the detector.
typedef enum orient_face_cache_state {
  /// Read from the cache file (fast: about 15 ms).
  ORIENT_FACE_CACHE_LOADED = 0,
  /// Built from dlib's headers, and the cache file written.
  ORIENT_FACE_CACHE_WRITTEN = 1,
  /// Built from dlib's headers; the cache file could not be written (message in `error`).
  ORIENT_FACE_CACHE_UNWRITABLE = 2,
  /// Built from dlib's headers; no cache file was asked for.
  ORIENT_FACE_CACHE_NONE = 3,
} orient_face_cache_state;

/// Builds the detector. `dlib::get_frontal_face_detector` decodes the weights compiled into
/// dlib's headers (base64, then dlib's arithmetic decompressor: about 0.7 s of CPU), so the
/// result is kept in `cache_path` (dlib's plain serialisation, 155 KB, headed by the dlib
/// version) and read from there the next time; NULL `cache_path` builds without a cache.
/// A cache file from another dlib version, or one that does not deserialise, is rebuilt.
/// Returns NULL and writes a message into `error` when no detector can be made; otherwise
/// sets `*state` (and, for ORIENT_FACE_CACHE_UNWRITABLE, the reason in `error`).
orient_face_detector *orient_face_detector_new(
    const char *cache_path, orient_face_cache_state *state, char *error, size_t error_size);

/// Releases the detector.
void orient_face_detector_free(orient_face_detector *detector);

/// Finds upright frontal faces (dlib finds faces up to about 35-40 degrees of roll) in an
/// 8-bit grayscale image of `width` x `height` pixels, rows `stride` bytes apart.
/// Detections scoring above `adjust_threshold` (0: dlib's own threshold; negative finds more)
/// are written to `faces` (at most `capacity`, strongest first). Returns how many faces were
/// found (may exceed `capacity`), or -1 with a message in `error`.
int32_t orient_face_detect(
    orient_face_detector *detector, const uint8_t *pixels, int32_t width, int32_t height,
    int32_t stride, double adjust_threshold, orient_face *faces, int32_t capacity,
    char *error, size_t error_size);

/// Decodes an image file that dlib's `load_image` reads (PNG, BMP, and JPEG through libjpeg)
/// into 8-bit grayscale. On success returns 0 and sets `*pixels` (free with
/// `orient_face_free_pixels`), `*width`, `*height` (rows are `width` bytes); on failure
/// returns -1 with dlib's message in `error`.
int32_t orient_face_load_gray(
    const char *path, uint8_t **pixels, int32_t *width, int32_t *height, char *error,
    size_t error_size);

/// Frees pixels from `orient_face_load_gray`.
void orient_face_free_pixels(uint8_t *pixels);

#ifdef __cplusplus
}
#endif

#endif
