#!/bin/bash
# Intel's HID custom hinge sensor on the real driver stack: emu/hid_accel.py --kind hinge is a
# Custom sensor collection (0x2000E1) with Intel's Manufacturer and LUID properties, as Intel's
# ISH presents it. hid-sensor-hub makes HID-SENSOR-2000e1, hid-sensor-custom recognises the LUID
# and registers HID-SENSOR-INT-020b, and hid-sensor-custom-intel-hinge (built out of tree by
# vm/kmods.sh: Debian's kernel lacks it) turns that into the IIO device "hinge".
#   hinge-driver       its channels (in_angl0..2: hinge, screen, keyboard, with labels), scale,
#                      offset, sampling frequency, hysteresis, scan elements, trigger and
#                      /dev/iio:deviceN; polled and buffered reads follow the emulator (negative
#                      angles included); sampling_frequency and hysteresis reach the hub; recorded
#                      with umockdev-record (hid-hinge.umockdev in the test's folder, the source
#                      of Tests/Fixtures/umockdev/hid-hinge.umockdev); with hid-sensor-custom
#                      loaded before a hub appears, the LUID read fails and no hinge is made
#   convertible-driver a convertible's three sensors (lid and base accelerometers, the hinge),
#                      first on one hub (three collections, one HID device, as Intel's ISH
#                      presents them), then on three hubs side by side; the emulators' "fold"
#                      moves all three consistently and each IIO device reads it
# parts: hinge-driver convertible-driver
# kmods: hid-sensor-custom-intel-hinge
# timeout: 240
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

has_files() {
  local dir=$1 name
  shift
  for name; do
    [ -e "$dir/$name" ] || {
      log "missing: $dir/$name"
      return 1
    }
  done
}
# attr_is FILE WANT: the attribute FILE of IIO_DEV reads WANT (a polled read for the _raw ones).
attr_is() {
  first_line "$IIO_DEV/$1"
  log "$1 = $FIRST_LINE"
  [ "$FIRST_LINE" = "$2" ]
}
trigger_named() {
  local t
  for t in /sys/bus/iio/devices/trigger*; do
    first_line "$t/name"
    [ "$FIRST_LINE" = "$1" ] && return 0
  done
  return 1
}
# polled_angles H S K: in_angl0..2_raw read H, S and K.
polled_angles() { attr_is in_angl0_raw "$1" && attr_is in_angl1_raw "$2" && attr_is in_angl2_raw "$3"; }
# iio_devices_of HID_PATTERN NAME: IIO_FOUND lists the IIO devices named NAME below a HID device
# whose name matches the glob HID_PATTERN (e.g. 0003:1D6B:0A79.*).
iio_devices_of() {
  local d
  IIO_FOUND=()
  for d in /sys/bus/iio/devices/iio:device*; do
    first_line "$d/name"
    [ "$FIRST_LINE" = "$2" ] || continue
    # shellcheck disable=SC2053 # a glob on purpose
    [[ $(readlink -f "$d") == */$1/* ]] && IIO_FOUND+=("$d")
  done
  [ ${#IIO_FOUND[@]} -gt 0 ]
}

part hinge-driver
check "systemd-udevd runs (the recording's properties)" udev_start
if ! hid_start hinge; then
  dmesg | grep -iE 'hid|sensor|hinge|iio' | tail -n 20
  fail "the emulated hinge sensor becomes the IIO device hinge"
fi
log "ok: the emulated hinge sensor becomes the IIO device hinge"
log "hinge: $IIO_NAME $(readlink -f "$IIO_DEV")"
log "attributes: $(cd "$IIO_DEV" && echo *)"
log "scan elements: $(cd "$IIO_DEV/scan_elements" && echo *)"
path=$(readlink -f "$IIO_DEV")
check "its parent is HID-SENSOR-INT-020b (hid-sensor-custom recognised the LUID)" \
  test "$(basename "$(dirname "$path")")" = HID-SENSOR-INT-020b
custom=$(dirname "$(dirname "$path")")
check "hid-sensor-custom drives the custom collection HID-SENSOR-2000e1" \
  test "$(basename "$(readlink -f /sys/bus/platform/devices/HID-SENSOR-2000e1.*/driver)")" = hid_sensor_custom
log "the hub: $custom"
check "in_angl0..2_raw, their labels, in_angl_{scale,offset,sampling_frequency,hysteresis}" \
  has_files "$IIO_DEV" in_angl0_raw in_angl1_raw in_angl2_raw in_angl0_label in_angl1_label \
  in_angl2_label in_angl_scale in_angl_offset in_angl_sampling_frequency in_angl_hysteresis
check "labels hinge, screen, keyboard" eval 'attr_is in_angl0_label hinge &&
  attr_is in_angl1_label screen && attr_is in_angl2_label keyboard'
check "scan elements in_angl0..2 and the timestamp" has_files "$IIO_DEV/scan_elements" \
  in_angl0_en in_angl1_en in_angl2_en in_timestamp_en
for i in 0 1 2; do
  check "in_angl${i}: index $i, type le:s32/32>>0" eval \
    'attr_is scan_elements/in_angl${i}_index $i && attr_is scan_elements/in_angl${i}_type "le:s32/32>>0"'
done
check "in_angl_scale is 0.001745329 (radians per tenth of a degree)" attr_is in_angl_scale 0.001745329
check "in_angl_offset is 0" attr_is in_angl_offset 0
check "the driver registered its trigger hinge-dev${IIO_NAME#iio:device}" \
  trigger_named "hinge-dev${IIO_NAME#iio:device}"
check "the buffer character device /dev/$IIO_NAME exists" test -c "/dev/$IIO_NAME"

hid hinge angles 110 110 0
check "polled: 110, 110 and 0 degrees read 1100, 1100, 0" polled_angles 1100 1100 0
hid hinge angles 275.5 95.5 -12.5
check "polled reads follow the emulator, negative angles signed: 2755, 955, -125" \
  polled_angles 2755 955 -125
check "the polled reads reached the hub as GET_REPORT(input)" \
  wait_for 5 "6 polled reads" hid_at_least hinge polled_reads 6
"${PY[@]}" "$GUEST/tools/iio_buffer.py" "$IIO_NAME" 3 --timeout 15 --elements in_angl0,in_angl1,in_angl2 \
  --expect 2755,955,-125 --clock realtime >"$TOUT/hinge-buffered.jsonl"
check "3 buffered scans from /dev/$IIO_NAME carry 2755, 955, -125, stamped by the kernel (realtime)" \
  test $? -eq 0
cat "$TOUT/hinge-buffered.jsonl"
check "the hub streamed input reports while the buffer was on" hid_at_least hinge reports_sent 3
# What a daemon would set: a rate and a change sensitivity, written through the driver to the hub.
echo 20 >"$IIO_DEV/in_angl_sampling_frequency"
check "in_angl_sampling_frequency 20 Hz reaches the hub as a 50 ms report interval" \
  wait_for 5 "interval 50 ms" eval 'kv "$RUNDIR/hinge.status" interval_ms && [ "$KV_VALUE" = 50 ]'
log "in_angl_sampling_frequency reads $(cat "$IIO_DEV/in_angl_sampling_frequency")"
echo 0.5 >"$IIO_DEV/in_angl_hysteresis"
first_line "$IIO_DEV/in_angl_hysteresis"
log "in_angl_hysteresis: wrote 0.5, reads $FIRST_LINE"
check "in_angl_hysteresis 0.5 reaches the hub as a change sensitivity of 5 tenths of a degree" \
  wait_for 5 "sensitivity 5" eval 'kv "$RUNDIR/hinge.status" sensitivity && [ "$KV_VALUE" = 5 ]'
echo 0 >"$IIO_DEV/in_angl_hysteresis"
udevadm settle --timeout=10
udevadm info -q property -p "$IIO_DEV" >"$TOUT/hinge-udev.txt"
umockdev-record "$IIO_DEV" >"$TOUT/hid-hinge.umockdev" 2>"$TOUT/hid-hinge.record.log"
check "umockdev-record of the hinge device" test -s "$TOUT/hid-hinge.umockdev"
log "recorded $(grep -c '^P:' "$TOUT/hid-hinge.umockdev") devices"
hid hinge quit
check "the hinge device goes with its hub" wait_for 10 "hinge to go" not iio_find hinge
# With hid-sensor-custom already loaded when a hub appears, its probe runs inside the hub's, the
# LUID read is dropped (hid_input_report: -EBUSY while hid-sensor-hub's probe holds the device's
# driver_input_lock) and the collection stays a generic custom sensor: no hinge. (hid_start loads
# the module after the hub, as udev would.)
no_custom_devices() { ! compgen -G '/sys/bus/platform/devices/HID-SENSOR-2000e1.*' >/dev/null; }
wait_for 10 "the first hub's platform devices to go" no_custom_devices
spawn hid-early "${PY[@]}" "$GUEST/emu/hid_accel.py" --kind hinge --control "$RUNDIR/early.control" \
  --status "$RUNDIR/early.status" --log "$TOUT/early-events.log"
check "hid-sensor-custom loaded before the hub: the generic custom sensor (enable_sensor) instead" \
  wait_for 30 "the generic custom sensor" compgen -G '/sys/bus/platform/devices/HID-SENSOR-2000e1.*/enable_sensor'
check "and no HID-SENSOR-INT-020b, no hinge device" \
  eval '! compgen -G "/sys/bus/platform/devices/HID-SENSOR-INT-*" >/dev/null && ! iio_find hinge'
echo quit >"$RUNDIR/early.control"
wait_for 10 "that hub to go" no_custom_devices
modprobe -d "$KROOT" -S "$KV" -r hid-sensor-custom

part convertible-driver
# One hub, as Intel's ISH presents a convertible: three collections on one HID device.
require "one hub with the lid and base accelerometers and the hinge" \
  hub_start convertible accel hinge -- --sensors lid=accel,base=accel,hinge=hinge --product 0x0a79
check "one HID device gives two accel_3d devices" \
  wait_for 20 "two accel_3d below the hub" eval 'iio_devices_of "0003:1D6B:0A79.*" accel_3d && [ ${#IIO_FOUND[@]} -eq 2 ]'
accels=("${IIO_FOUND[@]}")
check "and the hinge device" wait_for 20 "hinge below the hub" iio_devices_of "0003:1D6B:0A79.*" hinge
hinge_dev=${IIO_FOUND[0]:-}
for d in "${accels[@]}" "$hinge_dev"; do log "on the hub: $(readlink -f "$d")"; done
# The collections' order is the platform devices' order (HID-SENSOR-200073.N.auto, N rising):
# nothing else tells the lid's accelerometer from the base's on one hub.
lid_dev=${accels[0]:-} base_dev=${accels[1]:-}
number_of() { # the N of the platform device HID-SENSOR-200073.N.auto above an IIO device
  local p
  p=$(readlink -f "$1")
  p=${p%/iio:device*}
  p=${p##*HID-SENSOR-200073.}
  echo "${p%.auto}"
}
if [ -n "$base_dev" ] && [ "$(number_of "$lid_dev")" -gt "$(number_of "$base_dev")" ]; then
  lid_dev=${accels[1]} base_dev=${accels[0]}
fi
# read_raw DEV ATTR...: the polled values, space-separated, in RAW.
read_raw() {
  local dev=$1 a
  RAW=
  shift
  for a; do
    first_line "$dev/$a"
    RAW+="${RAW:+ }$FIRST_LINE"
  done
}
# folded_as DEG LID BASE HINGE: after "fold DEG" the lid, base and hinge read these raw values.
folded_as() {
  local ok=0
  read_raw "$lid_dev" in_accel_x_raw in_accel_y_raw in_accel_z_raw
  log "fold $1: lid $RAW (want $2)"
  [ "$RAW" = "$2" ] || ok=1
  read_raw "$base_dev" in_accel_x_raw in_accel_y_raw in_accel_z_raw
  log "fold $1: base $RAW (want $3)"
  [ "$RAW" = "$3" ] || ok=1
  read_raw "$hinge_dev" in_angl0_raw in_angl1_raw in_angl2_raw
  log "fold $1: hinge $RAW (want $4)"
  [ "$RAW" = "$4" ] || ok=1
  return $ok
}
# The lid's (g sin a, 0, g cos a) in counts of 1/1000 g, the base flat, the hinge in tenths.
hid convertible fold 110
check "one hub, folded to 110 (laptop): lid, base and hinge agree" \
  folded_as 110 "940 0 -342" "0 0 -1000" "1100 1100 0"
hid convertible fold 350
check "one hub, folded to 350 (tablet)" folded_as 350 "-174 0 985" "0 0 -1000" "3500 3500 0"
udevadm settle --timeout=10
for d in "${accels[@]}"; do
  log "udev $(basename "$d"): $(udevadm info -q property -p "$d" | grep -E 'ACCEL|IIO_SENSOR' | tr '\n' ' ')"
done
hid convertible quit
check "the hub's three devices go" wait_for 10 "the convertible hub to go" \
  not iio_devices_of "0003:1D6B:0A79.*" accel_3d

# Three hubs side by side (the orientd-posture layout), each emulator folded the same way.
require "the lid hub" hub_start lid accel -- --sensors lid=accel --product 0x0a77
require "the base hub" hub_start base accel -- --sensors base=accel --product 0x0a78
require "the hinge hub" hub_start hinge hinge -- --kind hinge --product 0x0a7a
check "three hubs give lid, base and hinge" wait_for 20 "the three devices" eval \
  'iio_devices_of "0003:1D6B:0A77.*" accel_3d && lid_dev=${IIO_FOUND[0]} &&
   iio_devices_of "0003:1D6B:0A78.*" accel_3d && base_dev=${IIO_FOUND[0]} &&
   iio_devices_of "0003:1D6B:0A7A.*" hinge && hinge_dev=${IIO_FOUND[0]}'
fold_hubs 110 lid base hinge
check "three hubs, folded to 110" folded_as 110 "940 0 -342" "0 0 -1000" "1100 1100 0"
fold_hubs 270 lid base hinge
check "three hubs, folded to 270 (tent)" folded_as 270 "-1000 0 0" "0 0 -1000" "2700 2700 0"
finish
