#!/bin/bash
# client-geoclue: geoclue 2.6 (Debian's geoclue-2.0, the system service, as user geoclue) with
# one location source it accepts here, its NMEA source reading a GPS receiver on a Unix socket
# (tools/nmea_server.py: GGA fixes, which carry no course), and its compass enabled (the
# default): geoclue claims orientd's compass (ClaimCompass on /net/hadess/SensorProxy/Compass,
# allowed to the geoclue user by the bus policy and 50-orientd-geoclue.rules) and puts its
# heading into every location. Its demo where-am-i, run in the test user's session, prints the
# fix with Heading 90, then 271 when the emulated HID magnetometer turns.
# timeout: 900
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh
# shellcheck source=vm/guest/systemd/session.sh
. "$GUEST/systemd/session.sh"

WHERE_AM_I=/usr/libexec/geoclue-2.0/demos/where-am-i
CONF=/etc/geoclue/geoclue.conf
NMEA_SOCKET=/run/orientd-vm-nmea.sock
WHERE=$SESSION_DIR/where.out
# where_heading H: where-am-i's latest "Heading:" line says H degrees.
where_heading() { last_line_with "$WHERE" "Heading:" && [[ $LAST_LINE =~ Heading:[[:space:]]+$1(\.0+)?([^0-9]|$) ]]; }

require "systemd is PID 1" test "$(</proc/1/comm)" = systemd
require "orientd's packages are installed" packages_ready
[ -x $WHERE_AM_I ] || fail "geoclue's where-am-i is missing (geoclue-2-demo, vm/run.sh)"
require "the user geoclue exists (geoclue-2.0's)" eval 'id "$GEOCLUE_USER" >/dev/null'
require "the emulated sensors (the compass at heading 90); orientd reports them" sensors_start
require "the test user's session on tty1 is active" session_start

# geoclue's configuration for this test (the guest's root is a throw-away overlay; it is put back
# afterwards all the same): only the NMEA source, on our socket; the compass on (its default);
# where-am-i allowed as a system component (never asked about); geoclue-2-demo's agent allowed.
cp "$CONF" "$TOUT/geoclue.conf.orig"
cat >"$CONF" <<EOF
[agent]
whitelist=geoclue-demo-agent
[network-nmea]
enable=true
nmea-socket=$NMEA_SOCKET
[3g]
enable=false
[cdma]
enable=false
[modem-gps]
enable=false
[wifi]
enable=false
[compass]
enable=true
[geoclue-where-am-i]
allowed=true
system=true
users=
EOF
cp "$CONF" "$TOUT/geoclue.conf"
collect() {
  journalctl -b --no-pager -o short-monotonic -u geoclue.service >"$TOUT/geoclue-journal.txt" 2>&1
  journalctl -b --no-pager -o short-monotonic -u orientd.service >"$TOUT/orientd-journal.txt" 2>&1
}
trap 'part_abort $?; collect; session_cleanup; stop_all; cp "$TOUT/geoclue.conf.orig" "$CONF"; systemctl stop geoclue.service; cp "$RUNDIR"/*.status "$TOUT/" 2>/dev/null' EXIT
spawn nmea /usr/bin/python3 -S "$GUEST/tools/nmea_server.py" "$NMEA_SOCKET" 48.1173 11.5167
require "the GPS receiver listens on $NMEA_SOCKET" wait_for 20 "the NMEA socket" test -S "$NMEA_SOCKET"
# A geoclue started earlier read another configuration. Started here rather than by the bus on
# where-am-i's first call: under TCG its start can outlast a D-Bus client's 25 s call timeout.
systemctl stop geoclue.service 2>/dev/null
require "geoclue (the system service) starts with this configuration" systemctl start geoclue.service
require "geoclue owns org.freedesktop.GeoClue2" wait_for 120 "geoclue on the bus" \
  bus_has_owner org.freedesktop.GeoClue2

# geoclue 2.6 answers a client's GetClient only once an agent for the client's user is
# registered (gclue-service-manager.c), as a desktop's (gnome-shell's, phosh's) would be: the
# demo agent of geoclue-2-demo stands for it. where-am-i is a system component here, so the
# agent is never asked to authorize it.
session_job demo-agent /usr/libexec/geoclue-2.0/demos/agent
session_job where env G_MESSAGES_DEBUG= "$WHERE_AM_I" --timeout 200 --accuracy-level 8
check "where-am-i gets a location" wait_for 120 "where-am-i's first location" \
  has_line "$WHERE" "Latitude:*"
log "where-am-i: $(grep -m1 -E 'Latitude' "$WHERE") $(grep -m1 -E 'Longitude' "$WHERE")"
check "  the GPS fix: latitude 48.117..., longitude 11.516..." \
  eval 'has_line "$WHERE" "Latitude:*48.117*" && has_line "$WHERE" "Longitude:*11.516*"'
check "geoclue is the system service, as user geoclue" \
  eval '[ "$(systemctl show -p MainPID --value geoclue.service)" != 0 ] && [ "$(ps -o user= -p "$(systemctl show -p MainPID --value geoclue.service)")" = geoclue ]'
check "the location's heading is the compass's: 90" wait_for 60 "Heading: 90" where_heading 90
hid magn heading 271
check "the magnetometer turns to 271: where-am-i reports Heading 271" \
  wait_for 60 "Heading: 271" where_heading 271
session_stop where
finish
