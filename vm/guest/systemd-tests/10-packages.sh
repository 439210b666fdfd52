#!/bin/bash
# The Debian packages as users get them, on a guest whose PID 1 is systemd (vm/run.sh --systemd):
# installed from the freshly built .debs with apt-get (offline: the guest has no network, the
# dependencies are in its root), started by udev and by bus activation, restarted by systemd and
# logged by journald. The client tests (2x-, 3x-) then use them as installed; 90-purge.sh removes
# them.
#   deb-install          apt-get install ./orientd_*.deb ./orientd-rotate_*.deb ./orientcam_*.deb:
#                        installed, nothing started (orientd runs on demand), binaries without
#                        Swift libraries, the daemon without X11/xcb ones, orientd rotate runs
#                        /usr/libexec/orientd/orientd-rotate, man pages and completion in place
#   udev-start           iio-sensor-proxy masked (README.Debian), the uhid accelerometer plugged:
#                        udev's SYSTEMD_WANTS starts orientd.service, no manual step
#   sandboxed-clients    monitor-sensor (net.hadess.SensorProxy) and orientd --watch see the four
#                        orientations, buffered, from the daemon under the unit's whole sandbox
#   journal-warning      the buffer node held by someone else: orientd's warning (polling
#                        instead) is in journalctl -u orientd -p warning with priority 4
#   sysfs-restore        systemctl stop while a client holds a claim: buffer, trigger and
#                        sampling frequency are back to what they were before orientd came
#   bus-activation       the service stopped, a busctl call to org.orientd.Orientation1 starts it
#   kill-restart         systemctl kill -s KILL: restarted, clients get orientations again
#   dbus-restart         systemctl restart dbus: orientd exits 69, is restarted, serves on the new bus
#   security             systemd-analyze security on the running unit = the offline figure
# parts: deb-install udev-start sandboxed-clients journal-warning sysfs-restore bus-activation kill-restart dbus-restart security
# timeout: 900
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

UNIT=orientd.service
# unit_is STATE: systemctl is-active says STATE.
unit_is() { [ "$(systemctl is-active "$UNIT" 2>/dev/null)" = "$1" ]; }
main_pid() { MAIN_PID=$(systemctl show -p MainPID --value "$UNIT"); }
# restarted_from PID: the unit is active again with a main process other than PID.
restarted_from() {
  unit_is active && main_pid && [ "$MAIN_PID" != 0 ] && [ "$MAIN_PID" != "$1" ] &&
    bus_has_owner "$ORIENTD_NAME"
}
# get_reports ORIENTATION: orientd --get --json (a fresh claim) answers ORIENTATION.
get_reports() {
  GET_OUT=$(/usr/bin/orientd --get --json 2>&1)
  [[ $GET_OUT == *"\"orientation\":\"$1\""* ]]
}
monitor_saw() { has_line "$RUNDIR/monitor.lines" "*orientation changed: $1"; }
# monitor_normal: monitor-sensor's first report is normal (its "=== Has accelerometer" line, or
# the first change when orientd had no reading yet then).
monitor_normal() {
  has_line "$RUNDIR/monitor.lines" "*orientation: normal*" || monitor_saw normal
}

part deb-install
require "systemd is PID 1" test "$(</proc/1/comm)" = systemd
require "the system bus runs (dbus.socket)" wait_for 60 "the system bus" test -S "$BUS_SOCKET"
shopt -s nullglob
debs=("$VM_DEBS"/orientd_*.deb "$VM_DEBS"/orientd-rotate_*.deb "$VM_DEBS"/orientcam_*.deb)
shopt -u nullglob
require "the freshly built packages are there ($VM_DEBS)" test ${#debs[@]} -eq 3
log "installing ${debs[*]##*/}"
(cd "$VM_DEBS" && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
  ./orientd_*.deb ./orientd-rotate_*.deb ./orientcam_*.deb) >"$TOUT/apt-install.log" 2>&1
require "apt-get install ./orientd_*.deb ./orientd-rotate_*.deb ./orientcam_*.deb (offline) exits 0" \
  test $? -eq 0
# apt lists the two local files as "Get:"; anything from a repository would be a URL.
check "nothing was downloaded (dependencies already in the image)" \
  eval '! grep -Eq "^Get:[0-9]+ [a-z]+://" "$TOUT/apt-install.log"'
dpkg -L orientd orientd-rotate orientcam >"$TOUT/package-files.txt"
systemd-analyze time >"$TOUT/boot-time.txt" 2>&1
log "boot: $(head -1 "$TOUT/boot-time.txt")"
check "dpkg says orientd is installed" \
  test "$(dpkg-query -W -f='${Status}' orientd)" = "install ok installed"
check "the unit is not enabled (started on demand)" \
  test "$(systemctl is-enabled "$UNIT" 2>&1)" = disabled
check "and not running after the installation" unit_is inactive
ldd /usr/bin/orientd /usr/libexec/orientd/orientd-rotate /usr/bin/orientcam >"$TOUT/ldd.txt" 2>&1
check "ldd: no Swift library in orientd, orientd-rotate or orientcam" \
  eval '! grep -q libswift "$TOUT/ldd.txt"'
check "ldd: every library found" eval '! grep -q "not found" "$TOUT/ldd.txt"'
ldd /usr/bin/orientd >"$TOUT/ldd-orientd.txt" 2>&1
check "ldd: the daemon maps no X11 or xcb library (they are orientd-rotate's)" \
  eval '! grep -Eq "libX|libxcb" "$TOUT/ldd-orientd.txt"'
rotate_version=$(/usr/bin/orientd rotate --version 2>&1)
check "orientd rotate runs /usr/libexec/orientd/orientd-rotate ($rotate_version)" \
  eval '[[ $rotate_version == "orientd rotate "* ]]'
for page in orientd.8 orientd.conf.5 orientcam.1; do
  file=$(man -w "${page%.*}" 2>/dev/null | head -1)
  check "man finds $page ($file)" test -n "$file"
  warnings=$(MANWIDTH=80 man --warnings -l "$file" 2>&1 >/dev/null)
  check "man --warnings $page: none${warnings:+ ($warnings)}" test -z "$warnings"
  check "lexgrog reads its NAME section" lexgrog "$file"
done
check "bash completion for orientd and orientcam" bash -c '
  . /usr/share/bash-completion/bash_completion
  . /usr/share/bash-completion/completions/orientd
  . /usr/share/bash-completion/completions/orientcam
  complete -p orientd && complete -p orientcam'

part udev-start
# Coexistence stance (debian/orientd.README.Debian): with iio-sensor-proxy installed, udev starts
# both; masked, orientd is the only provider and answers net.hadess.SensorProxy too.
systemctl mask iio-sensor-proxy.service >/dev/null 2>&1
check "iio-sensor-proxy.service masked" \
  test "$(systemctl is-enabled iio-sensor-proxy.service 2>&1)" = masked
check "orientd.service is not running before the sensor appears" unit_is inactive
require "the emulated accelerometer appears" accel_start --mount-matrix "$HWDB_MATRIX"
accel orient normal
require "udev started orientd.service by itself" wait_for 60 "orientd.service active" unit_is active
require "orientd owns $ORIENTD_NAME" wait_for 30 "orientd on the bus" bus_has_owner "$ORIENTD_NAME"
udevadm info -q property -p "$IIO_DEV" >"$TOUT/udev-properties.txt"
check "udev: SYSTEMD_WANTS=orientd.service on $IIO_NAME (the package's 80-orientd.rules)" \
  has_line "$TOUT/udev-properties.txt" 'SYSTEMD_WANTS=*orientd.service*'
wanted_by=$(systemctl show -p WantedBy --value "$UNIT")
log "orientd.service WantedBy: $wanted_by"
check "systemd: the device unit of $IIO_NAME wants orientd.service" \
  eval '[[ $wanted_by == *"iio"*".device"* ]]'

part sandboxed-clients
BIN=/usr/bin
require "orientd sees the accelerometer" wait_for 20 "HasAccelerometer true" orientd_has_accel
bus_has_owner net.hadess.SensorProxy
check "orientd serves net.hadess.SensorProxy (iio-sensor-proxy masked)" test $? -eq 0
spawn monitor "${PY[@]}" "$GUEST/tools/stamp_lines.py" "$RUNDIR/monitor.lines" -- monitor-sensor
watch_start
check "orientd --watch starts with normal" wait_for 30 "the first line" watch_reports normal
check "monitor-sensor starts with normal" wait_for 30 "monitor-sensor's first report" monitor_normal
check "sampling is buffered (buffer/enable = 1)" wait_for 10 "the buffer" buffer_on
orientd_sensor
log "Sensor property: $SENSOR"
check "the Sensor property says mode buffered" sensor_has mode buffered
check "  and the mount matrix from udev (the hwdb entry)" \
  sensor_has mount-matrix-source "udev ACCEL_MOUNT_MATRIX"
for orientation in left-up bottom-up right-up normal; do
  accel orient "$orientation"
  check "orientd --watch reports $orientation" wait_for 15 "$orientation" watch_reports "$orientation"
  check "monitor-sensor reports $orientation" wait_for 15 "monitor-sensor $orientation" \
    monitor_saw "$orientation"
done
main_pid
status=$(<"/proc/$MAIN_PID/status")
log "orientd (pid $MAIN_PID) $(grep -E '^(NoNewPrivs|Seccomp|CapEff|CapBnd)' <<<"$status" | tr '\n' ' ')"
check "the daemon runs with no new privileges (NoNewPrivileges=)" \
  eval '[[ $status == *$'"'"'NoNewPrivs:\t1'"'"'* ]]'
check "under a seccomp filter (SystemCallFilter=)" eval '[[ $status == *$'"'"'Seccomp:\t2'"'"'* ]]'
check "with no capabilities (CapabilityBoundingSet=)" \
  eval '[[ $status == *$'"'"'CapBnd:\t0000000000000000'"'"'* ]]'
check "in its own mount namespace (PrivateMounts=, ProtectSystem=)" \
  test "$(readlink "/proc/$MAIN_PID/ns/mnt")" != "$(readlink /proc/1/ns/mnt)"
# mountinfo: field 5 is the mount point, 6 its options; the last mount on / is the one it sees.
root_options=$(awk '$5 == "/" { o = $6 } END { print o }' "/proc/$MAIN_PID/mountinfo")
check "with the root file system read-only (ProtectSystem=strict: $root_options)" \
  eval '[[ ,$root_options, == *,ro,* ]]'
stop watch
stop monitor
cp "$RUNDIR/monitor.lines" "$TOUT/monitor-sandboxed.lines"

part journal-warning
# Someone else holds the IIO buffer node (as a second sensor daemon would): orientd cannot
# start its buffer, warns, and polls instead.
exec {busy}<"/dev/$IIO_NAME"
accel orient left-up
check "orientd --get still answers (polled): left-up" wait_for 20 "left-up" get_reports left-up
log "orientd --get --json: $GET_OUT"
exec {busy}<&-
journalctl -u "$UNIT" -p warning -o json --no-pager >"$TOUT/journal-warning.json" 2>&1
journalctl -u "$UNIT" -p warning --no-pager >"$TOUT/journal-warning.txt" 2>&1
journalctl -u "$UNIT" -o verbose --no-pager >"$TOUT/journal-verbose.txt" 2>&1
check "journalctl -u orientd -p warning shows the warning" \
  has_line "$TOUT/journal-warning.txt" "*polling instead*"
check "with priority 4 (warning), from orientd's <4> prefix" "${PY[@]}" -c '
import json, sys
entries = [json.loads(line) for line in open(sys.argv[1])]
hits = [e for e in entries if "polling instead" in str(e.get("MESSAGE"))]
print("journal:", [(e.get("PRIORITY"), e.get("MESSAGE")) for e in hits])
assert hits and all(e.get("PRIORITY") == "4" for e in hits)' "$TOUT/journal-warning.json"
check "and no message below warning (-p filters on orientd's own levels)" "${PY[@]}" -c '
import json, sys
assert all(int(json.loads(line)["PRIORITY"]) <= 4 for line in open(sys.argv[1]))' \
  "$TOUT/journal-warning.json"

part sysfs-restore
first_line "$IIO_DEV/in_accel_sampling_frequency"
freq_before=$FIRST_LINE
# Values orientd must change and put back: the trigger detached, a slow sampling frequency.
echo >"$IIO_DEV/trigger/current_trigger"
echo 5 >"$IIO_DEV/in_accel_sampling_frequency" 2>/dev/null
first_line "$IIO_DEV/in_accel_sampling_frequency"
freq_before=$FIRST_LINE
first_line "$IIO_DEV/buffer/enable"
enable_before=$FIRST_LINE
log "before: buffer/enable $enable_before, trigger '', sampling frequency $freq_before"
# monitor-sensor holds the claim (it does not activate orientd again when it goes away).
spawn monitor "${PY[@]}" "$GUEST/tools/stamp_lines.py" "$RUNDIR/monitor.lines" -- monitor-sensor
require "monitor-sensor's claim makes orientd sample (buffer on)" wait_for 30 "the buffer" buffer_on
first_line "$IIO_DEV/trigger/current_trigger"
trigger_during=$FIRST_LINE
first_line "$IIO_DEV/in_accel_sampling_frequency"
freq_during=$FIRST_LINE
log "during: trigger '$trigger_during', sampling frequency $freq_during"
check "orientd attached the trigger while sampling" test -n "$trigger_during"
systemctl stop "$UNIT"
check "systemctl stop orientd: inactive" unit_is inactive
check "buffer/enable back to $enable_before" buffer_off
first_line "$IIO_DEV/trigger/current_trigger"
check "the trigger detached again (current: '$FIRST_LINE')" test -z "$FIRST_LINE"
first_line "$IIO_DEV/in_accel_sampling_frequency"
check "the sampling frequency back to $freq_before (during: $freq_during, now: $FIRST_LINE)" \
  test "$FIRST_LINE" = "$freq_before"
stop monitor
cp "$RUNDIR/monitor.lines" "$TOUT/monitor-stop.lines"

part bus-activation
check "orientd.service is stopped" unit_is inactive
out=$(busctl --system get-property "$ORIENTD_NAME" "$ORIENTD_PATH" "$ORIENTD_NAME" HasAccelerometer 2>&1)
log "busctl get-property $ORIENTD_NAME HasAccelerometer: $out"
check "a busctl call to $ORIENTD_NAME is answered (b true)" test "$out" = "b true"
check "by orientd.service, which the bus started" unit_is active
journalctl -b --no-pager -o cat _COMM=dbus-daemon >"$TOUT/dbus-daemon-journal.txt" 2>&1
check "the bus says it activated it through systemd" \
  has_line "$TOUT/dbus-daemon-journal.txt" "*Activating via systemd*$ORIENTD_NAME*"

part kill-restart
main_pid
pid=$MAIN_PID
restarts=$(systemctl show -p NRestarts --value "$UNIT")
systemctl kill -s KILL "$UNIT"
check "systemctl kill -s KILL: systemd restarts it (pid $pid -> new)" \
  wait_for 30 "a new orientd" restarted_from "$pid"
check "NRestarts counts it ($restarts -> $(systemctl show -p NRestarts --value "$UNIT"))" \
  test "$(systemctl show -p NRestarts --value "$UNIT")" -gt "$restarts"
accel orient bottom-up
check "clients get orientations again: --get says bottom-up" \
  wait_for 20 "bottom-up" get_reports bottom-up

part dbus-restart
main_pid
pid=$MAIN_PID
systemctl restart dbus.service
check "dbus.service restarted" wait_for 30 "dbus active" \
  eval '[ "$(systemctl is-active dbus.service)" = active ]'
check "orientd restarted on the new bus (pid $pid -> new)" \
  wait_for 60 "a new orientd on the new bus" restarted_from "$pid"
journalctl -u "$UNIT" --no-pager -o cat >"$TOUT/journal-unit.txt" 2>&1
check "orientd exited with status 69 when the bus went away" \
  has_line "$TOUT/journal-unit.txt" "*Main process exited, code=exited, status=69/UNAVAILABLE*"
accel orient right-up
check "and serves: --get says right-up" wait_for 20 "right-up" get_reports right-up

part security
systemd-analyze security --no-pager "$UNIT" >"$TOUT/security-online.txt" 2>&1
systemd-analyze security --no-pager --offline=true /lib/systemd/system/orientd.service \
  >"$TOUT/security-offline.txt" 2>&1
online=$(sed -n 's/.*Overall exposure level for [^:]*: *\([0-9.]*\).*/\1/p' "$TOUT/security-online.txt")
offline=$(sed -n 's/.*Overall exposure level for [^:]*: *\([0-9.]*\).*/\1/p' "$TOUT/security-offline.txt")
log "systemd-analyze security: running unit $online, offline $offline"
echo "running unit $online, offline $offline" >"$TOUT/note"
check "the running unit's exposure ($online) is the offline figure ($offline)" \
  eval '[ -n "$online" ] && [ "$online" = "$offline" ]'

finish
