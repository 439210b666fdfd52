#!/bin/bash
# Product: a still, claimed HID sensor hub wakes orientd (almost) never. orientd learns the
# sensor's noise, finds it still and writes the hub's change sensitivity (hid-sensor-accel-3d's
# in_accel_hysteresis, a SET_REPORT of the feature report); the emulated hub then sends input
# reports only when a field moves by at least it (emu/hid_accel.py, as the HID sensor usages
# define it). For a still window: no report sent (the hub's held-back ticks are counted), few
# context switches of orientd, no stall logged; a turn still reaches `orientd --watch`; after
# the client leaves the sensitivity is what it was. The numbers are logged (benchmark, not
# asserted beyond "almost none").
# timeout: 120
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

# orientd_switches: ORIENTD_SWITCHES is the context switches of all orientd's threads so far.
orientd_switches() {
  pid_of orientd
  ORIENTD_SWITCHES=$(cat /proc/"$PID"/task/*/status 2>/dev/null |
    awk '/^(voluntary|nonvoluntary)_ctxt_switches/ { n += $2 } END { print n + 0 }')
}
hysteresis_set() { first_line "$IIO_DEV/in_accel_hysteresis" && [ "$FIRST_LINE" != "$before" ]; }

orientd_stack
require "orientd found the accelerometer" wait_for 20 "HasAccelerometer true" orientd_has_accel
first_line "$IIO_DEV/in_accel_hysteresis"
before=$FIRST_LINE
log "in_accel_hysteresis before: '$before'; in_accel_hysteresis_relative: $(cat "$IIO_DEV/in_accel_hysteresis_relative" 2>&1)"
watch_start
check "a watching client gets normal" wait_for 20 "the first line" watch_reports normal
check "orientd writes the hub's sensitivity once the device is still" \
  wait_for 20 "in_accel_hysteresis to change" hysteresis_set
log "in_accel_hysteresis while still: $FIRST_LINE; the hub got $(accel_get sensitivity) counts"
check "the hub got a sensitivity above 0 (SET_REPORT)" accel_at_least sensitivity 1
# The last report is repeated for settle-time (1 s) after it; then nothing is due.
nap 1.5
sent=$(accel_get reports_sent) held=$(accel_get suppressed)
orientd_switches
switches=$ORIENTD_SWITCHES
window=5
nap "$window"
orientd_switches
sent_now=$(accel_get reports_sent) held_now=$(accel_get suppressed)
woke=$((ORIENTD_SWITCHES - switches))
log "still for $window s: reports sent $sent -> $sent_now, held back $held -> $held_now," \
  "orientd context switches $woke ($((woke * 60 / window)) per minute)"
check "no input report in $window s while still ($sent -> $sent_now)" \
  test "$sent_now" -le $((sent + 1))
check "the hub ticked and held its reports back ($held -> $held_now)" \
  test "$held_now" -gt "$held"
check "orientd woke at most 5 times in $window s ($woke)" test "$woke" -le 5
check "no stall logged" not grep -q "no scan from\|polling it instead" "$TOUT/orientd.log"
now_cs
t0=$NOW_CS
accel orient left-up
check "a turn still comes through: --watch reports left-up" wait_for 15 "left-up" watch_reports left-up
now_cs
log "left-up reached --watch after $((NOW_CS - t0))0 ms (under TCG, polled by the test)"
accel orient normal
check "and back to normal" wait_for 15 "normal" watch_reports normal
stop watch
check "the buffer is off after the client left" wait_for 15 "the buffer off" buffer_off
first_line "$IIO_DEV/in_accel_hysteresis"
check "in_accel_hysteresis restored to '$before' (now '$FIRST_LINE')" test "$FIRST_LINE" = "$before"
finish
