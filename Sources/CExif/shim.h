// libexif: building the EXIF APP1 block (Capture).
// The headers come from the Debian -dev package named in Package.swift; nothing is copied here.
#pragma once
#include <libexif/exif-data.h>
#include <libexif/exif-loader.h>
#include <libexif/exif-utils.h>
