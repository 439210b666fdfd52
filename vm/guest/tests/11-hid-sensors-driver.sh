#!/bin/bash
# The other HID sensor-hub drivers iio-sensor-proxy reads: emu/hid_accel.py --kind als, prox and
# magn become the IIO devices "als" (hid-sensor-als), "prox" (hid-sensor-prox) and "magn_3d"
# (hid-sensor-magn-3d, with the tilt-compensated heading) with their attributes, scan elements
# and triggers; polled and buffered reads return what the emulators send. Each device's sysfs and
# udev shape is recorded with umockdev-record (hid-KIND.umockdev in this test's folder), the
# source of Tests/Fixtures/umockdev/hid-{als,prox,magn}.umockdev.
# timeout: 90
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

# udev for the recordings' properties (iio-sensor-proxy's rules tag each device with its
# IIO_SENSOR_PROXY_TYPE); the driver checks themselves need none.
check "systemd-udevd runs" udev_start

# has_files DIR NAME...: every NAME exists in DIR.
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
# polled FILE WANT: the attribute FILE (a polled read through the driver) reads WANT.
polled() {
  first_line "$IIO_DEV/$1"
  log "$1 = $FIRST_LINE"
  [ "$FIRST_LINE" = "$2" ]
}
# trigger_of: the device's own trigger (KIND-devN) is registered.
trigger_of() {
  local t number=${IIO_NAME#iio:device}
  for t in /sys/bus/iio/devices/trigger*; do
    first_line "$t/name"
    [ "$FIRST_LINE" = "$1-dev$number" ] && return 0
  done
  return 1
}
# shape KIND NAME: log the device's attributes and scan elements, check the trigger and node.
shape() {
  log "$1: $IIO_NAME $(readlink -f "$IIO_DEV")"
  log "$1 attributes: $(cd "$IIO_DEV" && echo *)"
  log "$1 scan elements: $(cd "$IIO_DEV/scan_elements" && echo *)"
  check "$1: the driver registered its trigger $2-dev${IIO_NAME#iio:device}" trigger_of "$2"
  check "$1: the buffer character device /dev/$IIO_NAME exists" test -c "/dev/$IIO_NAME"
}
# buffered KIND ELEMENTS EXPECT: 2 buffered scans with these raw values.
buffered() {
  "${PY[@]}" "$GUEST/tools/iio_buffer.py" "$IIO_NAME" 2 --timeout 15 --elements "$2" \
    --expect "$3" >"$TOUT/$1-buffered.jsonl"
  local rc=$?
  cat "$TOUT/$1-buffered.jsonl"
  return $rc
}
# record KIND: umockdev-record of the device (and its parents), with udev's properties.
record() {
  udevadm settle --timeout=10
  umockdev-record "$IIO_DEV" >"$TOUT/hid-$1.umockdev" 2>"$TOUT/hid-$1.record.log"
  local rc=$?
  log "$1: recorded $(grep -c '^P:' "$TOUT/hid-$1.umockdev") devices, udev type: $(grep -m1 IIO_SENSOR_PROXY_TYPE "$TOUT/hid-$1.umockdev")"
  return $rc
}

part_als() {
  require "als: the emulated light sensor becomes the IIO device als" hid_start als
  shape als als
  check "als: in_illuminance_raw, in_intensity_both_raw, scale, offset, sampling_frequency" \
    has_files "$IIO_DEV" in_illuminance_raw in_illuminance_scale in_illuminance_offset \
    in_intensity_both_raw in_illuminance_sampling_frequency
  check "als: scan elements in_illuminance and in_intensity_both" \
    has_files "$IIO_DEV/scan_elements" in_illuminance_en in_intensity_both_en
  first_line "$IIO_DEV/in_illuminance_scale"
  check "als: in_illuminance_scale is 0.1 (unit exponent -1), got $FIRST_LINE" \
    test "$FIRST_LINE" = 0.100000000
  hid als lux 123.4
  check "als: polled in_illuminance_raw = 1234 (123.4 lux)" polled in_illuminance_raw 1234
  hid als lux 56.7
  check "als: polled in_illuminance_raw follows the change: 567" polled in_illuminance_raw 567
  check "als: buffered scans carry 567" buffered als in_illuminance 567
  check "als: umockdev-record" record als
}

part_prox() {
  require "prox: the emulated proximity sensor becomes the IIO device prox" hid_start prox
  shape prox prox
  # hid-sensor-prox names its channel in_proximity (6.1) or in_proximity0 (indexed, later).
  raw=in_proximity_raw element=in_proximity
  [ -e "$IIO_DEV/in_proximity0_raw" ] && raw=in_proximity0_raw element=in_proximity0
  check "prox: $raw, scale, offset, sampling_frequency" has_files "$IIO_DEV" "$raw" \
    in_proximity_scale in_proximity_offset in_proximity_sampling_frequency
  check "prox: scan element $element" has_files "$IIO_DEV/scan_elements" "${element}_en"
  hid prox presence 1
  check "prox: polled $raw = 1 (near)" polled "$raw" 1
  hid prox presence 0
  check "prox: polled $raw = 0 (far)" polled "$raw" 0
  hid prox presence 1
  check "prox: buffered scans carry 1" buffered prox "$element" 1
  check "prox: umockdev-record" record prox
}

part_magn() {
  require "magn: the emulated compass becomes the IIO device magn_3d" hid_start magn
  shape magn magn_3d
  check "magn: in_magn_{x,y,z}_raw, in_rot_from_north_magnetic_tilt_comp_raw, their scales" \
    has_files "$IIO_DEV" in_magn_x_raw in_magn_y_raw in_magn_z_raw in_magn_scale \
    in_rot_from_north_magnetic_tilt_comp_raw in_rot_scale in_rot_offset
  check "magn: scan elements for the three axes and the heading" \
    has_files "$IIO_DEV/scan_elements" in_magn_x_en in_magn_y_en in_magn_z_en \
    in_rot_from_north_magnetic_tilt_comp_en
  first_line "$IIO_DEV/in_magn_scale"
  check "magn: in_magn_scale is 0.001 gauss (milligauss: no HID unit), got $FIRST_LINE" \
    test "$FIRST_LINE" = 0.001000000
  first_line "$IIO_DEV/in_rot_scale"
  check "magn: in_rot_scale is 1 (degrees), got $FIRST_LINE" test "$FIRST_LINE" = 1.000000000
  hid magn field 0.2 -0.15 -0.4
  hid magn heading 90
  check "magn: polled heading = 90 (degrees)" polled in_rot_from_north_magnetic_tilt_comp_raw 90
  check "magn: polled in_magn_y_raw = -150 (-0.15 gauss)" polled in_magn_y_raw -150
  hid magn heading 271
  check "magn: polled heading follows the change: 271" \
    polled in_rot_from_north_magnetic_tilt_comp_raw 271
  check "magn: buffered scans carry x, y, z and the heading" \
    buffered magn in_magn_x,in_magn_y,in_magn_z,in_rot_from_north_magnetic_tilt_comp 200,-150,-400,271
  check "magn: umockdev-record" record magn
}

part_als
part_prox
part_magn
dmesg | grep -iE 'hid|sensor|iio' | tail -n 15
finish
