#!/bin/bash
# Product: orientd across real system suspends (s2idle, woken by the RTC's alarm: lib.sh's
# suspend_and_wake and the harness module orientd-vm-sleep) while `orientd --watch --json` holds
# a claim, told of each suspend as logind tells it: PrepareForSleep(true), then (false) after the
# resume, from python3-dbusmock's logind template owning org.freedesktop.login1 on the test's
# system bus (the bash stage has no systemd; the systemd stage's resume-logind does the same with
# the real logind). The stand-in appears after orientd has started (logind restarted or late).
#   orientd-resume  orientd takes a "delay" sleep inhibitor once logind is there; at
#                   PrepareForSleep(true) it switches the buffer off and lets the inhibitor go,
#                   so the suspend does not wait for the HID emulator (a streaming sensor held it
#                   15 s: resume-driver); the kernel suspends to idle and the RTC wakes it; at
#                   PrepareForSleep(false) it opens the sensor afresh and writes its settings
#                   again: orientations arrive, the hub has orientd's report interval and
#                   sensitivity, the inhibitor is held again; with a healthy hub, one that comes
#                   back silent (emu/hid_accel.py --resume-fault silent: no report until its
#                   feature report is written again) and one that forgets its settings at its
#                   power-up (forget); the claim never ends.
# kmods: orientd-vm-sleep
# timeout: 240
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

LOGIND=org.freedesktop.login1
LOGIND_PATH=/org/freedesktop/login1
# logind_call ARGS...: a method call on the stand-in (busctl's output in MOCK_OUT).
logind_call() { MOCK_OUT=$(busctl --system call "$LOGIND" "$LOGIND_PATH" "$@" 2>&1); }
# prepare_for_sleep true|false: the stand-in sends logind's signal.
prepare_for_sleep() {
  logind_call org.freedesktop.DBus.Mock EmitSignal sssav org.freedesktop.login1.Manager \
    PrepareForSleep b 1 b "$1"
}
# orientd_inhibits: orientd holds a sleep delay inhibitor (ListInhibitors: what, who, why, mode).
orientd_inhibits() {
  logind_call org.freedesktop.login1.Manager ListInhibitors && [[ $MOCK_OUT == *'"sleep" "orientd"'*'"delay"'* ]]
}
orientd_log_has() { has_line "$TOUT/orientd.log" "*$1*"; }

require "the harness module orientd-vm-sleep is loaded and the kernel offers s2idle" suspend_ready
# The stand-in may own logind's name (root) and be called by anyone, as logind's own policy says.
mkdir -p "$RUNDIR/logind-policy"
cat >"$RUNDIR/logind-policy/logind-stand-in.conf" <<'CONF'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <policy user="root"><allow own="org.freedesktop.login1"/></policy>
  <policy context="default"><allow send_destination="org.freedesktop.login1"/></policy>
</busconfig>
CONF
ORIENTD_BUS_POLICIES=$RUNDIR/logind-policy
orientd_stack
watch_start
require "a watching client gets the orientation" wait_for 30 "the first line" watch_reports normal
require "orientd reads the sensor buffered" wait_for 10 "the buffer" buffer_on
# Debian's python with its site packages (dbusmock, dbus, gi): not "${PY[@]}", which has -S.
spawn logind /usr/bin/python3 -m dbusmock --system --template logind
require "the logind stand-in owns $LOGIND" wait_for 30 "the stand-in on the bus" bus_has_owner "$LOGIND"
check "orientd takes a sleep delay inhibitor once logind appears" wait_for 20 "orientd's inhibitor" orientd_inhibits
log "inhibitors: $MOCK_OUT"
interval=$(accel_get interval_ms) sensitivity=$(accel_get sensitivity)
log "the hub with orientd: interval ${interval} ms, sensitivity $sensitivity"

declare -A TURN=([none]=left-up [silent]=bottom-up [forget]=right-up)
cycle=0
for fault in none silent forget; do
  cycle=$((cycle + 1))
  accel resume-fault "$fault"
  faults=$(accel_get faults)
  require "PrepareForSleep(true) is sent ($fault)" prepare_for_sleep true
  check "($fault) orientd lets its inhibitor go" wait_for 10 "no orientd inhibitor" not orientd_inhibits
  check "($fault) the buffer is off before the suspend" buffer_off
  # (The driver powers the sensor down after its autosuspend delay, cut to 0.1 s by accel_idle;
  # a sensor still on would be sent power-off requests that wait for the frozen emulator.)
  check "($fault) the sensor is off" wait_for 10 "the sensor off" accel_idle
  require "($fault) s2idle, woken by the RTC 3 s later" suspend_and_wake 3
  sed 's/^/  /' "$SUSPEND_LOG" | grep -E 'PM: (suspend entry|Triggering wakeup|resume from|suspend of devices complete)'
  if [ $cycle = 1 ]; then
    check "the kernel entered s2idle" suspend_log_has '*PM: suspend entry (s2idle)*'
    check "the RTC's interrupt woke it" suspend_log_has '*PM: Triggering wakeup from IRQ 8*'
    check "and it resumed from suspend-to-idle" suspend_log_has '*PM: resume from suspend-to-idle*'
  fi
  check "($fault) the suspend did not wait for the emulator (${SUSPEND_SECONDS}s, alarm 3 s)" \
    awk -v s="$SUSPEND_SECONDS" 'BEGIN { exit !(s < 10) }'
  check "($fault) the emulator noticed the suspend" wait_for 10 "suspends=$cycle" accel_is suspends "$cycle"
  require "PrepareForSleep(false) is sent ($fault)" prepare_for_sleep false
  accel orient "${TURN[$fault]}"
  check "($fault) orientations arrive after the resume: ${TURN[$fault]}" \
    wait_for 20 "${TURN[$fault]}" watch_reports "${TURN[$fault]}"
  if [ "$fault" != none ]; then
    check "($fault) the emulator applied its fault at the power-up" \
      wait_for 10 "faults > $faults" accel_at_least faults $((faults + 1))
  fi
  check "($fault) the hub sends reports" eval 'accel_is silent 0 && accel_is streaming 1'
  check "($fault) the hub has orientd's interval ${interval} ms and sensitivity $sensitivity again" \
    wait_for 10 "the hub's settings" eval 'accel_is interval_ms "$interval" && accel_is sensitivity "$sensitivity"'
  check "($fault) orientd holds its inhibitor again" wait_for 10 "orientd's inhibitor" orientd_inhibits
  check "($fault) the client still watches (its claim held)" running watch
done
check "orientd logged the suspend" orientd_log_has "the system is going to sleep: stopped reading accelerometer"
check "and the resume" orientd_log_has "the system resumed: reading accelerometer afresh"
check "and that readings flow again" orientd_log_has "readings flow again after the resume"
stop watch
check "after the client leaves, the buffer is off" wait_for 10 "buffer off" buffer_off
check "and orientd lets its inhibitor go" wait_for 10 "no orientd inhibitor" not orientd_inhibits
finish
