#!/bin/bash
# Product: orientd on the real driver stack, three tests sharing one set-up: udevd with the
# project's rules and the hwdb entry that declares the emulated sensor mounted turned, a system
# bus with the project's dbus/ policies, the emulated HID sensor hub, and the daemon.
#   orientd-idle          with no client the kernel buffer is disabled, orientd holds no IIO
#                         node or attribute open and the sensor is asked for nothing (no driver
#                         open, no input report streamed, no polled read); a client that comes and
#                         goes turns sampling on, then off again.
#   orientd-orientations  turned through all four orientations, `orientd --watch --json` reports
#                         each with its rotation, and each differs from what the sensor's own
#                         frame says (the hwdb matrix came through real udev); the Sensor property
#                         says buffered with the udev matrix, the buffer is on with the device's
#                         own trigger, orientd reads /dev/iio:deviceN and no _raw attribute is
#                         read (the driver reports polled reads as GET_REPORT to the emulator).
#   orientd-hotplug       the sensor hub goes away mid-stream (UHID_DESTROY while a client
#                         watches): undefined and HasAccelerometer false; it comes back as a
#                         hub whose reports carry its own clock (HID Timestamp usage, which the
#                         driver puts into the scans instead of the kernel's time): the new IIO
#                         device is used without a restart, and released when the client goes;
#                         replaced again while no client watches, the next one (--get) reads it.
# parts: orientd-idle orientd-orientations orientd-hotplug
# timeout: 180
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

# idle_window SECONDS WHAT: nothing may reach the sensor for SECONDS (a window with no event to
# wait for): no driver open, no streamed input report, no polled read, buffer off.
idle_window() {
  local opens sent polled
  opens=$(accel_get opens) sent=$(accel_get reports_sent) polled=$(accel_get polled_reads)
  nap "$1"
  check "buffer/enable is 0 $2" buffer_off
  check "orientd holds no IIO node or attribute open $2" not orientd_holds_iio
  check "the driver did not open the sensor in ${1} s $2 (opens $opens -> $(accel_get opens))" \
    accel_is opens "$opens"
  check "no input report streamed in ${1} s $2 ($sent -> $(accel_get reports_sent))" \
    accel_is reports_sent "$sent"
  check "no polled read in ${1} s $2 ($polled -> $(accel_get polled_reads))" \
    accel_is polled_reads "$polled"
}

part orientd-idle
orientd_stack
require "orientd found the accelerometer (HasAccelerometer)" \
  wait_for 20 "HasAccelerometer true" orientd_has_accel
udevadm info -q property -p "$IIO_DEV" >"$TOUT/udev-properties.txt"
check "udev: the test hwdb's ACCEL_MOUNT_MATRIX" \
  has_line "$TOUT/udev-properties.txt" "ACCEL_MOUNT_MATRIX=$HWDB_MATRIX"
check "udev: the project's 80-orientd.rules tagged it (ORIENTD_ACCEL=buffer poll)" \
  has_line "$TOUT/udev-properties.txt" 'ORIENTD_ACCEL=buffer poll'
check "udev: and asks systemd for orientd.service" \
  has_line "$TOUT/udev-properties.txt" 'SYSTEMD_WANTS=*orientd.service*'
"$BIN/orientd" --list-sensors --json >"$TOUT/list-sensors.json" 2>"$TOUT/list-sensors.err"
check "orientd --list-sensors --json exits 0" test $? -eq 0
log "orientd --list-sensors --json: $(<"$TOUT/list-sensors.json")"
json_fields "$TOUT/list-sensors.json" chosen chosen_mode sensors.0.mount_matrix \
  sensors.0.mount_matrix_source triggers chosenMode sensors.0.mountMatrix
log "read: $(tr '\n' ' ' <"$RUNDIR/fields")"
check "--list-sensors chooses $IIO_NAME" field_is chosen "$IIO_NAME"
check "  buffered" field_is chosen_mode buffered
check "  with the matrix $HWDB_MATRIX" field_is sensors.0.mount_matrix "$HWDB_MATRIX"
check "  from udev ACCEL_MOUNT_MATRIX" field_is sensors.0.mount_matrix_source "udev ACCEL_MOUNT_MATRIX"
# The 0.1 camelCase spellings are still written beside the new keys until 0.3.
check "  and as chosenMode (0.1 spelling)" field_is chosenMode buffered
check "  and as sensors.0.mountMatrix (0.1 spelling)" field_is sensors.0.mountMatrix "$HWDB_MATRIX"
check "  and the driver's trigger accel_3d-dev${IIO_NAME#iio:device}" \
  field_is triggers "[\"accel_3d-dev${IIO_NAME#iio:device}\"]"
# Whatever the start-up did (reading attributes; a first reading is allowed) ends by itself.
check "the sensor is idle" wait_for 15 "the sensor to be idle" accel_idle
idle_window 1 "with no client"
# hid-sensor-accel-3d attaches its own trigger when it probes; detached (as a tool may leave it),
# orientd has to find the device's trigger itself, attach it, and detach it again afterwards.
echo >"$IIO_DEV/trigger/current_trigger"
watch_start
check "a watching client gets an answer" wait_for 20 "the first line" watch_reports normal
check "sampling runs while it watches" wait_for 10 "the buffer" buffer_on
first_line "$IIO_DEV/trigger/current_trigger"
check "orientd attached the device's trigger accel_3d-dev${IIO_NAME#iio:device} (current: '$FIRST_LINE')" \
  test "$FIRST_LINE" = "accel_3d-dev${IIO_NAME#iio:device}"
stop watch
check "the buffer is disabled after the client left" wait_for 15 "the buffer off" buffer_off
first_line "$IIO_DEV/trigger/current_trigger"
check "and the trigger detached again, as orientd found it (current: '$FIRST_LINE')" \
  test -z "$FIRST_LINE"
check "and the sensor is idle again" wait_for 15 "the sensor to be idle" accel_idle
idle_window 1 "after the release"

part orientd-orientations
mv "$WATCH_LINES" "$TOUT/watch-idle.lines"
watch_start
check "orientd --watch --json starts with normal" wait_for 20 "the first line" watch_reports normal
check "sampling is buffered while a client watches (buffer/enable = 1)" wait_for 10 "the buffer" buffer_on
first_line "$IIO_DEV/trigger/current_trigger"
check "through the device's own trigger accel_3d-dev${IIO_NAME#iio:device} (current: '$FIRST_LINE')" \
  test "$FIRST_LINE" = "accel_3d-dev${IIO_NAME#iio:device}"
orientd_sensor
log "Sensor property: $SENSOR"
check "the Sensor property says mode buffered" sensor_has mode buffered
check "and the matrix from udev" sensor_has mount-matrix-source "udev ACCEL_MOUNT_MATRIX"
# The rate orientd asked for reached the sensor: the driver turned in_accel_sampling_frequency
# into the HID report interval (ms) it set on the device.
rate=$(sed -n 's/.*"rate" d \([0-9.]*\).*/\1/p' <<<"$SENSOR")
check "the driver set the sensor's report interval to 1/${rate:-?} Hz ($(accel_get interval_ms) ms)" \
  eval '[ -n "$rate" ] && accel_is interval_ms "$(awk -v r="$rate" '"'"'BEGIN { printf "%d", 1000 / r }'"'"')"'
check "orientd reads /dev/$IIO_NAME" orientd_holds "/dev/$IIO_NAME"
polled=$(accel_get polled_reads) sent=$(accel_get reports_sent)
for orientation in left-up bottom-up right-up normal; do
  accel orient "$orientation"
  raw_orientation
  check "--watch reports $orientation (the sensor's own frame says $RAW_ORIENTATION)" \
    wait_for 15 "$orientation" watch_reports "$orientation"
  check "  with rotation $(rotation_of "$orientation")" watch_rotation "$(rotation_of "$orientation")"
  check "  which only the hwdb matrix gives" test "$RAW_ORIENTATION" != "$orientation"
done
check "samples came as streamed input reports ($sent -> $(accel_get reports_sent))" \
  accel_at_least reports_sent $((sent + 4))
check "and no _raw attribute was read (polled reads $polled -> $(accel_get polled_reads))" \
  accel_is polled_reads "$polled"
out=$("$BIN/orientd" --get --json 2>&1)
log "orientd --get --json: $out (the sensor's frame: $(accel_get vector))"
check "orientd --get --json answers normal" eval '[[ $out == *\"orientation\":\"normal\"* ]]'
check "with gravity in the display frame, (0, -g, 0), not the sensor's" \
  eval '[[ $out =~ \"gravity\":\[-?0(\.[0-9]+)?,-9\.[0-9]+,-?0(\.[0-9]+)?\] ]]'
cut -f2 "$WATCH_LINES" >"$TOUT/watch.jsonl"
check "every --watch line is one JSON object" "${PY[@]}" -c '
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
check "with has_accelerometer false" eval '[[ $LAST_LINE == *\"has_accelerometer\":false* ]]'
check "HasAccelerometer is false" wait_for 10 "HasAccelerometer false" orientd_no_accel
accel orient bottom-up
accel plug timestamps
require "the sensor is back (its reports now carry the hub's clock)" wait_for 20 "accel_3d" iio_find_accel
log "back as $IIO_NAME (was $old)"
check "--watch reports bottom-up from the new device" wait_for 20 "bottom-up" watch_reports bottom-up
check "HasAccelerometer is true again" wait_for 10 "HasAccelerometer true" orientd_has_accel
check "sampling is buffered on the new device" wait_for 10 "the buffer" buffer_on
for orientation in right-up normal; do
  accel orient "$orientation"
  check "and follows it: $orientation" wait_for 15 "$orientation" watch_reports "$orientation"
done
check "orientd is still running" running orientd
grep -i timestamp "$TOUT/orientd.log" | tail -n 3
stop watch
check "the new device's buffer is off after the client left" wait_for 15 "the buffer off" buffer_off
check "and orientd holds none of its files" wait_for 10 "orientd to close it" not orientd_holds_iio
cut -f2 "$WATCH_LINES" >"$TOUT/watch-hotplug.jsonl"
# Replaced while nobody watches (a hub re-probed after a resume): the next client gets the new one.
accel unplug
check "unplugged with no client: HasAccelerometer false" wait_for 10 "HasAccelerometer false" orientd_no_accel
accel orient right-up
accel plug plain
check "plugged back: HasAccelerometer true" wait_for 20 "HasAccelerometer true" orientd_has_accel
check "  and nothing is sampled" buffer_off
out=$("$BIN/orientd" --get --json 2>&1)
log "orientd --get --json: $out"
check "orientd --get --json reads the new device: right-up" \
  eval '[[ $out == *\"orientation\":\"right-up\"* ]]'
finish
