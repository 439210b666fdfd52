// TurboJPEG: lossless transforms and encoding (Capture).
// The headers come from the Debian -dev package named in Package.swift; nothing is copied here.
#pragma once
#include <turbojpeg.h>
