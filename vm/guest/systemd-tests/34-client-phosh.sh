#!/bin/bash
# client-phosh: phosh 0.24 (Debian's phosh, /usr/libexec/phosh) under phoc 0.24 on wlroots'
# headless backend (pixman renderer, no input devices), in the test user's active session, with
# the emulated accelerometer and proximity sensor and a stand-in for GNOME Calls
# (tools/calls_standin.py: one ongoing call on org.gnome.Calls).
# What phosh can do here, and what it cannot:
#   - it reads orientd's net.hadess.SensorProxy (HasAccelerometer, HasProximity in its log);
#   - during the call it claims the proximity sensor (ClaimProximity through polkit's
#     allow_active; orientd then reads the sensor), follows near/far ("Proximity near changed"),
#     and releases it when the call ends (orientd stops reading);
#   - it neither rotates nor blanks: both act on the built-in panel only (rotation-manager.c,
#     proximity.c's show_fader), and phosh calls a monitor built-in only for connector names
#     LVDS-, eDP-, DSI- (monitor.c): headless phoc's output is HEADLESS-1, which phosh takes for a
#     virtual connector. The test checks that this is what happens (no built-in monitor, the
#     accelerometer left unclaimed, no fader), so that the limit is shown, not assumed.
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
phosh_said() { has_line "$PHOSH_LOG" "*$1*"; }
# prox_reads: READS is the emulated proximity sensor's polled reads (orientd polls it only while
# a client holds the proximity claim).
prox_reads() { kv "$RUNDIR/prox.status" polled_reads && READS=$KV_VALUE; }
prox_read_since() { prox_reads && [ "$READS" -gt "$1" ]; }
prox_quiet() {
  local before
  prox_reads && before=$READS
  nap "$1"
  prox_reads && [ "$READS" = "$before" ]
}

require "systemd is PID 1" test "$(</proc/1/comm)" = systemd
require "orientd's packages are installed" packages_ready
for exe in /usr/libexec/phosh /usr/bin/phoc; do
  [ -x "$exe" ] || fail "$exe is missing (phosh, phoc: vm/run.sh's package list)"
done
require "the emulated accelerometer and proximity sensor (far); orientd reports them" \
  sensors_start accel prox
require "the test user's session on tty1 is active" session_start
systemctl start upower.service

session_job phoc env WLR_BACKENDS=headless WLR_RENDERER=pixman WLR_LIBINPUT_NO_DEVICES=1 \
  XDG_SESSION_TYPE=wayland XDG_CURRENT_DESKTOP=Phosh:GNOME G_MESSAGES_DEBUG=all \
  phoc -C /usr/share/phosh/phoc.ini -E /usr/libexec/phosh
require "phoc runs phosh (its log)" wait_for 180 "phosh's start-up in the log" \
  phosh_said "phosh"
check "phosh finds orientd's proximity sensor" wait_for 120 "'Found a proximity sensor'" \
  phosh_said "Found a proximity sensor"
check "phosh adds the headless output HEADLESS-1" wait_for 60 "HEADLESS-1 in phosh's log" \
  phosh_said "(HEADLESS-1) added"
prox_reads
reads_idle=$READS
check "without a call, phosh does not claim the proximity sensor (no read for 3 s)" prox_quiet 3

# ---- a call ---------------------------------------------------------------------------------------
session_job calls /usr/bin/python3 "$GUEST/tools/calls_standin.py"
require "the stand-in owns org.gnome.Calls" wait_for 60 "the stand-in" \
  has_line "$SESSION_DIR/calls.out" ready
check "phosh sees the call (its calls manager)" wait_for 60 "'Call /org/gnome/Calls/Call/1'" \
  phosh_said "Call /org/gnome/Calls/Call/1, state 1"
check "phosh claims the proximity sensor during the call" wait_for 60 "'Claimed proximity sensor'" \
  phosh_said "Claimed proximity sensor"
check "  and orientd reads it (polled reads go up from $reads_idle)" \
  wait_for 30 "polled proximity reads" prox_read_since "$reads_idle"
hid prox presence 200
check "near: phosh hears it (Proximity near changed: 1)" wait_for 30 "near in phosh's log" \
  phosh_said "Proximity near changed: 1"
hid prox presence 0
check "far: phosh hears it (Proximity near changed: 0)" wait_for 30 "far in phosh's log" \
  phosh_said "Proximity near changed: 0"
session_stop calls
check "the call ends: phosh releases the proximity sensor and orientd stops reading it" \
  wait_for 60 "the proximity reads to stop" prox_quiet 3

# ---- what cannot happen here ------------------------------------------------------------------
check "phosh found no built-in panel (HEADLESS-1 is a virtual connector to it)" \
  eval '! phosh_said "New builtin monitor is HEADLESS"'
check "  so it never claimed the accelerometer (no rotation; orientd's buffer stayed off)" \
  eval 'IIO_DEV=$ACCEL_DEV; buffer_off && ! phosh_said "Claimed accelerometer"'
accel orient left-up
nap 3
check "  and a turn to left-up changes nothing it logs" eval '! phosh_said "Rotating HEADLESS-1"'
session_stop phoc
finish
