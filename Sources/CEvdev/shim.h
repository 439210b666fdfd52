// libevdev: volume-key shutter and uinput re-emission (Capture triggers).
// The headers come from the Debian -dev package named in Package.swift; nothing is copied here.
#pragma once
#include <libevdev/libevdev.h>
#include <libevdev/libevdev-uinput.h>
