#!/bin/bash
# orientd calibrate on the real udev stack: the emulated HID accelerometer is really mounted
# CAL_MATRIX (the emulator turns display-frame poses into its own frame with it), while the test
# hwdb says HWDB_MATRIX, so orientd reports the wrong orientation. `orientd calibrate --json
# --write`, driven through its poses by turning the emulator, finds CAL_MATRIX, writes the local
# hwdb file, runs the real systemd-hwdb update and udevadm trigger, and confirms: udevadm info
# then shows ACCEL_MOUNT_MATRIX=CAL_MATRIX, the running daemon follows it (orientd --get says
# normal upright, left-up turned), and `--revert` removes the file and udev's matrix is the test
# hwdb's again. /etc/udev is the guest's tmpfs copy (lib.sh udev_start); what the test changes
# there is put back at the end.
# timeout: 300
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

need_product orientd calibrate -- --write --revert --hwdb-file
shopt -s nullglob
policies=("$PROJECT"/dbus/*.conf)
shopt -u nullglob
[ ${#policies[@]} -gt 0 ] || skip "product not built yet: no dbus/*.conf policy in the project"
CAL_MATRIX='-1, 0, 0; 0, 1, 0; 0, 0, -1'
HWDB_FILE=/etc/udev/hwdb.d/61-sensor-orientd.hwdb
FIXTURE=/etc/udev/hwdb.d/61-orientd-vm.hwdb

require "systemd-udevd runs with the test hwdb" udev_start
# systemd-hwdb update replaces /etc/udev/hwdb.bin by a rename, which a bind mount refuses: the
# compiled database becomes a plain file of the tmpfs copy (same content; udevd keeps its old
# mapping until it sees the change). Compiling all of systemd's hwdb takes about a minute under
# TCG, so while this test runs the sources are systemd's 60-sensor.hwdb (the file that matters
# here, read by the real systemd-hwdb), the test entry and what calibrate writes.
restore_udev() {
  rm -f "$HWDB_FILE" "$FIXTURE"
  mountpoint -q /usr/lib/udev/hwdb.d && umount -l /usr/lib/udev/hwdb.d
  mountpoint -q $VM/etc-udev/hwdb.bin || mount --bind $VM/data/hwdb.bin $VM/etc-udev/hwdb.bin
  mountpoint -q /etc/udev/hwdb.bin || mount --bind $VM/data/hwdb.bin /etc/udev/hwdb.bin
  udevadm control --reload 2>/dev/null
}
trap 'part_abort $?; stop_all; bus_stop; restore_udev; cp "$RUNDIR"/*.status "$TOUT/" 2>/dev/null' EXIT
# The bind is on the tmpfs copy's dentry ($VM/etc-udev/hwdb.bin) and on its view in /etc/udev: a
# rename onto a dentry that is a mount point anywhere fails with EBUSY, so both go.
if mountpoint -q /etc/udev/hwdb.bin; then
  cp /etc/udev/hwdb.bin "$RUNDIR/hwdb.bin" &&
    umount -l /etc/udev/hwdb.bin && umount -l $VM/etc-udev/hwdb.bin &&
    cp "$RUNDIR/hwdb.bin" /etc/udev/hwdb.bin
fi
require "/etc/udev/hwdb.bin is a plain file udev reads" \
  eval '! mountpoint -q /etc/udev/hwdb.bin && ! mountpoint -q $VM/etc-udev/hwdb.bin &&
    test -s /etc/udev/hwdb.bin'
mkdir -p "$RUNDIR/hwdb.d"
require "systemd's 60-sensor.hwdb is the distribution's hwdb source" \
  cp /usr/lib/udev/hwdb.d/60-sensor.hwdb "$RUNDIR/hwdb.d/"
require "  (bound over /usr/lib/udev/hwdb.d)" mount --bind "$RUNDIR/hwdb.d" /usr/lib/udev/hwdb.d
require "the test hwdb entry is among the sources" cp "$GUEST/fixtures/61-orientd-vm.hwdb" "$FIXTURE"
require "a system bus with the project's policies" bus_start "$PROJECT/dbus"
require "the emulated accelerometer appears, mounted $CAL_MATRIX" \
  accel_start --mount-matrix "$CAL_MATRIX"
accel orient normal
require "udev has processed it" udevadm settle --timeout=20
matrix_now() {
  MATRIX=$(udevadm info -q property -p "$IIO_DEV" | sed -n 's/^ACCEL_MOUNT_MATRIX=//p')
  [ "$MATRIX" = "$1" ]
}
check "udev gives it the test hwdb's (wrong) matrix $HWDB_MATRIX" matrix_now "$HWDB_MATRIX"
spawn orientd "$BIN/orientd" --verbose
require "orientd owns $ORIENTD_NAME" wait_for 30 "orientd on the bus" bus_has_owner "$ORIENTD_NAME"
get_reports() {
  "$BIN/orientd" --get --json >"$TOUT/get.json" 2>>"$TOUT/get.err" &&
    json_fields "$TOUT/get.json" orientation && field_is orientation "$1"
}
"$BIN/orientd" --get --json >"$TOUT/get-before.json" 2>&1
log "before: orientd --get --json: $(<"$TOUT/get-before.json")"
check "held upright, orientd does not say normal with the wrong matrix" \
  not grep -q '"orientation":"normal"' "$TOUT/get-before.json"

# The calibration, driven as a person turns the device; each pose is taken after 1 s still.
CAL_LOG=$TOUT/calibrate.jsonl
"$BIN/orientd" calibrate --json --write --hold 1 --timeout 60 -v >"$CAL_LOG" 2>"$TOUT/calibrate.err" \
  </dev/null &
cal_pid=$!
echo "$cal_pid" >"$PIDS/calibrate.pid"
cal_says() { grep -q "$1" "$CAL_LOG"; }
# cal_shows SECONDS PATTERN: calibrate printed PATTERN (waiting up to SECONDS, less if it ends).
cal_over_or() { cal_says "$1" || ! kill -0 "$cal_pid" 2>/dev/null; }
cal_shows() {
  wait_for "$1" "calibrate to print $2" cal_over_or "$2"
  cal_says "$2"
}
require "calibrate names the sensor" wait_for 30 "the sensor event" cal_says '"event":"sensor"'
json_fields "$CAL_LOG" --match event=sensor sensor matrix matrix_source hwdb_key
log "sensor: $(tr '\n' ' ' <"$RUNDIR/fields")"
check "  $IIO_NAME" field_is sensor "$IIO_NAME"
check "  with the matrix in force, $HWDB_MATRIX" field_is matrix "$HWDB_MATRIX"
check "  from udev" field_is matrix_source "udev ACCEL_MOUNT_MATRIX"
check "pose 1 taken (normal)" cal_shows 40 '"event":"pose".*"step":2'
accel orient left-up
check "pose 2 taken (left-up)" cal_shows 40 '"event":"pose".*"step":3'
accel orient face-up
check "a result" cal_shows 40 '"event":"result"'
json_fields "$CAL_LOG" --match event=result matrix proper_rotation hwdb_match
log "result: $(tr '\n' ' ' <"$RUNDIR/fields")"
check "  the matrix the sensor is really mounted with, $CAL_MATRIX" field_is matrix "$CAL_MATRIX"
check "  a proper rotation" field_is proper_rotation true
match_is_qemu() {
  field hwdb_match
  [[ $FIELD == "sensor:modalias:platform:HID-SENSOR-200073*:dmi:*:svnQEMU:pn"*":*" ]]
}
check "  matched on the sensor hub's modalias and QEMU's DMI vendor and product" match_is_qemu
check "systemd-hwdb update and udevadm trigger gave the sensor the new matrix" \
  cal_shows 90 '"event":"applied"'
accel orient normal
check "calibrate confirms what orientd reports upright" cal_shows 40 '"event":"confirmed"'
wait "$cal_pid"
rc=$?
rm -f "$PIDS/calibrate.pid"
log "calibrate exit status $rc; stderr: $(<"$TOUT/calibrate.err")"
check "calibrate --write exits 0" test "$rc" -eq 0
json_fields "$CAL_LOG" --match event=confirmed orientation
check "  and says normal" field_is orientation normal
check "it wrote $HWDB_FILE" test -s "$HWDB_FILE"
log "$HWDB_FILE: $(tr '\n' '|' <"$HWDB_FILE")"
json_fields "$CAL_LOG" --match event=sensor hwdb_key
field hwdb_key
log "systemd-hwdb query $FIELD: $(systemd-hwdb query "$FIELD" 2>&1 | tr '\n' ' ')"
if ! matrix_now "$CAL_MATRIX"; then
  # What udev's own lookup says (the key as the rules substitute it), for the log.
  log "udevadm test: $(udevadm test "$IIO_DEV" 2>&1 | grep -i 'ACCEL_MOUNT\|hwdb' | tr '\n' '|')"
fi
check "udevadm info shows ACCEL_MOUNT_MATRIX=$CAL_MATRIX" matrix_now "$CAL_MATRIX"
check "the running daemon follows it: upright is normal" \
  wait_for 20 "orientd --get to say normal" get_reports normal
accel orient left-up
check "  left edge up is left-up" wait_for 20 "orientd --get to say left-up" get_reports left-up
accel orient normal

"$BIN/orientd" calibrate --revert --json >"$TOUT/revert.jsonl" 2>&1
rc=$?
log "revert: $(<"$TOUT/revert.jsonl")"
check "calibrate --revert exits 0" test "$rc" -eq 0
check "  and removed $HWDB_FILE" test ! -e "$HWDB_FILE"
check "udev is back to the test hwdb's matrix" wait_for 20 "the old matrix" matrix_now "$HWDB_MATRIX"
"$BIN/orientd" calibrate --revert >"$TOUT/revert-again.txt" 2>&1
check "a second --revert finds nothing to remove" grep -q "nothing to revert" "$TOUT/revert-again.txt"
finish
