#pragma once
#include <X11/extensions/XInput2.h>
