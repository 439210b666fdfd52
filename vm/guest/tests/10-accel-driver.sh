#!/bin/bash
# Accelerometer driver: uhid + hid-sensor-hub + hid-sensor-accel-3d turn the project's HID
# emulator (emu/hid_accel.py) into an IIO device with scan elements and its own trigger; polled
# raw reads and buffered reads return exactly what the emulator sends; with no reader left, the
# driver powers the sensor down and no more samples are sent; unplugged and plugged back as a hub
# whose reports carry timestamps, the scans carry the hub's clock.
# timeout: 60
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

require "the emulated HID sensor hub becomes the IIO device accel_3d" accel_start
number=${IIO_NAME#iio:device}
log "$IIO_NAME: $(readlink -f "$IIO_DEV")"
log "attributes: $(cd "$IIO_DEV" && echo *)"
log "scan elements: $(cd "$IIO_DEV/scan_elements" && echo *)"
for axis in x y z; do
  check "scan element in_accel_${axis} ($(cat "$IIO_DEV/scan_elements/in_accel_${axis}_type" 2>&1))" \
    test -e "$IIO_DEV/scan_elements/in_accel_${axis}_en"
done
trigger=
for t in /sys/bus/iio/devices/trigger*; do
  [ "$(cat "$t/name")" = "accel_3d-dev$number" ] && trigger=${t##*/}
done
check "the driver registered its trigger accel_3d-dev$number" test -n "$trigger"
check "the buffer character device /dev/$IIO_NAME exists" test -c "/dev/$IIO_NAME"
check "the buffer is off while nobody reads" buffer_off
scale=$(cat "$IIO_DEV/in_accel_scale")
check "in_accel_scale is 9.80665e-3 m/s^2 per count (unit exponent -3), got $scale" \
  awk -v s="$scale" 'BEGIN { exit !(s > 0.0098066 && s < 0.0098067) }'

# Polled reads: each one powers the sensor up and asks for the input report (GET_REPORT).
accel vector 2.0 -9.5 1.25
expect=(204 -969 127) # m/s^2 / 0.00980665, rounded
polled_before=$(accel_get polled_reads)
i=0
for axis in x y z; do
  value=$(cat "$IIO_DEV/in_accel_${axis}_raw")
  check "polled in_accel_${axis}_raw = ${expect[$i]} (read $value)" test "$value" = "${expect[$i]}"
  i=$((i + 1))
done
check "the polled reads reached the emulator as GET_REPORT(input)" \
  wait_for 5 "3 more polled reads" accel_at_least polled_reads $((polled_before + 3))

# Buffered reads through the device's trigger.
accel vector -4.9 0.5 -8.5
"${PY[@]}" "$GUEST/tools/iio_buffer.py" "$IIO_NAME" 5 --timeout 15 --expect=-500,51,-867 \
  --clock realtime >"$TOUT/buffered.jsonl"
check "5 buffered scans read from /dev/$IIO_NAME, each (-500, 51, -867), stamped by the kernel (realtime, the default)" \
  test $? -eq 0
cat "$TOUT/buffered.jsonl"
check "the emulator streamed input reports while the buffer was on" \
  wait_for 5 "reports sent" accel_at_least reports_sent 5

# Nobody reading: the driver switches reporting off, and the emulator stops sending.
check "the buffer is off again" buffer_off
check "the driver stopped the sensor's reports" \
  wait_for 10 "the emulator to stop streaming" accel_idle
sent=$(accel_get reports_sent)
polled=$(accel_get polled_reads)
nap 1 # a window in which nothing may happen: there is no event to wait for
check "no input report was sent in 1 s without a reader ($sent -> $(accel_get reports_sent))" \
  test "$(accel_get reports_sent)" = "$sent"
check "no polled read either" test "$(accel_get polled_reads)" = "$polled"

log "emulator state: $(tr '\n' ' ' <"$ACCEL_STATUS")"
accel unplug
check "unplugging the HID device removes the IIO device" wait_for 10 "$IIO_NAME to go" iio_gone
# Back as a hub whose input reports carry its own clock (HID usage Timestamp; like Intel ISH
# hubs, it follows the host's CLOCK_BOOTTIME): the driver stamps the scans with that clock, not
# with the one current_timestamp_clock selects (realtime here), which orientd has to cope with.
accel plug timestamps
check "plugging it back (reports with timestamps) creates it again" \
  wait_for 20 "accel_3d to come back" iio_find_accel
first_line "$IIO_DEV/current_timestamp_clock"
"${PY[@]}" "$GUEST/tools/iio_buffer.py" "$IIO_NAME" 3 --timeout 15 --clock boottime \
  >"$TOUT/buffered-timestamps.jsonl"
check "3 buffered scans from the new /dev/$IIO_NAME, stamped with the hub's clock (boot time)" \
  test $? -eq 0
log "the device's current_timestamp_clock says $FIRST_LINE"
cat "$TOUT/buffered-timestamps.jsonl"
dmesg | grep -iE 'hid|sensor|iio' | tail -n 15
finish
