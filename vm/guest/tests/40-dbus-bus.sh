#!/bin/bash
# D-Bus: a private system bus in the guest with the system bus' default policy and a policy file
# shaped like the project's (fixtures/dbus): root may own the name it lists, not others; an
# unprivileged user may own nothing; anyone may read the bus.
# timeout: 60
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

require "a system bus starts with the fixture policy" bus_start "$GUEST/fixtures/dbus"
check "clients reach it (ListNames)" \
  dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.ListNames
check "root may own org.orientd.VmProbe" own org.orientd.VmProbe
check "root may not own a name no policy lists" refused own org.orientd.Unlisted
check "nobody (uid 65534) may not own org.orientd.VmProbe" refused own_as_nobody org.orientd.VmProbe
finish
