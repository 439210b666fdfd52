#!/bin/bash
# The modules vm/kmods.sh builds out of tree (Debian's kernel does not build them) load in the
# guest like the kernel's own: modprobe -d resolves their dependencies from depmod's index and
# the drivers register. hid-sensor-custom-intel-hinge (platform driver for HID-SENSOR-INT-020b,
# after hid-sensor-hub, hid-sensor-iio-common, hid-sensor-trigger, industrialio); vimc (its
# platform device becomes the media device "VIMC MDEV" with its video nodes), unloaded again
# afterwards so that vivid is /dev/video0 for the camera tests after this one.
# kmods: hid-sensor-custom-intel-hinge vimc
# timeout: 60
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

OOT=$KROOT/lib/modules/$KV/updates/orientd-vm
loaded() { [ -d "/sys/module/${1//-/_}" ]; }
# vimc_media: a media device whose model is vimc's.
vimc_media() {
  local m
  for m in /sys/bus/media/devices/media*; do
    first_line "$m/model"
    [ "$FIRST_LINE" = "VIMC MDEV" ] && return 0
  done
  return 1
}
# vimc_video_nodes: VIMC_NODES lists the video nodes vimc registered (by their sysfs names).
vimc_video_nodes() {
  local v
  VIMC_NODES=()
  for v in /sys/class/video4linux/video*; do
    [ "$(readlink -f "$v/device/driver" 2>/dev/null)" = /sys/bus/platform/drivers/vimc ] &&
      VIMC_NODES+=("${v##*/}")
  done
  [ ${#VIMC_NODES[@]} -gt 0 ]
}
no_vimc_nodes() { ! vimc_video_nodes; }

log "out-of-tree modules: $(cd "$OOT" 2>/dev/null && echo *.ko)"
require "the hinge driver was built for $KV" test -f "$OOT/hid-sensor-custom-intel-hinge.ko"
require "modprobe -d loads hid-sensor-custom-intel-hinge" kmod hid-sensor-custom-intel-hinge
for dep in hid-sensor-hub hid-sensor-iio-common hid-sensor-trigger industrialio; do
  check "its dependency $dep was loaded first" loaded "$dep"
done
check "the hinge platform driver is registered" \
  test -d /sys/bus/platform/drivers/hid_sensor_custom_intel_hinge
first_line /sys/module/hid_sensor_custom_intel_hinge/taint
log "hid_sensor_custom_intel_hinge taint flags: $FIRST_LINE (O: out of tree, E: unsigned)"

require "vimc was built for $KV" test -f "$OOT/vimc.ko"
require "modprobe -d loads vimc" kmod vimc
check "vimc's media device is there" wait_for 20 "the VIMC MDEV media device" vimc_media
check "vimc registered its video nodes" wait_for 20 "vimc's video nodes" vimc_video_nodes
log "vimc video nodes: ${VIMC_NODES[*]}"
check "vimc unloads" modprobe -d "$KROOT" -S "$KV" -r vimc
check "no vimc video node is left" wait_for 10 "vimc's nodes to go" no_vimc_nodes
dmesg | grep -iE 'hinge|vimc|taint' | tail -n 8
finish
