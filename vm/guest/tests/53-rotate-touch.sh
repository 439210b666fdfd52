#!/bin/bash
# orientd rotate maps a real touchscreen inside a real sway: a uinput touchscreen (udev tags it
# ID_INPUT_TOUCHSCREEN), sway 1.7 started as nobody on the headless and libinput backends
# through seatd), orientd on the emulated accelerometer. sway's libinput must
# list the touchscreen (swaymsg -t get_inputs), orientd rotate must find the same device through
# udev and map it by sway's own identifier, and sway must say it mapped it to HEADLESS-1 (its
# debug log: sway 1.7's get_inputs does not show the mapping) while the output turns left-up.
# The seat: Debian's seatd (root, socket owned by nobody, SEATD_VTBOUND=0: the guest has no VT
# session) hands sway the device; libseat's noop backend was tried first and wlroots 0.15 times
# out "waiting session to become active" with it.
# timeout: 150
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

need_product orientd rotate -- --touch
for tool in sway swaymsg seatd jq; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/deps.sh)"
done
require "uinput and evdev load" kmod -a uinput evdev
require "systemd-udevd runs" udev_start
TOUCH_STATUS=$RUNDIR/touch.status
spawn touch "${PY[@]}" "$GUEST/emu/uinput_touch.py" --status "$TOUCH_STATUS"
require "the uinput touchscreen appears" wait_for 20 "its event node" kv "$TOUCH_STATUS" node
kv "$TOUCH_STATUS" node
NODE=$KV_VALUE
require "udev has processed it" udevadm settle --timeout=20
udevadm info -q property -n "$NODE" >"$TOUT/touch-udev.txt"
check "udev: $NODE is ID_INPUT_TOUCHSCREEN=1" has_line "$TOUT/touch-udev.txt" 'ID_INPUT_TOUCHSCREEN=1'
spawn seatd env SEATD_VTBOUND=0 seatd -u nobody -g nogroup -l info
require "seatd listens" wait_for 20 "/run/seatd.sock" test -S /run/seatd.sock

SWAYDIR=$RUNDIR/sway
mkdir -p "$SWAYDIR"
echo "output HEADLESS-1 resolution 1280x800" >"$SWAYDIR/config"
chown -R 65534:65534 "$SWAYDIR"
chmod 700 "$SWAYDIR"
spawn sway setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/bin:/bin \
  "XDG_RUNTIME_DIR=$SWAYDIR" "HOME=$SWAYDIR" WLR_BACKENDS=headless,libinput WLR_RENDERER=pixman \
  LIBSEAT_BACKEND=seatd SEATD_SOCK=/run/seatd.sock sway -d -c "$SWAYDIR/config"
sway_socket() {
  local s
  for s in "$SWAYDIR"/sway-ipc.*.sock; do [ -S "$s" ] && SWAYSOCK=$s && return 0; done
  return 1
}
require "sway starts on headless,libinput" wait_for 60 "sway's IPC socket" sway_socket
export SWAYSOCK
require "sway answers" wait_for 30 "swaymsg -t get_version" swaymsg -q -t get_version
swaymsg -r -t get_inputs >"$TOUT/get_inputs.json" 2>&1
IDENTIFIER=$(jq -r '.[] | select(.type == "touch") | .identifier' "$TOUT/get_inputs.json")
log "sway's touch devices: ${IDENTIFIER:-none}"
require "sway's libinput sees the uinput touchscreen (type touch)" \
  eval '[[ $IDENTIFIER == *"orientd-vm_touchscreen" ]]'

orientd_stack
require "orientd found the accelerometer" wait_for 20 "HasAccelerometer true" orientd_has_accel
spawn rotate env "SWAYSOCK=$SWAYSOCK" "XDG_RUNTIME_DIR=$RUNDIR" "XDG_STATE_HOME=$RUNDIR/state" \
  XDG_CURRENT_DESKTOP=sway "$BIN/orientd" rotate -v --json --output HEADLESS-1 --settle 0
# (the brackets escaped: has_line matches a glob pattern)
rotate_reports() {
  has_line "$TOUT/rotate.log" "*\"orientation\":\"$1\"*\"touch\":\\[\"$IDENTIFIER\"\\]*"
}
sway_transform() { [ "$(swaymsg -r -t get_outputs | jq -r '.[0].transform')" = "$1" ]; }
accel orient left-up
check "orientd rotate turned HEADLESS-1 left-up with touch [$IDENTIFIER]" \
  wait_for 60 "rotate's left-up line" rotate_reports left-up
check "sway's transform is 270 (left-up)" wait_for 10 "transform 270" sway_transform 270
check "sway mapped $IDENTIFIER to HEADLESS-1 (its log)" wait_for 10 "sway's log line" \
  has_line "$TOUT/sway.log" "*Mapping input device $IDENTIFIER to output HEADLESS-1*"
finish
