// libiio: compared against the direct sysfs/char-device read path (Accelerometer).
// The headers come from the Debian -dev package named in Package.swift; nothing is copied here.
#pragma once
#include <iio.h>
