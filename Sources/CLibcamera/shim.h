// libcamera (Debian 12: libcamera-dev 0.0.3): a C++17 library with no C API, so Swift does not
// import it. This target exists for its pkg-config flags (-I/usr/include/libcamera, -lcamera
// -lcamera-base), which reach LibcameraBridge, the C++ target that wraps it in a C API.
// version.h is plain C macros: the headers' generation (0.0.x: CameraConfiguration::transform;
// 0.2 and later: CameraConfiguration::orientation).
#pragma once
#include <libcamera/version.h>
