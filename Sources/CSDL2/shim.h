// SDL2: the live preview window (Capture preview).
// The headers come from the Debian -dev package named in Package.swift; nothing is copied here.
#pragma once
#include <SDL2/SDL.h>
