#!/bin/bash
# orientd rotate's wlr-randr backend against a real output with real modes: sway 1.7 (wlroots
# 0.15) as nobody on its DRM backend, on the virtio-gpu card (vm/run.sh) through Debian's seatd,
# pixman renderer (dumb buffers, no GL in the guest). Its output Virtual-1 has the card's modes,
# so wlr-randr can send the head's state back (sway's headless outputs cannot: wlr-randr lists
# them "Enabled: no, Modes: 0x0" and their commit fails). WLR_LIBINPUT_NO_DEVICES=1: the guest
# has no input device, and without it wlroots stops ("libinput initialization failed, no input
# devices"). orientd on the emulated accelerometer; `orientd rotate --backend wlr-randr` turns
# through the four orientations and the transform is read back both with wlr-randr (wl_output's
# spelling) and swaymsg (sway's clockwise spelling). The kernel command line gives Virtual-1 a
# "Left Side Up" panel orientation (rotate-panel), so every transform is the device's turn plus
# a quarter.
# timeout: 150
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

need_product orientd rotate -- --backend
for tool in sway swaymsg wlr-randr seatd jq; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/deps.sh)"
done
require "virtio-gpu loads (the VM's display)" kmod virtio-gpu
require "its card appears" wait_for 30 "/dev/dri/card0" test -c /dev/dri/card0
require "evdev loads" kmod evdev
require "systemd-udevd runs" udev_start
require "udev has processed the card" udevadm settle --timeout=20
spawn seatd env SEATD_VTBOUND=0 seatd -u nobody -g nogroup -l info
require "seatd listens" wait_for 20 "/run/seatd.sock" test -S /run/seatd.sock

SWAYDIR=$RUNDIR/sway
mkdir -p "$SWAYDIR"
echo "xwayland disable" >"$SWAYDIR/config" # no Xwayland in the image
chown -R 65534:65534 "$SWAYDIR"
chmod 700 "$SWAYDIR"
spawn sway setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/bin:/bin \
  "XDG_RUNTIME_DIR=$SWAYDIR" "HOME=$SWAYDIR" WLR_BACKENDS=drm,libinput WLR_RENDERER=pixman \
  WLR_DRM_DEVICES=/dev/dri/card0 WLR_LIBINPUT_NO_DEVICES=1 \
  LIBSEAT_BACKEND=seatd SEATD_SOCK=/run/seatd.sock sway -d -c "$SWAYDIR/config"
sway_socket() {
  local s
  for s in "$SWAYDIR"/sway-ipc.*.sock; do [ -S "$s" ] && SWAYSOCK=$s && return 0; done
  return 1
}
wayland_socket() { [ -S "$SWAYDIR/wayland-1" ] || [ -S "$SWAYDIR/wayland-0" ]; }
require "sway starts on the DRM backend" wait_for 60 "sway's IPC socket" sway_socket
export SWAYSOCK
require "sway answers" wait_for 30 "swaymsg -t get_version" swaymsg -q -t get_version
require "sway's Wayland socket" wait_for 10 "wayland-N" wayland_socket
WAYLAND_DISPLAY=wayland-1
[ -S "$SWAYDIR/$WAYLAND_DISPLAY" ] || WAYLAND_DISPLAY=wayland-0
swaymsg -r -t get_outputs >"$TOUT/get_outputs.json" 2>&1
# wlr-randr and orientd rotate as root (as in rotate-touch), on nobody's Wayland socket
wlr() { env "XDG_RUNTIME_DIR=$SWAYDIR" "WAYLAND_DISPLAY=$WAYLAND_DISPLAY" wlr-randr "$@"; }
wlr >"$TOUT/wlr-randr.txt" 2>&1
require "sway has a DRM output Virtual-1 with modes (wlr-randr)" \
  grep -qE '^Virtual-1 ' "$TOUT/wlr-randr.txt"
check "wlr-randr lists Virtual-1 enabled" has_line "$TOUT/wlr-randr.txt" '*Enabled: yes*'

orientd_stack
require "orientd found the accelerometer" wait_for 20 "HasAccelerometer true" orientd_has_accel
# Only WAYLAND_DISPLAY, no SWAYSOCK (auto would pick sway's IPC), and --backend wlr-randr.
spawn rotate env -u SWAYSOCK "XDG_RUNTIME_DIR=$SWAYDIR" "WAYLAND_DISPLAY=$WAYLAND_DISPLAY" \
  "HOME=$RUNDIR" "XDG_STATE_HOME=$RUNDIR/state" XDG_CURRENT_DESKTOP=sway \
  "$BIN/orientd" rotate -v --json --backend wlr-randr --output Virtual-1 --settle 0
rotate_reports() { has_line "$TOUT/rotate.log" "*\"orientation\":\"$1\"*\"transform\":\"$2\"*"; }
wlr_transform() {
  wlr >"$TOUT/wlr-randr.now" 2>&1 || return 1
  [ "$(awk '/^[^ ]/ {o = $1} o == "Virtual-1" && $1 == "Transform:" {print $2}' \
    "$TOUT/wlr-randr.now")" = "$1" ]
}
sway_transform() {
  local transform
  transform=$(swaymsg -r -t get_outputs | jq -r '.[] | select(.name == "Virtual-1") | .transform')
  [ "$transform" = "$1" ]
}
# orientation, wl_output transform (device turn + the panel's quarter), sway's spelling
turn() {
  accel orient "$1"
  check "orientd rotate turned Virtual-1 $1 (transform $2 with the panel)" \
    wait_for 40 "rotate's $1 line" rotate_reports "$1" "$2"
  check "wlr-randr reads transform $2" wait_for 10 "Transform: $2" wlr_transform "$2"
  check "swaymsg reads transform $3" wait_for 10 "transform $3" sway_transform "$3"
}
turn left-up 180 180
turn bottom-up 270 90
turn right-up normal normal
turn normal 90 270
finish
