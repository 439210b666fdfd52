// libdrm: the KMS connectors' "panel orientation" property (orientd-rotate only).
// The headers come from the Debian -dev package named in Package.swift; nothing is copied here.
#pragma once
#include <stdint.h>
#include <xf86drm.h>
#include <xf86drmMode.h>
