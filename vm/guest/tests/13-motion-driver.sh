#!/bin/bash
# The motion sensors of issue 26 through the real HID drivers: emu/hid_accel.py --kind gyro and
# --kind rotation become the IIO devices "gyro_3d" (hid-sensor-gyro-3d: in_anglvel_{x,y,z}_raw,
# scale in rad/s per count) and "dev_rotation" (hid-sensor-rotation: in_rot_quaternion_raw, four
# values x y z w, scale 0.0001, one repeated scan element le:s16/32X4), each with its scan
# elements, trigger and /dev/iio:deviceN; polled and buffered reads follow the emulators'
# changes. Each device's sysfs and udev shape is recorded with umockdev-record
# (hid-gyro.umockdev, hid-rotation.umockdev in this test's folder), the source of
# Tests/Fixtures/umockdev/hid-{gyro,rotation}.umockdev.
# timeout: 150
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

check "systemd-udevd runs" udev_start

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
polled() {
  first_line "$IIO_DEV/$1"
  log "$1 = $FIRST_LINE"
  [ "$FIRST_LINE" = "$2" ]
}
attribute_is() {
  first_line "$IIO_DEV/$1"
  log "$1 = $FIRST_LINE"
  [ "$FIRST_LINE" = "$2" ]
}
trigger_of() {
  local t number=${IIO_NAME#iio:device}
  for t in /sys/bus/iio/devices/trigger*; do
    first_line "$t/name"
    [ "$FIRST_LINE" = "$1-dev$number" ] && return 0
  done
  return 1
}
shape() {
  log "$1: $IIO_NAME $(readlink -f "$IIO_DEV")"
  log "$1 attributes: $(cd "$IIO_DEV" && echo *)"
  log "$1 scan elements: $(cd "$IIO_DEV/scan_elements" && echo *)"
  check "$1: the driver registered its trigger $2-dev${IIO_NAME#iio:device}" trigger_of "$2"
  check "$1: the buffer character device /dev/$IIO_NAME exists" test -c "/dev/$IIO_NAME"
}
buffered() {
  "${PY[@]}" "$GUEST/tools/iio_buffer.py" "$IIO_NAME" 2 --timeout 15 --elements "$2" \
    --expect "$3" --raw >"$TOUT/$1-buffered.jsonl"
  local rc=$?
  cat "$TOUT/$1-buffered.jsonl"
  return $rc
}
# timestamp_at_end JSONL: in every scan, bytes 16-23 are zero and bytes 24-31 hold a realtime
# timestamp of the last 20 s (current_timestamp_clock is realtime).
timestamp_at_end() {
  "${PY[@]}" - "$1" <<'PYEOF'
import json, sys, time
now = time.clock_gettime_ns(time.CLOCK_REALTIME)
scans = [json.loads(l) for l in open(sys.argv[1]) if '"raw"' in l]
ok = bool(scans)
for s in scans:
    raw = bytes.fromhex(s['raw'])
    at16 = int.from_bytes(raw[16:24], 'little')
    at24 = int.from_bytes(raw[24:32], 'little')
    print('scan of %d bytes: offset 16 holds %d, offset 24 holds %d (now %d)' % (len(raw), at16, at24, now))
    ok = ok and len(raw) == 32 and at16 == 0 and now - 20e9 < at24 <= now
sys.exit(0 if ok else 1)
PYEOF
}
record() {
  udevadm settle --timeout=10
  umockdev-record "$IIO_DEV" >"$TOUT/hid-$1.umockdev" 2>"$TOUT/hid-$1.record.log"
  local rc=$?
  log "$1: recorded $(grep -c '^P:' "$TOUT/hid-$1.umockdev") devices"
  return $rc
}

part_gyro() {
  require "gyro: the emulated gyroscope becomes the IIO device gyro_3d" hid_start gyro
  shape gyro gyro_3d
  check "gyro: in_anglvel_{x,y,z}_raw, scale, offset, sampling_frequency, hysteresis" \
    has_files "$IIO_DEV" in_anglvel_x_raw in_anglvel_y_raw in_anglvel_z_raw in_anglvel_scale \
    in_anglvel_offset in_anglvel_sampling_frequency in_anglvel_hysteresis
  check "gyro: scan elements for the three axes and the timestamp" \
    has_files "$IIO_DEV/scan_elements" in_anglvel_x_en in_anglvel_y_en in_anglvel_z_en \
    in_timestamp_en
  # Hundredths of a degree per second without a HID unit: 0.017453293 x 10^-2 rad/s.
  check "gyro: in_anglvel_scale is 0.000174532 rad/s per count" \
    attribute_is in_anglvel_scale 0.000174532
  hid gyro rate 0.1 -0.2 3
  check "gyro: polled in_anglvel_x_raw = 573 (0.1 rad/s)" polled in_anglvel_x_raw 573
  check "gyro: polled in_anglvel_y_raw = -1146 (-0.2 rad/s)" polled in_anglvel_y_raw -1146
  check "gyro: polled in_anglvel_z_raw = 17189 (3 rad/s)" polled in_anglvel_z_raw 17189
  hid gyro rate 0 0 -1.5
  check "gyro: polled in_anglvel_z_raw follows the change: -8594" polled in_anglvel_z_raw -8594
  check "gyro: buffered scans carry 0, 0, -8594" \
    buffered gyro in_anglvel_x,in_anglvel_y,in_anglvel_z 0,0,-8594
  check "gyro: umockdev-record" record gyro
}

part_rotation() {
  require "rotation: the emulated device rotation becomes the IIO device dev_rotation" \
    hid_start rotation
  shape rotation dev_rotation
  check "rotation: in_rot_quaternion_raw, scale, offset, sampling_frequency, hysteresis" \
    has_files "$IIO_DEV" in_rot_quaternion_raw in_rot_scale in_rot_offset \
    in_rot_sampling_frequency in_rot_hysteresis
  check "rotation: scan elements in_rot_quaternion and the timestamp" \
    has_files "$IIO_DEV/scan_elements" in_rot_quaternion_en in_timestamp_en
  check "rotation: in_rot_quaternion_type is four 16-bit values in 32-bit storage" \
    attribute_is scan_elements/in_rot_quaternion_type "le:s16/32X4>>0"
  check "rotation: in_rot_scale is 0.0001 (unit exponent -4)" attribute_is in_rot_scale 0.000100000
  # A polled read asks the hub (GET_REPORT: the emulator counts it) and is written as four
  # numbers, x y z w, each followed by a space (IIO_VAL_INT_MULTIPLE).
  hid rotation quaternion 0.7071 0 0.7071 0
  check "rotation: polled in_rot_quaternion_raw is 'x y z w ' = '0 7071 0 7071 '" \
    polled in_rot_quaternion_raw "0 7071 0 7071 "
  # The emulator rewrites its status file after it has answered: wait for it.
  check "rotation: the polled read was a GET_REPORT to the hub" \
    wait_for 5 "the rotation hub's polled_reads" hid_at_least rotation polled_reads 1
  check "rotation: buffered scans carry x y z w = 0 7071 0 7071 (w first in the command)" \
    buffered rotation in_rot_quaternion 0:7071:0:7071
  # The scan is 32 bytes (the X4 element is aligned to its 16 bytes and the scan padded to
  # them); the layout puts in_timestamp at offset 16, but the driver's
  # iio_push_to_buffers_with_timestamp writes it into the scan's last 8 bytes (24): offset 16
  # reads 0. A reader must take the timestamp from the end of the scan (or stamp it itself).
  check "rotation: the timestamp is in the scan's last 8 bytes, not at its layout offset 16" \
    timestamp_at_end "$TOUT/rotation-buffered.jsonl"
  hid rotation quaternion 1 0 0 0
  check "rotation: polled in_rot_quaternion_raw follows the change: '0 0 0 10000 '" \
    polled in_rot_quaternion_raw "0 0 0 10000 "
  check "rotation: buffered scans follow the change: 0 0 0 10000" \
    buffered rotation in_rot_quaternion 0:0:0:10000
  check "rotation: umockdev-record" record rotation
}

part_gyro
part_rotation
dmesg | grep -iE 'hid|sensor|iio' | tail -n 15
finish
