#!/bin/bash
# client-mutter: Debian's mutter 43 in the test user's active session, as GNOME runs it on a
# tablet: its orientation manager claims orientd's accelerometer (ClaimAccelerometer, through
# polkit's allow_active branch) as soon as net.hadess.SensorProxy is on the bus, and turns the
# built-in panel with the device, unless org.gnome.settings-daemon.peripherals.touchscreen
# orientation-lock is set.
# mutter rotates only a built-in panel (eDP/LVDS/DSI) and only in touch mode. Here:
#   - a real Xorg (xserver-xorg-video-dummy: no GPU in this guest; xf86-input-libinput) with a
#     uinput touchscreen (emu/uinput_touch.py): an XI2 direct-touch device, so mutter's X11 seat
#     is in touch mode;
#   - mutter --nested (a Wayland compositor in a window of that X server): its dummy monitor
#     manager's output is LVDS1, a built-in panel.
# Read back from org.gnome.Mutter.DisplayConfig: PanelOrientationManaged true, and the logical
# monitor's transform in GetCurrentState (0 normal, 1 = 90, 2 = 180, 3 = 270) after each turn of
# the emulated accelerometer; with orientation-lock on, a turn changes nothing; off again,
# mutter catches up with the device.
# timeout: 900
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh
# shellcheck source=vm/guest/systemd/session.sh
. "$GUEST/systemd/session.sh"

XORG=/usr/lib/xorg/Xorg
USER_BUS=unix:path=/run/user/$SESSION_UID/bus
# as_session_user CMD...: CMD as the session's user on its session bus (settings only: what runs
# in the session itself goes through session_job).
as_session_user() {
  as_user_outside env XDG_RUNTIME_DIR="/run/user/$SESSION_UID" DBUS_SESSION_BUS_ADDRESS="$USER_BUS" "$@"
}
# What mutter says on the session bus, from one watcher (session_watch, tools/session_watch.py):
# the transform of the logical monitor showing LVDS1 in GetCurrentState (0 normal, 1 = 90,
# 2 = 180, 3 = 270; again at each MonitorsChanged), LVDS1's is-builtin, PanelOrientationManaged.
transform_is() { watch_says "transform LVDS1 $1"; }
panel_managed() { watch_says "prop PanelOrientationManaged true"; }
# transforms_seen: TRANSFORMS_SEEN is how many transform lines the watcher has printed.
transforms_seen() {
  local line
  TRANSFORMS_SEEN=0
  while IFS= read -r line; do
    [[ $line == "transform LVDS1 "* ]] && TRANSFORMS_SEEN=$((TRANSFORMS_SEEN + 1))
  done <"$WATCH_OUT"
}
# proxy_orientation O: orientd's AccelerometerOrientation (what mutter is told) is O.
proxy_orientation() { proxy_prop AccelerometerOrientation && [ "$PROP" = "s \"$1\"" ]; }
lock() {
  as_session_user gsettings set org.gnome.settings-daemon.peripherals.touchscreen orientation-lock "$1"
}

require "systemd is PID 1" test "$(</proc/1/comm)" = systemd
require "orientd's packages are installed" packages_ready
[ -x "$XORG" ] || fail "Xorg is missing (xserver-xorg-core, vm/run.sh)"
[ -e /usr/lib/xorg/modules/drivers/dummy_drv.so ] ||
  fail "Xorg's dummy video driver is missing (xserver-xorg-video-dummy, vm/run.sh)"
command -v mutter >/dev/null || fail "mutter is missing (vm/run.sh)"
require "the emulated sensors (the accelerometer upright); orientd reports them" sensors_start
require "the test user's session on tty1 is active" session_start
check "no one claims the accelerometer yet: orientd's buffer is off" buffer_off

# ---- the X server with a touchscreen ------------------------------------------------------------
require "uinput and evdev load" kmod -a uinput evdev
spawn touch /usr/bin/python3 -S "$GUEST/emu/uinput_touch.py" --status "$RUNDIR/touch.status"
require "the uinput touchscreen appears" wait_for 20 "its event node" kv "$RUNDIR/touch.status" node
udevadm settle --timeout=20
cat >"$RUNDIR/xorg.conf" <<'EOF'
Section "ServerFlags"
  Option "AutoAddGPU" "false"
  Option "DontVTSwitch" "true"
EndSection
Section "Device"
  Identifier "dummy"
  Driver "dummy"
  VideoRam 16384
EndSection
Section "Screen"
  Identifier "screen"
  Device "dummy"
  DefaultDepth 24
  SubSection "Display"
    Depth 24
    Modes "1024x768"
  EndSubSection
EndSection
EOF
# Root's X server, on no VT of its own (-sharevts -novtswitch: tty1 stays the session's, and
# active); -ac lets the session's user connect, as its own display server would.
spawn xorg "$XORG" :0 -config "$RUNDIR/xorg.conf" -logfile "$TOUT/Xorg.0.log" -nolisten tcp \
  -noreset -novtswitch -sharevts -ac
require "Xorg starts (dummy video driver)" wait_for 90 "the X socket" test -S /tmp/.X11-unix/X0
require "the X server has the touchscreen, an XI2 direct-touch device" wait_for 60 \
  "xinput: orientd-vm touchscreen" eval 'DISPLAY=:0 xinput list --long >"$TOUT/xinput.txt" 2>&1 && grep -q "orientd-vm touchscreen" "$TOUT/xinput.txt" && grep -q "Touch mode: direct" "$TOUT/xinput.txt"'
check "the session is still active (Xorg took no VT)" session_is 1

# ---- mutter -------------------------------------------------------------------------------------
lock false
session_watch display --mutter --prop org.gnome.Mutter.DisplayConfig /org/gnome/Mutter/DisplayConfig \
  org.gnome.Mutter.DisplayConfig PanelOrientationManaged
session_job mutter env DISPLAY=:0 XDG_SESSION_TYPE=wayland MUTTER_DEBUG_DUMMY_MODE_SPECS=800x600 \
  LIBGL_ALWAYS_SOFTWARE=1 G_MESSAGES_DEBUG= mutter --nested --no-x11 --wayland-display=wayland-orientd
require "mutter serves org.gnome.Mutter.DisplayConfig with its built-in panel LVDS1" \
  wait_for 180 "mutter's DisplayConfig" eval 'last_line_with "$WATCH_OUT" "transform LVDS1 "'
check "LVDS1 is mutter's built-in display (is-builtin)" watch_says "builtin LVDS1 true"
check "mutter claimed the accelerometer: orientd samples it (buffer on)" \
  wait_for 60 "the buffer" buffer_on
check "PanelOrientationManaged: true (touch mode, an accelerometer, a built-in panel)" \
  wait_for 60 "PanelOrientationManaged" panel_managed
check "the panel is upright: transform 0" wait_for 30 "transform 0" transform_is 0
declare -A TRANSFORM_OF=([normal]=0 [left-up]=1 [bottom-up]=2 [right-up]=3)
for orientation in left-up bottom-up right-up normal; do
  accel orient "$orientation"
  check "$orientation: mutter turns LVDS1 to transform ${TRANSFORM_OF[$orientation]}" \
    wait_for 60 "transform ${TRANSFORM_OF[$orientation]}" transform_is "${TRANSFORM_OF[$orientation]}"
done

# ---- the orientation lock -----------------------------------------------------------------------
lock true
check "orientation-lock set (gsettings, dconf)" eval '[ "$(as_session_user gsettings get org.gnome.settings-daemon.peripherals.touchscreen orientation-lock)" = true ]'
accel orient left-up
require "orientd reports left-up to its clients" wait_for 30 "AccelerometerOrientation left-up" \
  proxy_orientation left-up
transforms_seen
seen=$TRANSFORMS_SEEN
# mutter had 10 s to act on it; it must not.
nap 10
transforms_seen
check "locked: the panel stays at transform 0 (no new state from mutter: $seen -> $TRANSFORMS_SEEN)" \
  eval 'transform_is 0 && [ "$TRANSFORMS_SEEN" = "$seen" ]'
lock false
check "unlocked: mutter catches up, transform 1 (left-up)" wait_for 60 "transform 1" transform_is 1
accel orient normal
check "and follows again: normal, transform 0" wait_for 60 "transform 0" transform_is 0
session_stop mutter
check "mutter gone: orientd stops sampling (buffer off)" wait_for 30 "the buffer off" buffer_off
cp "$WATCH_OUT" "$TOUT/display-states.txt"
finish
