#!/bin/bash
# orientd rotate reads how the panel is mounted from the kernel: the VM has a virtio-gpu display
# (vm/run.sh) and the kernel command line says video=Virtual-1:panel_orientation=left_side_up,
# which makes the DRM core give the connector Virtual-1 a "panel orientation" property of "Left
# Side Up", as firmware quirks do for a portrait panel in a landscape tablet. With the device
# held upright (normal), `orientd rotate --once --json` must turn Virtual-1 by a quarter
# (transform 90, as for left-up) without any --natural; --natural normal overrides it; held
# right-up, the two quarter turns cancel. --backend none: no compositor runs here, the turn is
# what orientd rotate would apply, printed and given to the hooks.
# timeout: 150
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

need_product orientd rotate -- --natural "panel orientation"
require "the kernel command line sets Virtual-1's panel orientation" \
  eval '[[ $(</proc/cmdline) == *"video=Virtual-1:panel_orientation=left_side_up"* ]]'
require "virtio-gpu loads (the VM's display)" kmod virtio-gpu
require "its card appears" wait_for 30 "/dev/dri/card0" test -c /dev/dri/card0
require "with the connector Virtual-1" wait_for 10 "card0-Virtual-1" test -d /sys/class/drm/card0-Virtual-1
orientd_stack
require "orientd found the accelerometer" wait_for 20 "HasAccelerometer true" orientd_has_accel

export HOME=$RUNDIR XDG_STATE_HOME=$RUNDIR/state
# rotate_once NAME [OPTION...]: orientd rotate --once on Virtual-1; its JSON line in ROTATE_OUT.
rotate_once() {
  local name=$1
  shift
  "$BIN/orientd" rotate --backend none --output Virtual-1 --once --json -v "$@" \
    >"$TOUT/$name.json" 2>"$TOUT/$name.err"
  ROTATE_STATUS=$?
  ROTATE_OUT=$(<"$TOUT/$name.json")
  log "orientd rotate $*: status $ROTATE_STATUS, $ROTATE_OUT"
}
transform_is() { [[ $ROTATE_OUT == *"\"transform\":\"$1\""* ]]; }

rotate_once upright
check "orientd rotate --once exits 0" test "$ROTATE_STATUS" -eq 0
check "it read the DRM property (stderr names \"Left Side Up\")" \
  has_line "$TOUT/upright.err" '*Virtual-1*panel orientation "Left Side Up"*'
check "upright on a left-side-up panel: transform 90" transform_is 90
rotate_once override --natural normal
check "--natural normal overrides the kernel: transform normal" transform_is normal
accel orient right-up
rotate_once right-up
check "held right-up on the left-side-up panel: the turns cancel, transform normal" \
  transform_is normal
finish
