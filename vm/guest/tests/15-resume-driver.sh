#!/bin/bash
# System suspend on the real drivers: the guest suspends to idle (s2idle) and the CMOS RTC's
# alarm wakes it (lib.sh's suspend_and_wake; QEMU needs the harness module orientd-vm-sleep for
# both, see vm/kmod/orientd-vm-sleep), with the emulated HID accelerometer idle, then streaming
# to a reader of /dev/iio:deviceN.
#   resume-driver  s2idle entered and left through the RTC alarm (the kernel's own PM lines), the
#                  9p shares still there; an idle sensor gets no request; a streaming one: the
#                  suspend waits for the frozen emulator (hid-sensor's suspend callback: power
#                  off, reporting off, read back), the resume work sets the report interval and
#                  hysteresis again and powers it up; the reader's buffer stays enabled and its
#                  scans follow the sensor again; sampling frequency and hysteresis as they were
#   resume-faults  the emulator imitating hubs that come back wrong (emu/hid_accel.py
#                  --resume-fault): "silent", the buffer enabled but no scan until the sensor is
#                  configured again (a sampling_frequency write brings it back); "forget" (across
#                  a suspend with the sensor off), the hub back at its default report interval
#                  and no hysteresis at its next power-up, which the driver's attributes read
#                  back, until they are written again
# parts: resume-driver resume-faults
# on-request: a study of the harness and the drivers; orientd-resume runs its essential checks
# kmods: orientd-vm-sleep
# timeout: 240
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

READER=$RUNDIR/reader.lines
# Streaming HID sensors each hold the suspend up for 15 s (three requests waiting uhid's 5 s:
# "PM: suspend of devices complete after 15465 msecs" here, 11 ms with none streaming).
STREAMING_ALARM=19
# clocks: CLOCKS is "monotonic boottime" now (seconds), one Python start.
clocks() {
  CLOCKS=$("${PY[@]}" -c 'import time; print("%.3f %.3f" % (time.clock_gettime(time.CLOCK_MONOTONIC), time.clock_gettime(time.CLOCK_BOOTTIME)))')
}
reader_lines() {
  local n=0 _
  [ -r "$READER" ] && while IFS= read -r _; do n=$((n + 1)); done <"$READER"
  READER_LINES=$n
}
# reader_saw_since N X,Y,Z: a scan with these raw values in the reader's lines after line N.
reader_saw_since() {
  local x y z
  IFS=, read -r x y z <<<"$2"
  tail -n +"$(($1 + 1))" "$READER" 2>/dev/null |
    grep -q "\"in_accel_x\": $x, \"in_accel_y\": $y, \"in_accel_z\": $z,"
}
hub_is() { accel_is "$1" "$2"; }
attr() {
  first_line "$IIO_DEV/$1"
  ATTR=$FIRST_LINE
}
# events_since T: the emulator's event log lines stamped T (its CLOCK_MONOTONIC) or later.
events_since() { awk -v t="$1" '$1 >= t' "$TOUT/accel-events.log" | cut -c1-150; }

part resume-driver
require "the harness module orientd-vm-sleep is loaded and the kernel offers s2idle" suspend_ready
dmesg | grep -E 'orientd-vm-sleep|orientd_vm_sleep' | sed 's/^/  /'
log "mem_sleep: $(cat /sys/power/mem_sleep); clock source $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
require "the emulated accelerometer appears" accel_start
accel vector 0 -9.80665 0
counts="$(accel_get feature_sets) $(accel_get opens)"
clocks
before=$CLOCKS
require "s2idle with the accelerometer idle, woken by the RTC alarm 3 s later" suspend_and_wake 3
clocks
log "monotonic/boottime before: $before, after: $CLOCKS"
sed 's/^/  /' "$SUSPEND_LOG"
check "the kernel entered s2idle" suspend_log_has '*PM: suspend entry (s2idle)*'
check "the RTC's interrupt woke it" suspend_log_has '*PM: Triggering wakeup from IRQ 8*'
check "and it resumed from suspend-to-idle" suspend_log_has '*PM: resume from suspend-to-idle*'
check "the project share is still readable after the resume" test -r "$PROJECT/vm/run.sh"
check "the emulator noticed the suspend (the kernel's count)" wait_for 10 "suspends=1" hub_is suspends 1
check "an idle sensor got no request across it (feature writes, opens: $counts)" \
  test "$(accel_get feature_sets) $(accel_get opens)" = "$counts"
# What a daemon sets: 20 Hz and a hysteresis of 0.05 (counts of the field: 50 mg).
echo 20 >"$IIO_DEV/in_accel_sampling_frequency"
echo 0.05 >"$IIO_DEV/in_accel_hysteresis"
check "the hub has a 50 ms interval and a sensitivity of 50" wait_for 5 "interval 50, sensitivity 50" \
  eval 'hub_is interval_ms 50 && hub_is sensitivity 50'
spawn reader "${PY[@]}" "$GUEST/tools/stamp_lines.py" "$READER" -- \
  "${PY[@]}" "$GUEST/tools/iio_buffer.py" "$IIO_NAME" 1000000 --timeout 3000
reader_lines
# (A Python reader can take half a minute to start on a loaded host.)
check "the reader gets scans of (0, -1000, 0)" wait_for 60 "scans" reader_saw_since 0 0,-1000,0
check "the sensor streams (buffer on, trigger attached)" eval 'buffer_on && hub_is streaming 1'
log "runtime PM of the platform device: $(cat "$IIO_DEV/../power/runtime_status")"
sent=$(accel_get reports_sent)
clocks
suspend_start=${CLOCKS%% *}
require "s2idle with the sensor streaming (alarm ${STREAMING_ALARM}s ahead)" suspend_and_wake $STREAMING_ALARM
reader_lines
after_resume=$READER_LINES
log "suspend with a streaming sensor took ${SUSPEND_SECONDS}s; reports sent before $sent"
log "the emulator's events from the suspend on (frozen meanwhile, the kernel's requests queued):"
events_since "$suspend_start" | head -n 30 | sed 's/^/  /'
sed 's/^/  /' "$SUSPEND_LOG"
check "the suspend waited for the frozen emulator (at least 10 s for a 3-request suspend callback)" \
  awk -v s="$SUSPEND_SECONDS" 'BEGIN { exit !(s >= 10) }'
check "the buffer is still enabled after the resume" buffer_on
check "the resume work powered the sensor up again: it streams" wait_for 20 "streaming" hub_is streaming 1
accel vector 2 -9.5 1.25
check "the reader's scans follow the sensor after the resume: (204, -969, 127)" \
  wait_for 20 "the new vector's scans" reader_saw_since "$after_resume" 204,-969,127
check "the hub's report interval is 50 ms again (the resume work wrote it)" hub_is interval_ms 50
check "and its sensitivity 50" hub_is sensitivity 50
attr in_accel_sampling_frequency
check "in_accel_sampling_frequency still reads 20 ($ATTR)" test "${ATTR%%.*}" = 20
attr in_accel_hysteresis
check "in_accel_hysteresis still reads 0.05 ($ATTR)" test "$ATTR" = 0.050000
log "runtime PM after: $(cat "$IIO_DEV/../power/runtime_status"); emulator: $(tr '\n' ' ' <"$ACCEL_STATUS")"

part resume-faults
accel resume-fault silent
reader_lines
accel vector 0 -9.80665 0
check "(fault silent) the reader gets scans before the suspend" \
  wait_for 20 "scans" reader_saw_since "$READER_LINES" 0,-1000,0
require "s2idle, the hub then silent" suspend_and_wake $STREAMING_ALARM
check "the emulator applied its fault at the power-up after the resume" \
  wait_for 20 "silent" eval 'hub_is silent 1 && hub_is faults 1'
reader_lines
silent_from=$READER_LINES
sent=$(accel_get reports_sent)
accel vector -4.9 0.5 -8.5
nap 3 # a window in which nothing may come: a dead sensor is the absence of scans
check "dead: buffer enabled, the sensor on, yet no scan of the new vector in 3 s" \
  eval 'buffer_on && hub_is streaming 1 && ! reader_saw_since "$silent_from" -500,51,-867'
check "and the hub sent no report ($sent -> $(accel_get reports_sent))" \
  test "$(accel_get reports_sent)" = "$sent"
echo 20 >"$IIO_DEV/in_accel_sampling_frequency"
check "configured again (a sampling_frequency write): the scans come back" \
  wait_for 20 "the new vector's scans" reader_saw_since "$silent_from" -500,51,-867

# This one across a suspend with the sensor off (3 s instead of 19: no request waits for the
# frozen emulator), the reader keeping its file open: the fault shows at the next power-up.
accel resume-fault forget
echo 0 >"$IIO_DEV/buffer/enable"
check "the buffer off, the driver powers the sensor down" wait_for 10 "the sensor off" accel_idle
require "s2idle with the sensor off, the hub then without its settings" suspend_and_wake 3
check "no fault yet: the sensor stays off after the resume" eval 'hub_is streaming 0 && hub_is faults 1'
echo 1 >"$IIO_DEV/buffer/enable"
check "the buffer on again: the emulator applied its fault at that power-up" \
  wait_for 20 "faults=2" hub_is faults 2
check "the hub is back at its default 100 ms interval and sensitivity 0" \
  eval 'hub_is interval_ms 100 && hub_is sensitivity 0'
attr in_accel_sampling_frequency
check "the driver reads the lost setting back: in_accel_sampling_frequency $ATTR (10 Hz)" \
  test "${ATTR%%.*}" = 10
attr in_accel_hysteresis
check "and in_accel_hysteresis $ATTR (0)" test "$ATTR" = 0.000000
reader_lines
accel vector 0 -9.80665 0
check "it streams, unfiltered" wait_for 20 "scans" reader_saw_since "$READER_LINES" 0,-1000,0
echo 20 >"$IIO_DEV/in_accel_sampling_frequency"
echo 0.05 >"$IIO_DEV/in_accel_hysteresis"
check "written again, the hub has them" wait_for 5 "interval 50, sensitivity 50" \
  eval 'hub_is interval_ms 50 && hub_is sensitivity 50'
# (A background job ignores SIGINT, so the reader cannot clean up: the buffer is disabled here.)
stop reader
echo 0 >"$IIO_DEV/buffer/enable"
check "the buffer off, the driver powers the sensor down" wait_for 10 "the sensor off" accel_idle
cp "$READER" "$TOUT/reader.lines"
finish
