// LibcameraBridge is orientcam's libcamera plugin; its API, the one symbol orient_lc_api_v1 and
// the table it returns, is declared in the CLibcameraAPI module (orient_libcamera.h), which
// LibcameraKit imports without linking the plugin.
#pragma once
#include "../../CLibcameraAPI/orient_libcamera.h"
