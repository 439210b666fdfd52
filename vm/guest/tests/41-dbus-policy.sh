#!/bin/bash
# Product: the project's dbus/ policies on a system bus with the system bus' default policy: the
# bus accepts them, root may own org.orientd.Orientation1 and an unprivileged user may not (the
# same for net.hadess.SensorProxy when the project ships a policy for it).
# timeout: 60
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

shopt -s nullglob
policies=("$PROJECT"/dbus/*.conf)
[ ${#policies[@]} -gt 0 ] || skip "product not built yet: no dbus/*.conf policy in the project"
log "project policies: ${policies[*]##*/}"
require "a system bus starts with the project's dbus/ policies" bus_start "$PROJECT/dbus"
check "the bus did not complain about them" not grep -qi -e error -e warn "$TOUT/dbus-daemon.log"
check "root may own org.orientd.Orientation1" own org.orientd.Orientation1
check "nobody may not own org.orientd.Orientation1" refused own_as_nobody org.orientd.Orientation1
if grep -qs net.hadess.SensorProxy "${policies[@]}"; then
  check "root may own net.hadess.SensorProxy" own net.hadess.SensorProxy
  check "nobody may not own net.hadess.SensorProxy" refused own_as_nobody net.hadess.SensorProxy
fi
finish
