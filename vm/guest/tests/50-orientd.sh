#!/bin/bash
# Product: orientd on the real driver stack, three tests sharing one set-up: udevd with the hwdb
# entry that declares the emulated sensor mounted turned, a system bus with the project's dbus/
# policies, the emulated HID sensor hub, and the daemon.
#   orientd-idle          with no client, the kernel buffer stays disabled and the sensor is asked
#                         for no samples (no input reports streamed, no polled reads); a client
#                         that comes and goes turns sampling on, then off again.
#   orientd-orientations  turned through all four orientations, `orientd --watch --json` reports
#                         each with its rotation: that needs the matrix read through real udev
#                         (without it every answer is a quarter turn off), buffered sampling with
#                         the device's own trigger, and the bus path to the client.
#   orientd-hotplug       the sensor hub goes away mid-stream (UHID_DESTROY while a client
#                         watches) and comes back: undefined and HasAccelerometer false meanwhile,
#                         then the new IIO device is used without a restart.
# parts: orientd-idle orientd-orientations orientd-hotplug
# timeout: 240
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

part orientd-idle
orientd_stack
require "orientd found the accelerometer (HasAccelerometer)" \
  wait_for 20 "HasAccelerometer true" orientd_has_accel
out=$("$BIN/orientd" --list-sensors --json 2>&1)
echo "$out" >"$TOUT/list-sensors.json"
log "orientd --list-sensors --json: $out"
check "--list-sensors names $IIO_NAME" grep -q "$IIO_NAME" <<<"$out"
check "--list-sensors names udev/hwdb as the mount matrix's source" grep -qiE 'udev|hwdb' <<<"$out"
# Whatever sampling the start-up did (a first reading is allowed) has to end by itself.
check "no samples are being taken" wait_for 15 "the sensor to be idle" accel_is streaming 0
sent=$(accel_get reports_sent)
polled=$(accel_get polled_reads)
sleep 3 # a window in which nothing may happen: there is no event to wait for
check "buffer/enable is 0 with no client" buffer_off
check "no input report streamed in 3 s unclaimed ($sent -> $(accel_get reports_sent))" \
  accel_is reports_sent "$sent"
check "no polled read in 3 s unclaimed ($polled -> $(accel_get polled_reads))" \
  accel_is polled_reads "$polled"
watch_start
check "a watching client gets an answer" wait_for 20 "the first line" watch_reports normal
check "sampling runs while it watches" wait_for 10 "the buffer" buffer_on
stop watch
check "the buffer is disabled after the client left" wait_for 15 "the buffer off" buffer_off
check "and the sensor stops reporting" wait_for 15 "the sensor to be idle" accel_is streaming 0
sent=$(accel_get reports_sent)
polled=$(accel_get polled_reads)
sleep 2 # again a window with nothing to wait for
check "no samples in 2 s after the release" accel_is reports_sent "$sent"
check "no polled reads either" accel_is polled_reads "$polled"

part orientd-orientations
mv "$WATCH_LINES" "$TOUT/watch-idle.lines"
watch_start
check "orientd --watch --json starts with normal" wait_for 20 "the first line" watch_reports normal
check "sampling is buffered while a client watches (buffer/enable = 1)" wait_for 10 "the buffer" buffer_on
trigger=$(cat "$IIO_DEV/trigger/current_trigger")
check "through the device's own trigger accel_3d-dev${IIO_NAME#iio:device} (current: '$trigger')" \
  test "$trigger" = "accel_3d-dev${IIO_NAME#iio:device}"
for orientation in left-up bottom-up right-up normal; do
  accel orient "$orientation"
  check "--watch reports $orientation" wait_for 15 "$orientation" watch_reports "$orientation"
  check "with rotation $(rotation_of "$orientation")" watch_rotation "$(rotation_of "$orientation")"
done
out=$("$BIN/orientd" --get --json 2>&1)
log "orientd --get --json: $out"
check "orientd --get --json answers normal" grep -Eq '"orientation"[[:space:]]*:[[:space:]]*"normal"' <<<"$out"
cut -f2 "$WATCH_LINES" >"$TOUT/watch.jsonl"
check "every --watch line is one JSON object" "$PY" -c '
import json, sys
for line in open(sys.argv[1]):
    assert isinstance(json.loads(line), dict), line' "$TOUT/watch.jsonl"

part orientd-hotplug
accel orient left-up
require "--watch reports left-up" wait_for 15 "left-up" watch_reports left-up
old=$IIO_NAME
accel unplug
check "the IIO device is gone" wait_for 10 "$old to go" iio_gone
check "--watch reports undefined without a sensor" wait_for 15 "undefined" watch_reports undefined
check "HasAccelerometer is false" wait_for 10 "HasAccelerometer false" orientd_no_accel
accel orient bottom-up
accel plug
require "the sensor is back" wait_for 20 "accel_3d" iio_find_accel
log "back as $IIO_NAME (was $old)"
check "--watch reports bottom-up from the new device" wait_for 20 "bottom-up" watch_reports bottom-up
check "HasAccelerometer is true again" wait_for 10 "HasAccelerometer true" orientd_has_accel
check "sampling is buffered on the new device" wait_for 10 "the buffer" buffer_on
accel orient right-up
check "and follows it: right-up" wait_for 15 "right-up" watch_reports right-up
check "orientd is still running" running orientd
stop watch
cut -f2 "$WATCH_LINES" >"$TOUT/watch-hotplug.jsonl"
finish
