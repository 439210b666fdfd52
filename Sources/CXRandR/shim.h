#pragma once
#include <X11/extensions/Xrandr.h>
