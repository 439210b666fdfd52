#!/bin/bash
# Product: the kernel's own hinge angle (issue 29). One emulated HID sensor hub, as Intel's ISH
# presents a convertible, with a display accelerometer and Intel's custom hinge sensor
# (emu/hid_accel.py --sensors lid=accel,hinge=hinge); the real hid-sensor-hub,
# hid-sensor-accel-3d, hid-sensor-custom and hid-sensor-custom-intel-hinge (built out of tree by
# vm/kmods.sh) make the IIO devices accel_3d and hinge. There is no base accelerometer: orientd's
# posture comes from the kernel's angle (iio-poll-hinge). HasHinge is true, the angle is read
# only while `orientd --watch` holds the posture, and folding the hub from laptop to tablet and
# back moves Posture, HingeAngle and TabletMode.
# kmods: hid-sensor-custom-intel-hinge
# timeout: 180
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

POSTURE_PATH=/org/orientd/Posture1
POSTURE_IFACE=org.orientd.Posture1
posture_prop() {
  busctl --system get-property "$ORIENTD_NAME" "$POSTURE_PATH" "$POSTURE_IFACE" "$1" 2>&1
}
posture_is() { [ "$(posture_prop Posture)" = "s \"$1\"" ]; }
# hinge_near DEGREES: the published HingeAngle is within 2 degrees of DEGREES.
hinge_near() {
  local v
  v=$(posture_prop HingeAngle) || return 1
  awk -v v="${v#d }" -v a="$1" 'BEGIN { d = v - a; exit !(d < 2 && d > -2) }'
}
# angle_open: orientd holds the hinge's in_angl0_raw open.
angle_open() {
  pid_of orientd || return 1
  ls -l /proc/"$PID"/fd 2>/dev/null | grep -q "${HINGE_DEV##*/}/in_angl0_raw"
}
# folded_to DEGREES POSTURE TABLET: after "fold DEGREES", the posture, angle and tablet mode.
folded_to() {
  hid convertible fold "$1" || return 1
  wait_for 30 "$2 at $1 degrees" eval "hinge_near $1 && posture_is $2 && [ \"\$(posture_prop TabletMode)\" = \"b $3\" ]"
}

need_product orientd -- --watch posture
require "systemd-udevd runs" udev_start
require "a system bus with the project's policies" bus_start "$PROJECT/dbus"
require "one hub with a display accelerometer and Intel's hinge sensor" \
  hub_start convertible accel hinge -- --sensors lid=accel,hinge=hinge --product 0x0a79
require "the real driver makes the IIO device hinge" wait_for 30 "the hinge device" iio_find hinge
HINGE_DEV=$(readlink -f "$IIO_DEV")
log "hinge: $HINGE_DEV"
require "and the display's accel_3d" wait_for 30 "accel_3d" iio_find accel_3d
udevadm settle --timeout=20
require "laptop at 110 degrees" hid convertible fold 110
printf '[posture]\ntablet-mode-switch = off\n' >"$RUNDIR/hinge.conf"
spawn orientd "$BIN/orientd" --verbose --config "$RUNDIR/hinge.conf"
require "orientd owns $ORIENTD_NAME" wait_for 30 "orientd on the bus" bus_has_owner "$ORIENTD_NAME"
check "HasHinge is true without a base accelerometer" \
  wait_for 20 "HasHinge" eval '[ "$(posture_prop HasHinge)" = "b true" ]'
check "orientd takes the kernel's hinge sensor" \
  wait_for 10 "the log line" grep -q "hinge angle sensor iio:device[0-9]* (Intel HID custom hinge sensor)" "$TOUT/orientd.log"
check "the angle is not read while nobody wants the posture" not angle_open
spawn watch "$BIN/orientd" --watch --json
check "a posture client makes orientd read the angle" wait_for 20 "in_angl0_raw open" angle_open
check "Posture laptop, HingeAngle 110" \
  wait_for 30 "laptop" eval 'hinge_near 110 && posture_is laptop'
check "folded back to 350: tablet, TabletMode true" folded_to 350 tablet true
check "opened to 110 again: laptop, TabletMode false" folded_to 110 laptop false
stop watch
check "the client gone, the angle is closed again" wait_for 20 "in_angl0_raw closed" not angle_open
log "orientd: $(grep -E 'hinge|posture' "$TOUT/orientd.log" | tail -n 6 | tr '\n' '|')"
finish
