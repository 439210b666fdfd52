#!/bin/bash
# A real suspend as users get one, through logind (systemd as PID 1, vm/run.sh --systemd):
# "systemctl suspend" with the RTC's wake alarm set; suspend to idle (the guest has only s2idle
# to come back from: sleep.conf's SuspendState=freeze; QEMU's S3 resets the virtio devices), the
# harness module orientd-vm-sleep as in the bash stage (vm/guest/lib.sh's suspend helpers).
#   resume-logind  logind's PrepareForSleep(true) on the system bus before the suspend and
#                  PrepareForSleep(false) after the resume, a delay inhibitor (what a daemon
#                  holds to quiesce its sensors first) honoured between them, the kernel's count
#                  of suspends one up, systemd-suspend.service's journal lines; orientd (the
#                  installed service, `orientd --watch --json` claiming the emulated
#                  accelerometer) holds its own delay inhibitor, lets it go at
#                  PrepareForSleep(true) with the sensor switched off, and after the resume reads
#                  it afresh: a new orientation reaches the still-claiming client, the inhibitor
#                  is held again, orientd's journal says so
# kmods: orientd-vm-sleep
# timeout: 420
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh
# shellcheck source=vm/guest/systemd/session.sh
. "$GUEST/systemd/session.sh"

SIGNALS=$RUNDIR/signals.lines
signal_seen() { has_line "$SIGNALS" "*boolean $1*"; }
# stamp_of TEXT: STAMP is the arrival time (guest CLOCK_MONOTONIC) of the first line with TEXT.
stamp_of() {
  local stamp line
  STAMP=
  while IFS=$'\t' read -r stamp line; do
    if [[ $line == *"$1"* ]]; then
      STAMP=$stamp
      return 0
    fi
  done <"$SIGNALS"
  return 1
}

require "systemd is PID 1" test "$(</proc/1/comm)" = systemd
require "the system bus runs" wait_for 60 "the system bus" test -S "$BUS_SOCKET"
require "the harness module orientd-vm-sleep is loaded and the kernel offers s2idle" suspend_ready
mkdir -p /etc/systemd/sleep.conf.d
printf '[Sleep]\nSuspendState=freeze\n' >/etc/systemd/sleep.conf.d/90-orientd-vm.conf
check "systemd-logind runs (bus activation)" \
  busctl --system call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.DBus.Peer Ping
log "logind: $(systemctl is-active systemd-logind); CanSuspend: $(busctl --system call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager CanSuspend 2>&1)"
# Each signal logind sends about sleep, stamped on arrival; the boolean is on the line after the
# signal's header in dbus-monitor's output.
spawn signals "${PY[@]}" "$GUEST/tools/stamp_lines.py" "$SIGNALS" -- dbus-monitor --system \
  "type='signal',sender='org.freedesktop.login1',interface='org.freedesktop.login1.Manager',member='PrepareForSleep'"
require "dbus-monitor listens" wait_for 30 "dbus-monitor's first line" test -s "$SIGNALS"
# orientd as users get it, a client claiming the accelerometer: orientd holds a delay inhibitor.
orientd_inhibits() {
  systemd-inhibit --list --no-pager 2>/dev/null | grep -E '^ *orientd .*sleep.*delay' >/dev/null
}
require "orientd's packages are installed" packages_ready
require "the emulated sensors; orientd reports them" sensors_start
watch_start
require "orientd --watch starts with normal" wait_for 30 "the first line" watch_reports normal
check "orientd reads the accelerometer (buffer on)" wait_for 20 "the buffer" buffer_on
check "orientd holds a sleep delay inhibitor (systemd-inhibit --list)" \
  wait_for 20 "orientd's inhibitor" orientd_inhibits
# A delay inhibitor, as a daemon takes one to put its sensors in order before the suspend: after
# PrepareForSleep(true) logind waits for its holder to let go, at most InhibitDelayMaxSec (5 s);
# this holder never does.
spawn inhibitor systemd-inhibit --what=sleep --mode=delay --who=orientd-vm --why="resume test" sleep 600
check "the delay inhibitor is registered" wait_for 20 "systemd-inhibit's lock" \
  eval 'systemd-inhibit --list --no-pager 2>/dev/null | grep -q orientd-vm'
systemd-inhibit --list --no-pager >"$TOUT/inhibitors.txt" 2>&1
suspend_count
before=$SUSPEND_COUNT
echo "orientd-vm: systemctl suspend" >/dev/kmsg
echo +25 >/sys/class/rtc/rtc0/wakealarm
log "RTC wake alarm: $(cat /sys/class/rtc/rtc0/wakealarm) (now $(cat /sys/class/rtc/rtc0/since_epoch))"
now_cs
t0=$NOW_CS
check "systemctl suspend is accepted" systemctl suspend
check "PrepareForSleep(true) arrives" wait_for 30 "PrepareForSleep true" signal_seen true
check "orientd switches the buffer off" wait_for 5 "the buffer off" buffer_off
check "and lets its inhibitor go while logind waits for the other one" \
  wait_for 5 "no orientd inhibitor" not orientd_inhibits
check "PrepareForSleep(false) arrives after the resume" wait_for 120 "PrepareForSleep false" signal_seen false
now_cs
log "systemctl suspend to PrepareForSleep(false): $(((NOW_CS - t0) / 100)) s"
suspend_count
check "the kernel counted the suspend ($before -> $SUSPEND_COUNT)" test "$SUSPEND_COUNT" -gt "$before"
cat "$SIGNALS"
stamp_of 'boolean true'
t_true=$STAMP
stamp_of 'boolean false'
t_false=$STAMP
log "PrepareForSleep(true) at $t_true, PrepareForSleep(false) at $t_false (CLOCK_MONOTONIC)"
dmesg | sed -n '/orientd-vm: systemctl suspend/,$p' >"$TOUT/kernel.log"
sed 's/^/  /' "$TOUT/kernel.log"
journalctl -b --no-pager -o short-monotonic -u systemd-suspend.service -u systemd-logind.service \
  >"$TOUT/journal.txt" 2>&1
sed 's/^/  /' "$TOUT/journal.txt" | tail -n 20
check "the kernel suspended to idle" has_line "$TOUT/kernel.log" '*PM: suspend entry (s2idle)*'
check "the RTC's interrupt woke it" has_line "$TOUT/kernel.log" '*PM: Triggering wakeup from IRQ 8*'
check "logind suspended after the inhibitor's time-out" \
  has_line "$TOUT/journal.txt" '*Delay lock is active*but inhibitor timeout is reached*'
check "systemd-sleep entered its sleep operation (systemd 252 logs the operation, 'suspend')" \
  has_line "$TOUT/journal.txt" "*Entering sleep state 'suspend'*"
check "and the system returned from it" has_line "$TOUT/journal.txt" '*System returned from sleep state*'
# The kernel's clock (printk) is CLOCK_MONOTONIC too.
entry=$(sed -n 's/^\[ *\([0-9.]*\)\] PM: suspend entry.*/\1/p' "$TOUT/kernel.log" | head -1)
log "the kernel's suspend entry at $entry, $(awk -v a="$t_true" -v b="$entry" 'BEGIN { printf "%.1f", b - a }') s after PrepareForSleep(true)"
check "logind waited for the delay inhibitor (the suspend began 4.5 s or more after PrepareForSleep(true))" \
  awk -v a="$t_true" -v b="$entry" 'BEGIN { exit !(b != "" && b - a >= 4.5) }'
accel orient left-up
check "after the resume a new orientation reaches the claiming client: left-up" \
  wait_for 30 "left-up" watch_reports left-up
check "orientd reads the accelerometer again (buffer on)" buffer_on
check "orientd holds its inhibitor again" wait_for 20 "orientd's inhibitor" orientd_inhibits
journalctl -b --no-pager -o short-monotonic -u orientd.service >"$TOUT/orientd-journal.txt" 2>&1
grep -E 'sleep|resume|flow' "$TOUT/orientd-journal.txt" | sed 's/^/  /'
check "orientd's journal: the suspend" \
  has_line "$TOUT/orientd-journal.txt" '*the system is going to sleep: stopped reading accelerometer*'
check "orientd's journal: the resume" \
  has_line "$TOUT/orientd-journal.txt" '*the system resumed: reading accelerometer afresh*'
check "orientd's journal: readings flow again" \
  has_line "$TOUT/orientd-journal.txt" '*readings flow again after the resume*'
stop watch
accel orient normal
# systemd-inhibit waits for its command: that goes first.
pid_of inhibitor
kill "$(cat "/proc/$PID/task/$PID/children" 2>/dev/null)" 2>/dev/null
stop inhibitor
stop signals
rm -f /etc/systemd/sleep.conf.d/90-orientd-vm.conf
finish
