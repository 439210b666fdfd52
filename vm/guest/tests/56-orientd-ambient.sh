#!/bin/bash
# Product: orientd as the whole of iio-sensor-proxy's contract on the real HID sensor-hub
# drivers. The emulated ambient light sensor (hid-sensor-als), proximity sensor
# (hid-sensor-prox, near level 100 from the test hwdb's PROXIMITY_NEAR_LEVEL) and compass
# (hid-sensor-magn-3d, tilt-compensated heading) appear as IIO devices; orientd serves
# HasAmbientLight, HasProximity and (on /net/hadess/SensorProxy/Compass) HasCompass, Debian's
# monitor-sensor sees the light level and near/far change as the emulators change them, and
# uid 65534 (neither root nor geoclue) follows the heading on the project's own bus policy: the
# compass is for any user, as in iio-sensor-proxy 3.6+.
# timeout: 150
# shellcheck source=vm/guest/lib.sh
. /run/vm/project/vm/guest/lib.sh

PROXY=net.hadess.SensorProxy
# proxy_prop NAME [PATH INTERFACE]: a property of the compatibility API, busctl's form, in PROP.
proxy_prop() {
  PROP=$(${PROP_AS:-} busctl --system get-property "$PROXY" "${2:-/net/hadess/SensorProxy}" "${3:-$PROXY}" \
    "$1" 2>&1)
}
# monitor_has TEXT: monitor-sensor printed a line containing TEXT.
monitor_has() { has_line "$TOUT/monitor-sensor.log" "*$1*"; }
# monitor_last_has PREFIX TEXT: monitor-sensor's last line starting with PREFIX contains TEXT.
monitor_last_has() {
  last_line_with "$TOUT/monitor-sensor.log" "$1" && [[ $LAST_LINE == *"$2"* ]]
}

need_product orientd -- --watch
require "systemd-udevd runs with the test hwdb" udev_start
# The compass is for any user (dbus/orientd.conf, as iio-sensor-proxy 3.6+): nobody reads it.
# (Debian's monitor-sensor 3.0 follows the compass only when run as the user geoclue, so the
# heading is followed with orientd's own client, as nobody.) No polkitd runs in this guest, so
# the bus policy is the only gate; the systemd stage has polkit's verdicts.
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
require "a system bus with the project's policies" bus_start "$PROJECT/dbus"
require "the emulated light sensor" hid_start als
ALS_DEV=$IIO_DEV
hid als lux 123.4
require "the emulated proximity sensor" hid_start prox
PROX_DEV=$IIO_DEV
hid prox presence 0
require "the emulated compass" hid_start magn
hid magn heading 90
require "udev has processed them" udevadm settle --timeout=20
# The project's udev rules start orientd for each (as iio-sensor-proxy's start it), so that
# masking iio-sensor-proxy loses none of them.
for dev in "$ALS_DEV" "$PROX_DEV" "$IIO_DEV"; do
  udevadm info -q property -p "$dev" >"$TOUT/udev-${dev##*/}.txt"
  check "udev: ${dev##*/} ($(<"$dev/name")) asks systemd for orientd.service" \
    has_line "$TOUT/udev-${dev##*/}.txt" 'SYSTEMD_WANTS=*orientd.service*'
done
udevadm info -q property -p "$IIO_DEV" >"$TOUT/udev-magn.txt"
spawn orientd "$BIN/orientd" --verbose
require "orientd owns $PROXY" wait_for 30 "orientd on the bus" bus_has_owner "$PROXY"
check "HasAmbientLight true" wait_for 20 "HasAmbientLight" \
  eval 'proxy_prop HasAmbientLight; [ "$PROP" = "b true" ]'
check "HasProximity true" wait_for 20 "HasProximity" eval 'proxy_prop HasProximity; [ "$PROP" = "b true" ]'
check "HasCompass true (as uid 65534)" wait_for 20 "HasCompass" eval \
  'PROP_AS=as_nobody proxy_prop HasCompass /net/hadess/SensorProxy/Compass net.hadess.SensorProxy.Compass; [ "$PROP" = "b true" ]'
check "HasCompass true (as root)" eval \
  'proxy_prop HasCompass /net/hadess/SensorProxy/Compass net.hadess.SensorProxy.Compass; [ "$PROP" = "b true" ]'

spawn monitor-sensor stdbuf -oL monitor-sensor
spawn watch-compass as_nobody "$BIN/orientd" --watch --json --compass
check "monitor-sensor: light 123.4 lux" wait_for 20 "the light level" \
  eval 'monitor_has "=== Has ambient light sensor (value: 123.4" || monitor_has "Light changed: 123.4"'
hid als lux 56.7
check "monitor-sensor: light changed to 56.7 lux" wait_for 15 "56.7" \
  monitor_last_has "Light changed" "56.7"
check "monitor-sensor: proximity far" wait_for 20 "far" \
  eval 'monitor_has "=== Has proximity sensor (near: 0)" || monitor_has "Proximity value changed: 0"'
hid prox presence 200
check "monitor-sensor: proximity near" wait_for 15 "near" \
  monitor_last_has "Proximity value changed" "changed: 1"
hid prox presence 0
check "monitor-sensor: proximity far again" wait_for 15 "far" \
  monitor_last_has "Proximity value changed" "changed: 0"
# orientd --watch --json as uid 65534: one JSON object per line, the heading in each.
check "uid 65534 (orientd --watch --compass): heading 90" wait_for 20 "heading 90" \
  has_line "$TOUT/watch-compass.log" '*"compass_heading":90[,}.]*'
hid magn heading 271
check "uid 65534 (orientd --watch --compass): heading changed to 271" wait_for 15 "heading 271" \
  eval 'last_line_with "$TOUT/watch-compass.log" "{" && [[ $LAST_LINE == *"\"compass_heading\":271"[,}.]* ]]'
stop watch-compass
stop monitor-sensor
finish
