#!/bin/bash
# client-phosh: phosh 0.24 (Debian's phosh, /usr/libexec/phosh) under phoc 0.24 on wlroots'
# headless backend (pixman renderer) with a uinput touchscreen through its libinput backend, in the test
# user's active session, started unlocked (--unlocked, as a display manager's session is), with
# the emulated sensors and a stand-in for GNOME Calls (tools/calls_standin.py: one ongoing call
# on org.gnome.Calls). What phosh does with orientd (src/rotation-manager.c, ambient.c,
# proximity.c), read from its debug log, from phoc's output state (wlr-randr) and from
# orientd's side (buffer and polled reads of the emulated sensors):
#   - rotation: its rotation manager claims the accelerometer (ClaimAccelerometer, polkit
#     allow_active) and turns its monitor, the primary one here (HEADLESS-1), with the device:
#     wlr-randr reads the output's transform back from phoc;
#   - ambient light: with sm.puri.phosh automatic-high-contrast on, it claims the light sensor
#     and switches the GTK theme to HighContrast when the light stays above the threshold
#     (500 lux x 1.1, sampled for 3 s), back when it falls; off again, it releases the sensor;
#   - proximity during a call: it claims the proximity sensor when the call starts, follows
#     near/far through PropertiesChanged, and releases it when the call ends.
# What it cannot do here: the black fader while near. proximity.c shows it only on the
# built-in monitor, and phosh calls a monitor built-in only for connector names LVDS-, eDP- and
# DSI- (monitor/monitor.c); headless phoc's HEADLESS-1 is a virtual connector to it (so is every
# output QEMU can give: Virtual-1). The test checks that phosh found no built-in monitor.
# timeout: 900
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh
# shellcheck source=vm/guest/systemd/session.sh
. "$GUEST/systemd/session.sh"

PHOSH_LOG=$SESSION_DIR/phoc.out
USER_BUS=unix:path=/run/user/$SESSION_UID/bus
as_session_user() {
  as_user_outside env XDG_RUNTIME_DIR="/run/user/$SESSION_UID" DBUS_SESSION_BUS_ADDRESS="$USER_BUS" "$@"
}
# phosh_said TEXT: a line of phoc's and phosh's log contains TEXT, literally (a glob would read
# "*(HEADLESS-1)*" as bash's extended pattern, which [[ == ]] always applies).
phosh_said() { last_line_with "$PHOSH_LOG" "$1"; }
# reads KIND: READS is the emulated KIND sensor's polled reads (orientd polls light and
# proximity only while a client holds their claim); read_since KIND N: more than N now;
# quiet KIND SECONDS: none for SECONDS.
reads() { kv "$SENSORS_DIR/$1.status" polled_reads && READS=$KV_VALUE; }
read_since() { reads "$1" && [ "$READS" -gt "$2" ]; }
quiet() {
  local before
  reads "$1" && before=$READS
  nap "$2"
  reads "$1" && [ "$READS" = "$before" ]
}
# output_transform T: wlr-randr (as the session's user, on phoc's socket) says HEADLESS-1's
# transform is T (normal, 90, 180, 270).
output_transform() {
  as_session_user env WAYLAND_DISPLAY="$WAYLAND_SOCKET" wlr-randr >"$RUNDIR/wlr-randr.txt" 2>&1 &&
    has_line "$RUNDIR/wlr-randr.txt" "*Transform: $1"
}
gtk_theme_is() {
  [ "$(as_session_user gsettings get org.gnome.desktop.interface gtk-theme 2>&1)" = "$1" ]
}

require "systemd is PID 1" test "$(</proc/1/comm)" = systemd
require "orientd's packages are installed" packages_ready
for exe in /usr/libexec/phosh /usr/bin/phoc /usr/bin/wlr-randr; do
  [ -x "$exe" ] || fail "$exe is missing (phosh, phoc, wlr-randr: vm/run.sh's package list)"
done
require "the emulated sensors (upright, 123.4 lux, far); orientd reports them" sensors_start
require "the test user's session on tty1 is active" session_start
systemctl start upower.service
as_session_user gsettings set sm.puri.phosh automatic-high-contrast false
as_session_user gsettings reset org.gnome.desktop.interface gtk-theme

# phoc's configuration: one small headless output (phosh's own is 720x1440 at scale 2: pixman
# draws four times as many pixels under TCG), no Xwayland.
cat >"$SESSION_HOME/phoc.ini" <<'EOF'
[core]
xwayland=false
[output:HEADLESS-1]
mode = 360x720
scale = 1
EOF
chown "$SESSION_USER:" "$SESSION_HOME/phoc.ini"
# phosh needs a seat: without an input device phoc advertises no wl_seat, GDK has no seat and
# phosh crashes at start (seen: "gdk_seat_get_keyboard: assertion 'GDK_IS_SEAT (seat)' failed",
# then a segmentation fault). So phoc gets wlroots' libinput backend beside the headless one,
# through libseat's logind backend (it takes control of the test user's session, as on a phone),
# and the uinput touchscreen (emu/uinput_touch.py) as its one input device.
require "uinput and evdev load" kmod -a uinput evdev
spawn touch /usr/bin/python3 -S "$GUEST/emu/uinput_touch.py" --status "$RUNDIR/touch.status"
require "the uinput touchscreen appears" wait_for 20 "its event node" kv "$RUNDIR/touch.status" node
udevadm settle --timeout=20
session_job phoc env WLR_BACKENDS=headless,libinput LIBSEAT_BACKEND=logind WLR_RENDERER=pixman \
  XDG_SESSION_TYPE=wayland XDG_CURRENT_DESKTOP=Phosh:GNOME \
  G_MESSAGES_DEBUG=all phoc -C "$SESSION_HOME/phoc.ini" -E "/usr/libexec/phosh --unlocked"
# phoc_socket: WAYLAND_SOCKET is the display phoc serves (its "Running compositor on wayland
# display 'NAME'" line; phosh gets it from phoc's environment).
phoc_socket() {
  last_line_with "$PHOSH_LOG" "Running compositor on wayland display '" || return 1
  WAYLAND_SOCKET=${LAST_LINE#*display \'}
  WAYLAND_SOCKET=${WAYLAND_SOCKET%\'*}
}
require "phoc runs (its wayland display)" wait_for 120 "phoc's display in its log" phoc_socket
log "phoc's wayland display: $WAYLAND_SOCKET"
check "phoc has the touchscreen: a seat for phosh (libinput backend, logind)" wait_for 60 \
  "phoc's seat" phosh_said "seat0"
require "phoc runs phosh (its log)" wait_for 180 "phosh's start-up in the log" phosh_said "phosh-shell-DEBUG"
require "phosh adds the headless output HEADLESS-1" wait_for 180 "HEADLESS-1 in phosh's log" \
  phosh_said "(HEADLESS-1) added"
check "phosh finds orientd's accelerometer, light and proximity sensors" wait_for 120 \
  "'Found a ...' for each" eval 'phosh_said "Found a accelerometer" && phosh_said "Found a ambient sensor" && phosh_said "Found a proximity sensor"'

# ---- rotation ------------------------------------------------------------------------------------
check "phosh claims the accelerometer (its rotation manager)" wait_for 60 "'Claimed accelerometer'" \
  phosh_said "Claimed accelerometer"
check "  and orientd samples it (buffer on)" wait_for 30 "the buffer" buffer_on
declare -A PHOSH_TRANSFORM=([normal]=0 [left-up]=1 [bottom-up]=2 [right-up]=3)
declare -A OUTPUT_TRANSFORM=([normal]=normal [left-up]=90 [bottom-up]=180 [right-up]=270)
for orientation in left-up bottom-up right-up normal; do
  accel orient "$orientation"
  check "$orientation: phosh turns HEADLESS-1 (Rotating HEADLESS-1: ${PHOSH_TRANSFORM[$orientation]})" \
    wait_for 60 "phosh's rotation" phosh_said "Rotating HEADLESS-1: ${PHOSH_TRANSFORM[$orientation]}"
  check "  phoc's output transform is ${OUTPUT_TRANSFORM[$orientation]} (wlr-randr)" \
    wait_for 30 "wlr-randr" output_transform "${OUTPUT_TRANSFORM[$orientation]}"
done
cp "$RUNDIR/wlr-randr.txt" "$TOUT/wlr-randr.txt"

# ---- ambient light: automatic high contrast --------------------------------------------------------
reads als
als_idle=$READS
check "automatic-high-contrast off: phosh does not read the light sensor (no read for 3 s)" \
  quiet als 3
as_session_user gsettings set sm.puri.phosh automatic-high-contrast true
check "automatic-high-contrast on: phosh claims the light sensor" wait_for 60 \
  "'Claimed ambient sensor'" phosh_said "Claimed ambient sensor"
check "  and orientd reads it (polled reads go up from $als_idle)" wait_for 30 "light reads" \
  read_since als "$als_idle"
hid als lux 2000
check "2000 lux: phosh switches to high contrast after its 3 s sample" wait_for 60 \
  "'Switching theme to hc: 1'" phosh_said "Switching theme to hc: 1"
check "  the GTK theme is HighContrast (org.gnome.desktop.interface gtk-theme)" \
  wait_for 30 "gtk-theme HighContrast" gtk_theme_is "'HighContrast'"
hid als lux 40
check "40 lux: phosh switches back" wait_for 60 "'Switching theme to hc: 0'" \
  phosh_said "Switching theme to hc: 0"
check "  the GTK theme is reset (Adwaita)" wait_for 30 "gtk-theme reset" gtk_theme_is "'Adwaita'"
as_session_user gsettings set sm.puri.phosh automatic-high-contrast false
check "automatic-high-contrast off again: phosh releases the light sensor" wait_for 60 \
  "'Released ambient light sensor'" phosh_said "Released ambient light sensor"
check "  and orientd stops reading it (no read for 3 s)" wait_for 60 "the light reads to stop" \
  quiet als 3

# ---- a call ---------------------------------------------------------------------------------------
reads prox
prox_idle=$READS
check "without a call, phosh does not claim the proximity sensor (no read for 3 s)" quiet prox 3
session_job calls /usr/bin/python3 "$GUEST/tools/calls_standin.py"
require "the stand-in owns org.gnome.Calls" wait_for 60 "the stand-in" \
  has_line "$SESSION_DIR/calls.out" ready
check "phosh sees the call (its calls manager)" wait_for 60 "'Call /org/gnome/Calls/Call/1'" \
  phosh_said "Call /org/gnome/Calls/Call/1, state 1"
check "phosh claims the proximity sensor during the call" wait_for 60 "'Claimed proximity sensor'" \
  phosh_said "Claimed proximity sensor"
check "  and orientd reads it (polled reads go up from $prox_idle)" \
  wait_for 30 "polled proximity reads" read_since prox "$prox_idle"
hid prox presence 200
check "near: phosh hears it (Proximity near changed: 1)" wait_for 30 "near in phosh's log" \
  phosh_said "Proximity near changed: 1"
hid prox presence 0
check "far: phosh hears it (Proximity near changed: 0)" wait_for 30 "far in phosh's log" \
  phosh_said "Proximity near changed: 0"
session_stop calls
check "the call ends: phosh releases the proximity sensor" wait_for 60 \
  "'Released proximity sensor'" phosh_said "Released proximity sensor"
check "  and orientd stops reading it (no read for 3 s)" wait_for 60 "the proximity reads to stop" \
  quiet prox 3

# ---- what cannot happen here ------------------------------------------------------------------
check "phosh found no built-in monitor (HEADLESS-1 is a virtual connector to it): no fader while near" \
  eval '! phosh_said "New builtin monitor is HEADLESS"'
session_stop phoc
check "phosh gone: orientd stops sampling the accelerometer (buffer off)" \
  wait_for 30 "the buffer off" buffer_off
finish
