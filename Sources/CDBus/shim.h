// libdbus-1: the D-Bus layer (DBusKit).
// The headers come from the Debian -dev package named in Package.swift; nothing is copied here.
#pragma once
#include <dbus/dbus.h>
