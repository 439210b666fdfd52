// libudev: device discovery and hotplug (DeviceDiscovery).
// The headers come from the Debian -dev package named in Package.swift; nothing is copied here.
#pragma once
#include <libudev.h>
